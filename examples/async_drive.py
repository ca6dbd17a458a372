"""Drive an ACP agent from trio: two sessions of one agent working at the same time.

python examples/async_drive.py                   # the reference agent
python examples/async_drive.py node my-agent.mjs # any ACP v2 agent
"""

from __future__ import annotations

import os
import sys

import trio

import acp_lite.aio

REFERENCE_AGENT = [sys.executable, "-m", "acp_lite.testing.agent", "--scenario", "streaming"]


async def ask(client: acp_lite.aio.AsyncClient, question: str, results: dict[str, str]) -> None:
    session = await client.new_session(cwd=os.getcwd())
    turn = await session.run(question, timeout=30)
    results[question] = f"{turn.stop_reason}: {turn.text!r}"


async def main(command: list[str]) -> None:
    async with acp_lite.aio.connect(command, timeout=30) as client:
        name = client.agent_info.name if client.agent_info else "(no agentInfo)"
        print(f"agent: {name} (ACP v{client.protocol_version})")
        results: dict[str, str] = {}
        async with trio.open_nursery() as nursery:
            for question in ("first question", "second question"):
                nursery.start_soon(ask, client, question, results)
        for question, answer in sorted(results.items()):
            print(f"{question} -> {answer}")


if __name__ == "__main__":
    trio.run(main, sys.argv[1:] or REFERENCE_AGENT)
