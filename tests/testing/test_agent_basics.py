"""The reference agent over real pipes: echo, errors, permission, cancel, crash."""

from __future__ import annotations

import signal
from collections.abc import Callable
from typing import Any

from acp_lite.testing import Echo, Insert, Permission, Script, Turn

from ._agentproc import RawAgent
from ._gated import gated, is_final_idle

Spawn = Callable[..., RawAgent]


def kinds(updates: list[dict[str, Any]]) -> list[str]:
    out = []
    for u in updates:
        tag = u["sessionUpdate"]
        out.append(f"{tag}:{u['state']}" if tag == "state_update" else tag)
    return out


def test_echo_streams_the_prompt_back_with_the_full_lifecycle(spawn: Spawn) -> None:
    agent = spawn()
    sid = agent.start_session()
    rid = agent.prompt(sid, "hello there world")
    response = agent.response(rid)
    idle = agent.wait_idle(sid)
    assert idle["stopReason"] == "end_turn"
    message_id = response["result"]["messageId"]
    updates = agent.updates(sid)
    assert kinds(updates) == [
        "state_update:running",
        "user_message",
        "agent_message_chunk",
        "agent_message_chunk",
        "agent_message_chunk",
        "state_update:idle",
    ]
    assert updates[1]["messageId"] == message_id
    assert updates[1]["content"] == [{"type": "text", "text": "hello there world"}]
    assert "".join(u["content"]["text"] for u in updates[2:5]) == "hello there world"
    assert len({u["messageId"] for u in updates[2:5]}) == 1
    # The response is sent after running and before the user message (insertion).
    order = [m.get("id") or m["params"]["update"]["sessionUpdate"] for m in agent.messages[2:5]]
    assert order == ["state_update", rid, "user_message"]


def test_initialize_answers_version_2_with_info_capabilities_and_auth(spawn: Spawn) -> None:
    agent = spawn()
    result = agent.call("initialize", {"protocolVersion": 2, "info": {"name": "t", "version": "1"}})
    assert result["protocolVersion"] == 2
    assert result["info"]["name"] == "acp-lite-reference-agent"
    assert "session" in result["capabilities"]
    assert result["authMethods"][0]["methodId"] == "token"
    reply = agent.response(agent.request("initialize", {"protocolVersion": 1, "info": {}}))
    assert reply["error"]["code"] == -32022
    assert reply["error"]["data"] == {"requested": 1, "supported": [2]}


def test_error_answers_for_bad_requests(spawn: Spawn) -> None:
    agent = spawn()
    sid = agent.start_session()
    assert agent.response(agent.request("nope/method"))["error"]["code"] == -32601
    empty = agent.request("session/prompt", {"sessionId": sid, "prompt": []})
    assert agent.response(empty)["error"]["code"] == -32602
    image = [{"type": "image", "data": "", "mimeType": "image/png"}]
    bad = agent.request("session/prompt", {"sessionId": sid, "prompt": image})
    assert agent.response(bad)["error"]["code"] == -32602
    missing = agent.request("session/prompt", {"sessionId": "nope", "prompt": [{"type": "text"}]})
    assert agent.response(missing)["error"] == {
        "code": -32002,
        "message": "Session not found",
        "data": {"sessionId": "nope"},
    }
    assert agent.call("_acp_lite/ping", {"x": 1}) == {"echo": {"x": 1}}
    agent.send({"not": "json-rpc"})
    assert agent.wait_for(lambda m: m.get("error", {}).get("code") == -32600)
    agent.send({"jsonrpc": "2.0", "id": 77, "method": 5})
    assert agent.wait_for(lambda m: m.get("id") == 77)["error"]["code"] == -32600
    agent.send([])  # an empty batch is an invalid request too
    agent.send_raw(b"{not json\n")
    assert agent.wait_for(lambda m: m.get("error", {}).get("code") == -32700)
    # Rejected prompts were never inserted: no user message was reported.
    assert "user_message" not in kinds(agent.updates(sid))


def test_batch_gets_a_batch_answer(spawn: Spawn) -> None:
    agent = spawn()
    agent.send(
        [
            {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 2}},
            {"jsonrpc": "2.0", "id": 2, "method": "_x", "params": {}},
        ]
    )
    batch = agent.wait_for(lambda m: isinstance(m, list))
    assert [m["id"] for m in batch] == [1, 2]


def test_permission_round_trip_allow_and_reject(spawn: Spawn) -> None:
    agent = spawn("tool_call_permission")
    sid = agent.start_session()
    agent.prompt(sid, "write notes")
    request = agent.agent_request("session/request_permission")
    params = request["params"]
    assert params["sessionId"] == sid
    assert params["subject"]["toolCall"]["toolCallId"] == "call-1"
    assert {o["kind"] for o in params["options"]} >= {"allow_once", "reject_once"}
    agent.send({"jsonrpc": "2.0", "id": request["id"], "result": {"outcome": {
        "outcome": "selected", "optionId": "allow"}}})  # fmt: skip
    assert agent.wait_idle(sid)["stopReason"] == "end_turn"
    statuses = [u["status"] for u in agent.updates(sid) if u["sessionUpdate"] == "tool_call_update"]
    assert statuses == ["pending", "in_progress", "completed"]
    states = [u["state"] for u in agent.updates(sid) if u["sessionUpdate"] == "state_update"]
    assert states == ["running", "requires_action", "running", "idle"]

    agent.prompt(sid, "again")
    second = agent.wait_for(
        lambda m: m.get("method") == "session/request_permission" and m["id"] != request["id"]
    )
    assert second["params"]["subject"]["toolCall"]["toolCallId"] == "call-2"
    agent.send({"jsonrpc": "2.0", "id": second["id"], "result": {"outcome": {
        "outcome": "selected", "optionId": "reject"}}})  # fmt: skip
    agent.wait_for(lambda m: _tool_status(m, "call-2") == "failed")


def _tool_status(message: Any, tool_call_id: str) -> str | None:
    if not (isinstance(message, dict) and message.get("method") == "session/update"):
        return None
    update = message["params"]["update"]
    if update.get("toolCallId") != tool_call_id:
        return None
    status: str | None = update.get("status")
    return status


def test_cancel_stops_slow_work_and_finalises_its_tool_call(spawn: Spawn) -> None:
    agent = spawn("slow_cancel")
    sid = agent.start_session()
    rid = agent.prompt(sid, "work slowly")
    agent.wait_for(lambda m: m.get("method") == "session/update"
                   and m["params"]["update"]["sessionUpdate"] == "agent_message_chunk")  # fmt: skip
    agent.notify("session/cancel", {"sessionId": sid})
    idle = agent.wait_idle(sid)
    assert idle["stopReason"] == "cancelled"
    assert "result" in agent.response(rid)  # inserted before the cancel: still a success
    assert agent.updates(sid)[-2] == {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "call-1",
        "status": "cancelled",
    }


def test_cancel_withdraws_a_pending_permission_request(spawn: Spawn) -> None:
    agent = spawn("tool_call_permission")
    sid = agent.start_session()
    agent.prompt(sid, "write notes")
    request = agent.agent_request("session/request_permission")
    agent.notify("session/cancel", {"sessionId": sid})
    withdrawn = agent.wait_for(lambda m: m.get("method") == "$/cancel_request")
    assert withdrawn["params"] == {"requestId": request["id"]}
    assert agent.wait_idle(sid)["stopReason"] == "cancelled"
    # The client answers the withdrawn request with -32800; the agent ignores it quietly.
    agent.send({"jsonrpc": "2.0", "id": request["id"], "error": {"code": -32800, "message": "x"}})
    assert _tool_status(agent.messages[-2], "call-1") == "cancelled"
    assert agent.call("_acp_lite/ping") == {"echo": {}}  # still serving


def test_held_prompts_are_cancelled_with_32800(spawn: Spawn) -> None:
    agent = spawn("slow_cancel")
    sid = agent.start_session()
    first = agent.prompt(sid, "one")
    agent.response(first)  # inserted, now sleeping
    held = agent.prompt(sid, "two")
    withdrawn = agent.prompt(sid, "three")
    agent.notify("$/cancel_request", {"requestId": withdrawn})
    assert agent.response(withdrawn)["error"]["code"] == -32800
    agent.notify("session/cancel", {"sessionId": sid})
    assert agent.response(held)["error"]["code"] == -32800
    assert agent.wait_idle(sid)["stopReason"] == "cancelled"
    # A prompt sent after the cancel is not covered by it.
    after = agent.prompt(sid, "four")
    assert agent.response(after)["result"] == {"messageId": "user-2"}
    agent.wait_for(lambda m: m.get("method") == "session/update"
                   and m["params"]["update"].get("messageId") == "user-2")  # fmt: skip
    user_ids = [u["messageId"] for u in agent.updates(sid) if u["sessionUpdate"] == "user_message"]
    assert user_ids == ["user-1", "user-2"]


def test_prompt_while_running_is_held_then_inserted(spawn: Spawn) -> None:
    # The "queueing" scenario, its first turn busy until the second prompt arrives.
    agent = spawn(script=gated("queueing"))
    sid = agent.start_session()
    first = agent.prompt(sid, "one")
    agent.response(first)
    second = agent.prompt(sid, "two")
    assert agent.response(second)["result"] == {"messageId": "user-2"}
    agent.wait_for(lambda m: m.get("method") == "session/update"
                   and m["params"]["update"].get("stopReason") == "end_turn"
                   and sum(1 for u in agent.updates(sid) if u.get("stopReason")) == 2)  # fmt: skip
    states = [u["state"] for u in agent.updates(sid) if u["sessionUpdate"] == "state_update"]
    assert states == ["running", "idle", "running", "idle"]
    # Held: answered only once the first work ended, by the turn that inserts it.
    first_idle = next(i for i, m in enumerate(agent.messages) if is_final_idle(m))
    answer = next(i for i, m in enumerate(agent.messages) if m.get("id") == second)
    assert first_idle < answer
    texts = [u["content"]["text"] for u in agent.updates(sid)
             if u["sessionUpdate"] == "agent_message_chunk"]  # fmt: skip
    assert texts == ["one", "two"]


def test_steering_inserts_at_once_within_the_same_work(spawn: Spawn) -> None:
    # The "steering" scenario, its first turn busy until the second prompt arrives.
    agent = spawn(script=gated("steering"))
    sid = agent.start_session()
    agent.response(agent.prompt(sid, "one"))
    second = agent.prompt(sid, "two")
    assert agent.response(second)["result"] == {"messageId": "user-2"}
    agent.wait_idle(sid)
    states = [u["state"] for u in agent.updates(sid) if u["sessionUpdate"] == "state_update"]
    assert states == ["running", "idle"]
    texts = [u["content"]["text"] for u in agent.updates(sid)
             if u["sessionUpdate"] == "agent_message_chunk"]  # fmt: skip
    assert texts == ["one", "two"]


def test_failure_reports_error_stop_reason_and_fails_the_tool_call(spawn: Spawn) -> None:
    agent = spawn("failure")
    sid = agent.start_session()
    rid = agent.prompt(sid, "go")
    idle = agent.wait_idle(sid)
    assert idle["stopReason"] == "error"
    assert idle["error"] == {"code": -32603, "message": "Model provider unavailable"}
    assert "messageId" in agent.response(rid)["result"]
    assert _tool_status(agent.messages[-2], "call-1") == "failed"


def test_garbage_on_stdout_then_normal_messages(spawn: Spawn) -> None:
    agent = spawn("broken_stdout_garbage")
    sid = agent.start_session()
    agent.prompt(sid, "go")
    agent.wait_idle(sid)
    assert b"this is not JSON {\n" in agent.lines
    texts = [u["content"]["text"] for u in agent.updates(sid) if "content" in u
             and u["sessionUpdate"] == "agent_message_chunk"]  # fmt: skip
    assert texts == ["before garbage", "after garbage"]


def test_crash_exits_with_its_code_and_says_why_on_stderr(spawn: Spawn) -> None:
    agent = spawn("crash", process=True)
    sid = agent.start_session()
    rid = agent.prompt(sid, "go")
    assert agent.wait_exit() == 3
    assert "simulated crash" in agent.stderr_text()
    assert "result" in agent.response(rid)  # inserted before the crash
    assert not [u for u in agent.updates(sid) if u.get("state") == "idle"]


def test_exits_cleanly_when_stdin_closes(spawn: Spawn) -> None:
    agent = spawn("slow_cancel", process=True)
    sid = agent.start_session()
    agent.prompt(sid, "busy")
    agent.close_stdin()
    assert agent.wait_exit() == 0


def test_ignore_sigterm_survives_sigterm(spawn: Spawn) -> None:
    agent = spawn("ignore_sigterm", process=True)
    agent.call("initialize", {"protocolVersion": 2, "info": {"name": "t", "version": "1"}})
    agent.proc.send_signal(signal.SIGTERM)
    agent.wait_stderr("ignoring SIGTERM")
    assert agent.call("_acp_lite/ping") == {"echo": {}}  # answered after the SIGTERM
    agent.close_stdin()  # lingers after EOF too
    assert agent.poll() is None
    agent.proc.kill()
    assert agent.wait_exit() == -signal.SIGKILL


def test_sigterm_kills_a_normal_agent(spawn: Spawn) -> None:
    agent = spawn(process=True)
    agent.call("initialize", {"protocolVersion": 2, "info": {"name": "t", "version": "1"}})
    agent.proc.send_signal(signal.SIGTERM)
    assert agent.wait_exit() == -signal.SIGTERM


def test_cancel_request_withdraws_a_prompt_whose_work_started_before_insertion(
    spawn: Spawn,
) -> None:
    # The work asks permission before inserting the prompt (like a pre-prompt hook).
    script = Script(turns=[Turn(steps=[Permission(), Insert(), Echo()])])
    agent = spawn(script=script)
    sid = agent.start_session()
    rid = agent.prompt(sid, "withdraw me")
    request = agent.agent_request("session/request_permission")
    agent.notify("$/cancel_request", {"requestId": rid})
    assert agent.call("_acp_lite/sync") == {"echo": {}}  # the cancel_request has been read
    agent.send({"jsonrpc": "2.0", "id": request["id"], "result": {"outcome": {
        "outcome": "selected", "optionId": "allow"}}})  # fmt: skip
    assert agent.response(rid)["error"]["code"] == -32800
    assert agent.wait_idle(sid)["stopReason"] == "cancelled"
    assert "user_message" not in kinds(agent.updates(sid))


def test_malformed_or_error_permission_answers_count_as_not_approved(spawn: Spawn) -> None:
    agent = spawn("tool_call_permission")
    sid = agent.start_session()
    agent.prompt(sid, "one")
    request = agent.agent_request("session/request_permission")
    agent.send({"jsonrpc": "2.0", "id": request["id"], "result": None})
    assert agent.wait_idle(sid)["stopReason"] == "cancelled"
    since = len(agent.messages)
    agent.prompt(sid, "two")
    second = agent.wait_for(lambda m: m.get("method") == "session/request_permission", since=since)
    error = {"code": -32601, "message": "Method not found"}
    agent.send({"jsonrpc": "2.0", "id": second["id"], "error": error})
    agent.wait_for(
        lambda m: (
            m.get("method") == "session/update"
            and m["params"]["update"].get("stopReason") == "cancelled"
        ),
        since=since,
    )
    assert _tool_status(agent.messages[-2], "call-2") == "cancelled"
