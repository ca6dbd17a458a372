"""The agent's ways to log in, read from ``initialize`` (or an auth error), v1 and v2 alike.

:class:`AuthMethod` is one advertised method, in one shape whatever the agent
spoke:

* ``kind="agent"``: the agent logs in itself; call ``client.login(method.method_id)``
  (v2 ``auth/login``, v1 ``authenticate``). v1's default when no ``type`` is given.
* ``kind="terminal"``: the user runs the agent's own program in a terminal
  (schema ``AuthMethodTerminal``: the agent's command plus ``args``, with ``env``
  set; exit status 0 is success; it is never passed to ``auth/login``). Agents
  that predate the type advertised it as ``_meta["terminal-auth"]``
  (``command``, ``args``, ``label``): mapped here to the same kind, with its own
  :attr:`~AuthMethod.command`; Qwen Code puts ``type: terminal`` and ``args`` in
  ``_meta``: read the same way.
* ``kind="env_var"``: the user sets environment variables for the agent process
  (the ACP authentication-methods RFD: ``vars`` of ``{name, label, secret,
  optional}`` and a ``link``; an older draft's single ``varName`` is read too).
* anything else keeps its ``kind`` and ``raw`` payload.

Pure data, no IO.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from acp_lite import _lazy_attrs as lazy_attrs

__all__ = [
    "UNSAFE_ENV_NAMES",
    "UNSAFE_ENV_PREFIXES",
    "AuthEnvVar",
    "AuthMethod",
    "auth_methods_from",
    "login_hint",
    "unsafe_env_names",
]

#: Variables an agent may not set for a program the client runs for it (a
#: ``terminal`` login method, a terminal under an allow-list): each makes the
#: program load or run code that its command line does not show -- the dynamic
#: loader's (glibc ``LD_*``, macOS ``DYLD_*``), interpreters' start-up and search
#: paths, shell start-up files, ``PATH`` (which program a bare name is).
UNSAFE_ENV_PREFIXES: tuple[str, ...] = ("LD_", "DYLD_")
#: The exact names refused besides :data:`UNSAFE_ENV_PREFIXES` (see there).
UNSAFE_ENV_NAMES: frozenset[str] = frozenset(
    {
        "PATH",
        "IFS",
        "BASH_ENV",
        "ENV",
        "SHELLOPTS",
        "BASHOPTS",
        "PS4",
        "PROMPT_COMMAND",
        "PYTHONPATH",
        "PYTHONHOME",
        "PYTHONSTARTUP",
        "PYTHONUSERBASE",
        "PYTHONINSPECT",
        "PYTHONBREAKPOINT",
        "NODE_OPTIONS",
        "NODE_PATH",
        "PERL5OPT",
        "PERL5LIB",
        "PERLLIB",
        "RUBYOPT",
        "RUBYLIB",
        "GCONV_PATH",
        "JAVA_TOOL_OPTIONS",
        "_JAVA_OPTIONS",
        "JDK_JAVA_OPTIONS",
        "GIT_EXEC_PATH",
        "GIT_CONFIG_GLOBAL",
        "GIT_CONFIG_SYSTEM",
        "GIT_SSH",
        "GIT_SSH_COMMAND",
    }
)


def unsafe_env_names(env: Mapping[str, str]) -> list[str]:
    """The names in ``env`` a client should not let an agent set: those of
    :data:`UNSAFE_ENV_NAMES`, starting with one of :data:`UNSAFE_ENV_PREFIXES`
    (case-insensitively: Windows and some tools fold case), or not a plain
    variable name (empty, with ``=`` or a NUL)."""
    bad = []
    for name in env:
        upper = name.upper()
        plain = bool(name) and "=" not in name and "\x00" not in name
        if not plain or upper in UNSAFE_ENV_NAMES or upper.startswith(UNSAFE_ENV_PREFIXES):
            bad.append(name)
    return bad


@lazy_attrs.frozen
class AuthEnvVar:
    """An environment variable an ``env_var`` method asks the user to set."""

    name: str
    label: str | None = None
    secret: bool = True
    optional: bool = False


@lazy_attrs.frozen
class AuthMethod:
    """One way to log in that the agent advertised (see the module docstring)."""

    method_id: str
    name: str
    kind: str = "agent"
    description: str | None = None
    #: ``terminal``: arguments appended to the agent's command line.
    args: tuple[str, ...] = ()
    #: ``terminal``: variables set for that run.
    env: Mapping[str, str] = attrs.field(factory=dict)
    #: ``terminal`` from ``_meta["terminal-auth"]``: the whole command to run.
    command: tuple[str, ...] | None = None
    #: ``env_var``: the variables to set, and where to get their values.
    env_vars: tuple[AuthEnvVar, ...] = ()
    link: str | None = None
    #: The method as the agent sent it.
    raw: Mapping[str, Any] = attrs.field(factory=dict, repr=False)

    def terminal_command(self, agent_argv: Sequence[str]) -> list[str]:
        """The command a ``terminal`` method runs: its own (``_meta`` form) or the
        agent's ``agent_argv`` plus :attr:`args`."""
        if self.command is not None:
            return list(self.command)
        return [*agent_argv, *self.args]

    def summary(self) -> str:
        """One line: ``id (kind) name``, plus the variables of an ``env_var`` method."""
        text = f"{self.method_id} ({self.kind})"
        if self.name and self.name != self.method_id:
            text += f" {self.name}"
        if self.env_vars:
            text += ": set " + ", ".join(v.name for v in self.env_vars)
        return text


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _env(value: Any) -> dict[str, str]:
    # v1 has a map, v2 a list of {name, value}.
    if isinstance(value, Mapping):
        return {str(k): str(v) for k, v in value.items() if isinstance(v, str)}
    out: dict[str, str] = {}
    if isinstance(value, list):
        for item in value:
            if isinstance(item, Mapping) and isinstance(item.get("name"), str):
                out[item["name"]] = str(item.get("value", ""))
    return out


def _strings(value: Any) -> tuple[str, ...]:
    return tuple(v for v in value if isinstance(v, str)) if isinstance(value, list) else ()


def _vars(raw: Mapping[str, Any]) -> tuple[AuthEnvVar, ...]:
    out: list[AuthEnvVar] = []
    items = raw.get("vars")
    for item in items if isinstance(items, list) else ():
        if isinstance(item, Mapping) and isinstance(item.get("name"), str):
            out.append(
                AuthEnvVar(
                    item["name"],
                    _str(item.get("label")),
                    item.get("secret") is not False,
                    item.get("optional") is True,
                )
            )
    if not out and isinstance(raw.get("varName"), str):
        out.append(AuthEnvVar(raw["varName"]))
    return tuple(out)


def auth_method_from(raw: Mapping[str, Any]) -> AuthMethod | None:
    """One :class:`AuthMethod` from a v1 or v2 payload (``None`` without an id)."""
    method_id = _str(raw.get("methodId")) or _str(raw.get("id"))
    if method_id is None:
        return None
    kind = _str(raw.get("type")) or "agent"
    meta = raw.get("_meta")
    legacy = meta.get("terminal-auth") if isinstance(meta, Mapping) else None
    command: tuple[str, ...] | None = None
    env = _env(raw.get("env"))
    args = _strings(raw.get("args"))
    if isinstance(legacy, Mapping) and isinstance(legacy.get("command"), str):
        kind = "terminal"
        command = (legacy["command"], *_strings(legacy.get("args")))
        env = {**env, **_env(legacy.get("env"))}
    elif isinstance(meta, Mapping) and meta.get("type") == "terminal" and "type" not in raw:
        # Qwen Code's form: the type and the arguments in _meta.
        kind = "terminal"
        args = args or _strings(meta.get("args"))
        env = env or _env(meta.get("env"))
    name = _str(raw.get("name")) or (_str(legacy.get("label")) if legacy else None) or method_id
    return AuthMethod(
        method_id=method_id,
        name=name,
        kind=kind,
        description=_str(raw.get("description")),
        args=args,
        env=env,
        command=command,
        env_vars=_vars(raw),
        link=_str(raw.get("link")),
        raw=dict(raw),
    )


def auth_methods_from(raw: object) -> list[AuthMethod]:
    """The :class:`AuthMethod` list of an ``authMethods`` value as received (entries
    that are not objects with an id are left out)."""
    if not isinstance(raw, list):
        return []
    found = (auth_method_from(item) for item in raw if isinstance(item, Mapping))
    return [m for m in found if m is not None]


def login_hint(methods: Sequence[AuthMethod]) -> str:
    """What to do, in one sentence: the methods to log in with, the variables to set."""
    if not methods:
        return "the agent advertised no auth method; see its documentation"
    parts = []
    agent = [m.method_id for m in methods if m.kind in ("agent", "terminal")]
    if agent:
        parts.append("log in with " + " or ".join(repr(m) for m in agent))
    env = [
        " and ".join(v.name for v in m.env_vars if not v.optional)
        for m in methods
        if m.kind == "env_var" and any(not v.optional for v in m.env_vars)
    ]
    if env:
        parts.append("set " + " or ".join(env))
    others = [m.method_id for m in methods if m.kind not in ("agent", "terminal", "env_var")]
    if others:
        parts.append("use " + " or ".join(repr(m) for m in others))
    return "; or ".join(parts)
