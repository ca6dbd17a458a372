"""A session/new the agent never answers must not make the client hold updates for
unknown sessions forever: once the request is given up (timeout), they go to the
client event log as they do without a pending session/new."""

from __future__ import annotations

from typing import Any

import pytest
import trio

from acp_lite import aio
from acp_lite.errors import Timeout
from acp_lite.limits import Limits

from .fakes import NO_ANSWER, FakeAgent


async def poke(agent: FakeAgent, message: dict[str, Any]) -> Any:
    """On ``_poke``: an update for a session id nobody opened."""
    stranger = {"sessionUpdate": "state_update", "state": "idle", "background": []}
    await agent.update("stranger", stranger)
    return NO_ANSWER


@pytest.mark.trio
async def test_updates_are_not_held_after_an_unanswered_session_new_times_out(
    autojump_clock: Any,
) -> None:
    # Trio-level waits only: the agent runs in this loop, the timeout on a mock clock.
    fake = FakeAgent({"session/new": lambda _agent, _msg: NO_ANSWER, "_poke": poke})
    limits = Limits(default_timeout=5.0, close_grace=0.5, terminate_grace=0.5, kill_grace=1.0)
    async with aio.connect_in_memory(fake, limits=limits) as client:
        t0 = trio.current_time()
        with pytest.raises(Timeout, match="session/new"):
            await client.new_session(cwd="/tmp", timeout=0.3)
        assert trio.current_time() - t0 >= 0.3
        await client.notify("_poke", {})
        with trio.fail_after(5):
            while not [e for e in client.events if e.kind == "unknown_session_update"]:
                await trio.sleep(0.01)
        (event,) = [e for e in client.events if e.kind == "unknown_session_update"]
        assert event.session_id == "stranger"
