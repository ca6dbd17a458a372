"""Session methods of the reference agent: list, resume + replay, close, delete, config, auth."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ._agentproc import RawAgent

Spawn = Callable[..., RawAgent]
INIT = {"protocolVersion": 2, "info": {"name": "t", "version": "1"}}


def test_list_iterates_pages_with_the_cursor(spawn: Spawn) -> None:
    agent = spawn("many_sessions", count=12)
    agent.call("initialize", INIT)
    seen: list[str] = []
    cursor = None
    pages = 0
    while True:
        result = agent.call("session/list", {"cursor": cursor} if cursor is not None else {})
        pages += 1
        seen += [s["sessionId"] for s in result["sessions"]]
        cursor = result.get("nextCursor")
        if cursor is None:
            break
    assert pages == 3
    assert seen == [f"stored-{i}" for i in range(1, 13)]
    bad = agent.request("session/list", {"cursor": "garbage"})
    assert agent.response(bad)["error"]["code"] == -32602
    assert agent.call("session/list", {"cwd": "/elsewhere"}) == {"sessions": []}


def test_resume_replays_history_then_state_then_responds(spawn: Spawn) -> None:
    agent = spawn("many_sessions", count=2)
    agent.call("initialize", INIT)
    rid = agent.request(
        "session/resume", {"sessionId": "stored-2", "cwd": "/tmp", "replayFrom": {"type": "start"}}
    )
    agent.response(rid)
    tail = agent.messages[1:]
    assert [m.get("id") or m["params"]["update"]["sessionUpdate"] for m in tail] == [
        "user_message",
        "agent_message",
        "state_update",
        rid,
    ]
    assert tail[0]["params"]["update"]["content"][0]["text"] == "question 2"
    assert tail[2]["params"]["update"]["state"] == "idle"
    # The next prompt gets a fresh user message id (the replayed one is user-1).
    assert agent.response(agent.prompt("stored-2", "more"))["result"] == {"messageId": "user-2"}


def test_resume_of_a_live_session_replays_what_was_streamed(spawn: Spawn) -> None:
    agent = spawn("notice")
    sid = agent.start_session()
    message_id = agent.response(agent.prompt(sid, "hi"))["result"]["messageId"]
    agent.wait_idle(sid)
    live = [u for u in agent.updates(sid)]
    before = len(agent.messages)
    rid = agent.request(
        "session/resume", {"sessionId": sid, "cwd": "/tmp", "replayFrom": {"type": "start"}}
    )
    agent.response(rid)
    replayed = [m["params"]["update"] for m in agent.messages[before:-1]]
    expected = [u for u in live if u["sessionUpdate"] not in ("state_update", "notice")]
    assert replayed[:-1] == expected  # notices are live-only and are not replayed
    assert replayed[0] == {
        "sessionUpdate": "user_message",
        "messageId": message_id,
        "content": [{"type": "text", "text": "hi"}],
    }
    assert replayed[-1]["sessionUpdate"] == "state_update"


def test_resume_without_replay_still_sends_state_first(spawn: Spawn) -> None:
    agent = spawn("many_sessions", count=1)
    agent.call("initialize", INIT)
    rid = agent.request("session/resume", {"sessionId": "stored-1", "cwd": "/tmp"})
    agent.response(rid)
    assert [m.get("id") or m["params"]["update"]["sessionUpdate"] for m in agent.messages[1:]] == [
        "state_update",
        rid,
    ]


def test_resume_errors(spawn: Spawn) -> None:
    agent = spawn("many_sessions", count=1)
    agent.call("initialize", INIT)

    def error(params: dict[str, Any]) -> int:
        code: int = agent.response(agent.request("session/resume", params))["error"]["code"]
        return code

    assert error({"sessionId": "missing", "cwd": "/tmp"}) == -32002
    assert error({"sessionId": "stored-1", "cwd": "/other"}) == -32602
    assert error({"sessionId": "stored-1", "cwd": "/tmp", "replayFrom": {"type": "x"}}) == -32602
    assert len(agent.updates()) == 0  # no replay happened for a rejected cursor


def test_close_cancels_active_work_before_answering(spawn: Spawn) -> None:
    agent = spawn("slow_cancel")
    sid = agent.start_session()
    first = agent.prompt(sid, "one")
    agent.response(first)
    held = agent.prompt(sid, "two")
    close = agent.request("session/close", {"sessionId": sid})
    agent.response(close)
    assert agent.response(held)["error"]["code"] == -32800
    idle_index = next(
        i
        for i, m in enumerate(agent.messages)
        if m.get("method") == "session/update" and m["params"]["update"].get("state") == "idle"
    )
    close_index = next(i for i, m in enumerate(agent.messages) if m.get("id") == close)
    assert agent.messages[idle_index]["params"]["update"]["stopReason"] == "cancelled"
    assert idle_index < close_index
    after = agent.response(agent.prompt(sid, "three"))
    assert after["error"]["code"] == -32002
    assert agent.call("session/close", {"sessionId": sid}) == {}  # closing twice succeeds


def test_delete_removes_from_list_and_is_idempotent(spawn: Spawn) -> None:
    agent = spawn()
    sid = agent.start_session()
    assert [s["sessionId"] for s in agent.call("session/list")["sessions"]] == [sid]
    assert agent.call("session/delete", {"sessionId": sid}) == {}
    assert agent.call("session/list")["sessions"] == []
    assert agent.call("session/delete", {"sessionId": sid}) == {}


def test_config_options(spawn: Spawn) -> None:
    agent = spawn()
    agent.call("initialize", INIT)
    created = agent.call("session/new", {"cwd": "/tmp"})
    options = {o["configId"]: o for o in created["configOptions"]}
    assert options["mode"]["currentValue"] == "code"
    sid = created["sessionId"]
    params = {"sessionId": sid, "configId": "mode", "type": "id", "value": "ask"}
    result = agent.call("session/set_config_option", params)
    assert {o["configId"]: o["currentValue"] for o in result["configOptions"]} == {
        "mode": "ask",
        "verbose": False,
    }
    bad = {"sessionId": sid, "configId": "mode", "type": "id", "value": "nope"}
    assert agent.response(agent.request("session/set_config_option", bad))["error"]["code"] == (
        -32602
    )


def test_auth_required_until_login(spawn: Spawn) -> None:
    agent = spawn("auth_required")
    agent.call("initialize", INIT)
    assert agent.response(agent.request("session/new", {"cwd": "/tmp"}))["error"]["code"] == (
        -32000
    )
    assert agent.response(agent.request("auth/login", {"methodId": "x"}))["error"]["code"] == (
        -32602
    )
    assert agent.call("auth/login", {"methodId": "token"}) == {}
    assert "sessionId" in agent.call("session/new", {"cwd": "/tmp"})
    assert agent.call("auth/logout") == {}
    assert agent.response(agent.request("session/new", {"cwd": "/tmp"}))["error"]["code"] == (
        -32000
    )


def test_updates_may_precede_the_session_new_response(spawn: Spawn) -> None:
    agent = spawn("updates_before_session_response")
    agent.call("initialize", INIT)
    rid = agent.request("session/new", {"cwd": "/tmp"})
    sid = agent.response(rid)["result"]["sessionId"]
    assert [m.get("id") or m["params"]["update"]["sessionUpdate"] for m in agent.messages[1:]] == [
        "available_commands_update",
        "state_update",
        rid,
    ]
    assert agent.messages[1]["params"]["sessionId"] == sid


def test_delete_of_a_busy_session_cancels_its_work_first(spawn: Spawn) -> None:
    agent = spawn("slow_cancel")
    sid = agent.start_session()
    agent.response(agent.prompt(sid, "busy"))
    delete = agent.request("session/delete", {"sessionId": sid})
    assert agent.response(delete) == {"jsonrpc": "2.0", "id": delete, "result": {}}
    idle = agent.messages[-2]["params"]["update"]
    assert (idle["state"], idle["stopReason"]) == ("idle", "cancelled")
    assert agent.call("session/list") == {"sessions": []}
