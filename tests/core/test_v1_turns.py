"""The v1 translator (sans-IO core, bytes only): prompt turns: the synthesized v2
states and user message, message ids, one prompt at a time, errors, cancel."""

from __future__ import annotations

import pytest

from acp_lite.core import ResponseArrived
from acp_lite.errors import InternalError, PromptRejected, Unsupported, UnsupportedInV1
from acp_lite.protocol import PromptResponse
from tests.core.v1_wire import chunk, error, prompt, result, sent, sources, update, v1_conn


def test_echo_turn() -> None:
    conn = v1_conn()
    entry, sub, req = prompt(conn, "hello")
    assert req["method"] == "session/prompt"
    assert req["params"] == {"sessionId": "s1", "prompt": [{"type": "text", "text": "hello"}]}
    model = conn.sessions["s1"].model
    assert sub.status == "pending" and not entry.done and model.state == "running"
    conn.receive_data(update("s1", chunk("hel")))
    # Inserted at the first update: running, the user message, and the prompt
    # answered with its messageId (as a v2 prompt response would).
    assert sub.status == "inserted" and sub.message_id == f"v1-prompt-{entry.id}"
    assert model.state == "running"
    assert entry.done and isinstance(entry.result, PromptResponse)
    assert entry.result.message_id == sub.message_id
    assert conn.next_events() == [ResponseArrived(entry)]
    conn.receive_data(update("s1", chunk("lo")))
    conn.receive_data(result(entry.id, {"stopReason": "end_turn"}))
    assert conn.next_events() == []  # the prompt was reported at insertion
    assert sub.done and sub.stop_reason == "end_turn"
    assert model.state == "idle" and model.stop_reason == "end_turn" and model.is_quiet
    assert model.text(sub) == "hello"
    assert entry.result.extra["stopReason"] == "end_turn"
    user = model.entity("user_message", sub.message_id)
    assert user.text == "hello"
    assert sources(conn) == [
        ("state_update", "v1:synthesized"),
        ("user_message", "v1:synthesized"),
        ("agent_message_chunk", "v1:session/update"),
        ("agent_message_chunk", "v1:session/update"),
        ("state_update", "v1:synthesized"),
    ]
    events = list(model.events)
    assert [e.synthesized for e in events] == [True, True, False, False, True]
    assert events[2].raw == chunk("hel")  # the v1 payload as received
    assert events[2].update.message_id == f"v1-{entry.id}-agent"
    assert model.violations == []


def test_response_without_updates_still_inserts_then_idles() -> None:
    conn = v1_conn()
    entry, sub, _ = prompt(conn)
    conn.receive_data(result(entry.id, {"stopReason": "refusal"}))
    assert sub.status == "inserted" and sub.done and sub.stop_reason == "refusal"
    assert conn.next_events() == [ResponseArrived(entry)]
    assert [t for t, _ in sources(conn)] == ["state_update", "user_message", "state_update"]


def test_next_turn_gets_new_message_ids() -> None:
    conn = v1_conn()
    first, sub1, _ = prompt(conn, "one")
    conn.receive_data(update("s1", chunk("A")) + result(first.id, {"stopReason": "end_turn"}))
    second, sub2, _ = prompt(conn, "two")
    conn.receive_data(update("s1", chunk("B")) + result(second.id, {"stopReason": "end_turn"}))
    model = conn.sessions["s1"].model
    assert model.text(sub1) == "A" and model.text(sub2) == "B"
    assert sub2.message_id != sub1.message_id and model.completions == 2
    # A chunk after the turn ended is a message of its own.
    conn.receive_data(update("s1", chunk("late")))
    assert model.timeline[-1].text == "late" and model.text(sub2) == "B"


def test_an_echoed_prompt_is_the_user_message() -> None:
    conn = v1_conn()
    entry, sub, _ = prompt(conn, "hello")
    conn.receive_data(update("s1", chunk("hel", "user_message_chunk")))
    conn.receive_data(update("s1", chunk("lo", "user_message_chunk")))
    conn.receive_data(update("s1", chunk("hi")) + update("s1", chunk("!", "user_message_chunk")))
    conn.receive_data(result(entry.id, {"stopReason": "end_turn"}))
    model = conn.sessions["s1"].model
    assert sub.done and sub.user_message is not None and sub.user_message.text == "hello"
    assert [(m.kind, m.text) for m in model.timeline] == [
        ("user_message", "hello"),
        ("agent_message", "hi"),
        ("user_message", "!"),
    ]
    assert [t for t, _ in sources(conn)][:2] == ["state_update", "user_message_chunk"]


def test_chunk_with_message_id_keeps_it() -> None:
    conn = v1_conn()
    prompt(conn)
    conn.receive_data(update("s1", {**chunk("x"), "messageId": "m-1"}))
    assert conn.sessions["s1"].model.entity("agent_message", "m-1").text == "x"


def test_second_prompt_during_a_turn_is_refused_before_sending() -> None:
    conn = v1_conn()
    entry, _, _ = prompt(conn)
    with pytest.raises(UnsupportedInV1, match="one prompt at a time") as info:
        conn.prompt("s1", [{"type": "text", "text": "again"}])
    assert isinstance(info.value, Unsupported)
    assert conn.data_to_send() == b""
    assert len(conn.sessions["s1"].model.submissions) == 1
    conn.receive_data(result(entry.id, {"stopReason": "end_turn"}))
    prompt(conn)  # allowed once the turn ended


def test_prompt_error_before_updates_is_a_rejection() -> None:
    conn = v1_conn()
    entry, sub, _ = prompt(conn)
    conn.receive_data(error(entry.id, -32000, "Authentication required", {"authMethods": []}))
    assert isinstance(entry.error, PromptRejected) and entry.error.code == -32000
    assert sub.status == "rejected"
    assert conn.next_events() == [ResponseArrived(entry)]
    model = conn.sessions["s1"].model
    # The running of the send, ended by the error: no user message made up.
    assert [e.tag for e in model.events] == ["state_update", "state_update"]
    assert model.state == "idle" and model.error.code == -32000
    prompt(conn)  # the turn is over


def test_prompt_error_after_updates_is_an_idle_with_error() -> None:
    conn = v1_conn()
    entry, sub, _ = prompt(conn)
    conn.receive_data(update("s1", chunk("partial")))
    conn.receive_data(error(entry.id, -32603, "model crashed"))
    model = conn.sessions["s1"].model
    assert sub.status == "inserted" and sub.done and sub.stop_reason == "error"
    assert model.state == "idle" and model.stop_reason == "error"
    assert model.error.code == -32603 and model.error.message == "model crashed"
    assert entry.error is None and entry.result.message_id == sub.message_id
    last = model.events[-1]
    assert last.synthesized and last.raw["stopReason"] == "error"
    assert not isinstance(entry.error, InternalError)


def test_cancel() -> None:
    conn = v1_conn()
    entry, sub, _ = prompt(conn)
    conn.receive_data(
        update("s1", {"sessionUpdate": "tool_call", "toolCallId": "t1", "title": "Run"})
    )
    conn.cancel("s1")
    (note,) = sent(conn)
    assert note == {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "s1"}}
    model = conn.sessions["s1"].model
    conn.receive_data(
        update("s1", {"sessionUpdate": "tool_call_update", "toolCallId": "t1", "status": "failed"})
    )
    conn.receive_data(result(entry.id, {"stopReason": "cancelled"}))
    assert sub.done and sub.stop_reason == "cancelled" and model.stop_reason == "cancelled"
    assert model.entity("tool_call", "t1").status == "failed"
