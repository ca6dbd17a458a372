"""``session.state`` of a v1 session reads ``running`` once a prompt is sent
(issue 24, item 13), through the in-memory transport."""

from __future__ import annotations

import pytest
import trio

from acp_lite import aio

from .conftest import FAST
from .fake_v1 import V1Agent

pytestmark = pytest.mark.trio


async def test_state_is_running_while_the_prompt_is_unanswered() -> None:
    release = trio.Event()

    async def on_prompt(agent: V1Agent, session_id: str) -> None:
        await release.wait()  # a tool that sleeps: nothing sent meanwhile

    agent = V1Agent(on_prompt)
    async with aio.connect_in_memory(agent, limits=FAST, protocol_version=1) as client:
        session = await client.new_session(cwd="/")
        submission = await session.submit("hi")
        await trio.testing.wait_all_tasks_blocked()
        assert session.state == "running" and submission.status == "pending"
        release.set()
        await session.wait_idle()
        assert session.state == "idle" and submission.done
        assert session.stop_reason == "end_turn"
