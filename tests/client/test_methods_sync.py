"""The typed methods through the blocking facade (``acp_lite.connect_streams``).

Same cases and in-memory fake agent as ``tests/aio/test_methods.py``. Methods
the blocking classes do not mirror yet are listed in ``NEEDS_BLOCKING_MIRROR``
and skipped here; ``tests/client/test_methods_mirror_pending.py`` fails until
they exist (and until the mirrored methods pass ``force`` through).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
import trio
import trio.lowlevel
from aio.fake_method_agent import FakeAgent, stream_pair
from aio.test_methods import CASES, Case

import acp_lite
from acp_lite.aio import AsyncClient, AsyncSession
from acp_lite.errors import CapabilityNotSupported, MethodNotFound

#: Typed methods of AsyncClient / AsyncSession the blocking Client / Session lack.
NEEDS_BLOCKING_MIRROR: list[str] = []

#: Mirrored methods whose blocking signature does not take ``force`` (nor ``meta``, which
#: every typed method but ``request`` has).
NEEDS_FORCE_PASSTHROUGH: list[str] = []


def owner(case: Case) -> str:
    """``"Client"`` or ``"Session"``: where the typed method lives."""
    if case.on == "client":
        assert hasattr(AsyncClient, case.name), case.name
        return "Client"
    assert hasattr(AsyncSession, case.name), case.name
    return "Session"


@contextmanager
def connected(agent: FakeAgent) -> Iterator[tuple[acp_lite.Client, acp_lite.Session]]:
    async def open_streams() -> tuple[trio.abc.SendStream, trio.abc.ReceiveStream]:
        client_end, agent_end = stream_pair()
        # Runs on the client's trio thread for as long as its event loop does.
        trio.lowlevel.spawn_system_task(agent.run, agent_end)
        return client_end, client_end

    client = acp_lite.connect_streams(open_streams, timeout=5)
    try:
        session = client.new_session(cwd="/w")
        yield client, session
    finally:
        client.close()


def _target(case: Case, client: acp_lite.Client, session: acp_lite.Session) -> Any:
    return client if owner(case) == "Client" else session


def _skip_unmirrored(case: Case) -> None:
    if f"{owner(case)}.{case.name}" in NEEDS_BLOCKING_MIRROR:
        pytest.skip("not mirrored on the blocking classes yet (NEEDS_BLOCKING_MIRROR)")


def _sent(agent: FakeAgent, case: Case) -> dict[str, Any]:
    msg = next(m for m in agent.received if m.get("method") == case.method)
    return dict(msg.get("params", {}))


IDS = [c.name for c in CASES]


def test_lists_name_real_methods() -> None:
    names = {f"{owner(c)}.{c.name}" for c in CASES} | {"Client.request"}
    assert set(NEEDS_BLOCKING_MIRROR) <= names
    assert set(NEEDS_FORCE_PASSTHROUGH) <= names
    assert not set(NEEDS_BLOCKING_MIRROR) & set(NEEDS_FORCE_PASSTHROUGH)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_sends_the_request_and_returns_the_typed_result(case: Case) -> None:
    _skip_unmirrored(case)
    agent = FakeAgent()
    with connected(agent) as (client, session):
        result = case.call(client, session, {})  # type: ignore[arg-type]
    assert _sent(agent, case) == case.params
    if case.result_type is None:
        assert result is None
    else:
        assert isinstance(result, case.result_type)
        assert case.check(result)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_not_advertised_raises_and_sends_nothing(case: Case) -> None:
    _skip_unmirrored(case)
    agent = FakeAgent(capabilities={}, auth_methods=[], cancellable=False)
    with connected(agent) as (client, session):
        with pytest.raises(CapabilityNotSupported) as info:
            case.call(client, session, {})  # type: ignore[arg-type]
        sent = agent.sent_methods()
    assert case.method not in sent
    assert info.value.method == case.method and "force=True" in str(info.value)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_force_sends_anyway(case: Case) -> None:
    _skip_unmirrored(case)
    if f"{owner(case)}.{case.name}" in NEEDS_FORCE_PASSTHROUGH:
        pytest.skip("the blocking method does not pass force through yet")
    agent = FakeAgent(capabilities={}, auth_methods=[], cancellable=False)
    with connected(agent) as (client, session):
        case.call(client, session, {"force": True})  # type: ignore[arg-type]
    assert _sent(agent, case) == case.params


REQUESTS = [c for c in CASES if c.result_type is not None]


@pytest.mark.parametrize("case", REQUESTS, ids=[c.name for c in REQUESTS])
def test_method_not_found(case: Case) -> None:
    _skip_unmirrored(case)
    agent = FakeAgent()
    agent.errors[case.method] = -32601
    with connected(agent) as (client, session), pytest.raises(MethodNotFound) as info:
        case.call(client, session, {})  # type: ignore[arg-type]
    assert info.value.method == case.method and info.value.code == -32601


def test_raw_request_through_the_facade() -> None:
    agent = FakeAgent(capabilities={}, auth_methods=[])
    with connected(agent) as (client, _session):
        assert client.request("_acme/echo", {"a": 1}) == {"echo": True}
        with pytest.raises(CapabilityNotSupported):
            client.request("session/fork", {"sessionId": "sess-1", "cwd": "/w"})
