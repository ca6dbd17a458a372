"""Conformance of ACP v1 traffic: the v1 rules (``pytest_acp._conformance_v1``) apply,
the v2 rules about insertion, states and echoes never fire, and the live models
(which see v1 translated) find nothing wrong in a conforming v1 agent."""

from __future__ import annotations

import json
from typing import Any

import pytest
import trio

from acp_lite import connect_in_memory
from acp_lite.limits import Limits
from pytest_acp._tracking import Tracked, tracked_violations
from pytest_acp.conformance import RULES, check_transcript, rule_info

FAST = Limits(default_timeout=5.0)


def v1_agent(stop_reason: Any = "end_turn", tool: dict[str, Any] | None = None) -> Any:
    """A trio-native v1 agent: echoes each prompt as v1 chunks and answers it with
    ``stop_reason`` (``None``: no stopReason); ``tool``: a v1 tool_call update sent
    in each turn."""

    async def agent(stream: trio.abc.Stream) -> None:
        buf = b""

        async def send(msg: dict[str, Any]) -> None:
            await stream.send_all(json.dumps({"jsonrpc": "2.0", **msg}).encode() + b"\n")

        async def update(sid: str, body: dict[str, Any]) -> None:
            await send({"method": "session/update", "params": {"sessionId": sid, "update": body}})

        while True:
            data = await stream.receive_some()
            if not data:
                return
            buf += data
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                msg = json.loads(line)
                method, rid = msg.get("method"), msg.get("id")
                if method == "initialize":
                    result = {"protocolVersion": 1, "agentCapabilities": {}, "authMethods": []}
                    await send({"id": rid, "result": result})
                elif method == "session/new":
                    await send({"id": rid, "result": {"sessionId": "v1-s"}})
                elif method == "session/prompt":
                    sid = msg["params"]["sessionId"]
                    for block in msg["params"]["prompt"]:
                        await update(
                            sid, {"sessionUpdate": "agent_message_chunk", "content": block}
                        )
                    if tool is not None:
                        await update(sid, {"sessionUpdate": "tool_call", **tool})
                    result = {} if stop_reason is None else {"stopReason": stop_reason}
                    await send({"id": rid, "result": result})
                elif rid is not None:
                    await send({"id": rid, "error": {"code": -32601, "message": "not found"}})

    return agent


def findings(agent: Any, prompts: int = 2) -> list[Any]:
    with connect_in_memory(agent, limits=FAST, conformance=True) as client:
        assert client.protocol_version == 1
        tracked = Tracked(client, 0, None)
        session = client.new_session(cwd="/")
        for i in range(prompts):
            session.run(f"hello {i}")
        found = tracked_violations(tracked, ended=True)
        # The same traffic, saved: the connection rules alone (no v2 replay of v1).
        saved = check_transcript(client.transcript.entries(), ended=True)
        assert [v.rule for v in saved] == [v.rule for v in found if v.source == "connection"]
        return found


def test_a_conforming_v1_agent_has_no_violation() -> None:
    assert findings(v1_agent()) == []


@pytest.mark.parametrize(
    ("agent", "rule"),
    [
        (v1_agent(stop_reason=None), "v1-prompt-response-without-stop-reason"),
        (v1_agent(stop_reason="done"), "v1-unknown-stop-reason"),
        (v1_agent(tool={"toolCallId": "t1"}), "v1-tool-call-incomplete"),
    ],
    ids=["no-stop-reason", "unknown-stop-reason", "tool-call-without-title"],
)
def test_a_broken_v1_agent_breaks_its_v1_rule_and_no_v2_rule(agent: Any, rule: str) -> None:
    found = findings(agent, prompts=1)
    assert rule in {v.rule for v in found}
    assert not {v.rule for v in found if v.source == "connection"} & set(RULES) - {
        "stdout-not-jsonrpc",
        "message-not-checkable",
        "response-without-request",
        "update-unknown-session",
    }
    info = rule_info(rule)
    assert info is not None and info.spec.startswith("schema v1")
