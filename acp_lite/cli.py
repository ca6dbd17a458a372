"""The ``acp-lite`` command: drive any ACP v2 agent from the terminal.

``acp-lite prompt [--agent CMD] TEXT`` starts the agent (by default the embedded
reference agent, a friendly echo agent), opens a session in the current directory,
sends TEXT and streams what the agent does until its foreground work ends.
``acp-lite info [--agent CMD]`` prints what the agent says about itself.
``acp-lite login [--agent CMD] [METHOD]`` logs in with one of its auth methods.

Exit codes (``prompt``; ``info`` uses the error codes only):

====  ===============================================================
0     the turn ended with ``end_turn``
1     the turn ended with another stop reason (``cancelled``, ``refusal``,
      ``max_tokens``, ``max_turn_requests``, ``error``, custom) or none
2     bad command line (argparse)
3     the agent could not be started (command not found, not executable)
4     the agent exited or closed its output before we were done
5     protocol problem: version mismatch or an agent that broke the protocol
6     timeout (``--timeout``)
7     the agent answered a request with an error (e.g. prompt rejected)
8     the agent needs authentication: the message says what to run or set
130   interrupted (Ctrl-C)
====  ===============================================================
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shlex
import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TextIO

from acp_lite._cli_render import Renderer, json_line, safe_text
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
from acp_lite.limits import Limits
from acp_lite.protocol.constants import END_TURN

if TYPE_CHECKING:
    from acp_lite.permissions import PermissionPolicy

__all__ = ["EXIT_CODES", "main"]

EXIT_OK = 0
EXIT_STOPPED = 1
EXIT_USAGE = 2
EXIT_START_FAILED = 3
EXIT_AGENT_EXITED = 4
EXIT_PROTOCOL = 5
EXIT_TIMEOUT = 6
EXIT_REQUEST_ERROR = 7
EXIT_AUTH = 8
EXIT_INTERRUPTED = 130

#: Exit code -> meaning, as documented in ``acp-lite --help``.
EXIT_CODES: dict[int, str] = {
    EXIT_OK: "the turn ended with end_turn",
    EXIT_STOPPED: "the turn ended with another stop reason, or none",
    EXIT_USAGE: "bad command line",
    EXIT_START_FAILED: "the agent could not be started",
    EXIT_AGENT_EXITED: "the agent exited before the turn ended",
    EXIT_PROTOCOL: "protocol version mismatch or protocol error",
    EXIT_TIMEOUT: "timed out",
    EXIT_REQUEST_ERROR: "the agent answered a request with an error",
    EXIT_AUTH: "the agent needs authentication (the message says what to run or set)",
    EXIT_INTERRUPTED: "interrupted",
}

#: How long ``prompt`` waits for the turn when ``--timeout`` is not given (seconds):
#: long, because a real agent's turn may run many model calls and tools.
DEFAULT_TURN_TIMEOUT = 600.0
#: The library's default limits (the CLI's, unless ``--timeout`` is given).
_DEFAULTS = Limits()

#: The embedded default agent: our reference agent, echoing the prompt back.
REFERENCE_AGENT = (sys.executable, "-m", "acp_lite.testing.agent")

_PROG = "acp-lite"
_STDERR_TAIL_SHOWN = 5


class CliError(Exception):
    """A failure reported as one line on stderr with an exit code (no traceback)."""

    def __init__(self, message: str, code: int, details: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.details = tuple(details)


# -- argument parsing ---------------------------------------------------------------------


def _build_parser() -> argparse.ArgumentParser:
    epilog = "exit codes:\n" + "\n".join(f"  {k:<4} {v}" for k, v in EXIT_CODES.items())
    parser = argparse.ArgumentParser(
        prog=_PROG,
        description="Drive an Agent Client Protocol (ACP) v2 agent from the terminal.",
        epilog=epilog,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    def agent_options(p: argparse.ArgumentParser) -> None:
        group = p.add_mutually_exclusive_group()
        group.add_argument(
            "--agent",
            metavar="CMD",
            help="agent command line, split like a shell would (no shell is used); "
            "default: the embedded reference agent",
        )
        group.add_argument(
            "--scenario",
            metavar="NAME",
            help="run the embedded reference agent with this built-in scenario "
            "(e.g. streaming, thinking, tool_call_permission, plan, failure; "
            "`acp-lite-agent --list-scenarios` lists all of them)",
        )
        p.add_argument(
            "--timeout",
            metavar="S",
            type=_positive_float,
            default=None,
            help="seconds to wait for the agent at each step (start, each request, the "
            "whole turn); default: 30 to start, 60 per request, 600 for the turn",
        )
        p.add_argument(
            "--json", action="store_true", help="print machine-readable JSON (one line each)"
        )

    prompt = sub.add_parser(
        "prompt",
        help="send a prompt and stream the agent's work until it is idle",
        description="Send TEXT to the agent and stream its work until it is idle:\n"
        "the agent's text on stdout; thoughts, tool calls, plans and states on stderr.",
        epilog=epilog,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    agent_options(prompt)
    prompt.add_argument(
        "--cwd",
        metavar="DIR",
        default=None,
        help="working directory of the session (default: the current directory)",
    )
    prompt.add_argument(
        "--permission",
        choices=("allow", "reject", "cancel"),
        default=None,
        help="answer permission requests this way; default: ask on a terminal, otherwise reject",
    )
    prompt.add_argument(
        "--transcript",
        metavar="FILE",
        default=None,
        help="write the full wire transcript (both directions) to FILE as NDJSON",
    )
    prompt.add_argument("text", nargs="+", metavar="TEXT", help="the prompt ('-' reads stdin)")

    info = sub.add_parser(
        "info",
        help="print the agent's info, capabilities and auth methods",
        description="Initialize the agent and print its info, capabilities and auth methods.",
    )
    agent_options(info)
    from acp_lite import _cli_login

    _cli_login.add_parser(sub, agent_options)
    return parser


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("acp-lite")
    except PackageNotFoundError:  # running from a source tree that is not installed
        return "(not installed)"


def _positive_float(value: str) -> float:
    try:
        number = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {value!r}") from None
    if not number > 0:
        raise argparse.ArgumentTypeError(f"must be > 0: {value!r}")
    return number


def _agent_argv(args: argparse.Namespace) -> list[str]:
    if args.scenario is not None:
        return [*REFERENCE_AGENT, "--scenario", args.scenario]
    if args.agent is None:
        return list(REFERENCE_AGENT)
    try:
        argv = shlex.split(args.agent)
    except ValueError as exc:
        raise CliError(f"cannot parse --agent {args.agent!r}: {exc}", EXIT_USAGE) from None
    if not argv:
        raise CliError("--agent is empty", EXIT_USAGE)
    return argv


def _timeout_kwargs(timeout: float | None) -> dict[str, Any]:
    return {} if timeout is None else {"timeout": timeout}


# -- error reporting ----------------------------------------------------------------------


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else ""


def _explain(
    exc: AcpError, argv: Sequence[str], timeout: float | None, scenario: str | None = None
) -> CliError:
    """Turn a library error into one clear line (plus the agent's stderr tail)."""
    command = shlex.join(argv)
    tail = [line for line in exc.stderr_tail if line.strip()][-_STDERR_TAIL_SHOWN:]
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
        return CliError(
            f"the agent speaks ACP protocol version {exc.version!r}; "
            "acp-lite speaks versions 2 and 1",
            EXIT_PROTOCOL,
            details,
        )
    if isinstance(exc, Timeout):
        what = exc.awaited or (exc.method or "") or reason
        state = f" (session state: {exc.state})" if exc.state else ""
        limit, name = _limit_of(exc, timeout)
        hint = "" if timeout is not None else "; --timeout sets it"
        return CliError(
            f"timed out after {limit:g}s ({name}{hint}) waiting for {what}{state}",
            EXIT_TIMEOUT,
            details,
        )
    if isinstance(exc, AuthRequired):
        from acp_lite._cli_login import auth_error

        return auth_error(exc, argv, details)
    if isinstance(exc, PromptRejected):
        return CliError(
            f"the agent rejected the prompt: {reason} (code {exc.code})",
            EXIT_REQUEST_ERROR,
            details,
        )
    if isinstance(exc, RequestError):
        method = exc.method or "request"
        return CliError(f"{method} failed: {reason} (code {exc.code})", EXIT_REQUEST_ERROR, details)
    if isinstance(exc, ProtocolError):
        return CliError(f"protocol error: {reason}", EXIT_PROTOCOL, details)
    return CliError(f"{type(exc).__name__}: {reason}", EXIT_PROTOCOL, details)


def _limit_of(exc: Timeout, timeout: float | None) -> tuple[float, str]:
    """The documented limit that fired, and its name (see ``--timeout``)."""
    defaults = _DEFAULTS
    if exc.method == "initialize" or "connecting" in exc.message:
        return timeout or defaults.connect_timeout, "the start-up limit"
    if exc.awaited.startswith("response to"):
        return timeout or defaults.default_timeout, "the per-request limit"
    return timeout or DEFAULT_TURN_TIMEOUT, "the turn limit"


def _report(err: CliError, stream: TextIO) -> None:
    stream.write(f"{_PROG}: error: {safe_text(err.message)}\n")
    for line in err.details:
        stream.write(f"  {safe_text(line)}\n")
    stream.flush()


# -- permissions --------------------------------------------------------------------------


def _options(request: Any) -> list[tuple[str, str, str]]:
    """(option_id, name, kind) of each option of a RequestPermissionRequest."""
    return [
        (str(o.option_id), str(getattr(o, "name", "")), str(getattr(o, "kind", "")))
        for o in getattr(request, "options", None) or ()
    ]


def _policy(name: str) -> PermissionPolicy:
    """The non-interactive answer for ``--permission NAME``.

    ``allow`` prefers a one-time grant and takes ``allow_always`` only when that is the
    sole grant offered (the user asked to allow); ``reject`` prefers ``reject_once``.
    When nothing fits, the answer is the ``cancelled`` outcome, which the agent must
    treat as "not approved" (schema: ``RequestPermissionOutcome``).
    """
    from acp_lite import permissions

    if name == "allow":
        return permissions.choose("allow_once", "allow_always")
    if name == "cancel":
        return permissions.cancelled
    return permissions.reject


class _Ui:
    """Everything ``prompt`` writes, serialised by one lock (callbacks may run on
    another thread than the main one)."""

    def __init__(self, out: TextIO, err: TextIO, *, json_mode: bool) -> None:
        self.out = out
        self.err = err
        self.json_mode = json_mode
        self.renderer = Renderer(out, err)
        self.lock = threading.RLock()
        self.shown = -1  # index of the last event shown (events arrive in order)
        self.open = True
        #: Called once when stdout is closed by its reader (``acp-lite ... | head``).
        self.on_closed: Callable[[], object] | None = None

    def event(self, event: Any) -> None:
        """Show one session event (from ``Session.on_update`` or the event log)."""
        with self.lock:
            index = getattr(event, "index", None)
            if isinstance(index, int):
                if index <= self.shown:
                    return
                self.shown = index
            if not self.open:
                return
            try:
                update = raw_update(event)
                if self.json_mode:
                    self.out.write(json_line(update))
                    self.out.flush()
                else:
                    self.renderer.update(update)
            except BrokenPipeError:
                self._closed()

    def status(self, text: str) -> None:
        with self.lock:
            if not self.open:
                return
            try:
                if self.json_mode:
                    self.err.write(safe_text(text) + "\n")
                    self.err.flush()
                else:
                    self.renderer.line(text)
            except BrokenPipeError:
                self._closed()

    def finish(self) -> None:
        with self.lock:
            if self.open and not self.json_mode:
                try:
                    self.renderer.finish()
                except BrokenPipeError:
                    self._closed()
            self.open = False

    def _closed(self) -> None:
        """Our reader went away: stop writing, and stop the agent's work."""
        self.open = False
        _silence_stdout()
        if self.on_closed is not None:
            callback, self.on_closed = self.on_closed, None
            callback()


def _silence_stdout() -> None:
    """Point stdout at devnull so the interpreter's final flush of a closed pipe is
    quiet (Python docs, signal module: "Note on SIGPIPE")."""
    with contextlib.suppress(OSError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)


def raw_update(event: Any) -> Any:
    """The wire dict (``params.update``) of a session event, exactly as received."""
    return event.raw


def _permission_handler(
    ui: _Ui, policy: str | None, interactive: bool
) -> Callable[[Any, Any], str | None]:
    def handle(request: Any, session: Any) -> str | None:
        # Live updates reach the terminal in batches on another thread: show every
        # update received before this request first, so the question comes after
        # the tool call it is about (the model has applied them already).
        if session is not None:
            _show_backlog(ui, session)
        title = getattr(request, "title", None) or "permission requested"
        if policy is None and interactive:
            return _ask(ui, request, str(title))
        chosen = _policy(policy or "reject")(request, session)
        labels = {oid: f"{name} [{kind or oid}]" for oid, name, kind in _options(request)}
        outcome = "cancelled" if chosen is None else labels.get(chosen, chosen)
        ui.status(f"permission: {title} -> {outcome}")
        return chosen

    return handle


def _ask(ui: _Ui, request: Any, title: str) -> str | None:
    options = _options(request)
    with ui.lock:
        ui.renderer.line(f"permission requested: {title}", "1")
        description = getattr(request, "description", None)
        if description:
            ui.err.write(f"  {safe_text(str(description))}\n")
        for number, (option_id, name, kind) in enumerate(options, 1):
            ui.err.write(safe_text(f"  {number}) {name} [{kind or option_id}]") + "\n")
        ui.err.write("  c) cancel (not approved)\n")
        while True:
            ui.err.write(f"choose 1-{len(options)} or c: ")
            ui.err.flush()
            answer = sys.stdin.readline()
            if not answer:  # EOF: nobody can answer
                return None
            answer = answer.strip().lower()
            if answer in ("c", "cancel"):
                return None
            if answer.isdigit() and 1 <= int(answer) <= len(options):
                return options[int(answer) - 1][0]


# -- commands -----------------------------------------------------------------------------


def _cmd_prompt(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from acp_lite.client import connect  # imported here: keeps --help and usage errors fast

    argv = _agent_argv(args)
    text = " ".join(args.text)
    if text == "-":
        text = sys.stdin.read()
    if not text.strip():
        raise CliError("the prompt is empty", EXIT_USAGE)
    cwd = str(Path(args.cwd or os.getcwd()).resolve())
    if not Path(cwd).is_dir():
        raise CliError(f"--cwd {args.cwd!r} is not a directory", EXIT_USAGE)
    interactive = args.permission is None and sys.stdin is not None and sys.stdin.isatty()
    ui = _Ui(out, err, json_mode=args.json)
    handler = _permission_handler(ui, args.permission, interactive)
    timeout = args.timeout
    session: Any = None
    try:
        with connect(argv, on_permission=handler, **_timeout_kwargs(timeout)) as client:
            try:
                session = client.new_session(cwd=cwd)
                # Nobody reads the output any more: stop the work instead of letting
                # the agent run to the end of the turn (it then ends "cancelled").
                ui.on_closed = lambda: session.cancel()
                _follow(ui, session)
                try:
                    # The documented limits: the prompt's answer within the per-request
                    # limit, the whole turn within the turn limit.
                    turn = session.run(
                        text,
                        timeout=timeout or DEFAULT_TURN_TIMEOUT,
                        insert_timeout=timeout or _DEFAULTS.default_timeout,
                    )
                except KeyboardInterrupt:
                    # Session.run already sent session/cancel and waited briefly.
                    _show_backlog(ui, session)
                    ui.finish()
                    err.write(f"{_PROG}: interrupted; the turn was cancelled\n")
                    return EXIT_INTERRUPTED
            finally:
                # Also when the turn failed (the agent crashed, a timeout): what it
                # sent before is shown, though the live callback may still lag.
                if session is not None:
                    _show_backlog(ui, session)
                ui.finish()
                _warn_foreign(err, client)
                if args.transcript:
                    client.transcript.save(args.transcript)
    except AcpError as exc:
        raise _explain(exc, argv, timeout, args.scenario) from None
    stop = turn.stop_reason
    if stop == END_TURN:
        return EXIT_OK
    error = getattr(turn, "error", None)
    detail = ""
    if error is not None:
        message = getattr(error, "message", None)
        if message is None and isinstance(error, Mapping):
            message = error.get("message")
        detail = f": {message}" if message else ""
    err.write(f"{_PROG}: the turn ended with stop reason {stop or '(none)'}{detail}\n")
    err.flush()
    return EXIT_STOPPED


def _warn_foreign(err: TextIO, client: Any) -> None:
    """Say so when the agent wrote lines that are not JSON-RPC (they are skipped)."""
    count = getattr(client, "event_counts", {}).get("protocol_error", 0)
    if not count:
        return
    first = next((e for e in client.events if e.kind == "protocol_error"), None)
    data = getattr(first, "data", None)
    raw = getattr(data, "raw", data)
    text = raw.decode("utf-8", "replace") if isinstance(raw, bytes | bytearray) else str(raw)
    err.write(
        f"{_PROG}: warning: the agent wrote {count} line(s) that are not ACP "
        f"(JSON-RPC), skipped; the first: {safe_text(text[:120])!r}\n"
    )
    err.flush()


def _follow(ui: _Ui, session: Any) -> None:
    """Show the session's events live, starting with those already received.

    Subscribing first and then showing the backlog, both under the UI lock, shows
    every event exactly once and in order: the callback skips indexes already shown.
    """
    with ui.lock:
        session.on_update(ui.event)
        _show_backlog(ui, session)


def _show_backlog(ui: _Ui, session: Any) -> None:
    """Show events the live callback has not shown yet (it may lag the turn's end)."""
    for event in list(session.updates):
        ui.event(event)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``acp-lite`` command; returns the exit code (see the module docstring)."""
    from acp_lite import _cli_info, _cli_login

    parser = _build_parser()
    args = parser.parse_args(argv)
    out, err = sys.stdout, sys.stderr
    commands: dict[str, Callable[[argparse.Namespace, TextIO, TextIO], int]] = {
        "prompt": _cmd_prompt,
        "info": _cli_info.cmd_info,
        "login": _cli_login.cmd_login,
    }
    try:
        return commands[args.command](args, out, err)
    except CliError as exc:
        _report(exc, err)
        return exc.code
    except KeyboardInterrupt:
        err.write(f"\n{_PROG}: interrupted\n")
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # stdout was closed early (e.g. piped into `head`): not worth a traceback.
        _silence_stdout()
        return EXIT_STOPPED


def _run() -> NoReturn:
    sys.exit(main())


if __name__ == "__main__":
    # `python -m acp_lite.cli` runs this file as __main__: run the imported module's
    # main instead, so that the subcommand modules (which import acp_lite.cli) and
    # this one share one CliError class.
    from acp_lite import cli as _cli

    _cli._run()
