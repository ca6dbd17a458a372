"""Drive an ACP agent from a plain, blocking Python script.

    python examples/drive_agent.py                   # the reference agent
    python examples/drive_agent.py node my-agent.mjs # any ACP v2 agent

No trio, no async: ``acp_lite.connect`` runs the connection in a background thread.
"""

from __future__ import annotations

import os
import sys

import acp_lite

REFERENCE_AGENT = [sys.executable, "-m", "acp_lite.testing.agent", "--scenario", "streaming"]


def main(command: list[str]) -> int:
    with acp_lite.connect(command, timeout=30) as client:
        info = client.agent_info  # None when the agent sends no agentInfo
        print(f"agent: {info.name} {info.version}" if info else "agent: (no agentInfo)")
        print(f"protocol version: {client.protocol_version}")

        session = client.new_session(cwd=os.getcwd())
        print(f"session: {session.id}")

        # run() = prompt (returns once the agent inserted the message) + wait until
        # the foreground work that followed *this* message ends (an idle state).
        turn = session.run("Tell me about ACP.")
        print(f"inserted as message {turn.message_id}")
        print(f"stop reason: {turn.stop_reason}, {len(turn.updates)} updates")
        print(f"agent said: {turn.text!r}")

        # The same session again; prompt() alone returns at insertion.
        submission = session.prompt("And once more.")
        print(f"second message inserted: {submission.message_id}")
        session.wait_idle(timeout=30)

        # Everything that went over the wire, both directions, in order.
        print(f"transcript: {len(client.transcript)} wire messages")
        return 0 if turn.stop_reason == "end_turn" else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:] or REFERENCE_AGENT))
