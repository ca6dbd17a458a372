"""The v1 translator (sans-IO core, bytes only): sessions: updates before the
session/new answer, resume as session/load (replay) or session/resume, a lost
connection, an update for an unknown session."""

from __future__ import annotations

import pytest

from acp_lite.core import ClientConnection, SessionOpened
from acp_lite.errors import AgentExited, UnsupportedInV1
from acp_lite.protocol import ResumeSessionResponse
from tests.core.v1_wire import (
    MODES,
    V1_INIT,
    V2_INIT_PARAMS,
    chunk,
    prompt,
    result,
    sent,
    update,
    v1_conn,
)


def test_early_updates_are_translated_when_session_new_answers() -> None:
    conn = ClientConnection()
    init = conn.initialize(V2_INIT_PARAMS)
    conn.receive_data(result(init.id, V1_INIT))
    entry = conn.send_request("session/new", {"cwd": "/w", "mcpServers": []})
    conn.receive_data(
        update("s1", {"sessionUpdate": "current_mode_update", "currentModeId": "code"})
    )
    assert conn.sessions == {}
    conn.receive_data(result(entry.id, {"sessionId": "s1", "modes": MODES}))
    assert any(isinstance(e, SessionOpened) for e in conn.next_events())
    model = conn.sessions["s1"].model
    assert model.config_options[0].current_value == "code"


def test_resume_is_session_load_with_replay() -> None:
    conn = ClientConnection()
    init = conn.initialize(V2_INIT_PARAMS)
    conn.receive_data(result(init.id, V1_INIT))
    conn.data_to_send()
    entry = conn.resume("old", {"sessionId": "old", "cwd": "/w"}, replay=True)
    (req,) = sent(conn)
    assert req["method"] == "session/load"
    assert req["params"] == {"sessionId": "old", "cwd": "/w", "mcpServers": []}
    history = [
        chunk("question 1", "user_message_chunk"),
        chunk("answer ", "agent_message_chunk"),
        chunk("1", "agent_message_chunk"),
        chunk("question 2", "user_message_chunk"),
        chunk("answer 2", "agent_message_chunk"),
    ]
    conn.receive_data(b"".join(update("old", h) for h in history))
    conn.receive_data(result(entry.id, {"modes": MODES}))
    assert entry.error is None and isinstance(entry.result, ResumeSessionResponse)
    model = conn.sessions["old"].model
    assert [e.replayed for e in model.events] == [True] * 6
    texts = [(m.kind, m.text) for m in model.timeline]
    assert texts == [
        ("user_message", "question 1"),
        ("agent_message", "answer 1"),
        ("user_message", "question 2"),
        ("agent_message", "answer 2"),
    ]
    assert model.events[-1].synthesized and model.state == "idle"
    assert model.config_options[0].config_id == "mode"
    assert model.violations == []
    assert conn.sessions["old"].replaying is False
    # Live again: a prompt works.
    entry, sub = conn.prompt("old", [{"type": "text", "text": "q3"}])
    conn.receive_data(update("old", chunk("a3")) + result(entry.id, {"stopReason": "end_turn"}))
    assert model.text(sub) == "a3" and not model.events[-1].replayed


def test_load_without_replay_asked_still_marks_the_history_replayed() -> None:
    conn = ClientConnection()
    init = conn.initialize(V2_INIT_PARAMS)
    conn.receive_data(result(init.id, V1_INIT))
    conn.data_to_send()
    entry = conn.resume("old", {"sessionId": "old", "cwd": "/w"}, replay=False)
    (req,) = sent(conn)
    assert req["method"] == "session/load"  # the only way this agent resumes
    conn.receive_data(update("old", chunk("q", "user_message_chunk")) + result(entry.id, {}))
    assert [e.replayed for e in conn.sessions["old"].model.events] == [True, True]


def test_connection_lost_keeps_an_inserted_v1_prompt_result() -> None:
    conn = v1_conn()
    entry, sub, _ = prompt(conn)
    conn.receive_data(update("s1", chunk("a")))
    conn.connection_lost(AgentExited("gone", returncode=1))
    assert entry.error is None and entry.result.message_id == sub.message_id


def test_resume_needs_load_session() -> None:
    caps = {**V1_INIT, "agentCapabilities": {"loadSession": False}}
    conn = ClientConnection()
    init = conn.initialize(V2_INIT_PARAMS)
    conn.receive_data(result(init.id, caps))
    conn.data_to_send()
    with pytest.raises(UnsupportedInV1, match="loadSession"):
        conn.resume("old", {"sessionId": "old", "cwd": "/w"}, replay=True)
    assert conn.data_to_send() == b"" and "old" not in conn.sessions


def test_resume_without_replay_uses_v1_resume_when_advertised() -> None:
    caps = {**V1_INIT, "agentCapabilities": {"sessionCapabilities": {"resume": {}}}}
    conn = ClientConnection()
    init = conn.initialize(V2_INIT_PARAMS)
    conn.receive_data(result(init.id, caps))
    conn.data_to_send()
    entry = conn.resume("old", {"sessionId": "old", "cwd": "/w"}, replay=False)
    (req,) = sent(conn)
    assert req["method"] == "session/resume"
    conn.receive_data(result(entry.id, {}))
    assert entry.error is None and conn.sessions["old"].model.state == "idle"


def test_update_for_an_unknown_session_is_logged() -> None:
    conn = v1_conn()
    conn.receive_data(update("nope", chunk("x")))
    assert [e.kind for e in conn.log][-1] == "unknown_session_update"
    assert len(conn.sessions["s1"].model.events) == 0
