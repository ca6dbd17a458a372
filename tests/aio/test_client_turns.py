"""AsyncSession turns against the reference agent: prompt responses and message ids,
prompts held while the agent works, withdrawal, timeouts, cancel, failed or rejected prompts."""

from __future__ import annotations

import threading
from typing import Any

import pytest
import trio

from acp_lite import aio, permissions
from acp_lite.errors import PromptRejected, Timeout
from acp_lite.testing import InProcessAgent

from .conftest import FAST, inproc, inproc_scripted, wire
from .fakes import NO_ANSWER, FakeAgent

pytestmark = pytest.mark.trio


async def test_prompt_message_id_with_updates_before_the_response() -> None:
    async with aio.connect_in_memory(inproc("updates_before_response"), limits=FAST) as client:
        session = await client.new_session(cwd="/tmp")
        turn = await session.run("hi")
        assert turn.text == "Output before the response."
        assert turn.message_id is not None
        recv = [m for d, m in wire(client) if d == "recv"]
        i_resp = next(i for i, m in enumerate(recv) if m.get("result", {}).get("messageId"))
        before = [m["params"]["update"]["sessionUpdate"] for m in recv[:i_resp] if "params" in m]
        assert "agent_message_chunk" in before and "user_message" in before


async def test_prompt_with_updates_after_the_response() -> None:
    async with aio.connect_in_memory(inproc("streaming"), limits=FAST) as client:
        session = await client.new_session(cwd="/tmp")
        sub = await session.prompt("hi")
        assert sub.status == "inserted" and sub.message_id
        turn_events_at_response = len(session.updates)
        await session.wait_idle()
        await session._wait_until(lambda: sub.done, timeout=5, awaited="done")
        assert len(session.updates) > turn_events_at_response
        assert "chunks" in session.text(sub)


async def test_session_updates_before_session_new_response_are_kept() -> None:
    async with aio.connect_in_memory(
        inproc("updates_before_session_response"), limits=FAST
    ) as client:
        session = await client.new_session(cwd="/tmp")
        assert [e.tag for e in session.updates] == ["available_commands_update", "state_update"]
        assert session.model.is_quiet  # the early idle + background [] was applied
        assert [c.name for c in session.model.available_commands] == ["help"]
        assert not [e for e in client.events if e.kind == "unknown_session_update"]


async def test_update_for_a_never_opened_session_goes_to_the_client_log() -> None:
    async with aio.connect_in_memory(inproc("broken_wrong_session_id"), limits=FAST) as client:
        session = await client.new_session(cwd="/tmp")
        await session.run("x")
        (event,) = [e for e in client.events if e.kind == "unknown_session_update"]
        assert event.session_id == "sess-does-not-exist"


def _gated_first_turn() -> tuple[InProcessAgent, threading.Event, Any]:
    """An agent whose first turn stays active until ``gate`` is set (prompts sent
    meanwhile are held: ``while_busy`` is ``hold``); later turns echo at once.

    The first turn's work waits on a permission request (not reported as
    ``requires_action``) whose callback waits for the gate: a state the test
    controls, not a sleep that must outlast it.
    """
    first = [{"type": "echo"}, {"type": "permission", "requires_action": False}]
    agent = inproc_scripted({"turns": [{"steps": first}, {"steps": [{"type": "echo"}]}]})
    gate = threading.Event()

    def answer_when_gated(request: Any, session: Any) -> str | None:
        gate.wait(10)
        return permissions.allow_once(request, session)

    return agent, gate, answer_when_gated


async def test_prompt_while_running_is_sent_and_held_by_the_agent() -> None:
    agent, gate, on_permission = _gated_first_turn()
    try:
        async with aio.connect_in_memory(agent, limits=FAST, on_permission=on_permission) as client:
            session = await client.new_session(cwd="/tmp")
            first = await session.prompt("first")
            second = await session.submit("second")  # during active work: never refused locally
            assert second.status == "pending"
            await trio.sleep(0.05)  # held: not inserted while the first work runs
            assert second.status == "pending" and not first.done
            gate.set()  # the first work ends; the agent inserts the held prompt
            await session.wait_inserted(second)
            assert session.model.submission(second.request_id).status == "inserted"
            await session._wait_until(lambda: second.done, timeout=5, awaited="second done")
            assert first.done and session.text(first) == "first"
            assert session.text(second) == "second"
    finally:
        gate.set()


async def test_cancel_request_withdraws_a_held_prompt() -> None:
    agent, gate, on_permission = _gated_first_turn()
    try:
        async with aio.connect_in_memory(agent, limits=FAST, on_permission=on_permission) as client:
            session = await client.new_session(cwd="/tmp")
            await session.prompt("first")
            held = await session.submit("held")
            assert session.withdraw(held)
            with pytest.raises(PromptRejected) as info:
                await session.wait_inserted(held)
            assert info.value.code == -32800
            assert held.status == "rejected"
            gate.set()  # only now may the first work end
            await session.wait_idle()
            sent = [m for d, m in wire(client) if d == "send"]
            withdraw = {"requestId": held.request_id}
            assert {"jsonrpc": "2.0", "method": "$/cancel_request", "params": withdraw} in sent
    finally:
        gate.set()


async def test_timeout_on_prompt_withdraws_it(autojump_clock: Any) -> None:
    async def hang(agent: FakeAgent, msg: dict[str, Any]) -> Any:
        running = {"sessionUpdate": "state_update", "state": "running", "background": []}
        await agent.update(msg["params"]["sessionId"], running)
        return NO_ANSWER  # stuck before insertion: the prompt is never answered

    fake = FakeAgent({"session/prompt": hang})
    async with aio.connect_in_memory(fake, limits=FAST) as client:
        session = await client.new_session(cwd="/tmp")
        t0 = trio.current_time()
        with pytest.raises(Timeout) as info:
            await session.run("anything", timeout=60)
        assert 60 <= trio.current_time() - t0 < 61  # on time (a mock clock: no wall wait)
        msg = str(info.value)
        assert "session/prompt" in msg and "60s" in msg and "session state=running" in msg
        assert info.value.state == "running" and info.value.session_id == session.id
        sent = [m.get("method") for d, m in wire(client) if d == "send"]
        assert "$/cancel_request" in sent


async def test_cancel_wait_says_so_when_the_agent_never_confirms() -> None:
    script = {"turns": [{"steps": [{"type": "insert"}, {"type": "hang"}]}]}
    async with aio.connect_in_memory(inproc_scripted(script), limits=FAST) as client:
        session = await client.new_session(cwd="/tmp")
        await session.prompt("x")  # inserted, then the work ignores session/cancel
        with trio.fail_after(5):  # the agent logs when the hang starts
            while not any("hanging forever" in line for line in client.stderr_tail()):
                await trio.sleep(0.01)
        with pytest.raises(Timeout) as info:
            await session.cancel(wait=True, timeout=0.05)
        assert "confirms cancellation" in str(info.value) and info.value.state == "running"


async def test_failure_after_insertion_is_a_stop_reason_not_an_exception() -> None:
    from acp_lite.turn import TurnFailed

    async with aio.connect_in_memory(inproc("failure"), limits=FAST) as client:
        session = await client.new_session(cwd="/tmp")
        turn = await session.run("x")
        assert turn.submission.status == "inserted"
        assert turn.stop_reason == "error" and turn.text == "Starting..."
        assert turn.error is not None
        with pytest.raises(TurnFailed, match="Model provider unavailable"):
            turn.raise_for_stop()


async def test_rejected_prompt_raises_prompt_rejected() -> None:
    script = {"turns": [{"steps": [{"type": "reject", "code": -32602, "message": "no images"}]}]}
    async with aio.connect_in_memory(inproc_scripted(script), limits=FAST) as client:
        session = await client.new_session(cwd="/tmp")
        with pytest.raises(PromptRejected) as info:
            await session.run("x")
        assert info.value.code == -32602 and info.value.session_id == session.id
        assert "no images" in str(info.value)
        (submission,) = session.model.submissions
        assert submission.status == "rejected"


SLOW_TURN = {
    "turns": [{"steps": [{"type": "text", "text": "first"}, {"type": "sleep", "seconds": 30}]}]
}


@pytest.mark.parametrize("stop_on_cancel", [2.0, None])
async def test_a_cancelled_run_stops_the_work_it_started(stop_on_cancel: float | None) -> None:
    async with aio.connect_in_memory(inproc_scripted(SLOW_TURN), limits=FAST) as client:
        session = await client.new_session(cwd="/tmp")
        scope = trio.CancelScope()

        async def run() -> None:
            with scope:
                await session.run("go", stop_on_cancel=stop_on_cancel)

        async with trio.open_nursery() as nursery:
            nursery.start_soon(run)
            with trio.fail_after(5):  # the turn is inserted and streams its first text
                while session.text() != "first":
                    await trio.sleep(0.01)
            scope.cancel()
        sent = [m.get("method") for d, m in wire(client) if d == "send"]
        if stop_on_cancel is None:  # only a held prompt would be withdrawn: none here
            assert "session/cancel" not in sent
            assert session.state == "running"
        else:  # session/cancel sent, and its confirming idle awaited before returning
            assert "session/cancel" in sent
            assert session.state == "idle"
