"""The typed method surface of AsyncClient / AsyncSession, against an in-memory fake agent.

For each method: the wire request sent, the typed result, CapabilityNotSupported
with nothing sent when the agent did not advertise it, ``force=True`` sending
anyway, and -32601 raising MethodNotFound.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import pytest
import trio
import trio.testing

from acp_lite import aio
from acp_lite.aio._methods import auth_status_update
from acp_lite.errors import CapabilityNotSupported, MethodNotFound, ProtocolError
from acp_lite.protocol import (
    METHODS,
    ArchiveSessionResponse,
    AuthStatusResponse,
    AuthStatusUpdateNotification,
    CancelTerminalResponse,
    CancelToolCallResponse,
    CloseSessionResponse,
    DeleteSessionResponse,
    DisableProviderResponse,
    ForkSessionResponse,
    ListProvidersResponse,
    LoginAuthResponse,
    LogoutAuthResponse,
    SessionInfo,
    SessionStatusResponse,
    SetProviderResponse,
    SetSessionConfigOptionResponse,
    SetSessionTitleResponse,
    UnarchiveSessionResponse,
)

from .fake_method_agent import SESSION_ID, FakeAgent, stream_pair

pytestmark = pytest.mark.trio

S = SESSION_ID
Call = Callable[[aio.AsyncClient, aio.AsyncSession, dict[str, Any]], Awaitable[object]]


@dataclass(frozen=True)
class Case:
    name: str
    method: str
    call: Call
    params: dict[str, Any]
    result_type: type | None  # None: a notification
    check: Callable[[Any], bool] = lambda result: True
    on: str = "client"  # or "session": the object the method is called on


CASES = [
    Case(
        "login",
        "auth/login",
        lambda c, s, kw: c.login("agent-login", **kw),
        {"methodId": "agent-login"},
        LoginAuthResponse,
    ),
    Case("logout", "auth/logout", lambda c, s, kw: c.logout(**kw), {}, LogoutAuthResponse),
    Case(
        "auth_status",
        "auth/status",
        lambda c, s, kw: c.auth_status(**kw),
        {},
        AuthStatusResponse,
        lambda r: r.state == "authenticated" and r.accounts[0].label == "me",
    ),
    Case(
        "list_sessions",
        "session/list",
        lambda c, s, kw: c.list_sessions("/w", **kw),
        {"cwd": "/w"},
        list,
        lambda r: (
            [i.session_id for i in r] == ["a", "b"] and all(isinstance(i, SessionInfo) for i in r)
        ),
    ),
    Case(
        "delete_session",
        "session/delete",
        lambda c, s, kw: c.delete_session("stored-1", **kw),
        {"sessionId": "stored-1"},
        DeleteSessionResponse,
    ),
    Case(
        "list_providers",
        "providers/list",
        lambda c, s, kw: c.list_providers(**kw),
        {},
        ListProvidersResponse,
        lambda r: r.providers[0].provider_id == "main" and r.providers[0].required is True,
    ),
    Case(
        "set_provider",
        "providers/set",
        lambda c, s, kw: c.set_provider(
            "main", "openai", "https://llm.example/v1", headers={"Authorization": "x"}, **kw
        ),
        {
            "providerId": "main",
            "apiType": "openai",
            "baseUrl": "https://llm.example/v1",
            "headers": {"Authorization": "x"},
        },
        SetProviderResponse,
    ),
    Case(
        "disable_provider",
        "providers/disable",
        lambda c, s, kw: c.disable_provider("main", **kw),
        {"providerId": "main"},
        DisableProviderResponse,
    ),
    Case(
        "mcp_message",
        "mcp/message",
        lambda c, s, kw: c.mcp_message("srv-1", "r-7", "notifications/progress", {"p": 1}, **kw),
        {
            "serverId": "srv-1",
            "requestId": "r-7",
            "method": "notifications/progress",
            "params": {"p": 1},
        },
        None,
    ),
    Case(
        "set_config_option",
        "session/set_config_option",
        lambda c, s, kw: s.set_config_option("mode", "fast", **kw),
        {"sessionId": S, "configId": "mode", "type": "id", "value": "fast"},
        SetSessionConfigOptionResponse,
        lambda r: r.config_options[0].config_id == "mode",
        on="session",
    ),
    Case(
        "cancel_tool_call",
        "tool_call/cancel",
        lambda c, s, kw: s.cancel_tool_call("call-1", **kw),
        {"sessionId": S, "toolCallId": "call-1"},
        CancelToolCallResponse,
        on="session",
    ),
    Case(
        "cancel_terminal",
        "terminal/cancel",
        lambda c, s, kw: s.cancel_terminal("term-1", **kw),
        {"sessionId": S, "terminalId": "term-1"},
        CancelTerminalResponse,
        on="session",
    ),
    Case(
        "close",
        "session/close",
        lambda c, s, kw: s.close(**kw),
        {"sessionId": S},
        CloseSessionResponse,
        on="session",
    ),
    Case(
        "delete",
        "session/delete",
        lambda c, s, kw: s.delete(**kw),
        {"sessionId": S},
        DeleteSessionResponse,
        on="session",
    ),
    Case(
        "fork",
        "session/fork",
        lambda c, s, kw: s.fork("/w2", additional_directories=["/extra"], **kw),
        {"sessionId": S, "cwd": "/w2", "mcpServers": [], "additionalDirectories": ["/extra"]},
        ForkSessionResponse,
        lambda r: r.session_id == "sess-fork",
        on="session",
    ),
    Case(
        "archive",
        "session/archive",
        lambda c, s, kw: s.archive(**kw),
        {"sessionId": S},
        ArchiveSessionResponse,
        on="session",
    ),
    Case(
        "unarchive",
        "session/unarchive",
        lambda c, s, kw: s.unarchive(**kw),
        {"sessionId": S},
        UnarchiveSessionResponse,
        on="session",
    ),
    Case(
        "set_title",
        "session/set_title",
        lambda c, s, kw: s.set_title("  my title ", **kw),
        {"sessionId": S, "title": "  my title "},
        SetSessionTitleResponse,
        lambda r: r.title == "Normalised title",
        on="session",
    ),
    Case(
        "status",
        "session/status",
        lambda c, s, kw: s.status(**kw),
        {"sessionId": S},
        SessionStatusResponse,
        lambda r: r.status == "open",
        on="session",
    ),
]
IDS = [c.name for c in CASES]
REQUESTS = [c for c in CASES if c.result_type is not None]


@asynccontextmanager
async def connected(agent: FakeAgent) -> AsyncIterator[tuple[aio.AsyncClient, aio.AsyncSession]]:
    client_end, agent_end = stream_pair()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(agent.run, agent_end)
        async with aio.connect_streams(client_end, client_end, timeout=5) as client:
            session = await client.new_session(cwd="/w")
            yield client, session
        nursery.cancel_scope.cancel()


def _unadvertised() -> FakeAgent:
    # No capabilities, no authMethods, and no cancellable tool call or terminal.
    return FakeAgent(capabilities={}, auth_methods=[], cancellable=False)


def _sent(agent: FakeAgent, case: Case) -> dict[str, Any]:
    msg = next(m for m in agent.received if m.get("method") == case.method)
    if case.result_type is None:
        assert "id" not in msg  # a notification
    return dict(msg.get("params", {}))


@pytest.mark.parametrize("case", CASES, ids=IDS)
async def test_sends_the_request_and_returns_the_typed_result(case: Case) -> None:
    agent = FakeAgent()
    async with connected(agent) as (client, session):
        result = await case.call(client, session, {})
        await trio.testing.wait_all_tasks_blocked()
    assert _sent(agent, case) == case.params
    if case.result_type is None:
        assert result is None
    else:
        assert isinstance(result, case.result_type)
        if case.result_type is not list:
            assert METHODS[case.method].result is case.result_type
        assert case.check(result)


@pytest.mark.parametrize("case", CASES, ids=IDS)
async def test_not_advertised_raises_and_sends_nothing(case: Case) -> None:
    agent = _unadvertised()
    async with connected(agent) as (client, session):
        with pytest.raises(CapabilityNotSupported) as info:
            await case.call(client, session, {})
        await trio.testing.wait_all_tasks_blocked()
        assert case.method not in agent.sent_methods()
    err = info.value
    assert err.method == case.method
    assert "force=True" in str(err) and case.method in str(err)


@pytest.mark.parametrize("case", CASES, ids=IDS)
async def test_force_sends_anyway(case: Case) -> None:
    agent = _unadvertised()
    async with connected(agent) as (client, session):
        result = await case.call(client, session, {"force": True})
        await trio.testing.wait_all_tasks_blocked()
    assert _sent(agent, case) == case.params
    if case.result_type is not None:
        assert isinstance(result, case.result_type)


@pytest.mark.parametrize("case", REQUESTS, ids=[c.name for c in REQUESTS])
async def test_method_not_found(case: Case) -> None:
    agent = FakeAgent()
    agent.errors[case.method] = -32601
    async with connected(agent) as (client, session):
        with pytest.raises(MethodNotFound) as info:
            await case.call(client, session, {})
    assert info.value.method == case.method and info.value.code == -32601


# ---------------------------------------------------------------- details


async def test_capability_error_names_the_capability() -> None:
    agent = FakeAgent(capabilities={"session": {}})
    async with connected(agent) as (_client, session):
        with pytest.raises(CapabilityNotSupported) as info:
            await session.fork("/w2")
    assert info.value.capability == ("capabilities", "session", "fork")
    assert "`capabilities.session.fork`" in str(info.value)
    assert info.value.session_id == S


async def test_auth_gate_is_the_auth_methods_list() -> None:
    agent = FakeAgent(auth_methods=[])  # every capability, but no authMethods
    async with connected(agent) as (client, _session):
        with pytest.raises(CapabilityNotSupported, match="non-empty `authMethods`"):
            await client.login("agent-login")


async def test_entity_gate_names_the_entity() -> None:
    agent = FakeAgent(cancellable=False)
    async with connected(agent) as (_client, session):
        with pytest.raises(CapabilityNotSupported) as info:
            await session.cancel_tool_call("call-1")
    assert info.value.capability == ("capabilities", "cancel")
    assert "tool call 'call-1' (was never reported)" in str(info.value)


async def test_login_meta_and_extra_params_are_wire_named() -> None:
    agent = FakeAgent()
    async with connected(agent) as (client, _session):
        await client.login("agent-login", meta={"trace": 1}, token="abc")
    assert agent.last("auth/login")["params"] == {
        "methodId": "agent-login",
        "_meta": {"trace": 1},
        "token": "abc",
    }


async def test_set_config_option_value_types() -> None:
    agent = FakeAgent()
    async with connected(agent) as (_client, session):
        await session.set_config_option("thinking", True)
        assert agent.last("session/set_config_option")["params"]["type"] == "boolean"
        await session.set_config_option("budget", {"n": 3}, value_type="_budget")
        sent = agent.last("session/set_config_option")["params"]
        assert sent["type"] == "_budget" and sent["value"] == {"n": 3}
        with pytest.raises(TypeError, match="value_type"):
            await session.set_config_option("budget", 3)


async def test_list_sessions_follows_cursors_and_refuses_a_loop() -> None:
    agent = FakeAgent()
    async with connected(agent) as (client, _session):
        assert [i.session_id for i in await client.list_sessions()] == ["a", "b"]
        pages = [m["params"] for m in agent.received if m.get("method") == "session/list"]
        assert pages == [{}, {"cursor": "c1"}]
        agent.pages["c1"] = {"sessions": [], "nextCursor": "c1"}
        with pytest.raises(ProtocolError, match="cursor 'c1' twice") as info:
            await client.list_sessions()
        assert info.value.method == "session/list"


async def test_list_sessions_archived_filter_needs_archive() -> None:
    agent = FakeAgent(capabilities={"session": {}})
    async with connected(agent) as (client, _session):
        with pytest.raises(CapabilityNotSupported, match=r"capabilities\.session\.archive"):
            await client.list_sessions(archived="include")
        assert "session/list" not in agent.sent_methods()
        await client.list_sessions(archived="include", force=True)
        assert agent.last("session/list")["params"]["archived"] == "include"


async def test_fork_optional_params_are_gated() -> None:
    agent = FakeAgent(capabilities={"session": {"fork": {}}})
    async with connected(agent) as (_client, session):
        with pytest.raises(CapabilityNotSupported, match="additionalDirectories"):
            await session.fork("/w2", additional_directories=["/x"])
        system_prompt = {"mode": "append", "content": [{"type": "text", "text": "be brief"}]}
        with pytest.raises(CapabilityNotSupported, match="systemPrompt"):
            await session.fork("/w2", system_prompt=system_prompt)
        assert "session/fork" not in agent.sent_methods()
        forked = await session.fork("/w2")
        assert forked.session_id == "sess-fork"


async def test_invalid_result_is_a_protocol_error_naming_the_method() -> None:
    agent = FakeAgent()
    agent.results["session/set_title"] = {"no": "title"}
    async with connected(agent) as (_client, session):
        with pytest.raises(ProtocolError) as info:
            await session.set_title("x")
    assert info.value.method == "session/set_title" and info.value.session_id == S
    assert "SetSessionTitleResponse" in str(info.value)


async def test_an_already_typed_result_is_returned_as_is(monkeypatch: pytest.MonkeyPatch) -> None:
    agent = FakeAgent()
    typed = SetSessionTitleResponse(title="typed")
    async with connected(agent) as (client, session):
        real_call = client._conn.call

        async def call(method: str, params: Any, **kw: Any) -> Any:
            await real_call(method, params, **kw)
            return typed

        monkeypatch.setattr(client._conn, "call", call)
        assert await session.set_title("x") is typed


async def test_close_runs_the_model_end_checks() -> None:
    agent = FakeAgent()
    async with connected(agent) as (_client, session):
        assert not session.model._finished
        await session.close()
        assert session.model._finished


async def test_raw_request_returns_raw_or_typed() -> None:
    agent = FakeAgent(capabilities={}, auth_methods=[])
    async with connected(agent) as (client, _session):
        assert await client.request("_acme/echo", {"a": 1}) == {"echo": True}
        assert agent.last("_acme/echo")["params"] == {"a": 1}
        typed = await client.request("session/status", {"sessionId": S}, force=True,
                                     result_type=SessionStatusResponse)  # fmt: skip
        assert isinstance(typed, SessionStatusResponse) and typed.status == "open"
        with pytest.raises(CapabilityNotSupported):
            await client.request("session/fork", {"sessionId": S, "cwd": "/w"})


async def test_auth_status_update_reaches_the_event_log() -> None:
    agent = FakeAgent()
    async with connected(agent) as (client, _session):
        await client.auth_status()
        updates = [u for u in map(auth_status_update, client.events) if u is not None]
    assert updates and isinstance(updates[0], AuthStatusUpdateNotification)
    assert updates[0].state == "authenticated"
