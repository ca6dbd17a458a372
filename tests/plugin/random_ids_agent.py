"""An agent whose ids are random on every run: the reference agent behind a proxy that
maps each id it sends to a fresh random token (and back for what the client sends).

Usage: ``python random_ids_agent.py [reference agent arguments...]``. Used to check
that snapshots do not depend on the agent's ids.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import threading
import uuid
from collections.abc import Callable
from typing import Any

ID_KEYS = {"sessionId", "messageId", "toolCallId", "terminalId", "planId", "compactionId"}


class Ids:
    """Agent ids <-> random ids, both ways (dict operations are atomic: two pumps share it)."""

    def __init__(self) -> None:
        self.forward: dict[str, str] = {}
        self.back: dict[str, str] = {}

    def outgoing(self, key: str, value: str) -> str:
        found = self.forward.get(value)
        if found is None:
            found = f"{key[:-2]}-{uuid.uuid4().hex[:12]}"
            self.forward[value] = found
            self.back[found] = value
        return found

    def incoming(self, key: str, value: str) -> str:
        return self.back.get(value, value)


def rewrite(value: Any, fn: Callable[[str, str], str]) -> Any:
    """Replace the values of id keys through ``fn(key, value)``."""
    if isinstance(value, dict):
        return {
            k: fn(k, v) if k in ID_KEYS and isinstance(v, str) else rewrite(v, fn)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [rewrite(v, fn) for v in value]
    return value


def pump(src: Any, dst: Any, fn: Callable[[str, str], str]) -> None:
    for line in src:
        with contextlib.suppress(ValueError):  # not JSON: passed on unchanged
            line = json.dumps(rewrite(json.loads(line), fn)).encode() + b"\n"
        dst.write(line)
        dst.flush()
    dst.close()


def main() -> int:
    agent = subprocess.Popen(
        [sys.executable, "-m", "acp_lite.testing.agent", *sys.argv[1:]],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    ids = Ids()
    assert agent.stdin is not None and agent.stdout is not None
    threading.Thread(
        target=pump, args=(sys.stdin.buffer, agent.stdin, ids.incoming), daemon=True
    ).start()
    pump(agent.stdout, sys.stdout.buffer, ids.outgoing)
    return agent.wait()


if __name__ == "__main__":
    sys.exit(main())
