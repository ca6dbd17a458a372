"""The scenarios of the grading agent (:mod:`.grade_agent`), v2 and v1.

Each scenario is one connection: ``initialize``, ``session/new``, then the turn of
the client's first prompt plays the scenario. :data:`SCENARIOS` maps a name to what
it provokes; ``acp_lite.grading`` knows the reply text each one must leave
(:data:`REPLIES`) and judges the log. v1 turns block on ``session/prompt`` and end
with its response; v2 turns confirm insertion and end with ``idle``.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Callable
from typing import Any

from acp_lite.testing.grade_agent import GradeAgent

__all__ = [
    "LONG_TEXT_SIZE",
    "READ_FILE",
    "READ_TEXT",
    "REPLIES",
    "SCENARIOS",
    "TERMINAL_TEXT",
    "WRITE_FILE",
    "WRITE_TEXT",
    "before_session",
    "initialize",
    "main",
    "new_session",
    "turn",
]

#: Scenario name -> what it provokes (``acp-lite grade-client --list`` prints these).
SCENARIOS: dict[str, str] = {
    "basics": "a plain turn whose idle comes before the prompt response (v2)",
    "patches": "agent_message upserts: replace, omit, null, then chunks (v2)",
    "unknown": "unknown requests, notifications, update variants and fields",
    "early": "session updates before the session/new response",
    "requests": "a permission request, a form (v2), fs reads and writes and a terminal (v1)",
    "batch": "a batch of two requests and a notification, then an empty batch",
    "long_line": "one 2 MiB line of agent text",
    "cancel": "the grader interrupts the client mid-turn; a permission request follows",
}

#: Scenario -> the reply text the client must hold when the turn ends.
REPLIES: dict[str, str] = {
    "basics": "Hello from the grader.",
    "patches": "CDE",
    "unknown": "Still here.",
    "early": "Early updates tolerated.",
    "requests": "Requests answered.",
    "batch": "Batch answered.",
    "long_line": "",  # LONG_TEXT_SIZE characters then "END": checked by size
}

LONG_TEXT_SIZE = 2 * 1024 * 1024
READ_FILE = "grade-read.txt"
"""A file the grader puts in the client's working directory (v1 ``fs/read_text_file``)."""
WRITE_FILE = "grade-written.txt"
"""The file the agent asks a v1 client to write."""
READ_TEXT = "graded by acp-lite\n"
"""What the grader puts in :data:`READ_FILE`."""
TERMINAL_TEXT = "graded"
"""What the v1 terminal's command (``echo``) prints."""
WRITE_TEXT = "written by the grader\n"
"""What the agent asks a v1 client to write to :data:`WRITE_FILE`."""

OPTIONS = [
    {"optionId": "allow", "name": "Allow once", "kind": "allow_once"},
    {"optionId": "reject", "name": "Reject", "kind": "reject_once"},
]

FORM_SCHEMA = {
    "type": "object",
    "properties": {"name": {"type": "string", "title": "Name", "default": "grader"}},
}


def initialize(agent: GradeAgent, params: dict[str, Any]) -> dict[str, Any]:
    """Negotiate: version 1 when the client asks for it, else 2."""
    asked = params.get("protocolVersion")
    agent.version = agent.forced_version or (1 if asked == 1 else 2)
    if agent.version == 1:
        # A client that asked for 2 and supports 1 speaks v1 from the answer on.
        caps = params.get("clientCapabilities")
        agent.client_capabilities = caps if isinstance(caps, dict) else {}
        return {
            "protocolVersion": 1,
            "agentCapabilities": {"loadSession": False},
            "authMethods": [],
            "agentInfo": {"name": "acp-lite-grader", "version": "1"},
        }
    caps = params.get("capabilities")
    agent.client_capabilities = caps if isinstance(caps, dict) else {}
    return {
        "protocolVersion": 2,
        "info": {"name": "acp-lite-grader", "version": "1"},
        "capabilities": {},
    }


def new_session(agent: GradeAgent) -> dict[str, Any]:
    """The ``session/new`` result."""
    return {"sessionId": agent.session_id}


def before_session(agent: GradeAgent) -> None:
    """``early``: updates for the new session, sent before its response."""
    if agent.scenario != "early":
        return
    agent.event("early_updates")
    agent.update({"sessionUpdate": "session_info_update", "title": "Grading"})
    commands = [{"name": "grade", "description": "Run the grader"}]
    agent.update({"sessionUpdate": "available_commands_update", "availableCommands": commands})
    if agent.version == 2:
        agent.update({"sessionUpdate": "state_update", "state": "idle", "background": []})


# -- the turn -----------------------------------------------------------------------


def turn(agent: GradeAgent, rid: Any) -> None:
    """Play the scenario as the turn of the prompt ``rid``; later prompts just echo."""
    body = BODIES.get(agent.scenario, _plain) if agent.turns == 1 else _plain
    if agent.version == 1:
        stop = body(agent)
        agent.result(rid, {"stopReason": stop})
        return
    message_id = f"user-{agent.turns}"
    if agent.scenario == "basics" and agent.turns == 1:
        # The idle that ends the work may arrive before the prompt response
        # (prompt-lifecycle, insertion): everything comes first, the response last.
        _running(agent, message_id)
        stop = body(agent)
        _idle(agent, stop)
        agent.result(rid, {"messageId": message_id})
        return
    agent.update({"sessionUpdate": "state_update", "state": "running", "background": []})
    agent.result(rid, {"messageId": message_id})
    agent.update({"sessionUpdate": "user_message", "messageId": message_id, "content": []})
    stop = body(agent)
    _idle(agent, stop)


def _running(agent: GradeAgent, message_id: str) -> None:
    agent.update({"sessionUpdate": "state_update", "state": "running", "background": []})
    agent.update({"sessionUpdate": "user_message", "messageId": message_id, "content": []})


def _idle(agent: GradeAgent, stop: str) -> None:
    update = {"sessionUpdate": "state_update", "state": "idle", "background": []}
    agent.update({**update, "stopReason": stop})


def say(agent: GradeAgent, text: str, message: str = "reply", **extra: Any) -> None:
    """One agent text chunk (v1 chunks carry no message id)."""
    update: dict[str, Any] = {
        "sessionUpdate": "agent_message_chunk",
        "content": {"type": "text", "text": text},
    }
    if agent.version == 2:
        update["messageId"] = f"{message}-{agent.turns}"
    agent.update({**update, **extra})


def _plain(agent: GradeAgent) -> str:
    say(agent, REPLIES.get(agent.scenario) or "Hello from the grader.")
    return "end_turn"


def _patches(agent: GradeAgent) -> str:
    """agent_message is an upsert (prompt-lifecycle, "Agent reports output")."""
    if agent.version == 1:
        return _plain(agent)  # v1 messages have no upserts
    first, second = f"reply-{agent.turns}", f"other-{agent.turns}"

    def message(mid: str, **fields: Any) -> None:
        agent.update({"sessionUpdate": "agent_message", "messageId": mid, **fields})

    say(agent, "A")  # content [A]
    message(first, content=[{"type": "text", "text": "C"}])  # replaced: [C]
    say(agent, "D")  # [C, D]
    message(first, _meta={"grade": 1})  # content omitted: unchanged
    say(agent, "E")  # [C, D, E]
    message(second, content=[{"type": "text", "text": "X"}])
    message(second, content=None)  # cleared: the second message is empty
    return "end_turn"


def _unknown(agent: GradeAgent) -> str:
    """Unknown methods, notifications, variants and fields (extensibility)."""
    agent.notify("_grade/notice", {"sessionId": agent.session_id, "note": "ignore me"})
    agent.notify("grade/future_notice", {"sessionId": agent.session_id})
    agent.update({"sessionUpdate": "_grade_custom", "payload": {"x": 1}})
    agent.update({"sessionUpdate": "future_variant", "payload": [1, 2]})
    agent.event("unknown_requests")
    agent.call("_grade/ask", {"sessionId": agent.session_id})
    agent.call("grade/future_method", {"sessionId": agent.session_id})
    block = {"type": "text", "text": "here.", "futureField": {"nested": True}}
    say(agent, "Still ", futureField="kept")
    say(agent, "", content=block)
    return "end_turn"


def _requests(agent: GradeAgent) -> str:
    """Agent-to-client requests: permission, form elicitation (v2), fs (v1)."""
    tool = {"toolCallId": "call-1", "title": "Write a file", "kind": "edit", "status": "pending"}
    if agent.version == 2:
        agent.update({"sessionUpdate": "tool_call_update", **tool})
        params: dict[str, Any] = {
            "sessionId": agent.session_id,
            "title": "Allow writing a file?",
            "options": OPTIONS,
            "subject": {"type": "tool_call", "toolCall": {"toolCallId": "call-1"}},
        }
    else:
        agent.update({"sessionUpdate": "tool_call", **tool})
        params = {"sessionId": agent.session_id, "toolCall": tool, "options": OPTIONS}
    agent.event("permission")
    agent.call("session/request_permission", params)
    caps = agent.client_capabilities
    if agent.version == 2:
        form = caps.get("elicitation")
        if isinstance(form, dict) and form.get("form") is not None:
            agent.event("elicitation")
            agent.call(
                "elicitation/create",
                {
                    "sessionId": agent.session_id,
                    "mode": "form",
                    "message": "Who is grading?",
                    "requestedSchema": FORM_SCHEMA,
                },
            )
    else:
        raw_fs = caps.get("fs")
        fs: dict[str, Any] = raw_fs if isinstance(raw_fs, dict) else {}
        cwd = os.getcwd()
        if fs.get("readTextFile"):
            agent.event("read_file")
            path = os.path.join(cwd, READ_FILE)
            agent.call("fs/read_text_file", {"sessionId": agent.session_id, "path": path})
        if fs.get("writeTextFile"):
            agent.event("write_file")
            path = os.path.join(cwd, WRITE_FILE)
            params = {"sessionId": agent.session_id, "path": path, "content": WRITE_TEXT}
            agent.call("fs/write_text_file", params)
        if caps.get("terminal") is True:
            _terminal(agent)
    say(agent, REPLIES["requests"])
    return "end_turn"


def _terminal(agent: GradeAgent) -> None:
    """v1 terminals: create, wait for the exit, read the output, release."""
    agent.event("terminal")
    sid = agent.session_id
    params = {"sessionId": sid, "command": "echo", "args": [TERMINAL_TEXT]}
    created = agent.call("terminal/create", params)
    result = (created or {}).get("result")
    terminal_id = result.get("terminalId") if isinstance(result, dict) else None
    if not isinstance(terminal_id, str):
        return
    ref = {"sessionId": sid, "terminalId": terminal_id}
    agent.call("terminal/wait_for_exit", ref)
    agent.call("terminal/output", ref)
    agent.call("terminal/release", ref)


def _batch(agent: GradeAgent) -> str:
    """A batch array of requests and a notification, then an empty batch (transports)."""
    first, a = agent.request_message("_grade/batch_a", {"n": 1})
    second, b = agent.request_message("_grade/batch_b", {"n": 2})
    note = {"jsonrpc": "2.0", "method": "_grade/batch_note", "params": {}}
    agent.event("batch", ids=[first, second])
    agent.send([a, note, b])
    agent.wait_for(lambda: first in agent.responses and second in agent.responses, 1.0)
    agent.event("empty_batch")
    agent.write_line("[]")
    agent.wait_for(lambda: None in agent.responses, 0.5)
    say(agent, REPLIES["batch"])
    return "end_turn"


def _long_line(agent: GradeAgent) -> str:
    """One line far longer than a pipe buffer (transports: lines have no limit)."""
    say(agent, "x" * LONG_TEXT_SIZE)
    say(agent, "END")
    return "end_turn"


def _cancel(agent: GradeAgent) -> str:
    """Wait for ``session/cancel``, then ask a permission of the cancelled work.

    A permission request for cancelled work must get the ``cancelled`` outcome
    (tool-calls, "Requesting permission"; prompt-lifecycle, "Cancellation").
    """
    tool = {"toolCallId": "call-1", "title": "Run a long job", "kind": "execute"}
    kind = "tool_call_update" if agent.version == 2 else "tool_call"
    agent.update({"sessionUpdate": kind, **tool, "status": "in_progress"})
    say(agent, "Working...")
    agent.event("ready_for_cancel")
    if not agent.wait_for(lambda: agent.cancelled, 10.0):
        agent.event("no_cancel")
        say(agent, " not cancelled.")
        return "end_turn"
    if agent.version == 2:
        params: dict[str, Any] = {
            "sessionId": agent.session_id,
            "title": "Allow the long job to go on?",
            "options": OPTIONS,
            "subject": {"type": "tool_call", "toolCall": {"toolCallId": "call-1"}},
        }
    else:
        params = {"sessionId": agent.session_id, "toolCall": tool, "options": OPTIONS}
    agent.event("permission_after_cancel")
    agent.call("session/request_permission", params, timeout=3.0)
    update = {"sessionUpdate": "tool_call_update", "toolCallId": "call-1", "status": "failed"}
    agent.update(update)
    agent.event("turn_end")
    return "cancelled"


BODIES: dict[str, Callable[[GradeAgent], str]] = {
    "basics": _plain,
    "patches": _patches,
    "unknown": _unknown,
    "early": _plain,
    "requests": _requests,
    "batch": _batch,
    "long_line": _long_line,
    "cancel": _cancel,
}


def main(scenario: str, log_path: str, protocol: int | None = None) -> int:
    """Run the grading agent over stdio; returns the exit code."""
    if scenario not in SCENARIOS:
        names = ", ".join(sorted(SCENARIOS))
        print(f"acp-lite-agent: unknown grading scenario {scenario!r} ({names})", file=sys.stderr)
        return 2
    # The grader interrupts the *client* (SIGINT); a client run in the same process
    # group would pass it on, and this agent must outlive it to see the cancel.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    with open(log_path, "a", encoding="utf-8") as log:
        play = sys.modules[__name__]  # this module is the Play
        agent = GradeAgent(scenario, play, log, sys.stdin, sys.stdout)
        agent.forced_version = protocol
        agent.event("start", scenario=scenario)
        agent.serve()
    return 0
