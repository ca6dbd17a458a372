"""Resolving pytest_acp settings: marker > command line > ini > default.

Kept apart from the fixtures so that the precedence rules live in one place.
"""

from __future__ import annotations

import functools
import importlib
import os
import shlex
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import attrs
import pytest

if TYPE_CHECKING:  # acp_lite loads with the first ACP fixture
    from acp_lite.permissions import ElicitationPolicy, PermissionPolicy

__all__ = [
    "CONFORMANCE_MODES",
    "DEFAULT_TIMEOUT",
    "ELICITATION_POLICIES",
    "IN_PROCESS_PREFIX",
    "PERMISSION_ALIASES",
    "PERMISSION_POLICIES",
    "PROTOCOLS",
    "SCOPES",
    "AgentCommand",
    "as_agent_command",
    "conformance_mode",
    "default_agent_argv",
    "elicitation_policy",
    "load_factory",
    "permission_policy",
    "scope_of",
    "timeout_of",
    "waived_rules",
]

SCOPES = ("function", "module", "session")
PROTOCOLS = ("auto", "1", "2")
CONFORMANCE_MODES = ("off", "warn", "strict")
DEFAULT_TIMEOUT = 30.0
#: Permission policy names (``acp_lite.permissions.PERMISSION_POLICIES``) and the
#: older spellings accepted for them (``PERMISSION_ALIASES``: allow, reject, cancelled).
PERMISSION_POLICIES = ("allow_once", "allow_always", "reject_once", "reject_always", "cancel")
PERMISSION_ALIASES = ("allow", "reject", "cancelled")
ELICITATION_POLICIES = ("decline", "cancel", "accept_defaults")


IN_PROCESS_PREFIX = "python:"
"""``--acp-agent python:MODULE:NAME``: run the agent ``MODULE.NAME()`` in this process."""


def _argv(value: str | Sequence[str]) -> tuple[str, ...]:
    """``argv`` as a tuple: a list or tuple as given, a string split as a shell would
    (``shlex``; no shell runs it)."""
    return tuple(shlex.split(value) if isinstance(value, str) else value)


@attrs.frozen
class AgentCommand:
    """How to launch the agent under test: ``argv`` (no shell; a list, a tuple, or a
    string split as a shell would), extra ``env`` merged onto this process's
    environment, and the process ``cwd`` (None: inherit).

    With ``in_process`` the agent runs in this process instead, over acp_lite's
    in-memory transport, and ``argv``, ``env`` and ``cwd`` are empty. It is a factory
    called once per connection, returning a pipe agent (``start()`` / ``close()``,
    such as ``acp_lite.testing.InProcessAgent``, itself a factory) or a trio-native
    ``async def agent(stream)``; or such an ``async def agent(stream)`` itself.
    """

    argv: tuple[str, ...] = attrs.field(converter=_argv)
    env: Mapping[str, str] = attrs.field(factory=dict)
    cwd: str | None = None
    #: ``False``: ``env`` is the agent's whole environment, not merged onto this
    #: process's (as ``acp_lite.connect(inherit_env=)``; an agent profile's run).
    inherit_env: bool = attrs.field(default=True, kw_only=True)
    # Called with what its shape takes (a factory, or the agent itself: see above).
    in_process: Callable[..., object] | None = attrs.field(default=None, kw_only=True)

    def key(self) -> tuple[object, ...]:
        """Identity used to share one agent between tests."""
        key: tuple[object, ...] = (self.argv, tuple(sorted(self.env.items())), self.cwd)
        if not self.inherit_env:
            key = (*key, "whole env")
        return key if self.in_process is None else (*key, self.in_process)

    def __str__(self) -> str:
        if self.in_process is not None:
            return describe_factory(self.in_process)
        return shlex.join(self.argv)


def describe_factory(factory: Callable[..., Any]) -> str:
    """``python:module:qualname`` when the factory has one (with the arguments of a
    ``functools.partial``), else its repr."""
    if isinstance(factory, functools.partial):
        args = [repr(a) for a in factory.args]
        args += [f"{k}={v!r}" for k, v in factory.keywords.items()]
        return f"{describe_factory(factory.func)}({', '.join(args)})"
    module = getattr(factory, "__module__", None)
    qualname = getattr(factory, "__qualname__", None)
    if isinstance(module, str) and isinstance(qualname, str) and "<" not in qualname:
        return f"{IN_PROCESS_PREFIX}{module}:{qualname}"
    return f"in-process agent {factory!r}"


def load_factory(spec: str, where: str) -> Callable[..., Any]:
    """The object ``python:MODULE:NAME`` names (``NAME`` may be dotted); a clear
    ``UsageError`` naming ``where`` the spec came from when it cannot be loaded."""
    spec = spec.strip()
    target = spec[len(IN_PROCESS_PREFIX) :]
    module_name, sep, name = target.partition(":")
    if not sep or not module_name or not name:
        raise pytest.UsageError(f"{where}: expected python:MODULE:NAME, got {spec!r}")
    try:
        found: Any = importlib.import_module(module_name)
        for part in name.split("."):
            found = getattr(found, part)
    except (ImportError, AttributeError) as exc:
        raise pytest.UsageError(f"{where}: cannot load {spec!r}: {exc}") from None
    if not callable(found):
        raise pytest.UsageError(f"{where}: {spec!r} is not callable: {found!r}")
    return found  # type: ignore[no-any-return]


def default_agent_argv() -> tuple[str, ...]:
    """The reference agent (``acp_lite.testing.agent``), run by this interpreter."""
    return (sys.executable, "-m", "acp_lite.testing.agent")


def _split(command: str | Sequence[str | os.PathLike[str]]) -> tuple[str, ...]:
    if isinstance(command, str):
        return tuple(shlex.split(command))
    return tuple(os.fspath(a) for a in command)


def parse_env(items: Sequence[str], where: str) -> dict[str, str]:
    """``KEY=VALUE`` strings to a dict; a clear error names ``where`` they came from."""
    env: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise pytest.UsageError(f"{where}: expected KEY=VALUE, got {item!r}")
        env[key] = value
    return env


def _option(config: pytest.Config, name: str) -> Any:
    """A command-line value, else the ini value (None/empty when neither is set)."""
    value = config.getoption(name, None)
    if value not in (None, [], ""):
        return value
    return config.getini(name)


def as_agent_command(value: Any) -> AgentCommand:
    """Accept what an overridden ``acp_agent_command`` fixture may return: an
    :class:`AgentCommand`, an argv list, a command string (``python:MODULE:NAME``
    included) or an in-process agent factory (a callable)."""
    if isinstance(value, AgentCommand):
        return value
    if _is_spec(value):
        return AgentCommand((), in_process=load_factory(value, "acp_agent_command"))
    if isinstance(value, str | list | tuple):
        argv = _split(value)
        if argv:
            return AgentCommand(argv)
    elif callable(value):
        return AgentCommand((), in_process=value)
    raise TypeError(
        f"acp_agent_command must be an AgentCommand, an argv list, a command string or "
        f"an in-process agent factory, not {value!r}"
    )


def agent_command(node: pytest.Item, config: pytest.Config) -> AgentCommand:
    """The agent for ``node``: ``acp_agent`` marker, ``--acp-agent``, ini, reference agent.

    ``--acp-env`` / ini ``acp_env`` are merged under the marker's ``env``. An agent
    in this process (``in_process=`` or ``python:MODULE:NAME``) has no env or cwd of
    its own: the configured env is not used, and the marker may not set them.
    """
    env = parse_env(config.getini("acp_env") or [], "ini acp_env")
    env.update(parse_env(config.getoption("acp_env", None) or [], "--acp-env"))
    cwd: str | None = None
    argv: tuple[str, ...] = ()
    marker = node.get_closest_marker("acp_agent")
    if marker is not None:
        in_process = _marker_in_process(node, marker)
        if in_process is not None:
            return in_process
        argv = _marker_argv(node, marker)
        env.update({str(k): str(v) for k, v in (marker.kwargs.get("env") or {}).items()})
        if marker.kwargs.get("cwd") is not None:
            cwd = os.fspath(marker.kwargs["cwd"])
    if not argv:
        configured = _option(config, "acp_agent")
        if _is_spec(configured):
            factory = load_factory(configured, "--acp-agent / ini acp_agent")
            return AgentCommand((), in_process=factory)
        argv = _split(configured) if configured else default_agent_argv()
        from_ini = configured and not config.getoption("acp_agent", None)
        if from_ini and config.inipath is not None:
            argv = _relative_to(argv, config.inipath.parent)
    if not argv:
        raise pytest.UsageError("the ACP agent command is empty")
    return AgentCommand(argv, env, cwd)


def _relative_to(argv: tuple[str, ...], base: Path) -> tuple[str, ...]:
    """An ini ``acp_agent``'s relative paths, resolved against the ini file's directory
    (as pytest does for paths in ini files) rather than where pytest runs: a token
    that names an existing file or directory there (the program only when it has a
    ``/``: a bare name is looked up on ``PATH``)."""
    out: list[str] = []
    for i, token in enumerate(argv):
        relative = not os.path.isabs(token) and not token.startswith("-")
        if relative and (i > 0 or "/" in token) and (base / token).exists():
            token = str(base / token)
        out.append(token)
    return tuple(out)


def _marker_argv(node: pytest.Item, marker: pytest.Mark) -> tuple[str, ...]:
    """The marker's command: its argument (``argv=`` too), or with ``scenario=`` the
    reference agent playing that scenario (what users try first to pick one)."""
    where = f"@pytest.mark.acp_agent ({node.nodeid})"
    given = [marker.args[0] if len(marker.args) == 1 else marker.args] if marker.args else []
    if "argv" in marker.kwargs:
        given.append(marker.kwargs["argv"])
    scenario = marker.kwargs.get("scenario")
    if scenario is not None:
        if given:
            raise pytest.UsageError(
                f"{where}: scenario= runs the reference agent; it takes no command too"
            )
        if not isinstance(scenario, str) or not scenario:
            raise pytest.UsageError(f"{where}: scenario= takes a scenario name, not {scenario!r}")
        return (*default_agent_argv(), "--scenario", scenario)
    if len(given) > 1:
        raise pytest.UsageError(f"{where}: one command (argv), got two: {marker}")
    return _split(given[0]) if given else ()


def _marker_in_process(node: pytest.Item, marker: pytest.Mark) -> AgentCommand | None:
    """The marker's in-process agent (``in_process=`` or ``"python:MODULE:NAME"``), if any."""
    where = f"@pytest.mark.acp_agent ({node.nodeid})"
    factory = marker.kwargs.get("in_process")
    spec = marker.args[0] if len(marker.args) == 1 and _is_spec(marker.args[0]) else None
    if factory is None and spec is None:
        return None
    if marker.kwargs.get("scenario") is not None:
        raise pytest.UsageError(f"{where}: in_process= or scenario=: they are two agents")
    if (
        (factory is not None and (marker.args or "argv" in marker.kwargs))
        or marker.kwargs.get("env")
        or (marker.kwargs.get("cwd") is not None)
    ):
        raise pytest.UsageError(f"{where}: an agent in this process takes no command, env or cwd")
    if spec is not None:
        factory = load_factory(spec, where)
    if not callable(factory):
        if hasattr(factory, "start") and hasattr(factory, "close"):
            # An InProcessAgent serves one connection: shared, the second test would fail.
            raise pytest.UsageError(
                f"{where}: in_process= takes a factory (the class, a function), not the "
                f"agent {factory!r}: an agent object serves one connection"
            )
        raise pytest.UsageError(f"{where}: in_process= needs a callable, not {factory!r}")
    return AgentCommand((), in_process=factory)


def _is_spec(value: Any) -> bool:
    return isinstance(value, str) and value.strip().startswith(IN_PROCESS_PREFIX)


#: The name of each one-argument marker's argument, which may be passed by keyword.
_ARGUMENT = {
    "acp_timeout": "seconds",
    "acp_scope": "scope",
    "acp_conformance": "mode",
    "acp_protocol": "version",
    "acp_login": "method_id",
    "acp_permission": "policy",
    "acp_elicitation": "policy",
}


def _marker_arg(node: pytest.Item, name: str) -> Any:
    marker = node.get_closest_marker(name)
    if marker is None:
        return None
    keyword = _ARGUMENT.get(name, "")
    if marker.args and keyword in marker.kwargs:
        raise pytest.UsageError(
            f"@pytest.mark.{name} takes one {keyword}, got two ({node.nodeid}): {marker}"
        )
    if keyword in marker.kwargs:
        return marker.kwargs[keyword]
    if not marker.args:
        raise pytest.UsageError(f"@pytest.mark.{name} needs an argument ({node.nodeid})")
    return marker.args[0]


def timeout_of(node: pytest.Item, config: pytest.Config) -> float:
    """Default timeout of every ACP call in the test (seconds)."""
    value = _marker_arg(node, "acp_timeout")
    if value is None:
        value = _option(config, "acp_timeout")
    try:
        timeout = float(value) if value not in (None, "") else DEFAULT_TIMEOUT
    except (TypeError, ValueError):
        raise pytest.UsageError(f"acp timeout must be a number of seconds, not {value!r}") from None
    if timeout <= 0:
        raise pytest.UsageError(f"acp timeout must be positive, not {timeout}")
    return timeout


def _choice(value: Any, choices: Sequence[str], what: str) -> str:
    if value not in choices:
        raise pytest.UsageError(f"{what} must be one of {', '.join(choices)}, not {value!r}")
    return str(value)


def scope_of(node: pytest.Item, config: pytest.Config) -> str:
    """How long one agent process lives: ``function`` (default), ``module``, ``session``."""
    value = _marker_arg(node, "acp_scope") or _option(config, "acp_scope") or "function"
    return _choice(value, SCOPES, "acp scope")


def conformance_mode(node: pytest.Item, config: pytest.Config) -> str:
    """``off``, ``warn`` (default) or ``strict``."""
    value = _marker_arg(node, "acp_conformance") or _option(config, "acp_conformance") or "warn"
    return _choice(value, CONFORMANCE_MODES, "acp conformance")


def protocol_of(node: pytest.Item, config: pytest.Config) -> int | Literal["auto"]:
    """The ACP version to speak: ``"auto"`` (default: v2, or v1 when the agent
    answers v1), ``1`` or ``2`` (``acp_protocol`` marker, ``--acp-protocol``, ini)."""
    value = _marker_arg(node, "acp_protocol") or _option(config, "acp_protocol") or "auto"
    chosen = _choice(str(value), PROTOCOLS, "acp protocol")
    return "auto" if chosen == "auto" else int(chosen)


def login_of(node: pytest.Item, config: pytest.Config) -> str | None:
    """The auth method to log in with after ``initialize`` (``--acp-login``, ini
    ``acp_login``, ``acp_login`` marker), or ``None``."""
    value = _marker_arg(node, "acp_login") or _option(config, "acp_login")
    return str(value) if value else None


def served(node: pytest.Item, config: pytest.Config, what: Literal["files", "terminals"]) -> Any:
    """What serves the agent's ``fs/*`` (``what="files"``) or ``terminal/*`` requests:
    an ``acp_serve`` marker's keyword (``True``, ``False``, a handler or its class),
    else ``--acp-files`` / ``--acp-terminals`` or the ini flag. ``True`` is
    ``acp_lite.LocalFiles()`` / ``acp_lite.LocalTerminals()`` (confined to each
    session's directories: ``acp_session``'s is the test's ``tmp_path``); the
    result is a new handler (one per connection), or ``None``: not served."""
    marker = node.get_closest_marker("acp_serve")
    if marker is not None and marker.args:
        raise pytest.UsageError(
            f"@pytest.mark.acp_serve takes keywords: files=..., terminals=... ({node.nodeid})"
        )
    if marker is not None and what in marker.kwargs:
        value = marker.kwargs[what]
    else:
        value = bool(_option(config, f"acp_{what}"))
    if value is None or value is False:
        return None
    if value is True:
        import acp_lite

        value = acp_lite.LocalFiles if what == "files" else acp_lite.LocalTerminals
    # A class (or another factory without arguments) gives each connection its own.
    return value() if isinstance(value, type) else value


def waived_rules(node: pytest.Item, config: pytest.Config) -> set[str]:
    """Rule ids waived for this test: every ``acp_waive`` marker plus ini ``acp_waive``."""
    waived = {str(r) for r in config.getini("acp_waive") or []}
    for marker in node.iter_markers("acp_waive"):
        if not marker.args:
            raise pytest.UsageError(f"@pytest.mark.acp_waive needs rule ids ({node.nodeid})")
        waived.update(str(r) for r in marker.args)
    return waived


def _policy(
    node: pytest.Item,
    config: pytest.Config,
    name: str,
    choices: Sequence[str],
    default: str,
) -> Callable[[Any, Any], Any]:
    from acp_lite import permissions

    marker = node.get_closest_marker(name)
    # policy=fn: pytest takes a lone callable argument of a marker for the function
    # it decorates, so a callable is passed by keyword.
    value = marker.kwargs.get("policy") if marker is not None else None
    if value is None:
        value = _marker_arg(node, name)
    if value is None:
        value = _option(config, name) or default
    if callable(value):
        return value  # type: ignore[no-any-return]
    try:
        if name == "acp_permission":
            return permissions.permission_policy(str(value))
        return permissions.elicitation_policy(str(value))
    except ValueError:
        aliases = f" (aliases: {', '.join(PERMISSION_ALIASES)})" if name == "acp_permission" else ""
        what = name.replace("_", " ")
        raise pytest.UsageError(
            f"{what} must be one of {', '.join(choices)}{aliases}, not {value!r}"
        ) from None


def permission_policy(node: pytest.Item, config: pytest.Config) -> PermissionPolicy:
    """The answer to ``session/request_permission`` (default ``reject_once``: a test
    never hangs on a question it did not expect)."""
    return _policy(node, config, "acp_permission", PERMISSION_POLICIES, "reject_once")


def elicitation_policy(node: pytest.Item, config: pytest.Config) -> ElicitationPolicy:
    """The answer to ``elicitation/create`` (default ``decline``)."""
    return _policy(node, config, "acp_elicitation", ELICITATION_POLICIES, "decline")
