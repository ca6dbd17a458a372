"""AsyncClient / AsyncSession against the reference agent: in this process, or a real
subprocess where the test is about the process (pid, exit status, stderr, signals)."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
import trio

from acp_lite import aio, permissions
from acp_lite.errors import (
    AgentExited,
    MethodNotFound,
    PromptRejected,
    RequestCancelled,
    Timeout,
    UnsupportedProtocolVersion,
)
from acp_lite.hookspec import hookimpl
from acp_lite.protocol import IdleStateUpdate
from acp_lite.testing import InProcessAgent

from .conftest import FAST, agent, inproc, inproc_scripted, wire
from .fakes import NO_ANSWER, FakeAgent

pytestmark = pytest.mark.trio

PERMISSION = "session/request_permission"


async def test_initialize_and_run_echo() -> None:
    async with aio.connect(agent("echo"), limits=FAST) as client:
        assert client.protocol_version == 2
        assert client.agent_info.name == "acp-lite-reference-agent"
        sent_init = wire(client)[0][1]
        assert sent_init["method"] == "initialize"
        assert sent_init["params"]["protocolVersion"] == 2
        assert sent_init["params"]["info"]["name"] == "acp-lite"
        assert "capabilities" in sent_init["params"]
        session = await client.new_session(cwd="/tmp")
        turn = await session.run("hello world")
        assert turn.stop_reason == "end_turn" and turn.text == "hello world"
        assert turn.message_id is not None and turn.submission.status == "inserted"
        assert isinstance(turn.updates[-1].update, IdleStateUpdate)
        pid = client.pid
    assert client.returncode == 0 and client.closed
    assert pid is not None


async def test_full_method_surface(tmp_path: Any) -> None:
    async with aio.connect_in_memory(inproc("many_sessions"), limits=FAST) as client:
        listed = await client.list_sessions()  # 12 stored sessions, 5 per page
        assert [s.session_id for s in listed] == [f"stored-{i}" for i in range(1, 13)]
        assert len(await client.list_sessions(cwd="/nowhere")) == 0
        resumed = await client.resume_session("stored-3", "/tmp", replay=True)
        assert resumed.model.text() == "answer 3"
        assert all(e.replayed for e in resumed.updates if e.tag != "state_update")
        assert any(e.replayed for e in resumed.updates)
        session = await client.new_session(cwd=str(tmp_path), additional_directories=["/tmp"])
        assert (await session.run("one")).text == "one"
        await session.cancel()  # idle: nothing to confirm
        await session.close()
        await client.delete_session("stored-4")
        assert "stored-4" not in [s.session_id for s in await client.list_sessions()]
        assert await client.request("_acp_lite/echo", {"a": 1}) == {"echo": {"a": 1}}
        with pytest.raises(MethodNotFound) as info:
            await client.request("x/unknown", {"a": 1})
        assert info.value.method == "x/unknown" and info.value.code == -32601
        # An extension method the agent does not implement: -32601 too (extensibility).
        with pytest.raises(MethodNotFound):
            await client.request("_vendor/unknown", {"a": 1})
        await client.notify("_acp_lite_test/hello", {"b": 2})
        methods = [m["method"] for d, m in wire(client) if d == "send" and "method" in m]
        for method in (
            "initialize",
            "session/list",
            "session/resume",
            "session/new",
            "session/prompt",
            "session/cancel",
            "session/close",
            "session/delete",
            "_acp_lite/echo",
            "_acp_lite_test/hello",
        ):
            assert method in methods


async def test_login_logout_and_session_methods() -> None:
    async with aio.connect_in_memory(inproc("auth_required"), limits=FAST) as client:
        assert client.auth_methods, "the agent advertises an auth method"
        method_id = client.auth_methods[0].method_id
        await client.login(method_id)
        session = await client.new_session(cwd="/tmp")
        for call in (
            session.set_config_option("mode", "fast"),
            # Never reported, so not advertised as cancellable: force sends anyway.
            session.cancel_tool_call("call-1", force=True),
            session.cancel_terminal("term-1", force=True),
        ):
            try:
                await call
            except Exception as exc:  # the agent may not implement these: a RequestError
                assert getattr(exc, "code", None) is not None, exc
        await client.logout()
        sent = [m.get("method") for d, m in wire(client) if d == "send"]
        assert {"auth/login", "auth/logout", "session/set_config_option"} <= set(sent)
        assert {"tool_call/cancel", "terminal/cancel"} <= set(sent)


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


@pytest.mark.parametrize(
    ("policy", "outcome", "text"),
    [
        (permissions.allow_once, {"outcome": "selected", "optionId": "allow"}, "Done"),
        (permissions.allow_always, {"outcome": "selected", "optionId": "allow_always"}, "Done"),
        (permissions.reject, {"outcome": "selected", "optionId": "reject"}, "did not"),
        (permissions.cancelled, {"outcome": "cancelled"}, ""),
    ],
)
async def test_permission_answered_by_policies(policy: Any, outcome: Any, text: str) -> None:
    async with aio.connect_in_memory(
        inproc("tool_call_permission"), limits=FAST, on_permission=policy
    ) as c:
        session = await c.new_session(cwd="/tmp")
        turn = await session.run("go")
        answers = [m for d, m in wire(c) if d == "send" and "result" in m]
        assert answers == [
            {"jsonrpc": "2.0", "id": answers[0]["id"], "result": {"outcome": outcome}}
        ]
        assert text in turn.text
        # The permission's tool call was applied to the model like a tool_call_update.
        assert session.model.entity("tool_call", "call-1") is not None


async def test_permission_default_policy_and_plugin_hooks() -> None:
    calls: list[str] = []

    class Plugin:
        @hookimpl
        def acp_permission_request(self, request: Any, session: Any) -> Any:
            calls.append(request.title)
            return permissions.option_of_kind(request, "allow_once")

        @hookimpl
        def acp_session_update(self, session: Any, event: Any) -> None:
            calls.append(event.tag)

    async with aio.connect_in_memory(
        inproc("tool_call_permission"), limits=FAST, plugins=[Plugin()]
    ) as c:
        turn = await (await c.new_session(cwd="/tmp")).run("go")
        assert "Done" in turn.text and "Allow writing notes.txt?" in calls
        assert "state_update" in calls
    async with aio.connect_in_memory(inproc("tool_call_permission"), limits=FAST) as c:
        turn = await (await c.new_session(cwd="/tmp")).run("go")
        assert "did not" in turn.text  # the default policy rejects


async def test_blocking_permission_callable_runs_off_the_trio_thread() -> None:
    trio_thread = threading.get_ident()
    seen: list[int] = []

    def ask_slowly(request: Any, session: Any) -> str | None:
        seen.append(threading.get_ident())
        time.sleep(0.05)  # blocks: must not stall the connection
        return permissions.allow_once(request, session)

    async with aio.connect_in_memory(
        inproc("tool_call_permission"), limits=FAST, on_permission=ask_slowly
    ) as c:
        session = await c.new_session(cwd="/tmp")
        turn = await session.run("go")
        assert "Done" in turn.text
        assert seen and seen[0] != trio_thread
        assert "requires_action" in [getattr(e.update, "state", None) for e in turn.updates]


async def test_cancel_answers_a_pending_permission_cancelled() -> None:
    release = threading.Event()
    try:
        async with aio.connect_in_memory(
            inproc("tool_call_permission"),
            limits=FAST,
            on_permission=lambda r, s: release.wait(10) and None,
        ) as client:
            session = await client.new_session(cwd="/tmp")
            sub = await session.prompt("go")
            with trio.fail_after(5):  # the permission request is in flight
                while not [
                    m
                    for _, m in wire(client)
                    if isinstance(m, dict) and m.get("method") == PERMISSION
                ]:
                    await trio.sleep(0.01)
            await session.cancel(wait=True, timeout=5)
            assert session.stop_reason == "cancelled" and sub.done
            sent = [m for d, m in wire(client) if d == "send"]
            cancel_at = sent.index(
                {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": session.id}}
            )
            assert sent[cancel_at + 1]["result"] == {"outcome": {"outcome": "cancelled"}}
    finally:
        release.set()


async def test_elicitation_default_decline_and_accept_callable() -> None:
    async with aio.connect_in_memory(inproc("elicitation"), limits=FAST) as client:
        turn = await (await client.new_session(cwd="/tmp")).run("x")
        assert turn.text == "No problem."
    accept = permissions.accept({"name": "Ada"})
    async with aio.connect_in_memory(
        inproc("elicitation"), limits=FAST, on_elicitation=accept
    ) as client:
        turn = await (await client.new_session(cwd="/tmp")).run("x")
        assert turn.text == "Thanks!"


async def test_callback_error_is_answered_and_logged() -> None:
    def broken(request: Any, session: Any) -> str:
        raise RuntimeError("oops")

    async with aio.connect_in_memory(
        inproc("tool_call_permission"), limits=FAST, on_permission=broken
    ) as c:
        session = await c.new_session(cwd="/tmp")
        await session.prompt("go")
        with trio.fail_after(5):
            while not [e for e in c.events if e.kind == "callback_error"]:
                await trio.sleep(0.01)
        errors = [m for d, m in wire(c) if d == "send" and "error" in m]
        assert errors and "oops" in errors[0]["error"]["message"]


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


async def test_extension_notification_reaches_hooks_and_log() -> None:
    got: list[Any] = []

    class Plugin:
        @hookimpl
        def acp_extension_notification(self, client: Any, method: str, params: Any) -> None:
            got.append((method, params))

    line = '{"jsonrpc":"2.0","method":"_acme/ping","params":{"n":1}}'
    script = {"turns": [{"steps": [{"type": "raw", "text": line}, {"type": "text", "text": "ok"}]}]}
    async with aio.connect_in_memory(
        inproc_scripted(script), limits=FAST, plugins=[Plugin()]
    ) as client:
        await (await client.new_session(cwd="/tmp")).run("x")
        assert got == [("_acme/ping", {"n": 1})]
        assert [e.method for e in client.events if e.kind == "extension_notification"] == [
            "_acme/ping"
        ]


async def test_connect_streams_over_an_open_pair_of_streams() -> None:
    process = await aio.AgentProcess.start(agent("echo"), limits=FAST)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(process.read_stderr)
        async with aio.connect_streams(process.stdin, process.stdout, limits=FAST) as client:
            turn = await (await client.new_session(cwd="/tmp")).run("over streams")
            assert turn.text == "over streams" and client.pid is None
        assert await process.aclose() == 0


async def test_requests_cancelled_by_the_agent_raise_request_cancelled_type() -> None:
    # -32800 on a non-prompt request maps to RequestCancelled.
    from acp_lite.errors import request_error_from

    assert isinstance(request_error_from(-32800, "c", method="session/new"), RequestCancelled)


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


async def test_errors_leave_connect_unwrapped_and_close_the_agent() -> None:
    class Boom(Exception):
        pass

    pids: list[int | None] = []
    with pytest.raises(Boom):
        async with aio.connect(agent("echo"), limits=FAST) as client:
            pids.append(client.pid)
            raise Boom
    assert client.closed and client.returncode == 0


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


async def test_custom_update_is_kept_in_the_event_log() -> None:
    async with aio.connect_in_memory(inproc("custom_update"), limits=FAST) as client:
        session = await client.new_session(cwd="/tmp")
        turn = await session.run("x")
        (custom,) = [e for e in turn.updates if e.tag == "_acp_lite/progress"]
        assert custom.raw["percent"] == 50


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


async def test_agent_withdrawing_its_request_is_answered_32800() -> None:
    release = threading.Event()
    try:
        async with aio.connect_in_memory(
            inproc("elicitation"), limits=FAST, on_elicitation=lambda r, s: release.wait(10)
        ) as client:
            session = await client.new_session(cwd="/tmp")
            await session.prompt("x")
            with trio.fail_after(5):  # the elicitation is in flight, its callback blocked
                while not [e for _, e in wire(client) if isinstance(e, dict) and "id" in e
                           and e.get("method") == "elicitation/create"]:  # fmt: skip
                    await trio.sleep(0.01)
            await session.cancel(wait=True, timeout=5)  # the agent withdraws the elicitation
            with trio.fail_after(5):
                while not [e for e in client.events if e.kind == "agent_cancelled_request"]:
                    await trio.sleep(0.01)
            msgs = [(d, m) for d, m in wire(client) if isinstance(m, dict)]
            (request,) = [m for _, m in msgs if m.get("method") == "elicitation/create"]
            answers = [
                m
                for d, m in msgs
                if d == "send" and "method" not in m and m.get("id") == request["id"]
            ]
            assert [a["error"]["code"] for a in answers] == [-32800]  # answered once
    finally:
        release.set()


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


async def test_cancel_leaves_permission_requests_for_listed_background_work() -> None:
    import json

    background_request = {
        "jsonrpc": "2.0",
        "id": "perm-bg",
        "method": PERMISSION,
        "params": {
            "sessionId": "{{session_id}}",
            "title": "bg?",
            "subject": {"type": "tool_call", "toolCall": {"toolCallId": "bg-1"}},
            "options": [{"optionId": "allow", "name": "Allow", "kind": "allow_once"}],
        },
    }
    steps = [
        {"type": "insert"},
        {"type": "background", "id": "bg-1", "title": "indexing", "seconds": 10},
        {"type": "raw", "text": json.dumps(background_request)},
        {"type": "permission", "title": "fg?"},  # foreground work
    ]
    release = threading.Event()
    try:
        async with aio.connect_in_memory(
            inproc_scripted({"turns": [{"steps": steps}]}),
            limits=FAST,
            on_permission=lambda r, s: release.wait(10) and permissions.allow_once(r, s),
        ) as client:
            session = await client.new_session(cwd="/tmp")
            await session.prompt("go")
            with trio.fail_after(5):  # both permission requests are in flight
                while len([m for _, m in wire(client) if isinstance(m, dict)
                           and m.get("method") == PERMISSION]) < 2:  # fmt: skip
                    await trio.sleep(0.01)
            assert [b.tool_call_id for b in session.model.background or ()] == ["bg-1"]
            await session.cancel(wait=True, timeout=5)
            answers = {
                m["id"]: m["result"] for d, m in wire(client) if d == "send" and "result" in m
            }
            assert list(answers.values()) == [{"outcome": {"outcome": "cancelled"}}]
            assert "perm-bg" not in answers  # background work: still the user's to decide
            release.set()
            with trio.fail_after(5):
                while "perm-bg" not in answers:
                    await trio.sleep(0.01)
                    answers = {m["id"]: m["result"] for d, m in wire(client)
                               if d == "send" and "result" in m}  # fmt: skip
            assert answers["perm-bg"] == {"outcome": {"outcome": "selected", "optionId": "allow"}}
    finally:
        release.set()


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
