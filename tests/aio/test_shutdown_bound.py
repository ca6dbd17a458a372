"""close() stays within Limits.shutdown_timeout even when the agent stopped reading
its stdin (a real process: only pipes show back-pressure)."""

from __future__ import annotations

import sys
import time

import trio

from acp_lite import aio
from acp_lite.limits import Limits

# Answers initialize and session/new, then never reads stdin again.
STUCK_AGENT = r"""
import json, sys, time
def answer(result):
    msg = json.loads(sys.stdin.readline())
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}) + "\n")
    sys.stdout.flush()
answer({"protocolVersion": 2, "info": {"name": "stuck", "version": "1"}, "capabilities": {}})
answer({"sessionId": "s1"})
time.sleep(60)
"""


def test_close_is_bounded_when_the_agent_stops_reading() -> None:
    # The agent outlives its closed stdin (close_grace is waited out) and dies at
    # SIGTERM: the close takes about close_grace.
    limits = Limits(close_grace=0.4, terminate_grace=0.05, kill_grace=0.1)

    async def main() -> float:
        async with aio.connect([sys.executable, "-c", STUCK_AGENT], limits=limits) as client:
            session = await client.new_session("/")
            # Far more than a pipe holds: the writer blocks on the full pipe.
            await session.submit("x" * 2_000_000)
            await trio.sleep(0.05)  # the writer is under way, then blocks
            started = time.monotonic()
        return time.monotonic() - started

    elapsed = trio.run(main)
    # Before, the writer drain (close_grace) came on top of the ladder's own
    # close_grace: >= 2 * close_grace = 0.8 s, beyond this bound (0.75 s).
    assert elapsed < limits.shutdown_timeout + 0.2, elapsed
