"""A v1 turn that times out says so in v1 terms (issue 25, item 11): its whole turn
is the one ``session/prompt`` request, so the wait is for that response, not for a
v2 idle or message id. On trio's ``MockClock``."""

from __future__ import annotations

from typing import Any

import pytest
import trio

from acp_lite import aio
from acp_lite.errors import Timeout

from .conftest import FAST
from .fake_v1 import V1Agent

pytestmark = pytest.mark.trio


CHUNK = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "hm"}}


@pytest.mark.parametrize("output", [False, True])
async def test_an_unanswered_v1_prompt_times_out_naming_session_prompt(
    autojump_clock: Any, output: bool
) -> None:
    # With output, the client has inserted the prompt (v1 has no insertion of its
    # own): the wait is then the rest of the turn, still the same response.
    async def on_prompt(agent: V1Agent, session_id: str) -> None:
        if output:
            params = {"sessionId": session_id, "update": CHUNK}
            await agent.send({"method": "session/update", "params": params})
        await trio.sleep_forever()  # never answers session/prompt

    agent = V1Agent(on_prompt)
    async with aio.connect_in_memory(agent, limits=FAST, protocol_version=1) as client:
        session = await client.new_session(cwd="/")
        with pytest.raises(Timeout) as caught:
            await session.run("hi", timeout=3)
    message = str(caught.value)
    assert message.startswith("no response to session/prompt"), message
    assert "within 3s" in message and "v1-prompt" not in message, message
    assert "idle" not in caught.value.awaited
