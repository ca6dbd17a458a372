"""An agent whose ids are random on every run: the reference agent (in this process)
behind a proxy that maps each id it sends to a fresh random token (and back for what
the client sends). Used to check that snapshots do not depend on the agent's ids.

``RandomIdsAgent(...)`` takes the arguments of ``acp_lite.testing.InProcessAgent`` and
is a pipe agent itself, for ``@pytest.mark.acp_agent(in_process=...)`` or
``acp_agent = python:random_ids_agent:RandomIdsAgent``.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
import uuid
from collections.abc import Callable
from typing import Any

from acp_lite.testing import InProcessAgent

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


def pump(src_fd: int, dst_fd: int, fn: Callable[[str, str], str]) -> None:
    """Copy lines from ``src_fd`` to ``dst_fd``, ids rewritten; closes both at the end."""
    # The other side going away (a broken pipe, also when closing) ends the copy, as
    # it would end a proxy process.
    with contextlib.suppress(OSError), open(src_fd, "rb") as src, open(dst_fd, "wb") as dst:
        for line in src:
            with contextlib.suppress(ValueError):  # not JSON: passed on unchanged
                line = json.dumps(rewrite(json.loads(line), fn)).encode() + b"\n"
            dst.write(line)
            dst.flush()


class RandomIdsAgent:
    """The reference agent in this process, behind the id-rewriting proxy."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.inner = InProcessAgent(*args, **kwargs)
        self._threads: list[threading.Thread] = []

    def start(self) -> tuple[int, int]:
        to_agent, from_agent = self.inner.start()
        from_client, client_write = os.pipe()
        client_read, to_client = os.pipe()
        ids = Ids()
        for src, dst, fn in ((from_client, to_agent, ids.incoming),
                             (from_agent, to_client, ids.outgoing)):  # fmt: skip
            thread = threading.Thread(target=pump, args=(src, dst, fn), daemon=True)
            thread.start()
            self._threads.append(thread)
        return client_write, client_read

    @property
    def returncode(self) -> int | None:
        return self.inner.returncode

    def stderr_tail(self) -> list[str]:
        return self.inner.stderr_tail()

    def close(self) -> None:
        self.inner.close()
        for thread in self._threads:
            thread.join(5)
