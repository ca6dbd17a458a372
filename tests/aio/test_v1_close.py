"""``session.close()`` on a v1 agent (issue 24, item 10).

v1 makes ``session/close`` optional (``sessionCapabilities.close``); fast-agent
and the SDK examples do not advertise it and answer -32601. Without the
capability the session is closed locally (nothing sent); with it, the request
goes out as before.
"""

from __future__ import annotations

from typing import Any

import pytest
import trio

from acp_lite import aio
from acp_lite.protocol import CloseSessionResponse

from .conftest import FAST
from .fake_v1 import V1Agent

pytestmark = pytest.mark.trio


class ClosingAgent(V1Agent):
    """A :class:`V1Agent` that may advertise and answer ``session/close``."""

    def __init__(self, *, close: bool, on_prompt: Any = None) -> None:
        super().__init__(on_prompt)
        self.close = close

    async def _handle(self, message: dict[str, Any]) -> None:
        method, rid = message.get("method"), message.get("id")
        if method == "initialize":
            caps: dict[str, Any] = {"loadSession": True}
            if self.close:
                caps["sessionCapabilities"] = {"close": {}}
            await self.send(
                {"id": rid, "result": {"protocolVersion": 1, "agentCapabilities": caps}}
            )
            return
        if method == "session/close" and self.close:
            await self.send({"id": rid, "result": {}})
            return
        await super()._handle(message)


def methods(agent: V1Agent) -> list[str]:
    return [m.get("method") for m in agent.received if "method" in m]


async def test_close_without_the_capability_is_local() -> None:
    agent = ClosingAgent(close=False)
    async with aio.connect_in_memory(agent, limits=FAST, protocol_version=1) as client:
        session = await client.new_session(cwd="/")
        result = await session.close()
        assert isinstance(result, CloseSessionResponse)
        await trio.testing.wait_all_tasks_blocked()
        assert "session/close" not in methods(agent)
        assert session.model._finished


async def test_close_without_the_capability_forced_is_sent() -> None:
    agent = ClosingAgent(close=False)
    async with aio.connect_in_memory(agent, limits=FAST, protocol_version=1) as client:
        session = await client.new_session(cwd="/")
        with pytest.raises(Exception) as info:
            await session.close(force=True)
        assert "-32601" in str(info.value) or getattr(info.value, "code", None) == -32601
        assert "session/close" in methods(agent)


async def test_close_with_the_capability_is_sent() -> None:
    agent = ClosingAgent(close=True)
    async with aio.connect_in_memory(agent, limits=FAST, protocol_version=1) as client:
        session = await client.new_session(cwd="/")
        await session.close()
        assert methods(agent).count("session/close") == 1
        assert session.model._finished


async def test_local_close_of_a_busy_session_cancels_its_turn() -> None:
    release = trio.Event()

    async def on_prompt(agent: V1Agent, session_id: str) -> None:
        await release.wait()

    agent = ClosingAgent(close=False, on_prompt=on_prompt)
    async with aio.connect_in_memory(agent, limits=FAST, protocol_version=1) as client:
        session = await client.new_session(cwd="/")
        await session.submit("hi")
        await session.close()
        await trio.testing.wait_all_tasks_blocked()
        assert methods(agent)[-1] == "session/cancel"
        assert "session/close" not in methods(agent)
        release.set()
