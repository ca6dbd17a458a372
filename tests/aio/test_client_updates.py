"""Session updates through an AsyncClient: none lost (many sessions, many clients),
iterators and on_update callbacks, custom and raw payloads, batches, retention limits."""

from __future__ import annotations

import threading
from typing import Any

import pytest
import trio

from acp_lite import aio
from acp_lite.errors import Timeout
from acp_lite.protocol import IdleStateUpdate

from .conftest import FAST, agent, inproc, inproc_scripted

pytestmark = pytest.mark.trio


async def test_twenty_sessions_on_one_connection_lose_no_update() -> None:
    n_chunks = 300
    async with aio.connect_in_memory(
        inproc("flood", "--count", str(n_chunks)), limits=FAST
    ) as client:
        sessions = [await client.new_session(cwd="/tmp") for _ in range(20)]
        turns: dict[str, Any] = {}

        async def run(session: Any) -> None:
            turns[session.id] = await session.run("go")

        async with trio.open_nursery() as nursery:
            for session in sessions:
                nursery.start_soon(run, session)
        for session in sessions:
            chunks = [e for e in session.updates if e.tag == "agent_message_chunk"]
            assert len(chunks) == n_chunks, session.id
            assert turns[session.id].stop_reason == "end_turn"
        assert not client.events


async def test_iteration_and_on_update_callbacks() -> None:
    async with aio.connect_in_memory(inproc("streaming"), limits=FAST) as client:
        session = await client.new_session(cwd="/tmp")
        trio_thread = threading.get_ident()
        seen: list[tuple[str, int]] = []
        unsubscribe = session.on_update(lambda e: seen.append((e.tag, threading.get_ident())))
        iterated: list[str] = []
        updates = session.iter_updates()  # from now: before the prompt is sent

        async def iterate() -> None:
            async for event in updates:
                iterated.append(event.tag)
                if isinstance(event.update, IdleStateUpdate):
                    return

        async with trio.open_nursery() as nursery:
            nursery.start_soon(iterate)
            turn = await session.run("x")
        with trio.fail_after(5):
            while len(seen) < len(turn.updates):
                await trio.sleep(0.01)
        unsubscribe()
        tags = [e.tag for e in turn.updates]
        assert iterated == tags and [t for t, _ in seen] == tags
        assert all(thread != trio_thread for _, thread in seen)


async def test_an_iterator_starts_when_it_is_made_not_at_its_first_step() -> None:
    async with aio.connect_in_memory(inproc("echo"), limits=FAST) as client:
        session = await client.new_session(cwd="/tmp")
        updates = session.iter_updates(until="idle")
        turn = await session.run("x")
        assert [e.tag async for e in updates] == [e.tag for e in turn.updates]
        with pytest.raises(ValueError, match="until must be"):
            session.iter_updates(until="never")  # type: ignore[arg-type]


async def test_eight_clients_at_once_lose_no_update() -> None:
    n_chunks = 500
    counts: list[int] = []

    async def one() -> None:
        async with aio.connect_in_memory(
            inproc("flood", "--count", str(n_chunks)), limits=FAST
        ) as client:
            session = await client.new_session(cwd="/tmp")
            turn = await session.run("go")
            counts.append(sum(1 for e in turn.updates if e.tag == "agent_message_chunk"))

    async with trio.open_nursery() as nursery:
        for _ in range(8):
            nursery.start_soon(one)
    assert counts == [n_chunks] * 8


async def test_custom_update_is_kept_in_the_event_log() -> None:
    async with aio.connect_in_memory(inproc("custom_update"), limits=FAST) as client:
        session = await client.new_session(cwd="/tmp")
        turn = await session.run("x")
        (custom,) = [e for e in turn.updates if e.tag == "_acp_lite/progress"]
        assert custom.raw["percent"] == 50


async def test_raw_update_payloads_can_be_left_to_the_transcript() -> None:
    limits = FAST.__class__(keep_raw_updates=False)
    async with aio.connect_in_memory(inproc("custom_update"), limits=limits) as client:
        turn = await (await client.new_session(cwd="/tmp")).run("x")
        (custom,) = [e for e in turn.updates if e.tag == "_acp_lite/progress"]
        assert custom.raw == {
            "sessionUpdate": "_acp_lite/progress",
            "percent": 50,
            "label": "halfway",
        }
        chunk = next(e for e in turn.updates if e.tag == "agent_message_chunk")
        assert chunk.raw["content"] == {"type": "text", "text": "Ok."}


async def test_iter_updates_wait_is_bounded_and_close_is_aclose() -> None:
    async with aio.connect(agent("echo"), limits=FAST) as client:
        session = await client.new_session(cwd="/tmp")
        await session.run("hi")
        seen: list[str] = []
        with pytest.raises(Timeout) as info:
            async for event in session.iter_updates(from_start=True, timeout=0.05):
                seen.append(event.tag)
        assert seen == [e.tag for e in session.updates]  # what was there came first
        assert info.value.awaited == "the next session update"
        assert info.value.state == "idle" and info.value.session_id == session.id
        await client.close()  # the blocking Client's name for aclose()
        assert client.closed and client.returncode == 0


async def test_transcript_and_client_event_log_retention_is_a_limit() -> None:
    limits = FAST.__class__(max_transcript_entries=50, max_events=1)
    async with aio.connect_in_memory(inproc("flood", "--count", "500"), limits=limits) as client:
        await (await client.new_session(cwd="/tmp")).run("go")
        assert len(client.transcript) == 50 and client.transcript.dropped > 450
        assert client.transcript[-1].json()["params"]["update"]["state"] == "idle"
    async with aio.connect_in_memory(inproc("broken_stdout_garbage"), limits=limits) as client:
        await (await client.new_session(cwd="/tmp")).run("x")
        (event,) = client.events  # the newest of the two protocol errors
        assert event.kind == "protocol_error"
    async with aio.connect_in_memory(inproc("flood", "--count", "500"), limits=FAST) as client:
        await (await client.new_session(cwd="/tmp")).run("go")
        assert client.transcript.dropped == 0 and len(client.transcript) > 500  # whole


async def test_session_updates_inside_a_batch_are_applied() -> None:
    import json

    def chunk(text: str) -> dict[str, Any]:
        update = {
            "sessionUpdate": "agent_message_chunk",
            "messageId": "m1",
            "content": {"type": "text", "text": text},
        }
        params = {"sessionId": "{{session_id}}", "update": update}
        return {"jsonrpc": "2.0", "method": "session/update", "params": params}

    steps = [{"type": "raw", "text": json.dumps([chunk("A"), chunk("B")])}]
    steps.append({"type": "text", "text": "C", "message_id": "m1"})
    async with aio.connect_in_memory(
        inproc_scripted({"turns": [{"steps": steps}]}), limits=FAST
    ) as client:
        turn = await (await client.new_session(cwd="/tmp")).run("x")
        assert turn.text == "ABC"  # JSON-RPC 2.0 section 6: each member as if sent alone
        assert not client.events
