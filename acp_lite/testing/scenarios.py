"""Built-in scenarios of the reference agent, by name.

Each scenario is of one :func:`kind` (shown by ``--list-scenarios``):

* ``conforming``: follows the spec; the project's conformance checks
  (``pytest_acp.conformance``) find nothing in its traffic.
* ``broken``: named ``broken_*``; breaks exactly one rule on purpose, the one
  in :data:`BROKEN_RULES` (the conformance checks must catch it).
* ``fault``: listed in :data:`FAULTS`; models a dying or stuck process, a foreign
  protocol version or a client resource limit -- something a client must
  survive, not protocol output to copy. What it *does* send is spec-valid, but
  e.g. work cut short by an exited process is never reported idle (spec "Prompt
  Lifecycle", Failures: "Clients detect a lost connection or an exited Agent
  process themselves. No update can report them.").

``scenarios.get(name, count=N)`` builds one; ``count`` sizes the scenarios
that have a size (``flood``, ``many_sessions``, ``oversize_line``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from acp_lite.testing.script import (
    Background,
    Echo,
    Elicit,
    Exit,
    Fail,
    Flood,
    Hang,
    IgnoreCancel,
    Insert,
    Permission,
    Raw,
    Respond,
    Script,
    Sleep,
    Stderr,
    Step,
    Text,
    Turn,
    Update,
)

__all__ = ["BROKEN_RULES", "FAULTS", "KINDS", "SCENARIOS", "describe", "get", "kind"]

CALL = "call-{{turn}}"  # one tool call id per turn keeps ids unique in the session


def _tool(status: str, **fields: Any) -> Update:
    return Update(
        update={"sessionUpdate": "tool_call_update", "toolCallId": CALL, "status": status, **fields}
    )


def _one(name: str, description: str, *steps: Any, **script: Any) -> Script:
    return Script(name=name, description=description, turns=[Turn(steps=list(steps))], **script)


def echo(count: int | None = None) -> Script:
    return _one("echo", "Streams the prompt text back (the default agent).", Echo())


def streaming(count: int | None = None) -> Script:
    words = ["Streaming ", "a ", "reply ", "in ", "several ", "small ", "chunks."]
    return _one(
        "streaming", "Streams text in chunks with short pauses.", Text(chunks=words, delay=0.005)
    )


def thinking(count: int | None = None) -> Script:
    return _one(
        "thinking",
        "Streams a thought, then the answer.",
        Text(chunks=["Let me think ", "about that."], thought=True),
        Text(chunks=["Here is ", "my answer."]),
    )


def tool_call_permission(count: int | None = None) -> Script:
    tool_call = {"toolCallId": CALL, "title": "Write notes.txt", "kind": "edit"}
    allowed: list[Step] = [
        _tool("in_progress"),
        Update(
            update={
                "sessionUpdate": "tool_call_content_chunk",
                "toolCallId": CALL,
                "content": {"type": "content", "content": {"type": "text", "text": "writing..."}},
            }
        ),
        _tool(
            "completed",
            content=[{"type": "content", "content": {"type": "text", "text": "Wrote notes.txt"}}],
        ),
        Text(text="Done: notes.txt is written."),
    ]
    rejected: list[Step] = [_tool("failed"), Text(text="Okay, I did not write the file.")]
    return _one(
        "tool_call_permission",
        "A tool call that asks permission; allow runs it, reject skips it.",
        Update(update={"sessionUpdate": "tool_call_update", **tool_call, "status": "pending"}),
        Permission(
            title="Allow writing notes.txt?",
            tool_call={"toolCallId": CALL},
            branches={
                "allow_once": allowed,
                "allow_always": allowed,
                "reject_once": rejected,
                "reject_always": rejected,
            },
        ),
    )


def plan(count: int | None = None) -> Script:
    def plan_update(*statuses: str) -> Update:
        names = ["Read the code", "Write the fix", "Run the tests"]
        entries = [
            {"content": n, "priority": "medium", "status": s}
            for n, s in zip(names, statuses, strict=True)
        ]
        body = {"type": "items", "planId": "plan-{{turn}}", "entries": entries}
        return Update(update={"sessionUpdate": "plan_update", "plan": body})

    return _one(
        "plan",
        "Reports a plan and updates its entries as work proceeds.",
        plan_update("pending", "pending", "pending"),
        plan_update("completed", "in_progress", "pending"),
        plan_update("completed", "completed", "completed"),
        Text(text="All planned steps are done."),
    )


def usage(count: int | None = None) -> Script:
    cost = {"amount": 0.0042, "currency": "USD"}
    return _one(
        "usage",
        "Reports context usage and cost.",
        Text(text="Counting tokens."),
        Update(
            update={"sessionUpdate": "usage_update", "used": 1200, "size": 200000, "cost": cost}
        ),
    )


def notice(count: int | None = None) -> Script:
    note = {
        "sessionUpdate": "notice",
        "severity": "warning",
        "title": "Model request retried",
        "description": "The first request timed out; the retry succeeded.",
    }
    return _one(
        "notice", "Sends a live notice during the turn.", Update(update=note), Text(text="Ok.")
    )


def compaction(count: int | None = None) -> Script:
    cid = "compaction-{{turn}}"
    return _one(
        "compaction",
        "Compacts the context: in progress, a streamed summary, completed.",
        Update(
            update={
                "sessionUpdate": "compaction_update",
                "compactionId": cid,
                "status": "in_progress",
            }
        ),
        Update(
            update={
                "sessionUpdate": "compaction_summary_chunk",
                "compactionId": cid,
                "content": {"type": "text", "text": "Summary of the earlier conversation."},
            }
        ),
        Update(
            update={
                "sessionUpdate": "compaction_update",
                "compactionId": cid,
                "status": "completed",
            }
        ),
        Text(text="Context compacted."),
    )


def background(count: int | None = None) -> Script:
    return _one(
        "background",
        "Starts background work that finishes shortly after idle.",
        Background(id="bg-{{turn}}", title="Index the repository", seconds=0.3),
        Text(text="Indexing runs in the background."),
    )


def slow_cancel(count: int | None = None) -> Script:
    return _one(
        "slow_cancel",
        "Slow work (about 30 s) with a running tool call; honours session/cancel.",
        _tool("in_progress", title="Long computation", kind="execute"),
        Text(chunks=[f"step {i} " for i in range(1, 6)], delay=0.02),
        Sleep(seconds=30),
        _tool("completed"),
        Text(text="Finished."),
    )


def failure(count: int | None = None) -> Script:
    return _one(
        "failure",
        "Fails after insertion: idle with stopReason error; the tool call is marked failed.",
        _tool("in_progress", title="Call the model", kind="fetch"),
        Text(text="Starting..."),
        Fail(code=-32603, message="Model provider unavailable"),
    )


def updates_before_response(count: int | None = None) -> Script:
    return _one(
        "updates_before_response",
        "Inserts, streams output, and only then sends the prompt response.",
        Insert(respond=False, response_first=False),
        Text(chunks=["Output ", "before ", "the response."]),
        Respond(),
    )


def custom_update(count: int | None = None) -> Script:
    custom = {"sessionUpdate": "_acp_lite/progress", "percent": 50, "label": "halfway"}
    return _one(
        "custom_update",
        "Sends a custom _-prefixed session update.",
        Update(update=custom),
        Text(text="Ok."),
    )


def crash(count: int | None = None) -> Script:
    return _one(
        "crash",
        "Crashes mid-turn: writes to stderr and exits with code 3.",
        Text(text="About to crash..."),
        Stderr(text="fatal: simulated crash in the reference agent"),
        Exit(code=3),
    )


def elicitation(count: int | None = None) -> Script:
    return _one(
        "elicitation",
        "Asks for a form (elicitation/create) and answers according to the action.",
        Elicit(
            message="What is your name?",
            branches={
                "accept": [Text(text="Thanks!")],
                "decline": [Text(text="No problem.")],
                "cancel": [Text(text="Cancelled the form.")],
                "unsupported": [Text(text="Your client cannot show forms.")],
            },
        ),
    )


def steering(count: int | None = None) -> Script:
    return Script(
        name="steering",
        description="Slow turns; a prompt sent while busy is inserted at once (while_busy=insert).",
        turns=[Turn(steps=[Echo(delay=0.02), Sleep(seconds=0.3)])],
        while_busy="insert",
    )


def queueing(count: int | None = None) -> Script:
    return Script(
        name="queueing",
        description="Slow turns; prompts sent during work are held until the next turn.",
        turns=[Turn(steps=[Echo(), Sleep(seconds=0.3)])],
    )


def flood(count: int | None = None) -> Script:
    n = 200_000 if count is None else count
    return _one(
        "flood", f"Streams {n} agent_message_chunk updates as fast as possible.", Flood(count=n)
    )


def many_sessions(count: int | None = None) -> Script:
    n = 12 if count is None else count
    sessions = []
    for i in range(1, n + 1):
        history = [
            {"sessionUpdate": "user_message", "messageId": "user-1",
             "content": [{"type": "text", "text": f"question {i}"}]},
            {"sessionUpdate": "agent_message", "messageId": "agent-1-1",
             "content": [{"type": "text", "text": f"answer {i}"}]},
        ]  # fmt: skip
        sessions.append(
            {"sessionId": f"stored-{i}", "cwd": "/tmp", "title": f"Stored {i}", "history": history}
        )
    return Script(
        name="many_sessions",
        description=f"{n} stored sessions (cwd /tmp) with history, 5 per session/list page.",
        sessions=sessions,
    )


def auth_required(count: int | None = None) -> Script:
    return Script(
        name="auth_required", description="session/new needs auth/login first.", auth_required=True
    )


def updates_before_session_response(count: int | None = None) -> Script:
    commands = [{"type": "command", "name": "help", "description": "Show help"}]
    return Script(
        name="updates_before_session_response",
        description="Sends available commands and a state for a new session before its response.",
        session_updates=[
            {"sessionUpdate": "available_commands_update", "availableCommands": commands},
            {"sessionUpdate": "state_update", "state": "idle", "background": []},
        ],
    )


def hang(count: int | None = None) -> Script:
    return _one(
        "hang", "Reports running, then never inserts or answers the prompt.", Hang(), Insert()
    )


def unresponsive(count: int | None = None) -> Script:
    return Script(
        name="unresponsive", description="Never answers initialize.", unresponsive=["initialize"]
    )


def ignore_sigterm(count: int | None = None) -> Script:
    return Script(
        name="ignore_sigterm",
        description="Echo agent that ignores SIGTERM and stays alive after stdin closes.",
        ignore_sigterm=True,
        linger=-1,
    )


def wrong_protocol_version(count: int | None = None) -> Script:
    return Script(
        name="wrong_protocol_version",
        description="Answers initialize with version 1.",
        protocol_version=1,
    )


def oversize_line(count: int | None = None) -> Script:
    size = 40 * 1024 * 1024 if count is None else count
    head = (
        '{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"{{session_id}}",'
        '"update":{"sessionUpdate":"agent_message_chunk","messageId":"big-{{turn}}",'
        '"content":{"type":"text","text":"'
    )
    return _one(
        "oversize_line",
        f"Sends one valid update line of about {size} bytes, then normal text.",
        Raw(text=head, newline=False),
        Raw(text="x", repeat=size, newline=False),
        Raw(text='"}}}}'),
        Text(text="Still here after the big line."),
    )


# -- deliberately broken ----------------------------------------------------


def broken_no_running(count: int | None = None) -> Script:
    return Script(
        name="broken_no_running",
        description="BROKEN: never reports running when work starts.",
        turns=[Turn(steps=[Echo()], running=False)],
    )


def broken_chunk_without_message_id(count: int | None = None) -> Script:
    chunk = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "no id"}}
    return _one(
        "broken_chunk_without_message_id",
        "BROKEN: an agent_message_chunk without messageId.",
        Update(update=chunk),
    )


def broken_bad_stop_reason(count: int | None = None) -> Script:
    return Script(
        name="broken_bad_stop_reason",
        description="BROKEN: ends with the unknown, non-underscore stop reason 'finished'.",
        turns=[Turn(steps=[Echo()], stop_reason="finished")],
    )


def broken_stdout_garbage(count: int | None = None) -> Script:
    return _one(
        "broken_stdout_garbage",
        "BROKEN: prints a non-JSON line and a JSON non-message on stdout mid-turn.",
        Text(text="before garbage"),
        Raw(text="this is not JSON {"),
        Raw(text='{"hello": "not a JSON-RPC message"}'),
        Text(text="after garbage"),
    )


def broken_no_user_message_echo(count: int | None = None) -> Script:
    return _one(
        "broken_no_user_message_echo",
        "BROKEN: answers with a messageId but never reports the user_message.",
        Insert(user_message=False),
        Echo(),
    )


def broken_wrong_session_id(count: int | None = None) -> Script:
    chunk = {"sessionUpdate": "agent_message_chunk", "messageId": "agent-{{turn}}-x",
             "content": {"type": "text", "text": "lost"}}  # fmt: skip
    return _one(
        "broken_wrong_session_id",
        "BROKEN: sends an update for a session id that does not exist.",
        Update(update=chunk, session_id="sess-does-not-exist"),
        Echo(),
    )


def broken_no_idle(count: int | None = None) -> Script:
    return Script(
        name="broken_no_idle",
        description="BROKEN: never reports idle after the work.",
        turns=[Turn(steps=[Echo()], idle=False)],
    )


def broken_cancel_not_confirmed(count: int | None = None) -> Script:
    return Script(
        name="broken_cancel_not_confirmed",
        description=(
            "BROKEN: reads session/cancel and goes on: answers the client's next request, "
            "then ends the work with stopReason end_turn instead of cancelled."
        ),
        # Its answer to a later request proves it read the cancel (else they may have
        # crossed); the text first lets a v1 client see that the turn runs.
        turns=[
            Turn(
                steps=[Text(text="working"), IgnoreCancel(timeout=30)],
                cancel_stop_reason="end_turn",
            )
        ],
    )


def broken_idle_before_running(count: int | None = None) -> Script:
    extra_idle = {
        "sessionUpdate": "state_update",
        "state": "idle",
        "stopReason": "end_turn",
        "background": [],
    }
    return _one(
        "broken_idle_before_running",
        "BROKEN: reports a completing idle, then streams output without a new running.",
        Text(text="first"),
        Update(update=extra_idle),
        Text(text="output after idle, no running"),
    )


def broken_tool_call_reopened(count: int | None = None) -> Script:
    return _one(
        "broken_tool_call_reopened",
        "BROKEN: gives a completed tool call a non-final status again.",
        _tool("in_progress", title="Run once", kind="execute"),
        _tool("completed"),
        _tool("in_progress"),
        _tool("completed"),
    )


def broken_duplicate_message_id(count: int | None = None) -> Script:
    return _one(
        "broken_duplicate_message_id",
        "BROKEN: every inserted prompt gets the same messageId 'user-1'.",
        Insert(message_id="user-1"),
        Echo(),
    )


def broken_background_not_announced(count: int | None = None) -> Script:
    listed = {
        "sessionUpdate": "state_update",
        "state": "running",
        "background": [{"type": "tool_call", "toolCallId": "never-announced"}],
    }
    return _one(
        "broken_background_not_announced",
        "BROKEN: lists a background tool call that was never announced.",
        Update(update=listed),
        Echo(),
    )


SCENARIOS: dict[str, Callable[[int | None], Script]] = {
    f.__name__: f
    for f in (
        echo,
        streaming,
        thinking,
        tool_call_permission,
        plan,
        usage,
        notice,
        compaction,
        background,
        slow_cancel,
        failure,
        updates_before_response,
        custom_update,
        crash,
        elicitation,
        steering,
        queueing,
        flood,
        many_sessions,
        auth_required,
        updates_before_session_response,
        hang,
        unresponsive,
        ignore_sigterm,
        wrong_protocol_version,
        oversize_line,
        broken_no_running,
        broken_chunk_without_message_id,
        broken_bad_stop_reason,
        broken_stdout_garbage,
        broken_no_user_message_echo,
        broken_wrong_session_id,
        broken_no_idle,
        broken_cancel_not_confirmed,
        broken_idle_before_running,
        broken_tool_call_reopened,
        broken_duplicate_message_id,
        broken_background_not_announced,
    )
}


#: The ``fault`` scenarios and what each models.
FAULTS: dict[str, str] = {
    "crash": "a process that dies mid-turn (exit code 3)",
    "hang": "a process stuck mid-turn that answers nothing, not even a cancel",
    "unresponsive": "a process that never answers initialize",
    "wrong_protocol_version": "an agent speaking protocol version 1",
    "oversize_line": "a line over the client's 32 MiB limit (acp_lite.limits), by default",
    "ignore_sigterm": "a process that survives SIGTERM and a closed stdin",
}

#: The conformance rule (``python -m pytest_acp explain RULE``) that each ``broken``
#: scenario breaks.
BROKEN_RULES: dict[str, str] = {
    "broken_no_running": "idle-without-running",
    "broken_chunk_without_message_id": "chunk-without-message-id",
    "broken_bad_stop_reason": "unknown-stop-reason",
    "broken_stdout_garbage": "stdout-not-jsonrpc",
    "broken_no_user_message_echo": "user-message-not-echoed",
    "broken_wrong_session_id": "update-unknown-session",
    "broken_no_idle": "work-not-ended",
    "broken_cancel_not_confirmed": "cancel-not-cancelled",
    "broken_idle_before_running": "output-while-idle",
    "broken_tool_call_reopened": "tool-call-reopened",
    "broken_duplicate_message_id": "duplicate-submission-message-id",
    "broken_background_not_announced": "background-item-not-announced",
}

KINDS = ("conforming", "broken", "fault")


def kind(name: str) -> str:
    """``"broken"``, ``"fault"`` or ``"conforming"`` for the scenario ``name``."""
    if name not in SCENARIOS:
        get(name)  # raises the KeyError that lists the known names
    if name.startswith("broken_"):
        return "broken"
    return "fault" if name in FAULTS else "conforming"


def get(name: str, count: int | None = None) -> Script:
    """The scenario ``name`` (``count`` sizes flood/many_sessions/oversize_line)."""
    try:
        factory = SCENARIOS[name]
    except KeyError:
        known = ", ".join(sorted(SCENARIOS))
        raise KeyError(f"unknown scenario {name!r}; known: {known}") from None
    return factory(count)


def describe(name: str) -> str:
    """One line describing the scenario."""
    return get(name).description
