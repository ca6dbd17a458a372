"""How the reference agent runs one turn: the foreground lifecycle and the steps.

The lifecycle follows the spec's "Prompt Lifecycle" page:

* foreground work starts -> ``state_update running`` ("3. Agent reports output");
* insertion -> the ``session/prompt`` response with the ``messageId`` plus a
  ``user_message`` with the same id, never before insertion ("2. Prompt accepted");
* foreground work ends -> ``idle`` with a stop reason, after every other update
  of that work ("4. Report completion"); ``cancelled`` confirms a cancel, and
  ``error`` carries the failure ("Failures");
* a prompt that never got inserted is answered with an error, -32800 when a
  cancel prevented it ("Prompts that are never inserted").
"""

from __future__ import annotations

import contextlib
import re
from typing import Any

from acp_lite.testing._link import Link
from acp_lite.testing._state import BackgroundItem, Session, TurnEnded, TurnRun
from acp_lite.testing._wire import cancelled_error, encode, notification
from acp_lite.testing.script import (
    Background,
    Echo,
    Elicit,
    Exit,
    Fail,
    Flood,
    Hang,
    IgnoreCancel,
    IgnoreSigterm,
    Insert,
    Permission,
    Raw,
    Reject,
    Respond,
    Sleep,
    Stderr,
    Step,
    Stop,
    Text,
    Turn,
    Update,
    WaitForCancel,
    WaitForPrompt,
)

_WORDS = re.compile(r"\S+\s*|\s+")


class TurnRunner:
    """Runs the turns of every session (one worker thread per session)."""

    def __init__(self, link: Link) -> None:
        self.link = link

    def new_run(self, session: Session, request_id: Any, prompt: list[dict[str, Any]]) -> TurnRun:
        """A run for the session's next prompt (caller holds ``link.cond``)."""
        session.prompts_seen += 1
        number = session.prompts_seen
        run = TurnRun(session, request_id, prompt, number, self.link.script.turn_for(number))
        expectations = self.link.expectations
        if expectations is not None:  # the turn that matches the prompt, not the n-th
            run.expectation, run.spec = expectations.choose(run.prompt_text(), session.id)
        return run

    # -- the session worker ---------------------------------------------------

    def work(self, session: Session) -> None:
        """Insert held prompts in the order received, one turn at a time."""
        cond = self.link.cond
        stopped = self.link.stopped.is_set
        while True:
            with cond:
                cond.wait_for(lambda: bool(session.held) or not session.open or stopped())
                if not session.held or stopped():
                    session.worker = None
                    return
                held = session.held.popleft()
                run = self.new_run(session, held.request_id, held.prompt)
                session.turn = run
                session.cancelling = False
                session.cancel_mark = None
            try:
                self.run_turn(run)
            except Exception as exc:  # a bug must not leave the session stuck
                self.link.log(f"turn {run.number} of {session.id} crashed: {exc!r}")
            finally:
                with cond:
                    session.turn = None
                    session.cancelling = False
                    session.cancel_mark = None
                    session.accepts_steering = False
                    cond.notify_all()

    def run_turn(self, run: TurnRun) -> None:
        """The whole foreground lifecycle of one prompt."""
        link, session = self.link, run.session
        spec = run.spec or Turn(steps=[Echo()])
        if spec.steps and isinstance(spec.steps[0], Reject):
            # Rejected before any foreground work: an error response and no
            # state change ("Prompts that are never inserted"). The turn ends
            # there, as planned: not a crash of the turn.
            with contextlib.suppress(TurnEnded):
                self.reject(run, spec.steps[0])
            return
        if spec.running:
            link.report_state(session, "running")
        stop_reason, error = spec.stop_reason, None
        runs = [run]
        try:
            if not spec.inserts_explicitly():
                self.insert(run)
            self.run_steps(run, spec.steps)
            # Prompts inserted while this work ran ("while_busy = insert") are
            # part of the same foreground work: run their steps before idle.
            while True:
                with link.cond:
                    if not session.steered or session.cancelling:
                        session.accepts_steering = False
                        break
                    steered = session.steered.popleft()
                runs.append(steered)
                steps = (steered.spec or Turn(steps=[Echo()])).steps
                self.run_steps(steered, [s for s in steps if not isinstance(s, Insert | Reject)])
        except TurnEnded as end:
            stop_reason, error = end.stop_reason, end.error
        self.finish(runs, spec, stop_reason, error)

    def finish(
        self,
        runs: list[TurnRun],
        spec: Turn,
        stop_reason: str | None,
        error: dict[str, Any] | None,
    ) -> None:
        """Answer the prompt if still unanswered, finalise tool calls, report idle."""
        link, run, session = self.link, runs[0], runs[0].session
        with link.cond:
            session.accepts_steering = False
        if not run.answered:
            if run.inserted:
                self.respond(run)
            elif error is not None:
                # A failure before insertion needs an error response ("Failures").
                link.reply_error(run.request_id, error)
                run.answered = True
            else:
                link.reply_error(run.request_id, cancelled_error())
                run.answered = True
        if stop_reason in ("cancelled", "error") or session.cancelling:
            # "Failures": give each tool call the work left unfinished a final status.
            final = "failed" if stop_reason == "error" else "cancelled"
            for each in runs:
                for tool_call_id in each.unfinished_tool_calls():
                    update = {"sessionUpdate": "tool_call_update", "toolCallId": tool_call_id}
                    update["status"] = final
                    link.emit(session, update)
                    each.tool_calls[tool_call_id] = final
        if spec.idle:
            # A cancel read after the last step still ends the work cancelled.
            late = spec.cancel_stop_reason if error is None and not run.ignoring else None
            link.report_state(
                session, "idle", stop_reason=stop_reason, error=error, if_cancelled=late
            )

    # -- insertion ----------------------------------------------------------------

    def insert(self, run: TurnRun, step: Insert | None = None) -> None:
        """Insert the user message: assign its messageId, respond, echo it."""
        step = step or Insert()
        session = run.session
        with self.link.cond:
            if run.inserted:
                return
            if run.withdrawn:
                # The client withdrew the prompt before insertion: answer -32800
                # (in finish) and end the work it started as cancelled.
                raise TurnEnded((run.spec or Turn()).cancel_stop_reason)
            session.user_messages += 1
            run.message_id = run.fill(step.message_id) or f"user-{session.user_messages}"
            if session.turn is run:
                # Only now may later prompts be inserted into this work: held
                # prompts are inserted in the order received ("Prompts during
                # active work").
                session.accepts_steering = True
        user_message = {
            "sessionUpdate": "user_message",
            "messageId": run.message_id,
            "content": run.prompt,
        }
        if step.respond and step.response_first:
            self.respond(run)
        if step.user_message:
            self.link.emit(session, user_message)
        if step.respond and not step.response_first:
            self.respond(run)

    def respond(self, run: TurnRun) -> None:
        """Send ``{"messageId": ...}`` for an inserted prompt (once)."""
        if not run.inserted:
            self.insert(run, Insert(respond=False))
        if not run.answered:
            run.answered = True
            self.link.reply(run.request_id, {"messageId": run.message_id})

    def reject(self, run: TurnRun, step: Reject) -> None:
        """Answer the prompt with an error: it is not inserted."""
        error: dict[str, Any] = {"code": step.code, "message": step.message}
        if step.data is not None:
            error["data"] = step.data
        if run.inserted:
            # Once inserted a prompt MUST NOT get an error ("2. Prompt accepted").
            self.link.log("script error: 'reject' after insertion; failing the work instead")
        else:
            self.link.reply_error(run.request_id, error)
            run.answered = True
        raise TurnEnded("error", error)

    # -- steps --------------------------------------------------------------------

    def run_steps(self, run: TurnRun, steps: list[Step]) -> None:
        """Run steps in order, stopping at a cancel, unless an ``ignore_cancel`` step is
        ahead: that one reads the cancel (a wait before it is only cut short)."""
        for index, step in enumerate(steps):
            run.ignoring = any(isinstance(s, IgnoreCancel) for s in steps[index:])
            self.check_cancel(run)
            self.run_step(run, step)
        run.ignoring = False

    def check_cancel(self, run: TurnRun) -> None:
        """End the work with the cancel stop reason if the client cancelled."""
        if run.session.cancelling and not run.ignoring:
            spec = run.spec or Turn()
            raise TurnEnded(spec.cancel_stop_reason)

    def wait_cancelled(self, run: TurnRun, seconds: float | None) -> bool:
        """Wait up to ``seconds``; True if a cancel arrived."""
        session = run.session
        with self.link.cond:
            return self.link.cond.wait_for(lambda: session.cancelling, seconds)

    def run_step(self, run: TurnRun, step: Step) -> None:
        """Run one step."""
        link, session = self.link, run.session
        match step:
            case Update():
                update = run.fill(step.update)
                run.track(update)
                link.emit(session, update, run.fill(step.session_id))
            case Text():
                self.stream(
                    run, step.chunks or [step.text], step.thought, step.message_id, step.delay
                )
            case Echo():
                words = _WORDS.findall(run.prompt_text()) or ["(empty prompt)"]
                chunks = [step.prefix, *words] if step.prefix else words
                self.stream(run, chunks, False, None, step.delay)
            case Insert():
                self.insert(run, step)
            case Respond():
                self.respond(run)
            case Reject():
                self.reject(run, step)
            case Permission():
                self.permission(run, step)
            case Elicit():
                self.elicit(run, step)
            case Sleep():
                if self.wait_cancelled(run, step.seconds):
                    self.check_cancel(run)
            case WaitForCancel():
                self.wait_cancelled(run, step.timeout)
                self.check_cancel(run)
            case WaitForPrompt():
                with link.cond:
                    # Held (while_busy = hold) or inserted, not yet run (insert).
                    link.cond.wait_for(
                        lambda: bool(session.held or session.steered) or session.cancelling,
                        step.timeout,
                    )
                self.check_cancel(run)
            case IgnoreCancel():
                self.ignore_cancel(run, step.timeout)
            case Fail():
                error: dict[str, Any] = {"code": step.code, "message": step.message}
                if step.data is not None:
                    error["data"] = step.data
                raise TurnEnded("error", error)
            case Stop():
                raise TurnEnded(step.stop_reason)
            case Background():
                self.start_background(run, step)
            case Flood():
                self.flood(run, step)
            case Exit():
                link.log(f"exiting with code {step.code} (scripted)")
                link.wire.exit(step.code)
            case Stderr():
                link.stderr(run.fill(step.text))
            case Raw():
                payload = step.payload()
                if step.hex is None and b"{{" in payload:
                    payload = run.fill(payload.decode()).encode()
                link.wire.write(payload)
            case IgnoreSigterm():
                link.ignore_sigterm = True  # the SIGTERM handler checks this flag
            case Hang():
                link.log("hanging forever (scripted)")
                link.stopped.wait()  # forever, unless shut down in-process

    def ignore_cancel(self, run: TurnRun, timeout: float) -> None:
        """Wait for a cancel and the answer to a request read after it; forget the cancel."""
        link, session = self.link, run.session

        def read_past_the_cancel() -> bool:
            mark = session.cancel_mark
            return mark is not None and link.answered > mark

        with link.cond:
            proven = link.cond.wait_for(read_past_the_cancel, timeout)
            session.cancelling = False  # broken on purpose: the work goes on
            session.cancel_mark = None
        link.log(f"ignoring the cancel ({'proven read' if proven else 'timed out'})")

    def stream(
        self,
        run: TurnRun,
        chunks: list[str],
        thought: bool,
        message_id: str | None,
        delay: float,
    ) -> None:
        """Stream text chunks of one agent message (or thought)."""
        kind = "agent_thought_chunk" if thought else "agent_message_chunk"
        message_id = run.fill(message_id) or run.new_id("thought" if thought else "agent")
        for index, chunk in enumerate(chunks):
            if index and delay and self.wait_cancelled(run, delay):
                self.check_cancel(run)
            content = {"type": "text", "text": run.fill(chunk)}
            update = {"sessionUpdate": kind, "messageId": message_id, "content": content}
            self.link.emit(run.session, update)

    def permission(self, run: TurnRun, step: Permission) -> None:
        """Ask for permission; run the branch for the answer."""
        link, session = self.link, run.session
        params: dict[str, Any] = {
            "sessionId": session.id,
            "title": run.fill(step.title),
            "options": step.options,
        }
        if step.description is not None:
            params["description"] = run.fill(step.description)
        if step.tool_call is not None:
            tool_call = run.fill(step.tool_call)
            run.track({"sessionUpdate": "tool_call_update", **tool_call})
            params["subject"] = {"type": "tool_call", "toolCall": tool_call}
        # "Waiting for user action": blocked foreground work SHOULD report
        # requires_action, and MUST report running when it resumes.
        if step.requires_action:
            link.report_state(session, "requires_action")
        reply = link.request("session/request_permission", params, run)
        self.check_cancel(run)
        if step.requires_action:
            link.report_state(session, "running")
        result = (reply or {}).get("result")
        outcome = result.get("outcome") if isinstance(result, dict) else None
        if link.expectations is not None:
            link.expectations.record(_permission_event(run, step, reply, outcome))
        if not isinstance(outcome, dict) or outcome.get("outcome") != "selected":
            # Cancelled outcome or an error reply: not approved. Without a branch
            # the user chose to stop, so the work ends "cancelled".
            link.log(f"permission not granted: {reply!r}")
            branch = step.branches.get("cancelled")
            if branch is None:
                raise TurnEnded("cancelled")
            self.run_steps(run, branch)
            return
        option_id = outcome.get("optionId")
        kinds = {o.get("optionId"): o.get("kind") for o in step.options}
        link.log(f"permission: selected {option_id!r}")
        branch = step.branches.get(str(option_id))
        if branch is None:
            branch = step.branches.get(str(kinds.get(option_id)), step.branches.get("default", []))
        self.run_steps(run, branch)

    def elicit(self, run: TurnRun, step: Elicit) -> None:
        """Ask for form input (only if the client advertised form elicitation)."""
        link, session = self.link, run.session
        capabilities = link.client_capabilities.get("elicitation") or {}
        if not isinstance(capabilities, dict) or capabilities.get("form") is None:
            link.log("client has no form elicitation capability; skipping")
            self.run_steps(run, step.branches.get("unsupported", []))
            return
        params = {
            "sessionId": session.id,
            "mode": "form",
            "message": run.fill(step.message),
            "requestedSchema": step.schema,
        }
        if step.requires_action:
            link.report_state(session, "requires_action")
        reply = link.request("elicitation/create", params, run)
        self.check_cancel(run)
        if step.requires_action:
            link.report_state(session, "running")
        result = (reply or {}).get("result")
        action = result.get("action") if isinstance(result, dict) else "cancel"
        link.log(f"elicitation: {action!r}")
        branch = step.branches.get(str(action), step.branches.get("default", []))
        self.run_steps(run, branch)

    def start_background(self, run: TurnRun, step: Background) -> None:
        """Start work that outlives the turn.

        "Background work": items are announced before they are listed, and
        finalised before they are removed; every change re-sends the state.
        """
        link, session = self.link, run.session
        item = BackgroundItem(step.kind, run.fill(step.id), step.cancellable)
        capabilities: dict[str, Any] = {"cancel": {}} if step.cancellable else {}
        if step.kind == "terminal":
            announce: dict[str, Any] = {
                "sessionUpdate": "terminal_update",
                "terminalId": item.id,
                "command": run.fill(step.title),
                "cwd": session.cwd,
                "capabilities": capabilities,
            }
        else:
            announce = {
                "sessionUpdate": "tool_call_update",
                "toolCallId": item.id,
                "title": run.fill(step.title),
                "kind": "execute",
                "status": "in_progress",
                "capabilities": capabilities,
            }
        link.emit(session, announce)
        with link.cond:
            session.background[item.id] = item
        link.report_state(session)

        def finish_later() -> None:
            import base64  # only background terminals need it: not loaded at start-up

            stopped = item.stop.wait(step.seconds)
            if item.kind == "terminal":
                exit_status = {"signal": "SIGTERM"} if stopped else {"exitCode": 0}
                final = {
                    "sessionUpdate": "terminal_update",
                    "terminalId": item.id,
                    # TerminalOutput.data is base64 of the output bytes (schema).
                    "output": {
                        "data": base64.b64encode(b"stopped\n" if stopped else b"done\n").decode()
                    },
                    "exitStatus": exit_status,
                }
            else:
                final = {
                    "sessionUpdate": "tool_call_update",
                    "toolCallId": item.id,
                    "status": "cancelled" if stopped else "completed",
                }
            link.emit(session, final)
            with link.cond:
                session.background.pop(item.id, None)
                link.cond.notify_all()
            link.report_state(session)

        link.spawn(finish_later, f"bg-{item.id}")

    def flood(self, run: TurnRun, step: Flood) -> None:
        """Stream ``count`` chunks fast: one pre-encoded line, written in batches.

        Not kept for replay (a flood is a benchmark, not a conversation).
        """
        update = {
            "sessionUpdate": "agent_message_chunk",
            "messageId": run.new_id("agent"),
            "content": {"type": "text", "text": step.text},
        }
        line = encode(
            notification("session/update", {"sessionId": run.session.id, "update": update})
        )
        remaining = step.count
        while remaining > 0:
            self.check_cancel(run)
            n = min(step.batch, remaining)
            self.link.wire.write(line * n)
            remaining -= n


def _permission_event(
    run: TurnRun, step: Permission, reply: dict[str, Any] | None, outcome: Any
) -> dict[str, Any]:
    """The ``permission`` event: what the client answered (``_expect.py``)."""
    event: dict[str, Any] = {
        "event": "permission",
        "turn": run.expectation,
        "label": step.label,
        "title": run.fill(step.title),
    }
    if reply is None:
        event["outcome"] = "withdrawn"  # cancelled first: the request was withdrawn
    elif not isinstance(outcome, dict):
        event["outcome"] = "error"
        event["error"] = reply.get("error")
    else:
        event["outcome"] = outcome.get("outcome")
        option_id = outcome.get("optionId")
        if option_id is not None:
            kinds = {o.get("optionId"): o.get("kind") for o in step.options}
            event["option_id"] = option_id
            event["kind"] = kinds.get(option_id)
    return event
