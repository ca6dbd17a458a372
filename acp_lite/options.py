"""What every way of connecting takes alike: :class:`ConnectOptions`, the agent's
argv and the effective :class:`~acp_lite.limits.Limits` (plain Python; the trio and
blocking entry points all use them).

Each public entry point (``acp_lite.connect``, ``connect_streams``,
``connect_in_memory`` and their ``acp_lite.aio`` twins) keeps its keyword
arguments, builds one :class:`ConnectOptions` from them and passes that value down:
the keywords are spelt out once per entry point, not at every level below it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

import attrs

from acp_lite import _lazy_attrs as lazy_attrs
from acp_lite.limits import Limits

if TYPE_CHECKING:
    from acp_lite.files import FileHandler

__all__ = ["ConnectOptions", "command_argv", "effective_limits"]


@lazy_attrs.frozen
class ConnectOptions:
    """The options of one connection, as the entry points' keywords give them.

    ``limits`` is the effective one (``timeout`` already applied, see
    :func:`effective_limits`); ``timeout`` stays for the handshake's bound.
    ``session_view`` / ``hook_client`` are what the blocking facade substitutes for
    the async objects callbacks and hooks receive (``None``: the async objects).
    """

    limits: Limits
    cwd: str | os.PathLike[str] | None = None
    env: Mapping[str, str] | None = None
    inherit_env: bool = True
    timeout: float | None = None
    client_info: Any = None
    capabilities: Any = None
    on_permission: Callable[..., Any] | None = None
    on_elicitation: Callable[..., Any] | None = None
    files: FileHandler | None = None
    #: An ``acp_lite.aio.TerminalHandler`` (typed loosely: that protocol is trio's).
    terminals: Any = None
    plugins: tuple[Any, ...] = ()
    protocol_version: int | Literal["auto"] = "auto"
    conformance: bool = False
    session_view: Callable[[Any], Any] | None = None
    hook_client: Callable[[Any], Any] | None = None


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
