"""AsyncClient against the reference agent: connecting (a subprocess, open streams,
in this process), initialize, the client's method surface, errors out of connect."""

from __future__ import annotations

from typing import Any

import pytest
import trio

from acp_lite import aio
from acp_lite.errors import MethodNotFound, RequestCancelled
from acp_lite.protocol import IdleStateUpdate

from .conftest import FAST, agent, inproc, wire

pytestmark = pytest.mark.trio


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


async def test_errors_leave_connect_unwrapped_and_close_the_agent() -> None:
    class Boom(Exception):
        pass

    pids: list[int | None] = []
    with pytest.raises(Boom):
        async with aio.connect(agent("echo"), limits=FAST) as client:
            pids.append(client.pid)
            raise Boom
    assert client.closed and client.returncode == 0
