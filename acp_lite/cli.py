"""The ``acp-lite`` command: drive any ACP v2 agent from the terminal.

``acp-lite prompt [--agent CMD] TEXT`` starts the agent (by default the embedded
reference agent, a friendly echo agent), opens a session in the current directory,
sends TEXT and streams what the agent does until its foreground work ends.
``acp-lite info [--agent CMD]`` prints what the agent says about itself.
``acp-lite login [--agent CMD] [METHOD]`` logs in with one of its auth methods.
``acp-lite replay CASSETTE`` is a stdio agent replaying a recorded cassette;
``acp-lite cassette from-transcript IN OUT`` makes one from a saved transcript
(``acp_lite._cli_cassette``).

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

from acp_lite._cli_base import (
    _DEFAULTS,
    _PROG,
    DEFAULT_TURN_TIMEOUT,
    REFERENCE_AGENT,
    CliError,
)

# The exit codes and the error helpers live in their own modules (the subcommand
# modules import them too); `acp_lite.cli` re-exports them.
from acp_lite._cli_base import EXIT_AGENT_EXITED as EXIT_AGENT_EXITED
from acp_lite._cli_base import EXIT_AUTH as EXIT_AUTH
from acp_lite._cli_base import EXIT_CODES as EXIT_CODES
from acp_lite._cli_base import EXIT_INTERRUPTED as EXIT_INTERRUPTED
from acp_lite._cli_base import EXIT_OK as EXIT_OK
from acp_lite._cli_base import EXIT_PROTOCOL as EXIT_PROTOCOL
from acp_lite._cli_base import EXIT_REQUEST_ERROR as EXIT_REQUEST_ERROR
from acp_lite._cli_base import EXIT_START_FAILED as EXIT_START_FAILED
from acp_lite._cli_base import EXIT_STOPPED as EXIT_STOPPED
from acp_lite._cli_base import EXIT_TIMEOUT as EXIT_TIMEOUT
from acp_lite._cli_base import EXIT_USAGE as EXIT_USAGE
from acp_lite._cli_errors import _explain as _explain
from acp_lite._cli_errors import _limit_of as _limit_of
from acp_lite._cli_errors import _report
from acp_lite._cli_form import ELICITATION_CHOICES, elicitation_handler
from acp_lite._cli_render import Renderer, json_line, safe_text
from acp_lite.errors import AcpError
from acp_lite.protocol.constants import END_TURN

if TYPE_CHECKING:
    from acp_lite.permissions import PermissionPolicy

__all__ = ["EXIT_CODES", "main"]

_PERMISSION = "session/request_permission"
# Spelled out (acp_lite.permissions.PERMISSION_POLICIES / PERMISSION_ALIASES, which a
# test ties these to): --help must not import the wire types.
_PERMISSION_NAMES = ("allow_once", "allow_always", "reject_once", "reject_always", "cancel")
_PERMISSION_ALIASES = ("allow", "reject", "cancelled")

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
        metavar="POLICY",
        choices=("ask", *_PERMISSION_NAMES, *_PERMISSION_ALIASES),
        default=None,
        help="answer permission requests: ask (on a terminal; the default there), "
        "allow_once, allow_always, reject_once (the default otherwise), reject_always, "
        "cancel; allow, reject and cancelled are aliases of allow_once, reject_once, cancel",
    )
    prompt.add_argument(
        "--elicitation",
        metavar="POLICY",
        choices=ELICITATION_CHOICES,
        default=None,
        help="answer the agent's forms (elicitation): ask (on a terminal; the default "
        "there), decline (the default otherwise), cancel, accept_defaults (each field's "
        "default; decline when a required field has none)",
    )
    prompt.add_argument(
        "--wait",
        choices=("idle", "quiet"),
        default="idle",
        help="stop when the turn's work is idle (default), or also wait until the "
        "agent's background work is done (quiet)",
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
    from acp_lite import _cli_cassette

    _cli_cassette.add_parsers(sub)
    return parser


def _version() -> str:
    from acp_lite._version import __version__

    return __version__


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


# -- permissions --------------------------------------------------------------------------


def _options(request: Any) -> list[tuple[str, str, str]]:
    """(option_id, name, kind) of each option of a RequestPermissionRequest."""
    return [
        (str(o.option_id), str(getattr(o, "name", "")), str(getattr(o, "kind", "")))
        for o in getattr(request, "options", None) or ()
    ]


def _policy(name: str) -> PermissionPolicy:
    """The non-interactive answer for ``--permission NAME`` (``acp_lite.permissions``
    names: the option kinds, ``cancel``, and the aliases ``allow``, ``reject``,
    ``cancelled``). When no offered option fits, the answer is the ``cancelled``
    outcome, which the agent must treat as "not approved" (schema:
    ``RequestPermissionOutcome``).
    """
    from acp_lite import permissions

    return permissions.permission_policy(name)


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

    def read_answer(self) -> str:
        """The line typed at the terminal after a question ("" at end of input).
        Read without the lock: Ctrl-C must be able to show the interruption (this
        thread is then abandoned; the request is answered cancelled)."""
        with self.lock:
            self.renderer.question_open = True
        try:
            return sys.stdin.readline()
        finally:
            with self.lock:
                self.renderer.question_open = False  # the typed Enter ended the line

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
                    if getattr(event, "source", None) == _PERMISSION:
                        return  # not streamed: the permission line stands for it
                    if self.renderer.shared:
                        self.renderer.end_question()
                    self.out.write(json_line(update))
                    self.out.flush()
                else:
                    self.renderer.update(shown_update(event))
            except BrokenPipeError:
                self._closed()

    def permission(self, request: Any, chosen: str | None) -> None:
        """With ``--json``: the permission request and its answer, as one line."""
        if not self.json_mode:
            return
        tool_call = getattr(getattr(request, "subject", None), "tool_call", None)
        line = {
            "permission": {
                "title": getattr(request, "title", None),
                "toolCallId": getattr(tool_call, "tool_call_id", None),
                "options": [oid for oid, _, _ in _options(request)],
                "answer": chosen if chosen is not None else "cancelled",
            }
        }
        with self.lock:
            if self.open:
                self.out.write(json_line(line))
                self.out.flush()

    def elicitation(self, request: Any, answer: Mapping[str, Any]) -> None:
        """With ``--json``: the elicitation request and its answer, as one line."""
        if not self.json_mode:
            return
        line = {
            "elicitation": {
                "message": getattr(request, "message", None),
                "mode": getattr(request, "mode", None),
                "answer": answer.get("action"),
                **({"content": answer["content"]} if "content" in answer else {}),
            }
        }
        with self.lock:
            if self.open:
                self.out.write(json_line(line))
                self.out.flush()

    def status(self, text: str) -> None:
        with self.lock:
            if not self.open:
                return
            try:
                if self.json_mode:
                    self.renderer.end_question()
                    self.err.write(safe_text(text) + "\n")
                    self.err.flush()
                else:
                    self.renderer.line(text)
            except BrokenPipeError:
                self._closed()

    def finish(self) -> None:
        with self.lock:
            self.renderer.end_question()  # Ctrl-C at a question: the line it left open
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


def shown_update(event: Any) -> Any:
    """What the terminal shows of a session event: the wire dict, or for a v1 agent's
    update its v2 form (the renderer speaks v2: a v1 ``tool_call`` or ``plan`` is a
    ``tool_call_update`` / ``plan_update``; docs/v1.md). ``--json`` keeps the raw one."""
    if not str(getattr(event, "source", "")).startswith("v1:"):
        return event.raw
    from acp_lite.protocol import converter

    update = converter.unstructure(event.update)
    return update if isinstance(update, dict) and "sessionUpdate" in update else event.raw


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
        if policy in (None, "ask") and interactive:
            answer = _ask(ui, request, str(title))
            ui.permission(request, answer)
            return answer
        chosen = _policy("reject_once" if policy in (None, "ask") else policy)(request, session)
        labels = {oid: f"{name} [{kind or oid}]" for oid, name, kind in _options(request)}
        outcome = "cancelled" if chosen is None else labels.get(chosen, chosen)
        ui.status(f"permission: {title} -> {outcome}")
        ui.permission(request, chosen)
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
    why = ""
    while True:
        with ui.lock:
            ui.err.write(f"{why}choose 1-{len(options)} or c: ")
            ui.err.flush()
        answer = ui.read_answer()
        if not answer:  # EOF: nobody can answer
            with ui.lock:
                ui.err.write("\n")
            return None
        answer = answer.strip().lower()
        if answer in ("c", "cancel"):
            return None
        if answer.isdigit() and 1 <= int(answer) <= len(options):
            return options[int(answer) - 1][0]
        why = f"not a choice: {safe_text(answer)!r}; "


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
    tty = sys.stdin is not None and sys.stdin.isatty()
    for flag, value in (("--permission", args.permission), ("--elicitation", args.elicitation)):
        if value == "ask" and not tty:
            raise CliError(f"{flag} ask needs a terminal on stdin", EXIT_USAGE)
    ui = _Ui(out, err, json_mode=args.json)
    handler = _permission_handler(ui, args.permission, tty)
    names: list[str] = []  # the agent's name, once known (the form names who asks)
    forms = elicitation_handler(
        ui,
        args.elicitation,
        tty,
        lambda: names[0] if names and names[0] else "the agent",
        lambda s: _show_backlog(ui, s),
    )
    timeout = args.timeout
    session: Any = None
    try:
        with connect(
            argv, on_permission=handler, on_elicitation=forms, **_timeout_kwargs(timeout)
        ) as client:
            info = getattr(client, "agent_info", None)
            names.append(str(getattr(info, "title", None) or getattr(info, "name", None) or ""))
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
                    if args.wait == "quiet":
                        # Background work the turn left running: shown until it ends
                        # (spec: "Foreground and background work").
                        session.wait_quiet(timeout=timeout or DEFAULT_TURN_TIMEOUT)
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
    from acp_lite import _cli_cassette, _cli_info, _cli_login

    parser = _build_parser()
    args = parser.parse_args(argv)
    out, err = sys.stdout, sys.stderr
    commands: dict[str, Callable[[argparse.Namespace, TextIO, TextIO], int]] = {
        "prompt": _cmd_prompt,
        "info": _cli_info.cmd_info,
        "login": _cli_login.cmd_login,
        "replay": _cli_cassette.cmd_replay,
        "cassette": _cli_cassette.cmd_cassette,
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
