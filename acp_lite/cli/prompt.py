"""``acp-lite prompt``: send a prompt and stream the agent's work until it is idle."""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from acp_lite.auth import login_hint
from acp_lite.cli import model_run
from acp_lite.cli.base import (
    DEFAULT_TURN_TIMEOUT,
    DEFAULTS,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_STOPPED,
    EXIT_USAGE,
    PROG,
    CliError,
    agent_argv,
    timeout_kwargs,
)
from acp_lite.cli.errors import explain, idle_auth_error, login_command
from acp_lite.cli.form import ELICITATION_CHOICES, elicitation_handler
from acp_lite.cli.login import choose_method
from acp_lite.cli.paths import check_writable
from acp_lite.cli.render import safe_text
from acp_lite.cli.ui import Ui, permission_options
from acp_lite.errors import AcpError
from acp_lite.protocol.constants import END_TURN

if TYPE_CHECKING:
    from acp_lite.permissions import PermissionPolicy
    from acp_lite.transcript import Transcript

__all__ = ["add_parser", "cmd_prompt"]

# Spelled out (acp_lite.permissions.PERMISSION_POLICIES / PERMISSION_ALIASES, which a
# test ties these to): --help must not import the wire types.
PERMISSION_NAMES = ("allow_once", "allow_always", "reject_once", "reject_always", "cancel")
PERMISSION_ALIASES = ("allow", "reject", "cancelled")


def add_parser(
    sub: argparse._SubParsersAction[argparse.ArgumentParser],
    agent_options: Callable[[argparse.ArgumentParser], None],
    epilog: str,
) -> None:
    """Register the ``prompt`` subcommand."""
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
        choices=("ask", *PERMISSION_NAMES, *PERMISSION_ALIASES),
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
        "--reply",
        action="store_true",
        help="stream the work on stderr and print on stdout only the agent's reply as it "
        "stands when the turn ends (its messages after every patch, joined by newlines)",
    )
    prompt.add_argument(
        "--transcript",
        metavar="FILE",
        default=None,
        help="write the full wire transcript (both directions) to FILE as NDJSON, "
        "whatever the outcome (a failed start, a crash, a timeout, Ctrl-C)",
    )
    prompt.add_argument(
        "--login",
        metavar="METHOD",
        default=None,
        help="log in with the agent's auth method METHOD (an agent method, through "
        "the protocol) before the session, in the same agent process",
    )
    model_run.add_options(prompt)
    prompt.add_argument("text", nargs="+", metavar="TEXT", help="the prompt ('-' reads stdin)")


def _policy(name: str) -> PermissionPolicy:
    """The non-interactive answer for ``--permission NAME`` (``acp_lite.permissions``
    names: the option kinds, ``cancel``, and the aliases ``allow``, ``reject``,
    ``cancelled``). When no offered option fits, the answer is the ``cancelled``
    outcome, which the agent must treat as "not approved" (schema:
    ``RequestPermissionOutcome``).
    """
    from acp_lite import permissions

    return permissions.permission_policy(name)


def _permission_handler(
    ui: Ui, policy: str | None, interactive: bool
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
        labels = {oid: f"{name} [{kind or oid}]" for oid, name, kind in permission_options(request)}
        outcome = "cancelled" if chosen is None else labels.get(chosen, chosen)
        ui.status(f"permission: {title} -> {outcome}")
        ui.permission(request, chosen)
        return chosen

    return handle


def _ask(ui: Ui, request: Any, title: str) -> str | None:
    options = permission_options(request)
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


def cmd_prompt(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    argv = agent_argv(args)
    if args.transcript is not None:
        # Written at the end: a bad path is a usage error now, not after the turn.
        check_writable(args.transcript, "the transcript")
    model_run.check_options(args)
    if not model_run.wants_model(args):
        return _run(args, argv, None, out, err)
    # The agent on a scripted model: its own home, environment and arguments.
    return model_run.run_on_model(
        args, argv, err, lambda agent, env: _run(args, list(agent), env, out, err)
    )


def _run(
    args: argparse.Namespace,
    argv: list[str],
    env: Mapping[str, str] | None,
    out: TextIO,
    err: TextIO,
) -> int:
    """The turn: ``env`` given is the agent's whole environment (else it inherits ours)."""
    from acp_lite.sync import connect  # imported here: keeps --help and usage errors fast

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
    reply_out = out
    if args.reply:
        out = err  # the stream goes to stderr; stdout gets the final reply only
    ui = Ui(out, err, json_mode=args.json)
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
    retry = _retry_command(args)
    # What to save with --transcript, on every way out (a start that failed included:
    # then the error holds what was exchanged).
    transcript: Transcript | None = None
    ui.progress("starting the agent")  # on a terminal: what we wait for, how long
    try:
        with connect(
            argv,
            **_env_kwargs(env),
            on_permission=handler,
            on_elicitation=forms,
            **timeout_kwargs(timeout),
        ) as client:
            transcript = getattr(client, "transcript", None)
            advertised = list(getattr(client, "auth_methods", []))
            info = getattr(client, "agent_info", None)
            names.append(str(getattr(info, "title", None) or getattr(info, "name", None) or ""))
            if args.login is not None:
                _login(ui, client, args.login, argv)
            try:
                session = client.new_session(cwd=cwd)
                # Nobody reads the output any more: stop the work instead of letting
                # the agent run to the end of the turn (it then ends "cancelled").
                ui.on_closed = lambda: session.cancel()
                _follow(ui, session)
                ui.progress("waiting for the agent")
                try:
                    # The documented limits: the prompt's answer within the per-request
                    # limit, the whole turn within the turn limit.
                    turn = session.run(
                        text,
                        timeout=timeout or DEFAULT_TURN_TIMEOUT,
                        insert_timeout=timeout or DEFAULTS.default_timeout,
                        # A limit that fires stops the agent's work too (session/cancel),
                        # not only our wait: the agent is stopped right after.
                        cancel_on_timeout=True,
                    )
                    if args.wait == "quiet":
                        # Background work the turn left running: shown until it ends
                        # (spec: "Foreground and background work").
                        session.wait_quiet(timeout=timeout or DEFAULT_TURN_TIMEOUT)
                except KeyboardInterrupt:
                    # Session.run already sent session/cancel and waited briefly.
                    _show_backlog(ui, session)
                    ui.finish()
                    ui.interrupted(_interrupted(session))
                    return EXIT_INTERRUPTED
            finally:
                # Also when the turn failed (the agent crashed, a timeout): what it
                # sent before is shown, though the live callback may still lag.
                if session is not None:
                    _show_backlog(ui, session)
                ui.finish()
                _warn_foreign(err, client)
    except AcpError as exc:
        transcript = _transcript_of(exc, transcript)
        raise explain(exc, argv, timeout, args.scenario, retry) from None
    except KeyboardInterrupt as exc:  # while connecting: the start-up so far
        transcript = _transcript_of(exc, transcript)
        raise
    finally:
        ui.stop_progress()  # also when the agent never started: before the error line
        if args.transcript is not None:
            _save_transcript(args.transcript, transcript, err)
    if args.reply:
        reply_out.write(turn.text + "\n")
        reply_out.flush()
    stop = turn.stop_reason
    if stop == END_TURN:
        return EXIT_OK
    error = getattr(turn, "error", None)
    auth = idle_auth_error(error, argv, advertised, retry) if error is not None else None
    if auth is not None:
        raise auth
    detail = ""
    if error is not None:
        message = getattr(error, "message", None)
        if message is None and isinstance(error, Mapping):
            message = error.get("message")
        detail = f": {message}" if message else ""
    err.write(f"{PROG}: the turn ended with stop reason {stop or '(none)'}{detail}\n")
    err.flush()
    return EXIT_STOPPED


def _login(ui: Ui, client: Any, wanted: str, argv: list[str]) -> None:
    """``--login METHOD``: ``auth/login`` (v1 ``authenticate``) on this connection,
    before the session: an agent method's login may last only as long as the agent
    process that did it (spec: "Authentication")."""
    method = choose_method(client.auth_methods, wanted, argv)
    if method.kind != "agent":
        how = (
            f"run `{login_command(argv, method.method_id)}` first"
            if method.kind == "terminal"
            else login_hint([method])
        )
        raise CliError(
            f"--login {wanted}: a {method.kind} method, not one the agent does itself: {how}",
            EXIT_USAGE,
        )
    client.login(method.method_id)
    ui.status(f"logged in with {method.method_id}")


def _retry_command(args: argparse.Namespace) -> Callable[[str], str] | None:
    """The command the user ran with ``--login METHOD`` (for the auth hint): the same
    agent process logs in and runs the turn. ``None`` without the command line."""
    given = getattr(args, "argv", None)
    if given is None or "prompt" not in given:
        return None
    words = list(given)
    at = words.index("prompt") + 1
    rest: list[str] = []
    positional = False  # after "--": the prompt's words, kept as they are
    tail = iter(words[at:])
    for word in tail:
        if not positional and word == "--login":
            next(tail, None)  # an earlier --login METHOD: replaced
            continue
        if not positional and word.startswith("--login="):
            continue
        positional = positional or word == "--"
        rest.append(word)
    head = [PROG, *words[:at]]
    return lambda method: shlex.join([*head, "--login", method, *rest])


def _transcript_of(exc: BaseException, known: Transcript | None) -> Transcript | None:
    """The client's transcript, else the one a failure while connecting carries
    (``AcpError.transcript``; a ``KeyboardInterrupt`` from ``connect`` too)."""
    from acp_lite.transcript import Transcript

    carried = getattr(exc, "transcript", None)
    return known if known is not None or not isinstance(carried, Transcript) else carried


def _save_transcript(path: str, transcript: Transcript | None, err: TextIO) -> None:
    """Write ``--transcript`` (empty when nothing was exchanged: the agent did not
    start); a write that fails now is a warning, not a traceback over the outcome."""
    from acp_lite.transcript import Transcript

    try:
        (transcript if transcript is not None else Transcript()).save(path)
    except OSError as exc:
        err.write(f"{PROG}: warning: cannot write the transcript {path}: {exc}\n")
        err.flush()


def _interrupted(session: Any) -> str:
    """What Ctrl-C interrupted, and what became of the prompt (``Session.run`` has
    withdrawn it, or sent ``session/cancel`` and waited briefly for the idle)."""
    submissions = session.model.submissions
    last = submissions[-1] if submissions else None
    if last is None:
        return f"{PROG}: interrupted before the prompt was sent"
    if last.status != "inserted":
        return (
            f"{PROG}: interrupted while waiting for the agent to accept the prompt "
            "(it had not); the prompt was withdrawn"
        )
    if last.done:
        return f"{PROG}: interrupted; the turn was cancelled"
    return (
        f"{PROG}: interrupted; the agent was asked to cancel the turn (session/cancel) "
        "but did not confirm it"
    )


def _env_kwargs(env: Mapping[str, str] | None) -> dict[str, Any]:
    """``connect``'s keywords for the agent's whole environment (none: it inherits
    ours). Whole, because a profile removes variables too."""
    return {} if env is None else {"env": env, "inherit_env": False}


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
        f"{PROG}: warning: the agent wrote {count} line(s) that are not ACP "
        f"(JSON-RPC), skipped; the first: {safe_text(text[:120])!r}\n"
    )
    err.flush()


def _follow(ui: Ui, session: Any) -> None:
    """Show the session's events live, starting with those already received.

    Subscribing first and then showing the backlog, both under the UI lock, shows
    every event exactly once and in order: the callback skips indexes already shown.
    """
    with ui.lock:
        session.on_update(ui.event)
        _show_backlog(ui, session)


def _show_backlog(ui: Ui, session: Any) -> None:
    """Show events the live callback has not shown yet (it may lag the turn's end)."""
    for event in list(session.updates):
        ui.event(event)
