"""How the ``acp-lite`` command reports a library error: one clear line, an exit code."""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TextIO

from acp_lite.auth import AuthMethod
from acp_lite.cli.base import (
    DEFAULT_TURN_TIMEOUT,
    DEFAULTS,
    EXIT_AGENT_EXITED,
    EXIT_AUTH,
    EXIT_PROTOCOL,
    EXIT_REQUEST_ERROR,
    EXIT_START_FAILED,
    EXIT_TIMEOUT,
    EXIT_USAGE,
    PROG,
    STDERR_TAIL_SHOWN,
    CliError,
)
from acp_lite.cli.render import safe_text
from acp_lite.errors import (
    AcpError,
    AgentExited,
    AgentStartFailed,
    AuthRequired,
    PromptRejected,
    ProtocolError,
    RequestError,
    Timeout,
    UnsupportedProtocolVersion,
)
from acp_lite.protocol import UNSET

__all__ = [
    "_first_line",
    "agent_words",
    "auth_error",
    "explain",
    "idle_auth_error",
    "limit_of",
    "login_command",
    "report",
]

#: What an agent's auth error says when it says nothing of its own (compared
#: lower-case, without end punctuation): not worth repeating after our advice.
_GENERIC_AUTH = frozenset(
    {"authentication required", "auth required", "authentication needed", "unauthorized"}
)
#: The agent's own words are shown up to this many characters (one line).
_WORDS_SHOWN = 300


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else ""


def explain(
    exc: AcpError,
    argv: Sequence[str],
    timeout: float | None,
    scenario: str | None = None,
    retry: Callable[[str], str] | None = None,
) -> CliError:
    """Turn a library error into one clear line (plus the agent's stderr tail);
    ``retry`` as for :func:`auth_error`."""
    command = shlex.join(argv)
    tail = [line for line in exc.stderr_tail if line.strip()][-STDERR_TAIL_SHOWN:]
    details = [f"agent stderr: {line}" for line in tail]
    reason = _first_line(exc.message)
    if isinstance(exc, AgentStartFailed):
        program = argv[0] if argv else ""
        if isinstance(exc.__cause__, FileNotFoundError):
            where = "" if os.sep in program else " (searched PATH)"
            return CliError(f"agent command not found: {program}{where}", EXIT_START_FAILED)
        if isinstance(exc.__cause__, PermissionError):
            return CliError(f"agent command is not executable: {program}", EXIT_START_FAILED)
        return CliError(f"cannot start the agent `{command}`: {reason}", EXIT_START_FAILED)
    if isinstance(exc, AgentExited):
        if scenario is not None and exc.returncode == 2 and exc.method == "initialize":
            # The reference agent refused its arguments (exit 2): a usage error.
            return CliError(
                f"unknown --scenario {scenario!r} (acp-lite-agent --list-scenarios lists them)",
                EXIT_USAGE,
                details,
            )
        during = f" during {exc.method}" if exc.method else ""
        return CliError(f"{reason}{during}", EXIT_AGENT_EXITED, details)
    if isinstance(exc, UnsupportedProtocolVersion):
        # The library's words name what was wrong (the version, or a number that
        # contradicts the answer's shape); the CLI asks for no version ("auto").
        return CliError(
            reason.replace("acp_lite speaks", "acp-lite speaks"), EXIT_PROTOCOL, details
        )
    if isinstance(exc, Timeout):
        what = exc.awaited or (exc.method or "") or reason
        state = f" (session state: {exc.state})" if exc.state else ""
        limit, name = limit_of(exc, timeout)
        hint = "" if timeout is not None else "; --timeout sets it"
        return CliError(
            f"timed out after {limit:g}s ({name}{hint}) waiting for {what}{state}",
            EXIT_TIMEOUT,
            details,
        )
    if isinstance(exc, AuthRequired):
        return auth_error(exc, argv, details, retry)
    if isinstance(exc, PromptRejected):
        return CliError(
            f"the agent rejected the prompt: {reason} (code {exc.code}){_said(exc.data)}",
            EXIT_REQUEST_ERROR,
            details,
        )
    if isinstance(exc, RequestError):
        method = exc.method or "request"
        return CliError(
            f"{method} failed: {reason} (code {exc.code}){_said(exc.data)}",
            EXIT_REQUEST_ERROR,
            details,
        )
    if isinstance(exc, ProtocolError):
        return CliError(f"protocol error: {reason}", EXIT_PROTOCOL, details)
    return CliError(f"{type(exc).__name__}: {reason}", EXIT_PROTOCOL, details)


def limit_of(exc: Timeout, timeout: float | None) -> tuple[float, str]:
    """The documented limit that fired, and its name (see ``--timeout``)."""
    defaults = DEFAULTS
    if exc.method == "initialize" or "connecting" in exc.message:
        return timeout or defaults.connect_timeout, "the start-up limit"
    if exc.awaited.startswith("response to"):
        return timeout or defaults.default_timeout, "the per-request limit"
    return timeout or DEFAULT_TURN_TIMEOUT, "the turn limit"


def report(err: CliError, stream: TextIO) -> None:
    stream.write(f"{PROG}: error: {safe_text(err.message)}\n")
    for line in err.details:
        stream.write(f"  {safe_text(line)}\n")
    stream.flush()


def login_command(argv: Sequence[str], method_id: str | None = None) -> str:
    """The ``acp-lite login`` command line that logs in to the agent ``argv``."""
    words = ["acp-lite", "login", "--agent", shlex.join(argv)]
    if method_id is not None:
        words.append(method_id)
    return shlex.join(words)


def auth_error(
    exc: AuthRequired,
    argv: Sequence[str],
    details: list[str],
    retry: Callable[[str], str] | None = None,
) -> CliError:
    """One line saying exactly what to run or to set.

    ``retry(METHOD)``: the command that logs in with an ``agent`` method and does the
    work again in one agent process (``acp-lite prompt --login METHOD ...``). Such a
    login may last only as long as the process that did it, so a separate
    ``acp-lite login`` is advised only for ``terminal`` methods (the agent's own
    login program, which keeps what it did) or when there is no ``retry``.
    """
    methods = exc.auth_methods
    agent = [m.method_id for m in methods if m.kind == "agent"]
    separate = [m.method_id for m in methods if m.kind == "terminal" or not retry]
    todo: list[str] = []
    if retry is not None and agent:
        todo.append(_run_with(retry, agent))
    if separate:
        todo.append(_run_with(lambda m: login_command(argv, m), separate))
    env = [
        " and ".join(v.name for v in m.env_vars if not v.optional)
        for m in methods
        if m.kind == "env_var" and m.env_vars
    ]
    if env:
        todo.append("set " + " or ".join(env))
    what = " or ".join(todo) or "see the agent's documentation (it named no auth method)"
    during = f" for {exc.method}" if exc.method else ""
    words = agent_words(exc.message, exc.data)
    said = f" (the agent says: {words})" if words else ""
    return CliError(f"the agent needs authentication{during}: {what}{said}", EXIT_AUTH, details)


def _run_with(command: Callable[[str], str], method_ids: Sequence[str]) -> str:
    if len(method_ids) == 1:
        return f"run `{command(method_ids[0])}`"
    return f"run `{command('METHOD')}` (METHOD: {', '.join(method_ids)})"


def idle_auth_error(
    error: object,
    argv: Sequence[str],
    advertised: Sequence[AuthMethod],
    retry: Callable[[str], str] | None = None,
) -> CliError | None:
    """The auth error for a turn that ended ``idle`` with an auth-required error (v2:
    a failure after insertion is the idle's ``error``), else ``None``."""
    code = _field(error, "code")
    if code != AuthRequired.default_code:
        return None
    message = _field(error, "message")
    data = _field(error, "data")
    exc = AuthRequired(
        message if isinstance(message, str) else "",
        code=code,
        data=data if isinstance(data, dict) else None,
        method="session/prompt",
    )
    if not exc.auth_methods:
        exc.auth_methods = list(advertised)
    return auth_error(exc, argv, [], retry)


def agent_words(message: str, data: object) -> str:
    """What the agent said of its own in an error: its message unless generic, and
    ``data.details`` (or a text ``data``); one line, bounded, empty if nothing."""
    said = []
    text = " ".join(message.split())
    if text and text.lower().rstrip(".!") not in _GENERIC_AUTH:
        said.append(text)
    details = _details(data)
    if details and details not in said:
        said.append(details)
    return _bounded("; ".join(said))


def _said(data: object) -> str:
    details = _details(data)
    return f": {_bounded(details)}" if details else ""


def _details(data: object) -> str:
    value = data.get("details") if isinstance(data, Mapping) else data
    return " ".join(value.split()) if isinstance(value, str) else ""


def _bounded(text: str) -> str:
    text = re.sub(r"\s+", " ", text).strip()
    return text if len(text) <= _WORDS_SHOWN else text[: _WORDS_SHOWN - 1] + "\u2026"


def _field(error: object, name: str) -> Any:
    if isinstance(error, Mapping):
        return error.get(name)
    value = getattr(error, name, None)
    return None if value is UNSET else value
