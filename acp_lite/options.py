"""What every way of connecting takes alike: :class:`ConnectOptions`, the agent's
argv and the effective :class:`~acp_lite.limits.Limits` (plain Python; the trio and
blocking entry points all use them).

Each public entry point (``acp_lite.connect``, ``connect_streams``,
``connect_in_memory`` and their ``acp_lite.aio`` twins) keeps its keyword
arguments, builds one :class:`ConnectOptions` from them (which checks every value,
so a bad one fails at the call, before an agent is started) and passes that value
down: the keywords are spelt out once per entry point, not at every level below it.
``acp_lite.aio.connect_with`` / ``connect_streams_with`` take the value itself.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from numbers import Real
from typing import TYPE_CHECKING, Final, Literal

import attrs

from acp_lite import _lazy_attrs as lazy_attrs
from acp_lite.limits import Limits

if TYPE_CHECKING:
    from acp_lite.files import FileHandler
    from acp_lite.protocol import ClientCapabilities, Implementation

__all__ = ["PROCESS_OPTIONS", "ConnectOptions", "command_argv", "effective_limits"]

#: The options that only mean something for an agent process (``connect``);
#: the stream and in-memory entry points have no keyword for them.
PROCESS_OPTIONS: Final = frozenset({"cwd", "env", "inherit_env"})


def _plugins(value: Iterable[object]) -> tuple[object, ...]:
    # A single plugin object is the usual slip; "not iterable" would not say so.
    if isinstance(value, str | bytes) or not isinstance(value, Iterable):
        raise TypeError(
            f"plugins= takes an iterable of plugin objects (e.g. [MyPlugin()]), not {value!r}"
        )
    return tuple(value)


@lazy_attrs.frozen(kw_only=True)
class ConnectOptions:
    """The options of one connection: the keywords of :func:`acp_lite.connect`, as
    given (see there for what each does); every value is checked here.

    ``limits`` and ``timeout`` are kept as given; :attr:`effective_limits` is the
    :class:`~acp_lite.limits.Limits` the connection runs with. ``cwd``, ``env``
    and ``inherit_env`` (:data:`PROCESS_OPTIONS`) are the agent process's.
    """

    cwd: str | os.PathLike[str] | None = None
    env: Mapping[str, str] | None = None
    inherit_env: bool = True
    timeout: float | None = None
    client_info: Implementation | Mapping[str, object] | None = None
    capabilities: ClientCapabilities | Mapping[str, object] | None = None
    on_permission: Callable[..., object] | None = None
    on_elicitation: Callable[..., object] | None = None
    files: FileHandler | None = None
    #: An ``acp_lite.aio.TerminalHandler`` (typed loosely: that protocol is trio's,
    #: a layer above this module).
    terminals: object = None
    plugins: tuple[object, ...] = attrs.field(default=(), converter=_plugins)
    limits: Limits | None = None
    protocol_version: int | Literal["auto"] = "auto"
    conformance: bool = False

    def __attrs_post_init__(self) -> None:
        _check(self)

    @property
    def effective_limits(self) -> Limits:
        """``limits`` (default ``Limits()``) with ``timeout``, when given, as its
        default and handshake timeout (:func:`effective_limits`)."""
        return effective_limits(self.limits, self.timeout)

    @property
    def process_options(self) -> frozenset[str]:
        """Those of :data:`PROCESS_OPTIONS` not left at their default."""
        fields = attrs.fields_dict(ConnectOptions)
        return frozenset(n for n in PROCESS_OPTIONS if getattr(self, n) != fields[n].default)


def _check(options: ConnectOptions) -> None:
    """Raise ``TypeError`` / ``ValueError`` naming the first bad option."""
    o = options
    if o.cwd is not None and not isinstance(o.cwd, str | os.PathLike):
        _wrong("cwd", "a path (str or os.PathLike) or None", o.cwd)
    if o.env is not None:
        if not isinstance(o.env, Mapping):
            _wrong("env", "a mapping of str to str or None", o.env)
        for key, value in o.env.items():
            if not isinstance(key, str) or not isinstance(value, str):
                raise TypeError(f"env= must map str to str, not {key!r} to {value!r}")
    _flag("inherit_env", o.inherit_env)
    if o.timeout is not None:
        if isinstance(o.timeout, bool) or not isinstance(o.timeout, Real):
            _wrong("timeout", "a number of seconds or None", o.timeout)
        if math.isnan(o.timeout) or o.timeout <= 0:
            raise ValueError(f"timeout= must be a positive number of seconds, not {o.timeout!r}")
    for name in ("client_info", "capabilities"):
        value = getattr(o, name)
        if value is not None and not (isinstance(value, Mapping) or attrs.has(type(value))):
            _wrong(name, "a mapping, a protocol object or None", value)
    for name in ("on_permission", "on_elicitation"):
        value = getattr(o, name)
        if value is not None and not callable(value):
            _wrong(name, "a callable or None", value)
    _handler("files", o.files, "read_text_file", "acp_lite.LocalFiles()")
    _handler("terminals", o.terminals, "create", "acp_lite.LocalTerminals()")
    if o.limits is not None and not isinstance(o.limits, Limits):
        _wrong("limits", "an acp_lite.Limits or None", o.limits)
    version = o.protocol_version
    if isinstance(version, bool) or version not in (1, 2, "auto"):
        raise ValueError(f"protocol_version= must be 1, 2 or 'auto', not {version!r}")
    _flag("conformance", o.conformance)


def _wrong(name: str, what: str, value: object) -> None:
    raise TypeError(f"{name}= must be {what}, not {value!r}")


def _flag(name: str, value: object) -> None:
    if not isinstance(value, bool):
        _wrong(name, "True or False", value)


def _handler(name: str, value: object, method: str, example: str) -> None:
    if value is None:
        return
    if isinstance(value, type):  # files=LocalFiles: the class, not an instance
        raise TypeError(f"{name}= takes a handler object (e.g. {example}), not the class {value!r}")
    if not callable(getattr(value, method, None)):
        _wrong(name, f"a handler with a {method}() method (e.g. {example}) or None", value)


def command_argv(command: Sequence[str | os.PathLike[str]]) -> list[str]:
    """The argv list of ``command``; a single string is refused (it is not split:
    no shell runs the agent), with a hint to pass a list or ``shlex.split`` it."""
    if isinstance(command, str | bytes | os.PathLike):
        raise TypeError(
            f"the agent command must be a list of arguments, not {type(command).__name__} "
            f"{command!r}: pass e.g. shlex.split({command!r})"
        )
    argv = [os.fspath(a) for a in command]
    if not argv:
        raise ValueError("the agent command is empty")
    return argv


def effective_limits(limits: Limits | None, timeout: float | None) -> Limits:
    """``limits`` with ``timeout`` (when given) as the default and handshake timeout:
    the one setting every wait of the connection honours."""
    limits = limits or Limits()
    if timeout is not None:
        limits = attrs.evolve(limits, default_timeout=timeout, connect_timeout=timeout)
    return limits
