"""Helpers for the trio-layer tests: the reference agent as a subprocess or in this process."""

from __future__ import annotations

import sys
from typing import Any

from acp_lite.limits import Limits
from acp_lite.testing import InProcessAgent

#: Short timeouts keep failing tests fast; the ladder stays bounded.
FAST = Limits(default_timeout=10.0, close_grace=1.0, terminate_grace=0.5, kill_grace=1.0)


def agent(scenario: str = "echo", *args: str) -> list[str]:
    """argv of the reference agent running ``scenario``."""
    return [sys.executable, "-m", "acp_lite.testing.agent", "--scenario", scenario, *args]


def wire(client: Any) -> list[tuple[str, Any]]:
    """(direction, JSON value) of every transcript line that is JSON."""
    out = []
    for entry in client.transcript:
        try:
            out.append((entry.direction, entry.json()))
        except ValueError:
            out.append((entry.direction, entry.line))
    return out


def inproc(scenario: str = "echo", *args: str) -> InProcessAgent:
    """The reference agent running ``scenario`` in this process (``"--count", "N"`` sizes it)."""
    options = dict(zip(args[::2], args[1::2], strict=True))
    count = options.pop("--count", None)
    assert not options, f"no in-process equivalent for {options}"
    return InProcessAgent(scenario, count=None if count is None else int(count))


def inproc_scripted(script: dict[str, Any]) -> InProcessAgent:
    """The reference agent running an inline script, in this process."""
    return InProcessAgent(script=script)
