"""The v1 translator (sans-IO core, bytes only): tool calls and their updates,
permission requests and the answers in the v1 shape, diff content as v2 changes."""

from __future__ import annotations

import json

from acp_lite.core import AgentRequestReceived
from acp_lite.protocol import RequestPermissionRequest
from tests.core.v1_wire import line, prompt, result, sent, update, v1_conn, validate_v1


def test_tool_call_update_and_permission_allow_and_reject() -> None:
    conn = v1_conn()
    entry, sub, _ = prompt(conn)
    conn.receive_data(
        update("s1", {"sessionUpdate": "tool_call", "toolCallId": "t1", "title": "Edit a.py"})
    )
    model = conn.sessions["s1"].model
    call = model.entity("tool_call", "t1")
    assert call.status == "pending" and call.tool_kind == "other" and call.title == "Edit a.py"
    options = [
        {"optionId": "yes", "name": "Allow", "kind": "allow_once"},
        {"optionId": "no", "name": "Reject", "kind": "reject_once"},
    ]
    ask = {
        "jsonrpc": "2.0",
        "id": "p1",
        "method": "session/request_permission",
        "params": {
            "sessionId": "s1",
            "toolCall": {"toolCallId": "t1", "status": "pending"},
            "options": options,
        },
    }
    conn.receive_data(line(ask))
    events = conn.next_events()
    (received,) = [e for e in events if isinstance(e, AgentRequestReceived)]
    req = received.request
    assert isinstance(req.params, RequestPermissionRequest)
    assert req.params.title == "Edit a.py"  # the reported tool call's title
    assert req.params.subject.tool_call.tool_call_id == "t1"
    assert req.tool_call_id == "t1" and req.session_id == "s1"
    assert [o.option_id for o in req.params.options] == ["yes", "no"]
    assert conn.data_to_send() == b""  # not answered -32602
    conn.respond("p1", {"outcome": {"outcome": "selected", "optionId": "yes"}})
    (answer,) = sent(conn, answering="session/request_permission")
    assert answer == {
        "jsonrpc": "2.0",
        "id": "p1",
        "result": {"outcome": {"outcome": "selected", "optionId": "yes"}},
    }
    # A second one, with its own title, rejected.
    ask2 = {**ask, "id": 7}
    ask2["params"] = {**ask["params"], "toolCall": {"toolCallId": "t2", "title": "rm -rf"}}
    conn.receive_data(line(ask2))
    (received,) = [e for e in conn.next_events() if isinstance(e, AgentRequestReceived)]
    assert received.request.params.title == "rm -rf"
    conn.respond(7, {"outcome": {"outcome": "selected", "optionId": "no"}})
    (answer,) = sent(conn, answering="session/request_permission")
    assert answer["result"]["outcome"] == {"outcome": "selected", "optionId": "no"}
    conn.receive_data(
        update(
            "s1",
            {
                "sessionUpdate": "tool_call_update",
                "toolCallId": "t1",
                "status": "completed",
                "content": [{"type": "content", "content": {"type": "text", "text": "done"}}],
            },
        )
    )
    assert model.entity("tool_call", "t1").status == "completed"
    conn.receive_data(result(entry.id, {"stopReason": "end_turn"}))
    assert sub.done


def test_permission_cancelled_by_session_cancel_answers_in_v1_shape() -> None:
    conn = v1_conn()
    prompt(conn)
    ask = {
        "jsonrpc": "2.0",
        "id": 3,
        "method": "session/request_permission",
        "params": {
            "sessionId": "s1",
            "toolCall": {"toolCallId": "t9"},
            "options": [{"optionId": "a", "name": "Allow", "kind": "allow_once"}],
        },
    }
    conn.receive_data(line(ask))
    assert conn.next_events()[-1].request.params.title == "Permission for tool call t9"
    conn.cancel("s1")
    lines = [json.loads(x) for x in conn.data_to_send().splitlines()]
    answers = [m for m in lines if "result" in m]
    assert answers == [{"jsonrpc": "2.0", "id": 3, "result": {"outcome": {"outcome": "cancelled"}}}]
    for msg in answers:
        validate_v1(msg, "session/request_permission")


def test_diff_content_maps_to_v2_changes_and_patch() -> None:
    conn = v1_conn()
    prompt(conn)
    diff = {"type": "diff", "path": "/w/a.py", "oldText": "a\nb\n", "newText": "a\nc\n"}
    add = {"type": "diff", "path": "/w/new.py", "newText": "x"}
    conn.receive_data(
        update(
            "s1",
            {
                "sessionUpdate": "tool_call",
                "toolCallId": "t1",
                "title": "Edit",
                "kind": "edit",
                "status": "in_progress",
                "content": [diff, add],
            },
        )
    )
    call = conn.sessions["s1"].model.entity("tool_call", "t1")
    assert call.tool_kind == "edit" and call.status == "in_progress"
    modify, added = call.content
    assert [(c.operation, c.path) for c in modify.changes] == [("modify", "/w/a.py")]
    assert modify.patch.format == "git_patch"
    assert "-b\n" in modify.patch.text and "+c\n" in modify.patch.text
    assert modify.patch.text.startswith("diff --git /w/a.py /w/a.py\n")
    assert modify.meta["acp_lite/v1"]["oldText"] == "a\nb\n"
    assert added.changes[0].operation == "add"
    assert "\\ No newline at end of file" in added.patch.text
