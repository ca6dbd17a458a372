"""acp_lite's clients (blocking, and one async test) drive ts_agent.mjs, an agent built
with the official TypeScript SDK (@agentclientprotocol/sdk 2.4.0, experimental/v2).

test_ts_agent_raw.py proves the agent on its own; these tests prove that our
client reads someone else's v2 implementation the way the spec says.

The blocking tests share one agent process and connection per module (Node and
the SDK take ~0.5 s of CPU to start); each test opens sessions of its own and
looks only at its own sessions' traffic. The async test has its own connection.
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from typing import Any

import pytest
import trio
from early import in_thread
from rawpipe import HERE, TS_AGENT, node_executable

from acp_lite import permissions
from acp_lite.aio import connect as aio_connect
from acp_lite.client import Client, Session
from acp_lite.client import connect as acp_connect
from acp_lite.errors import PromptRejected
from acp_lite.turn import TurnFailed

TIMEOUT = 10.0
CANCELLED = {"outcome": "cancelled"}

PermissionCallable = Callable[[Any, Any], Any]


def kinds(options: Any) -> list[str]:
    return [option.kind for option in options]


def option_of(request: Any, kind: str) -> str:
    (option_id,) = [o.option_id for o in request.options if o.kind == kind]
    return str(option_id)


class PermissionRouter:
    """The shared connection's ``on_permission``: hands each request to the callable
    its session's test registered; without one, acp_lite's default (reject)."""

    def __init__(self) -> None:
        self.handlers: dict[str, PermissionCallable] = {}

    def __call__(self, request: Any, session: Any) -> Any:
        handler = self.handlers.get(session.id)
        if handler is None:
            return permissions.reject(request, session)
        return handler(request, session)


def _connect() -> tuple[Client, PermissionRouter]:
    router = PermissionRouter()
    # Every test's session depends on this one start-up: give it (and the calls that
    # pass no timeout of their own) a limit a loaded machine does not hit.
    client = acp_connect(
        [node_executable(), str(TS_AGENT)], timeout=3 * TIMEOUT, on_permission=router
    )
    return client, router


#: The shared connection, being made since the first interop test (:func:`start_early`).
_early: list[Future[tuple[Client, PermissionRouter]]] = []


def start_early(tmp_path_factory: pytest.TempPathFactory, items: list[pytest.Function]) -> bool:
    """Connects the shared client in a thread now (``tests/interop/conftest.py``
    calls this at the first interop test), so Node loads the SDK while the tests
    before this module's run; ``shared`` takes the connection (if a test uses it:
    the async test has a connection of its own)."""
    if _early or not any("shared" in item.fixturenames for item in items):
        return False
    _early.append(in_thread(_connect, "ts_agent_client connect"))  # ``shared`` takes it
    return True


def end_early() -> None:
    """Closes the connection made early if no test took it."""
    while _early:
        with contextlib.suppress(Exception):
            _early.pop().result(timeout=60)[0].close()


@pytest.fixture(scope="module")
def shared() -> Iterator[tuple[Client, PermissionRouter]]:
    shared_client, router = _early.pop().result(timeout=60) if _early else _connect()
    with shared_client:
        yield shared_client, router


@pytest.fixture
def client(shared: tuple[Client, PermissionRouter]) -> Client:
    return shared[0]


@pytest.fixture
def new_session(shared: tuple[Client, PermissionRouter]) -> Iterator[Callable[..., Session]]:
    """Opens a session on the shared connection; ``on_permission`` answers its requests."""
    client, router = shared
    opened: list[str] = []

    def _new_session(on_permission: PermissionCallable | None = None) -> Session:
        session = client.new_session(cwd=str(HERE))
        opened.append(session.id)
        if on_permission is not None:
            router.handlers[session.id] = on_permission
        return session

    yield _new_session
    for session_id in opened:
        router.handlers.pop(session_id, None)


def session_messages(client: Client, session_id: str, direction: str) -> list[Any]:
    """The decoded lines of the transcript in `direction`; agent requests of other
    sessions on the shared connection are left out (ids are unique per connection)."""
    messages = [json.loads(e.line) for e in client.transcript if e.direction == direction]
    return [
        m
        for m in messages
        if "method" not in m or m.get("params", {}).get("sessionId", session_id) == session_id
    ]


def updates_of(turn: Any, tag: str) -> list[Any]:
    return [e.update for e in turn.updates if getattr(e.update, "session_update", None) == tag]


def test_initialize_reports_agent_info(client: Client) -> None:
    assert client.protocol_version == 2
    assert client.agent_info.name == "ts-interop-agent"
    assert client.agent_info.version == "2.4.0"


def test_echo_run_links_message_id_to_user_message(new_session: Callable[..., Any]) -> None:
    session = new_session()
    turn = session.run("hello", timeout=TIMEOUT)
    assert (turn.stop_reason, turn.text, turn.error) == ("end_turn", "echo: hello", None)
    (user,) = updates_of(turn, "user_message")
    assert user.message_id == turn.message_id
    assert session.model.violations == []


def test_streamed_chunks_become_one_message(new_session: Callable[..., Any]) -> None:
    session = new_session()
    turn = session.run("stream", timeout=TIMEOUT)
    chunks = updates_of(turn, "agent_message_chunk")
    assert len(chunks) == 5
    assert turn.text == "one two three four five"
    (message,) = [e for e in session.model.timeline if e.kind == "agent_message"]
    assert message.text == "one two three four five"


@pytest.mark.parametrize(
    ("answer", "stop_reason", "text", "tool_status"),
    [
        ("allow_once", "end_turn", "permission granted", "completed"),
        ("reject_once", "end_turn", "permission rejected", "cancelled"),
        (None, "cancelled", "", "cancelled"),
    ],
)
def test_permission_callable_answers_typed_request(
    new_session: Callable[..., Any],
    answer: str | None,
    stop_reason: str,
    text: str,
    tool_status: str,
) -> None:
    seen: list[tuple[Any, Any]] = []

    def on_permission(request: Any, session: Any) -> str | None:
        seen.append((request, session))
        return None if answer is None else option_of(request, answer)

    session = new_session(on_permission)
    turn = session.run("permission", timeout=TIMEOUT)
    assert (turn.stop_reason, turn.text) == (stop_reason, text)
    ((request, asked_session),) = seen
    assert asked_session.id == session.id
    assert kinds(request.options) == ["allow_once", "reject_once"]
    tool_call_id = request.subject.tool_call.tool_call_id
    assert session.model.entity("tool_call", tool_call_id).status == tool_status
    assert session.model.violations == []


def test_cancel_waits_for_cancelled_idle(new_session: Callable[..., Any]) -> None:
    session = new_session()
    submission = session.prompt("slow")
    assert submission.status == "inserted"
    assert submission.message_id
    session.cancel(wait=True)
    assert session.model.stop_reason == "cancelled"
    assert submission.done
    assert submission.stop_reason == "cancelled"
    tool_calls = [e for e in session.model.timeline if e.kind == "tool_call"]
    assert [t.status for t in tool_calls] == ["cancelled"]


def test_cancel_with_pending_permission(client: Client, new_session: Callable[..., Any]) -> None:
    """session/cancel answers the foreground permission request with `cancelled`
    (spec, Cancellation: the Client MAY do so without waiting for $/cancel_request);
    the blocked callable's late "allow" is never sent and revives nothing."""
    asked = threading.Event()
    release = threading.Event()

    def on_permission(request: Any, session: Any) -> str | None:
        asked.set()
        release.wait(TIMEOUT)
        return option_of(request, "allow_once")

    session = new_session(on_permission)
    submission = session.prompt("permission")
    assert asked.wait(TIMEOUT)
    session.cancel(wait=True)
    release.set()
    assert submission.stop_reason == "cancelled"
    # The connection is still usable afterwards, and by then the callable has returned.
    assert session.run("after", timeout=TIMEOUT).text == "echo: after"
    received = session_messages(client, session.id, "recv")
    sent = session_messages(client, session.id, "send")
    (ask,) = [m for m in received if m.get("method") == "session/request_permission"]
    answers = [m for m in sent if m.get("id") == ask["id"] and "method" not in m]
    assert [a["result"]["outcome"] for a in answers] == [{"outcome": "cancelled"}]


def test_failure_is_a_stop_reason_not_an_exception(new_session: Callable[..., Any]) -> None:
    session = new_session()
    turn = session.run("fail", timeout=TIMEOUT)
    assert turn.stop_reason == "error"
    assert turn.message_id  # the prompt was inserted before the failure
    assert (turn.error.code, turn.error.message) == (-32603, "simulated model failure")
    with pytest.raises(TurnFailed, match="simulated model failure"):
        turn.raise_for_stop()


def test_background_work_outlives_the_turn(new_session: Callable[..., Any]) -> None:
    session = new_session()
    turn = session.run("background", timeout=TIMEOUT)
    assert turn.stop_reason == "end_turn"
    idle = turn.updates[-1].update
    assert [item.type for item in idle.background] == ["terminal", "tool_call"]
    terminal_id = idle.background[0].terminal_id
    tool_call_id = idle.background[1].tool_call_id
    session.wait_quiet(timeout=TIMEOUT, grace=0.05)
    assert session.model.is_quiet
    assert session.model.background == []
    assert session.model.entity("terminal", terminal_id).exit_status.exit_code == 0
    assert session.model.entity("tool_call", tool_call_id).status == "completed"
    assert session.model.violations == []


def test_prompt_while_running_is_sent_not_refused(new_session: Callable[..., Any]) -> None:
    asked = threading.Event()
    release = threading.Event()

    def on_permission(request: Any, session: Any) -> str | None:
        asked.set()
        release.wait(TIMEOUT)
        return option_of(request, "allow_once")

    session = new_session(on_permission)
    first = session.prompt("permission")
    assert asked.wait(TIMEOUT)
    result: list[Any] = []
    worker = threading.Thread(target=lambda: result.append(session.run("second", timeout=TIMEOUT)))
    worker.start()
    release.set()
    worker.join(TIMEOUT + 1)
    (second,) = result
    assert first.stop_reason == "end_turn"
    assert (second.stop_reason, second.text) == ("end_turn", "echo: second")
    assert second.message_id != first.message_id


def test_agent_withdrawn_permission_request_is_answered_once(
    client: Client, new_session: Callable[..., Any]
) -> None:
    """The SDK agent withdraws its own request ($/cancel_request, no session/cancel):
    our client answers it once, `cancelled`, without waiting for the blocked callable."""
    release = threading.Event()

    def on_permission(request: Any, session: Any) -> str | None:
        release.wait(TIMEOUT)
        return option_of(request, "allow_once")

    session = new_session(on_permission)
    try:
        turn = session.run("withdraw", timeout=TIMEOUT)
    finally:
        release.set()
    assert (turn.stop_reason, turn.text) == ("end_turn", "withdrawn: cancelled")
    received = session_messages(client, session.id, "recv")
    sent = session_messages(client, session.id, "send")
    (ask,) = [m for m in received if m.get("method") == "session/request_permission"]
    assert {"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": ask["id"]}} in (
        received
    )
    answers = [m for m in sent if m.get("id") == ask["id"] and "method" not in m]
    assert answers == [{"jsonrpc": "2.0", "id": ask["id"], "result": {"outcome": CANCELLED}}]


def test_withdrawing_a_held_prompt(new_session: Callable[..., Any]) -> None:
    """A prompt sent while the SDK agent is busy is held; $/cancel_request withdraws
    it: -32800, PromptRejected, and no user message for it."""
    asked = threading.Event()
    release = threading.Event()

    def on_permission(request: Any, session: Any) -> str | None:
        asked.set()
        release.wait(TIMEOUT)
        return option_of(request, "allow_once")

    session = new_session(on_permission)
    first = session.prompt("permission")
    assert asked.wait(TIMEOUT)
    held = session.submit("never inserted")
    assert held.status == "pending"
    assert session.withdraw(held)
    with pytest.raises(PromptRejected) as rejected:
        session.wait_inserted(held, timeout=TIMEOUT)
    assert rejected.value.code == -32800
    release.set()
    session.wait_idle(timeout=TIMEOUT)
    assert (first.stop_reason, held.status) == ("end_turn", "rejected")
    users = [e for e in session.model.timeline if e.kind == "user_message"]
    assert [u.id for u in users] == [first.message_id]


@pytest.mark.trio
async def test_async_client_runs_sessions_concurrently() -> None:
    """acp_lite.aio against the SDK agent: three sessions on one connection, turns in
    parallel, every update routed to its own session."""

    async with aio_connect([node_executable(), str(TS_AGENT)], timeout=TIMEOUT) as client:
        sessions = [await client.new_session(cwd=str(HERE)) for _ in range(3)]
        turns: dict[str, Any] = {}

        async def run(session: Any, text: str) -> None:
            turns[session.id] = await session.run(text, timeout=TIMEOUT)

        async with trio.open_nursery() as nursery:
            for session, text in zip(sessions, ["stream", "hello", "fail"], strict=True):
                nursery.start_soon(run, session, text)
    results = [(turns[s.id].stop_reason, turns[s.id].text) for s in sessions]
    assert results == [
        ("end_turn", "one two three four five"),
        ("end_turn", "echo: hello"),
        ("error", ""),
    ]
    assert len({s.id for s in sessions}) == 3
    for session in sessions:
        assert session.model.violations == []
