"""AsyncClient against a misbehaving agent: silent at initialize, the wrong protocol version,
a crash, garbage or oversize lines, stray responses, SIGTERM ignored, stdout closed."""

from __future__ import annotations

import time
from typing import Any

import pytest
import trio

from acp_lite import aio
from acp_lite.errors import AgentExited, Timeout, UnsupportedProtocolVersion

from .conftest import FAST, agent, inproc, inproc_scripted, wire

pytestmark = pytest.mark.trio


async def test_agent_that_never_answers_initialize(autojump_clock: Any) -> None:
    # In this process on a mock clock: the timeout is waited out at once. The same
    # over a real process: tests/client/test_client.py (connect), and
    # tests/aio/test_close_after_timeout.py (what closing it then does).
    limits = FAST.__class__(connect_timeout=0.8, close_grace=0.2, terminate_grace=0.5)
    t0 = trio.current_time()
    with pytest.raises(Timeout) as info:
        async with aio.connect_in_memory(inproc("unresponsive"), limits=limits):
            pass
    assert trio.current_time() - t0 >= 0.8
    assert "initialize" in str(info.value)
    assert "[agent] ready" in "\n".join(info.value.stderr_tail)


async def test_unsupported_protocol_version_closes() -> None:
    with pytest.raises(UnsupportedProtocolVersion) as info:
        async with aio.connect_in_memory(inproc("wrong_protocol_version"), limits=FAST):
            pass
    assert info.value.version == 1


async def test_crash_mid_turn_fails_every_waiter_at_once() -> None:
    async with aio.connect(agent("crash"), limits=FAST) as client:
        session = await client.new_session(cwd="/tmp")
        other = await client.new_session(cwd="/tmp")
        t0 = time.monotonic()
        errors: list[BaseException] = []

        async def wait_other() -> None:
            try:
                await other.wait_quiet(timeout=5)
            except AgentExited as exc:
                errors.append(exc)

        async with trio.open_nursery() as nursery:
            nursery.start_soon(wait_other)
            with pytest.raises(AgentExited) as info:
                await session.run("boom")
        assert time.monotonic() - t0 < 1.0
        assert info.value.returncode == 3
        assert any("simulated crash" in line for line in info.value.stderr_tail)
        assert "simulated crash" in str(info.value) and info.value.session_id == session.id
        assert len(errors) == 1
        with pytest.raises(AgentExited):
            await client.new_session(cwd="/tmp")


async def test_garbage_lines_are_recorded_and_the_connection_survives() -> None:
    async with aio.connect_in_memory(inproc("broken_stdout_garbage"), limits=FAST) as client:
        session = await client.new_session(cwd="/tmp")
        turn = await session.run("x")
        assert turn.text == "before garbage\nafter garbage"
        errors = [e for e in client.events if e.kind == "protocol_error"]
        assert len(errors) == 2
        assert b"this is not JSON {" in [e.line for e in client.transcript]


async def test_oversize_line_is_skipped_and_recorded() -> None:
    limits = FAST.__class__(max_line_bytes=256 * 1024)
    async with aio.connect_in_memory(
        inproc("oversize_line", "--count", "1000000"), limits=limits
    ) as client:
        session = await client.new_session(cwd="/tmp")
        turn = await session.run("x")
        assert turn.text == "Still here after the big line."
        (event,) = [e for e in client.events if e.kind == "oversize_line"]
        assert event.data.size > 1_000_000 and "max_line_bytes" in str(event.error)


async def test_agent_ignoring_sigterm_is_killed_within_the_bound() -> None:
    # Short graces: the ladder's steps are the point here, not their default lengths.
    limits = FAST.__class__(close_grace=0.05, terminate_grace=0.05, kill_grace=1.0)
    async with aio.connect(agent("ignore_sigterm"), limits=limits) as client:
        session = await client.new_session(cwd="/tmp")
        await session.run("x")
        pid = client.pid
        t0 = time.monotonic()
    assert time.monotonic() - t0 < limits.shutdown_timeout + 0.5
    assert client.returncode == -9
    assert pid is not None
    with pytest.raises(ProcessLookupError):  # reaped: not even a zombie is left
        import os

        os.kill(pid, 0)


CLOSES_STDOUT = r"""
import json, os, sys, time
req = json.loads(sys.stdin.readline())
result = {"protocolVersion": 2, "info": {"name": "closer", "version": "0"}}
sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": req["id"], "result": result}) + "\n")
sys.stdout.flush()
sys.stdin.readline()  # session/new: never answered
sys.stderr.write("closing stdout now\n"); sys.stderr.flush()
os.close(1)
time.sleep(30)
"""


async def test_agent_closing_stdout_fails_waiters_within_a_second() -> None:
    import sys

    # Shorter waits that expire: the agent neither exits after closing its stdout
    # (exit_status_wait; the stderr line it wrote before is read well within it)
    # nor at its closed stdin (close_grace); SIGTERM ends it.
    limits = FAST.__class__(close_grace=0.05, terminate_grace=0.5, exit_status_wait=0.25)
    async with aio.connect([sys.executable, "-c", CLOSES_STDOUT], limits=limits) as client:
        t0 = time.monotonic()
        with pytest.raises(AgentExited) as info:
            await client.new_session(cwd="/tmp")
        assert time.monotonic() - t0 < 1.0
        assert info.value.returncode is None and "closed its stdout" in str(info.value)
        assert info.value.method == "session/new"
        assert "closing stdout now" in info.value.stderr_tail
    assert client.returncode == -15  # the ladder's SIGTERM


async def test_batches_and_unmatched_responses_from_a_real_agent() -> None:
    batch = (
        '[{"jsonrpc":"2.0","method":"_acme/a","params":{}},'
        '{"jsonrpc":"2.0","id":"b1","method":"fs/read_text_file","params":{}}]'
    )
    stray = '{"jsonrpc":"2.0","id":999,"result":{}}'
    steps = [{"type": "raw", "text": batch}, {"type": "raw", "text": stray}]
    steps.append({"type": "text", "text": "ok"})
    async with aio.connect_in_memory(
        inproc_scripted({"turns": [{"steps": steps}]}), limits=FAST
    ) as client:
        turn = await (await client.new_session(cwd="/tmp")).run("x")
        assert turn.text == "ok"
        answers = [m for d, m in wire(client) if d == "send" and isinstance(m, list)]
        assert len(answers) == 1 and answers[0][0]["id"] == "b1"
        assert answers[0][0]["error"]["code"] == -32601
        kinds = [e.kind for e in client.events]
        assert kinds == ["extension_notification", "unhandled_request", "unmatched_response"]
