"""A v1 session runs from the moment its prompt is sent (issue 24, item 13).

v1 answers ``session/prompt`` only at the turn's end and says nothing before
the agent's first content, so ``session.state`` read ``idle`` while a prompt
was unanswered (15 s for a tool that sleeps). The ``running`` is synthesized at
the send, marked like the other made-up events; the insertion (user message,
prompt accepted) still waits for the agent's first turn content.
"""

from __future__ import annotations

from acp_lite.errors import PromptRejected

from .v1_wire import chunk, error, prompt, result, update, v1_conn


def test_running_from_the_send_until_the_response() -> None:
    conn = v1_conn()
    entry, sub, _ = prompt(conn)
    model = conn.sessions["s1"].model
    assert model.state == "running" and sub.status == "pending" and not entry.done
    (running,) = model.events
    assert running.synthesized and running.source == "v1:synthesized"
    assert running.update.background == []
    conn.receive_data(update("s1", chunk("hi")))
    assert sub.status == "inserted"
    assert [e.tag for e in model.events] == ["state_update", "user_message", "agent_message_chunk"]
    conn.receive_data(result(entry.id, {"stopReason": "end_turn"}))
    assert model.state == "idle" and sub.done and model.violations == []


def test_a_rejected_prompt_ends_the_running_in_its_error() -> None:
    conn = v1_conn()
    entry, sub, _ = prompt(conn)
    conn.receive_data(error(entry.id, -32602, "Invalid params"))
    model = conn.sessions["s1"].model
    assert isinstance(entry.error, PromptRejected) and sub.status == "rejected"
    assert model.state == "idle" and model.stop_reason == "error"
    assert model.error.code == -32602 and model.violations == []
    assert all(e.synthesized for e in model.events)


def test_a_withdrawn_prompt_ends_the_running_cancelled() -> None:
    conn = v1_conn()
    entry, sub, _ = prompt(conn)
    conn.receive_data(error(entry.id, -32800, "Request cancelled"))
    model = conn.sessions["s1"].model
    assert sub.status == "rejected"
    assert model.state == "idle" and model.stop_reason == "cancelled"
    assert model.violations == []
