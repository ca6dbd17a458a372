"""A saved transcript is replayed through acp_lite's core (``pytest_acp._model_replay``):
the core numbers its own requests, so a transcript of another client (its own ids)
is judged as the client that recorded it would have been, each finding at its line."""

from __future__ import annotations

import json
from typing import Any

import pytest

from acp_lite import connect_in_memory
from acp_lite.limits import Limits
from acp_lite.testing import InProcessAgent
from acp_lite.testing.scenarios import BROKEN_RULES
from pytest_acp.conformance import check_transcript

FAST = Limits(default_timeout=10.0)

#: Broken scenarios whose rule the session model checks (one the connection
#: checker too), and one where the agent asks the client something (its request id
#: is the agent's, not renumbered).
SCENARIOS = [
    "broken_chunk_without_message_id",
    "broken_no_user_message_echo",
    "broken_tool_call_reopened",
    "tool_call_permission",
]


def recorded(name: str) -> list[dict[str, Any]]:
    """The NDJSON records of one turn of scenario ``name``, as acp_lite saves them."""
    with connect_in_memory(InProcessAgent(name), limits=FAST) as client:
        session = client.new_session(cwd="/tmp")
        session.submit("hello")
        session.wait_idle()
        client.request("_acp_lite/sync")  # everything the agent sent has arrived
        return [json.loads(line) for line in client.transcript.to_ndjson().splitlines()]


def renumbered(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``records`` as a client numbering its requests "r-1", "r-2" ... would have sent
    them, saved as wire lines (``raw``) rather than decoded (``msg``)."""
    ours: set[Any] = set()
    out = []
    for record in records:
        msg = json.loads(json.dumps(record["msg"])) if "msg" in record else None
        if isinstance(msg, dict):
            is_request = "method" in msg and "id" in msg
            if record["dir"] == "send" and is_request:
                ours.add(msg["id"])
                msg["id"] = f"r-{msg['id']}"
            elif record["dir"] == "recv" and "method" not in msg and msg.get("id") in ours:
                msg["id"] = f"r-{msg['id']}"
            elif msg.get("method") == "$/cancel_request":
                msg["params"]["requestId"] = f"r-{msg['params']['requestId']}"
        if "msg" in record:
            record = {"dir": record["dir"], "raw": json.dumps(msg)}
        out.append(record)
    return out


def findings(transcript: Any) -> list[tuple[str, int | None, str | None, str]]:
    return [(v.rule, v.entry_index, v.session_id, v.source) for v in check_transcript(transcript)]


@pytest.mark.parametrize("name", SCENARIOS)
def test_another_clients_request_ids_are_judged_alike(name: str) -> None:
    records = recorded(name)
    found = findings(records)
    broken = BROKEN_RULES.get(name)
    if broken is not None:
        assert broken in {rule for rule, _, _, _ in found}
    other = renumbered(records)
    assert other != records  # the ids did change
    assert findings(other) == found


def test_decoded_records_are_judged_as_their_lines() -> None:
    records = renumbered(recorded("broken_chunk_without_message_id"))
    decoded = [{"dir": r["dir"], "msg": json.loads(r["raw"])} if "raw" in r else r for r in records]
    assert findings(decoded) == findings(records)
    assert ("chunk-without-message-id", "model") in {(f[0], f[3]) for f in findings(decoded)}


def test_a_batch_and_agent_lines_in_a_row_are_located_at_their_entries() -> None:
    def update(sid: str, mid: str | None) -> dict[str, Any]:
        text = {"type": "text", "text": "x"}
        body: dict[str, Any] = {"sessionUpdate": "agent_message_chunk", "content": text}
        if mid is not None:
            body["messageId"] = mid
        params = {"sessionId": sid, "update": body}
        return {"jsonrpc": "2.0", "method": "session/update", "params": params}

    new = {"cwd": "/", "mcpServers": []}
    records = [
        {
            "dir": "send",
            "msg": {"jsonrpc": "2.0", "id": "x", "method": "session/new", "params": new},
        },
        {"dir": "recv", "msg": {"jsonrpc": "2.0", "id": "x", "result": {"sessionId": "s1"}}},
        {"dir": "recv", "raw": "not json"},
        {"dir": "recv", "msg": update("s1", "m1")},
        {"dir": "recv", "msg": [update("s1", "m2"), update("s1", None)]},  # 4: a batch
        {"dir": "recv", "msg": update("s1", None)},  # 5
    ]
    assert [(f[0], f[1]) for f in findings(records) if f[3] == "model"] == [
        ("chunk-without-message-id", 4),
        ("chunk-without-message-id", 5),
    ]
