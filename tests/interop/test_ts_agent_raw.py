"""The TypeScript-SDK agent (ts_agent.mjs) driven over raw pipes, without acp_lite.

This proves the agent itself: if these pass and test_ts_agent_client.py fails,
the bug is on our client's side. Every message the agent sends is validated
against the v2 schema in tests/data.

The tests share one agent process per module (Node and the SDK take ~0.5 s of
CPU to start): the fixture runs the handshake once, each test opens sessions of
its own on a :class:`rawpipe.PeerView` that skips other tests' late messages.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from rawpipe import (
    TS_AGENT,
    Message,
    PeerView,
    RawPeer,
    is_idle,
    node_executable,
    update_of,
    validate,
)

CWD = "/tmp"
ALLOW = {"outcome": "selected", "optionId": "allow"}
REJECT = {"outcome": "selected", "optionId": "reject"}
CANCELLED = {"outcome": "cancelled"}


@dataclass
class SharedAgent:
    """The module's agent process and the replies of its handshake."""

    peer: RawPeer
    v1_reply: Message
    init_reply: Message
    validated: int = 0  # messages of peer.received already checked against the schema

    def validate_received(self) -> None:
        """Validates every agent message received since the last call."""
        new = self.peer.received[self.validated :]
        self.validated = len(self.peer.received)
        for message in new:
            if update_of(message) is not None:
                validate("UpdateSessionNotification", message["params"])
            elif message.get("method") == "session/request_permission":
                validate("RequestPermissionRequest", message["params"])
            elif message.get("method") == "$/cancel_request":
                validate("CancelRequestNotification", message["params"])


#: The module's agent, started early (:func:`start_early`) and not yet taken.
_early: list[RawPeer] = []


def start_early(tmp_path_factory: pytest.TempPathFactory, items: list[pytest.Function]) -> bool:
    """Starts the module's agent now (``tests/interop/conftest.py`` calls this at
    the first interop test), so Node loads the SDK while the tests before this
    module's run; ``shared`` takes it. Nothing is sent before ``shared`` runs: the
    v1 ``initialize`` is still the connection's first message."""
    if _early or not any("shared" in item.fixturenames for item in items):
        return False
    _early.append(RawPeer([node_executable(), str(TS_AGENT)]))
    return True


def end_early() -> None:
    """Stops the agent started early if no test took it."""
    while _early:
        _early.pop().close()


@pytest.fixture(scope="module")
def shared() -> Iterator[SharedAgent]:
    peer = _early.pop() if _early else RawPeer([node_executable(), str(TS_AGENT)])
    try:
        # The connection's first message: a v1 client is refused. The SDK then
        # accepts a v2 initialize on the same connection, as a retrying client sends.
        # The first answer waits for Node and the SDK to start: slow on a loaded machine.
        v1_reply = peer.call(
            "initialize", {"protocolVersion": 1, "info": {"name": "r", "version": "0"}}, timeout=30
        )
        init_reply = peer.call(
            "initialize",
            {"protocolVersion": 2, "info": {"name": "raw", "version": "0"}, "capabilities": {}},
        )
        agent = SharedAgent(peer, v1_reply, init_reply)
        yield agent
    finally:
        code = peer.close()
    agent.validate_received()
    assert code == 0, peer.stderr_text()


@pytest.fixture
def agent(shared: SharedAgent) -> Iterator[PeerView]:
    view = shared.peer.view()
    yield view
    # Stop whatever the test left running, so no work outlives it.
    for session_id in view.sessions:
        assert view.call("session/close", {"sessionId": session_id})["result"] == {}
    shared.validate_received()


def test_initialize_rejects_v1(shared: SharedAgent) -> None:
    assert shared.v1_reply["error"]["code"] == -32022


def test_initialize_v2(shared: SharedAgent) -> None:
    result = shared.init_reply["result"]
    validate("InitializeResponse", result)
    assert result["protocolVersion"] == 2


def open_session(agent: PeerView) -> str:
    new = agent.call("session/new", {"cwd": CWD})
    validate("NewSessionResponse", new["result"])
    session_id: str = new["result"]["sessionId"]
    agent.claim_session(session_id)
    return session_id


def prompt(agent: PeerView, session_id: str, text: str) -> int:
    return agent.request(
        "session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": text}]}
    )


def updates(messages: list[Message]) -> list[dict[str, Any]]:
    return [u for m in messages if (u := update_of(m)) is not None]


def response(messages: list[Message], request_id: int) -> Message:
    (match,) = [m for m in messages if m.get("id") == request_id and "method" not in m]
    return match


def agent_text(ups: list[dict[str, Any]]) -> str:
    return "".join(u["content"]["text"] for u in ups if u["sessionUpdate"] == "agent_message_chunk")


def test_echo_prompt_returns_message_id_of_inserted_user_message(agent: PeerView) -> None:
    session_id = open_session(agent)
    request_id = prompt(agent, session_id, "hello")
    seen = agent.until(is_idle)
    ups = updates(seen)
    result = response(seen, request_id)["result"]
    validate("PromptResponse", result)
    (user,) = [u for u in ups if u["sessionUpdate"] == "user_message"]
    assert user["messageId"] == result["messageId"]
    assert user["content"] == [{"type": "text", "text": "hello"}]
    assert ups[0] == {"sessionUpdate": "state_update", "state": "running", "background": []}
    assert agent_text(ups) == "echo: hello"
    assert ups[-1]["stopReason"] == "end_turn"


def test_stream_chunks_share_one_message_id(agent: PeerView) -> None:
    session_id = open_session(agent)
    prompt(agent, session_id, "stream please")
    ups = updates(agent.until(is_idle))
    chunks = [u for u in ups if u["sessionUpdate"] == "agent_message_chunk"]
    assert len(chunks) == 5
    assert len({c["messageId"] for c in chunks}) == 1
    assert agent_text(ups) == "one two three four five"


@pytest.mark.parametrize(
    ("outcome", "tool_status", "text", "stop_reason"),
    [
        (ALLOW, "completed", "permission granted", "end_turn"),
        (REJECT, "cancelled", "permission rejected", "end_turn"),
        (CANCELLED, "cancelled", "", "cancelled"),
    ],
)
def test_permission_branches_on_outcome(
    agent: PeerView, outcome: Message, tool_status: str, text: str, stop_reason: str
) -> None:
    session_id = open_session(agent)
    prompt(agent, session_id, "permission")
    seen = agent.until(lambda m: m.get("method") == "session/request_permission")
    request = seen[-1]["params"]
    assert [o["kind"] for o in request["options"]] == ["allow_once", "reject_once"]
    tool_call_id = request["subject"]["toolCall"]["toolCallId"]
    # The tool call is announced, and the state is requires_action, before the request.
    before = updates(seen)
    assert any(u.get("toolCallId") == tool_call_id for u in before)
    assert before[-1]["state"] == "requires_action"
    agent.send({"jsonrpc": "2.0", "id": seen[-1]["id"], "result": {"outcome": outcome}})
    ups = updates(agent.until(is_idle))
    statuses = [u["status"] for u in ups if u.get("toolCallId") == tool_call_id]
    assert statuses[-1] == tool_status
    assert agent_text(ups) == text
    assert ups[-1]["stopReason"] == stop_reason
    if stop_reason == "end_turn":
        assert ups[0]["state"] == "running"  # resumed after requires_action


def test_session_cancel_ends_slow_work_with_cancelled(agent: PeerView) -> None:
    session_id = open_session(agent)
    prompt(agent, session_id, "slow")
    agent.until(lambda m: (update_of(m) or {}).get("sessionUpdate") == "agent_message_chunk")
    agent.notify("session/cancel", {"sessionId": session_id})
    ups = updates(agent.until(is_idle))
    assert ups[-2]["status"] == "cancelled"  # finalised before the idle
    assert ups[-1]["stopReason"] == "cancelled"


def test_cancel_with_pending_permission_sends_cancel_request(agent: PeerView) -> None:
    session_id = open_session(agent)
    prompt(agent, session_id, "permission")
    seen = agent.until(lambda m: m.get("method") == "session/request_permission")
    permission_id = seen[-1]["id"]
    agent.notify("session/cancel", {"sessionId": session_id})
    seen = agent.until(is_idle)
    cancels = [m for m in seen if m.get("method") == "$/cancel_request"]
    assert [c["params"]["requestId"] for c in cancels] == [permission_id]
    assert updates(seen)[-1]["stopReason"] == "cancelled"
    # A late answer is ignored by the SDK agent (it stopped waiting): no new work starts.
    agent.send({"jsonrpc": "2.0", "id": permission_id, "result": {"outcome": CANCELLED}})
    assert agent.call("session/close", {"sessionId": session_id})["result"] == {}


def test_failure_is_idle_error_with_error_object(agent: PeerView) -> None:
    session_id = open_session(agent)
    request_id = prompt(agent, session_id, "fail")
    seen = agent.until(is_idle)
    assert "messageId" in response(seen, request_id)["result"]  # inserted: never an error
    ups = updates(seen)
    assert ups[-2]["status"] == "failed"
    assert ups[-1]["stopReason"] == "error"
    assert ups[-1]["error"]["code"] == -32603
    assert ups[-1]["error"]["message"] == "simulated model failure"


def test_background_work_finishes_after_idle(agent: PeerView) -> None:
    session_id = open_session(agent)
    prompt(agent, session_id, "background")
    seen = agent.until(is_idle)
    seen += agent.until(lambda m: is_idle(m) and update_of(m)["background"] == [])  # type: ignore[index]
    ups = updates(seen)
    announced: set[str] = set()
    finalised: set[str] = set()
    listed: set[str] = set()
    for u in ups:
        kind = u["sessionUpdate"]
        if kind == "terminal_update":
            announced.add(u["terminalId"])
            if "exitStatus" in u:
                finalised.add(u["terminalId"])
        elif kind == "tool_call_update":
            announced.add(u["toolCallId"])
            if u.get("status") in ("completed", "failed", "cancelled"):
                finalised.add(u["toolCallId"])
        elif kind == "state_update":
            now = {item.get("terminalId") or item.get("toolCallId") for item in u["background"]}
            assert now <= announced, "listed before announced"
            assert (listed - now) <= finalised, "removed before finalised"
            listed = now
    idles = [u for u in ups if u["sessionUpdate"] == "state_update" and u["state"] == "idle"]
    assert idles[0]["stopReason"] == "end_turn"
    assert [item["type"] for item in idles[0]["background"]] == ["terminal", "tool_call"]
    # Later snapshots are repeated idles without a stop reason: not new completions.
    later = [("stopReason" in i, len(i["background"])) for i in idles[1:]]
    assert later == [(False, 1), (False, 0)]


def test_prompt_while_busy_is_held_then_inserted(agent: PeerView) -> None:
    session_id = open_session(agent)
    prompt(agent, session_id, "permission")
    seen = agent.until(lambda m: m.get("method") == "session/request_permission")
    held_id = prompt(agent, session_id, "second")
    agent.send({"jsonrpc": "2.0", "id": seen[-1]["id"], "result": {"outcome": ALLOW}})
    first = agent.until(is_idle)
    assert all(m.get("id") != held_id for m in first), "held prompt answered before insertion"
    second = agent.until(is_idle)
    result = response(second, held_id)["result"]
    ups = updates(second)
    assert [u["sessionUpdate"] for u in ups[:2]] == ["state_update", "user_message"]
    assert ups[1]["messageId"] == result["messageId"]
    assert agent_text(ups) == "echo: second"


def test_held_prompt_withdrawn_by_cancel_request_and_session_cancel(agent: PeerView) -> None:
    session_id = open_session(agent)
    prompt(agent, session_id, "slow")
    agent.until(lambda m: (update_of(m) or {}).get("sessionUpdate") == "agent_message_chunk")
    withdrawn = prompt(agent, session_id, "withdrawn")
    covered = prompt(agent, session_id, "covered by session/cancel")
    agent.notify("$/cancel_request", {"requestId": withdrawn})
    assert agent.until(lambda m: m.get("id") == withdrawn)[-1]["error"]["code"] == -32800
    agent.notify("session/cancel", {"sessionId": session_id})
    seen = agent.until(is_idle)
    assert response(seen, covered)["error"]["code"] == -32800
    assert [u["sessionUpdate"] for u in updates(seen)].count("user_message") == 0


@pytest.mark.parametrize(
    ("answer", "text"),
    [
        ({"result": {"outcome": CANCELLED}}, "withdrawn: cancelled"),
        ({"error": {"code": -32800, "message": "Request cancelled"}}, "withdrawn: -32800"),
    ],
)
def test_agent_withdraws_its_permission_request(
    agent: PeerView, answer: Message, text: str
) -> None:
    session_id = open_session(agent)
    prompt(agent, session_id, "withdraw")
    ask = agent.until(lambda m: m.get("method") == "session/request_permission")[-1]
    cancel = agent.until(lambda m: m.get("method") == "$/cancel_request")[-1]
    assert cancel["params"] == {"requestId": ask["id"]}
    agent.send({"jsonrpc": "2.0", "id": ask["id"], **answer})
    assert agent_text(updates(agent.until(is_idle))) == text
