"""The reference agent in this process: daemon threads over a pair of pipes.

:class:`InProcessAgent` runs the same :class:`~acp_lite.testing._agent.Agent` as
``python -m acp_lite.testing.agent``, without the process: no interpreter start-up
per test. Connect a client to it with ``acp_lite.connect_in_memory(agent)`` or
``acp_lite.aio.connect_in_memory(agent)``; or call :meth:`InProcessAgent.start`
and speak the wire yourself over the two file descriptors it returns.

What only a process has is emulated: an ``exit`` step (or a broken pipe) closes
the agent's output and records :attr:`~InProcessAgent.returncode` instead of
ending this process; stderr (the agent's log lines and ``stderr`` steps) goes to
a bounded in-memory tail (:meth:`~InProcessAgent.stderr_tail`). Signals,
``--linger`` and ``ignore_sigterm`` have no in-process meaning (the flag is kept
but nothing sends SIGTERM). Like the rest of :mod:`acp_lite.testing`, this module
imports no trio.
"""

from __future__ import annotations

import collections
import contextlib
import json
import os
import select
import threading
import time
import traceback
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import attrs

from acp_lite.testing import scenarios
from acp_lite.testing._agent import Agent
from acp_lite.testing._wire import Wire
from acp_lite.testing.script import Script, load_script

__all__ = ["InProcessAgent"]

_CHUNK = 65536


class _Tail:
    """A text sink keeping the last ``limit`` complete lines (the agent's stderr)."""

    def __init__(self, limit: int) -> None:
        self._lines: collections.deque[str] = collections.deque(maxlen=limit)
        self._partial = ""
        self._lock = threading.Lock()

    def write(self, text: str) -> int:
        with self._lock:
            *done, self._partial = (self._partial + text).split("\n")
            self._lines.extend(done)
        return len(text)

    def flush(self) -> None:
        pass

    def lines(self) -> list[str]:
        with self._lock:
            return [*self._lines, *([self._partial] if self._partial else [])]


class _PipeWire(Wire):
    """The agent's output pipe; ``exit`` and a broken pipe stop the agent, not the process."""

    def __init__(self, owner: InProcessAgent, fd: int) -> None:
        super().__init__(None)  # type: ignore[arg-type]  # writes go to ``fd`` directly
        self._lock = threading.RLock()  # type: ignore[assignment]
        self._owner = owner
        self._fd: int | None = fd
        self.stopped = False

    def write(self, data: bytes) -> None:
        broken = False
        with self._lock:
            view = memoryview(data)
            while view and not self.stopped and self._fd is not None:
                try:
                    view = view[os.write(self._fd, view) :]
                except BlockingIOError:
                    # Full pipe: wait until the client reads, or until we are stopped.
                    self._owner._wait_writable(self._fd)
                except OSError:  # BrokenPipeError: the client closed our stdout
                    broken = True
                    break
        if broken:  # outside the lock: stopping takes the agent's lock, then this one
            self._owner._finish(0)

    def exit(self, code: int) -> None:
        self._owner._finish(code)

    def close_output(self) -> None:
        """Close the output pipe (the client then reads EOF) once no write is under way."""
        self.stopped = True
        with self._lock:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None


class InProcessAgent:
    """The reference agent run in daemon threads of this process, over two pipes.

    ``scenario`` names a built-in scenario (``count`` sizes it); ``script`` is a
    :class:`~acp_lite.testing.script.Script`, a script dict, or a path to a
    ``.json``/``.toml`` script; neither means the echo agent. Other keywords
    override fields of the script (``page_size=...``), like the command-line
    options of the process. ``events`` receives the events of a script with
    ``expect`` (what ``--report`` writes; see ``acp_lite.testing._expect``).
    One agent serves one connection: :meth:`start` once, then :meth:`close`.
    """

    def __init__(
        self,
        scenario: str | None = None,
        script: Script | Mapping[str, object] | str | Path | None = None,
        *,
        count: int | None = None,
        stderr_lines: int = 200,
        protocol: int = 2,
        events: Callable[[dict[str, object]], None] | None = None,
        faults: Iterable[str] = (),
        **script_overrides: object,
    ) -> None:
        if scenario is not None and script is not None:
            raise ValueError("pass either scenario or script, not both")
        if isinstance(script, Script):
            loaded = script
        elif isinstance(script, Mapping):
            loaded = Script.from_dict(json.loads(json.dumps(script)))
        elif script is not None:
            loaded = load_script(script)
        else:
            loaded = scenarios.get(scenario or "echo", count=count)
        if script_overrides:
            # Script's own fields (attrs.evolve refuses another name); values as given.
            fields: dict[str, Any] = script_overrides
            loaded = attrs.evolve(loaded, **fields)
        self.script = loaded
        if protocol not in (1, 2):
            raise ValueError(f"protocol must be 1 or 2, not {protocol!r}")
        #: The ACP version the agent speaks (1: translated at its wire, ``_v1.py``).
        self.protocol = protocol
        #: The faults applied at its wire (``acp_lite.testing.faults``; names).
        self.faults = tuple(faults)
        if self.faults:
            from acp_lite.testing import faults as fault_registry

            fault_registry.get(self.faults)  # an unknown name fails here, not in start()
        self._tail = _Tail(stderr_lines)
        self.agent = Agent(
            loaded,
            Wire(None),  # type: ignore[arg-type]  # replaced by the pipe's in start()
            log=self._tail,  # type: ignore[arg-type]  # a TextIO for write and flush
            events=events,
            thread_prefix="inproc-agent-",
        )
        #: The exit status once the agent stopped (``0`` at end of input, or the
        #: code of an ``exit`` step); ``None`` while it runs.
        self.returncode: int | None = None
        #: Set once the agent stopped and closed its output.
        self.exited = threading.Event()
        self._lock = threading.Lock()
        self._started = False
        self._closed = False
        self._reader: threading.Thread | None = None
        self._stdin: int | None = None
        self._wire: _PipeWire | None = None
        self._wake_r, self._wake_w = -1, -1
        self._fault_wire: Any = None

    def __repr__(self) -> str:
        state = "running" if self.returncode is None else f"exited {self.returncode}"
        return f"<InProcessAgent script={self.script.name!r} {state}>"

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> tuple[int, int]:
        """Start the agent; returns ``(write_fd, read_fd)`` for the client, who owns them.

        ``write_fd`` is the agent's stdin (client -> agent), ``read_fd`` its stdout.
        Close ``write_fd`` to send end of input: the agent then stops (exit 0).
        """
        with self._lock:
            if self._started:
                raise RuntimeError("an InProcessAgent serves one connection: start() once")
            self._started = True
        stdin_r, stdin_w = os.pipe()
        stdout_r, stdout_w = os.pipe()
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(stdout_w, False)
        self._stdin = stdin_r
        self._wire = _PipeWire(self, stdout_w)
        self.agent.link.wire = self._wire
        self._fault_wire = None
        if self.faults:
            from acp_lite.testing.faults import FaultWire, get

            self._fault_wire = FaultWire(self._wire, get(self.faults))
            self.agent.link.wire = self._fault_wire
        if self.protocol == 1:
            from acp_lite.testing._v1 import V1Wire

            self.agent.link.wire = V1Wire(self.agent.link.wire, self.agent.link.log)
        self.agent.link.log(f"ready: scenario {self.script.name!r}, in process {os.getpid()}")
        self._reader = threading.Thread(target=self._serve, name="inproc-agent-stdin", daemon=True)
        self._reader.start()
        return stdin_w, stdout_r

    def stderr_tail(self) -> list[str]:
        """The last lines the agent logged (its stderr)."""
        return self._tail.lines()

    def threads(self) -> list[threading.Thread]:
        """The agent's threads still alive (reader and workers)."""
        reader = [self._reader] if self._reader is not None and self._reader.is_alive() else []
        return reader + self.agent.link.threads()

    def wait(self, timeout: float | None = None) -> int | None:
        """Wait until the agent stopped; returns :attr:`returncode` (``None``: still running)."""
        self.exited.wait(timeout)
        return self.returncode

    def close(self, timeout: float = 5.0) -> None:
        """Stop the agent (if running) and wait, at most ``timeout`` s, for its threads.

        Closes every file descriptor the agent side holds; the client's two are
        the client's to close. Idempotent.
        """
        with self._lock:
            if self._closed:
                return
            self._closed = True
            started = self._started
        if not started:
            return
        self._finish(0)
        deadline = time.monotonic() + timeout
        for thread in self.threads():
            thread.join(max(0.0, deadline - time.monotonic()))
        if self._reader is not None and not self._reader.is_alive():
            for fd in (self._wake_r, self._wake_w):
                with contextlib.suppress(OSError):
                    os.close(fd)

    # ------------------------------------------------------------------ agent side

    def _finish(self, code: int) -> None:
        """Stop the agent: record the exit status, stop work, close its output."""
        with self._lock:
            if self.returncode is not None:
                return
            self.returncode = code
        wire = self._wire
        assert wire is not None
        wire.stopped = True
        with contextlib.suppress(OSError):
            os.write(self._wake_w, b"x")  # wakes the reader and a writer on a full pipe
        self.agent.link.shutdown()
        wire.close_output()
        self.exited.set()

    def _wait_writable(self, fd: int) -> None:
        poller = select.poll()
        poller.register(fd, select.POLLOUT)
        poller.register(self._wake_r, select.POLLIN)
        poller.poll()

    def _receive(self, line: bytes) -> None:
        if self._fault_wire is not None:
            for faulty in self._fault_wire.incoming_lines(line):
                self._receive_one(faulty)
            return
        self._receive_one(line)

    def _receive_one(self, line: bytes) -> None:
        wire = self.agent.link.wire
        if self.protocol == 1:
            from acp_lite.testing._v1 import V1Wire, incoming_line

            assert isinstance(wire, V1Wire)
            line = incoming_line(wire, line)
        self.agent.receive(line)

    def _serve(self) -> None:
        """Read stdin lines until end of input (or until stopped); like ``Agent.serve``."""
        assert self._stdin is not None
        poller = select.poll()
        poller.register(self._stdin, select.POLLIN)
        poller.register(self._wake_r, select.POLLIN)
        buffer = b""
        code = 0
        try:
            while self.returncode is None:
                events = dict(poller.poll())
                if self._wake_r in events:
                    break
                data = os.read(self._stdin, _CHUNK)
                *lines, buffer = (buffer + data).split(b"\n") if data else [buffer, b""]
                for line in lines:
                    if self.returncode is not None:
                        break
                    if line.strip():
                        self._receive(line + b"\n")
                if not data:
                    break
        except Exception:  # a real agent would die with a traceback and exit 1
            self._tail.write(traceback.format_exc())
            code = 1
        finally:
            os.close(self._stdin)
            self._finish(code)
