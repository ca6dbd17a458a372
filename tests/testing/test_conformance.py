"""The project's own conformance rules (acp_lite.model) find nothing wrong with the
regular scenarios: the raw transcript is fed to a SessionModel the way a connection
would feed it (issue 5: "the project's conformance checks pass on every built-in
scenario except the deliberately broken ones")."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from acp_lite.model import SessionModel
from acp_lite.protocol import SessionUpdate, converter
from acp_lite.testing import SCENARIOS

from ._agentproc import AgentProcess, drive_turn

Spawn = Callable[..., AgentProcess]

SKIPPED_BY_DESIGN = {
    "crash": "exits mid-turn",
    "hang": "never finishes a turn",
    "unresponsive": "never answers initialize",
    "wrong_protocol_version": "not a v2 agent",
    "flood": "a benchmark (covered by test_scenarios)",
    "oversize_line": "tests a client limit (covered by test_scenarios)",
    "many_sessions": "stored sessions only (covered by the resume tests)",
}
CANCELLED = {"slow_cancel"}
REGULAR = sorted(n for n in SCENARIOS if not n.startswith("broken_") and n not in SKIPPED_BY_DESIGN)


def model_violations(agent: AgentProcess, session_id: str, prompt_id: int, start: int,
                     cancel_at: int | None) -> list[tuple[str, str]]:  # fmt: skip
    """Replay the received messages into a SessionModel; its violations."""
    model = SessionModel()
    for index, message in enumerate(agent.messages):
        if index == start:
            model.submit(prompt_id)
        if index == cancel_at:
            model.cancel_sent()
        if message.get("method") == "session/update":
            update = message["params"]["update"]
            model.apply(
                converter.structure(update, SessionUpdate),  # type: ignore[arg-type]
                raw=update,
                session_id=message["params"]["sessionId"],
            )
        elif message.get("id") == prompt_id:
            if "result" in message:
                model.prompt_accepted(prompt_id, message["result"].get("messageId"))
            else:
                model.prompt_rejected(prompt_id, message["error"])
    model.finish()
    return [(v.rule, v.message) for v in model.violations]


@pytest.mark.parametrize("name", REGULAR)
def test_regular_scenarios_have_no_model_violations(spawn: Spawn, name: str) -> None:
    agent = spawn(name)
    if name == "auth_required":
        agent.call("initialize", {"protocolVersion": 2, "info": {"name": "t", "version": "1"}})
        agent.call("auth/login", {"methodId": "token"})
        sid = agent.call("session/new", {"cwd": "/tmp"})["sessionId"]
    else:
        sid = agent.start_session("/tmp", capabilities={"elicitation": {"form": {}}})
    start, cancel_at = len(agent.messages), None
    if name in CANCELLED:
        rid = agent.prompt(sid, "hello")
        agent.response(rid)
        cancel_at = len(agent.messages)
        agent.notify("session/cancel", {"sessionId": sid})
        agent.wait_idle(sid, "cancelled")
    else:
        rid = drive_turn(agent, sid, "hello")
    if name == "background":  # until the background work is finalised and unlisted
        agent.wait_for(lambda m: m.get("method") == "session/update"
                       and m["params"]["update"].get("background") == []
                       and m["params"]["update"].get("state") == "idle"
                       and "stopReason" not in m["params"]["update"])  # fmt: skip
    assert agent.call("_sync") == {"echo": {}}
    assert model_violations(agent, sid, rid, start, cancel_at) == []
