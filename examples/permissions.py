"""Answer an agent's permission requests with your own handler.

    python examples/permissions.py

The reference agent's ``tool_call_permission`` scenario asks before it writes a
file. ``on_permission`` receives the typed ``RequestPermissionRequest`` and
returns the ``option_id`` of the chosen option, or ``None`` for the ``cancelled``
outcome (the agent must not proceed). The handler may block -- ask a human, look
up a policy -- because it never runs on the connection's thread.
"""

from __future__ import annotations

import os
import sys
import threading
from typing import Any

import acp_lite
from acp_lite import permissions

AGENT = [sys.executable, "-m", "acp_lite.testing.agent", "--scenario", "tool_call_permission"]


class OncePerSession:
    """Allow the first request of each session once; reject every later one."""

    def __init__(self) -> None:
        self.granted: set[str] = set()
        self.lock = threading.Lock()  # handlers may run on several threads

    def __call__(self, request: Any, session: Any) -> str | None:
        print(f"  the agent asks: {request.title}")
        for option in request.options:
            print(f"    option {option.option_id!r}: {option.name} ({option.kind})")
        with self.lock:
            first = session.id not in self.granted
            self.granted.add(session.id)
        # Pick options by kind, never by position or label: only the kind has a
        # meaning. Both helpers answer None ("cancelled") if no such option exists.
        if first:
            return permissions.option_of_kind(request, "allow_once")
        return permissions.reject_once(request, session)


def main() -> int:
    with acp_lite.connect(AGENT, timeout=30, on_permission=OncePerSession()) as client:
        session = client.new_session(cwd=os.getcwd())
        for attempt in ("first attempt", "second attempt"):
            print(f"{attempt}:")
            turn = session.run(f"please write the notes ({attempt})")
            statuses = [
                event.raw["status"]
                for event in turn.updates
                if event.raw.get("sessionUpdate") == "tool_call_update" and "status" in event.raw
            ]
            print(f"  tool call statuses: {statuses}")
            print(f"  stop reason: {turn.stop_reason}, agent said: {turn.text!r}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
