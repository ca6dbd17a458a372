"""What probes run against: an agent command (a process per connection), or any
pair of file descriptors (an agent in this process, for tests)."""

from __future__ import annotations

import collections
import contextlib
import os
import shlex
import signal
import subprocess
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Protocol

from acp_lite.probes._peer import Peer

__all__ = ["AgentCommand", "FdAgent", "Target"]


class Target(Protocol):
    """Starts one agent connection per :meth:`start` (the probes' unit of isolation)."""

    @property
    def description(self) -> str:
        """What the report names as its subject (a command line)."""
        ...

    def start(self) -> Peer:
        """A new agent, and the peer speaking to it."""
        ...


class AgentCommand:
    """An agent started as a process: ``argv`` (a list, or a shell-style string).

    Each connection is its own process in its own process group; closing the peer
    closes its stdin, then terminates and kills the group, so none is left behind.
    """

    def __init__(
        self,
        argv: Sequence[str] | str,
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        stderr_lines: int = 50,
    ) -> None:
        self.argv = shlex.split(argv) if isinstance(argv, str) else list(argv)
        if not self.argv:
            raise ValueError("the agent command is empty")
        self.env = None if env is None else {**os.environ, **env}
        self.cwd = cwd
        self.stderr_lines = stderr_lines

    @property
    def description(self) -> str:
        return shlex.join(self.argv)

    def start(self) -> Peer:
        process = subprocess.Popen(
            self.argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=self.env,
            cwd=self.cwd,
            start_new_session=True,
        )
        assert process.stdin and process.stdout and process.stderr
        tail: collections.deque[str] = collections.deque(maxlen=self.stderr_lines)
        err = process.stderr

        def read_stderr() -> None:
            for raw in err:
                tail.append(raw.decode("utf-8", "replace").rstrip("\n"))

        reader = threading.Thread(target=read_stderr, name="probe-stderr", daemon=True)
        reader.start()
        write_fd = os.dup(process.stdin.fileno())
        read_fd = os.dup(process.stdout.fileno())
        process.stdin.close()
        process.stdout.close()

        def stop() -> None:
            try:
                process.wait(1.0)
            except subprocess.TimeoutExpired:
                _signal_group(process, signal.SIGTERM)
                try:
                    process.wait(2.0)
                except subprocess.TimeoutExpired:
                    _signal_group(process, signal.SIGKILL)
                    process.wait()
            # The agent is gone; what it left running in its group goes too.
            _signal_group(process, signal.SIGKILL)
            reader.join(1.0)
            err.close()

        return Peer(write_fd, read_fd, stderr=lambda: list(tail), close=stop, name=self.argv[0])


def _signal_group(process: subprocess.Popen[bytes], signum: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signum)


class FdAgent:
    """An agent reached through file descriptors: ``start`` returns
    ``(write_fd, read_fd, stderr_tail, close)`` for a new connection (for example
    the reference agent in this process, ``acp_lite.testing.inprocess``)."""

    def __init__(
        self,
        start: Callable[[], tuple[int, int, Callable[[], list[str]], Callable[[], None]]],
        description: str = "in-process agent",
    ) -> None:
        self._start = start
        self._description = description

    @property
    def description(self) -> str:
        return self._description

    def start(self) -> Peer:
        write_fd, read_fd, stderr, close = self._start()
        return Peer(write_fd, read_fd, stderr=stderr, close=close, name=self._description)
