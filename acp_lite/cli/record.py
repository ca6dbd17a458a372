"""``acp-lite cassette record OUT -- AGENT``: a recording pass-through agent.

The client talks to this process as to the agent; each line goes through
unchanged (stdin -> AGENT's stdin, AGENT's stdout -> stdout), stamped with its
time. When the client closes stdin (AGENT then gets end of input and the usual
grace to exit) or AGENT exits, the lines are written to OUT as a cassette, with the
credential-like environment variables of this process redacted. AGENT's stderr is
passed through to ours. A client that stops us instead (SIGTERM or SIGHUP, as a
client's shutdown does to an agent slow to exit; Ctrl-C) gets the cassette written
too, then AGENT stopped.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from typing import IO, TextIO

from acp_lite.cli.base import EXIT_INTERRUPTED, EXIT_START_FAILED, EXIT_USAGE, CliError
from acp_lite.cli.paths import check_writable

__all__ = ["EXIT_GRACE", "STOP_GRACE", "record"]

EXIT_GRACE = 5.0
"""Seconds AGENT gets to exit after the client closed its input, then SIGTERM."""

STOP_GRACE = 0.5
"""Seconds AGENT gets after SIGTERM once we were told to stop, then SIGKILL (the
client that stopped us kills us after its own grace)."""


class _Stopped(Exception):
    """A signal told this process to stop (``code``: the exit status it asks for)."""

    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


def _raise_stopped(signum: int, frame: object) -> None:
    # Once: a second signal while the cassette is written must not interrupt it.
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.SIG_IGN)
    raise _Stopped(128 + signum)


def _stop(proc: subprocess.Popen[bytes], grace: float) -> int:
    """SIGTERM, ``grace`` seconds, SIGKILL: AGENT's exit status."""
    with contextlib.suppress(OSError):
        proc.terminate()
    try:
        return proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        proc.kill()
        return proc.wait()


class _Lines:
    """The records of the connection, in the order the lines passed."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.t0 = time.monotonic()
        self.entries: list[tuple[str, float, bytes]] = []

    def add(self, direction: str, line: bytes) -> None:
        with self.lock:
            self.entries.append((direction, time.monotonic() - self.t0, line.rstrip(b"\r\n")))


def _pump(source: IO[bytes], target: IO[bytes], lines: _Lines) -> None:
    """Pass the agent's lines on to the client, recording each, until either ends."""
    try:
        for line in iter(source.readline, b""):
            lines.add("recv", line)
            target.write(line if line.endswith(b"\n") else line + b"\n")
            target.flush()
    except (BrokenPipeError, OSError, ValueError):
        pass  # the other side is gone: the connection ended


def _pump_client(source: int, target: IO[bytes], lines: _Lines, ended: threading.Event) -> None:
    """Pass the client's lines on to the agent, recording each, on file descriptors.

    This thread is a daemon that may still be blocked reading when the process
    exits. Blocked in ``sys.stdin.buffer.readline()`` it would hold that buffer's
    lock, and the interpreter's shutdown then aborts ("could not acquire lock for
    <stdin> at interpreter shutdown"); blocked in ``os.read`` it holds nothing.
    """
    pending = bytearray()
    out = target.fileno()
    try:
        while data := os.read(source, 65536):
            start = len(pending)
            pending += data
            end = pending.rfind(b"\n", start)
            if end < 0:
                continue
            chunk = bytes(pending[: end + 1])
            del pending[: end + 1]
            for line in chunk.split(b"\n")[:-1]:
                lines.add("send", line)
            _write_all(out, chunk)
        if pending:  # an unterminated last line, passed on terminated
            lines.add("send", bytes(pending))
            _write_all(out, bytes(pending) + b"\n")
    except OSError:
        pass  # the other side is gone: the connection ended
    finally:
        # Before the agent's input is closed: its exit, which that close causes,
        # must not look like the agent ending the connection on its own.
        ended.set()
        with contextlib.suppress(OSError):
            target.close()  # end of input for the agent


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def record(target: str, argv: Sequence[str], err: TextIO) -> int:
    """Run ``argv`` behind this process's stdio, write the cassette, return its status."""
    from acp_lite.cassettes import Cassette, Record, recording_of
    from acp_lite.transcript import TranscriptEntry

    check_writable(target, "the cassette", makes_dirs=True)
    try:
        proc = subprocess.Popen(list(argv), stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    except OSError as exc:
        message = f"cannot start the agent {shlex.join(argv)}: {exc}"
        raise CliError(message, EXIT_START_FAILED) from None
    assert proc.stdin is not None and proc.stdout is not None
    lines = _Lines()
    client_ended = threading.Event()
    to_agent = threading.Thread(
        target=_pump_client, args=(sys.stdin.fileno(), proc.stdin, lines, client_ended), daemon=True
    )
    previous = {sig: signal.signal(sig, _raise_stopped) for sig in (signal.SIGTERM, signal.SIGHUP)}
    stopped: int | None = None
    try:
        to_agent.start()
        _pump(proc.stdout, sys.stdout.buffer, lines)  # until the agent's output ends
        # The client's input had not ended: the agent ended the connection. (Not
        # ``to_agent.is_alive()``: that thread may still be finishing after closing
        # the agent's input, which is what made the agent stop.)
        agent_ended = not client_ended.is_set()
        try:
            returncode = proc.wait(timeout=EXIT_GRACE)
        except subprocess.TimeoutExpired:
            returncode = _stop(proc, EXIT_GRACE)
    except (_Stopped, KeyboardInterrupt) as exc:
        # Told to stop (the client gave up waiting for AGENT to exit): what passed
        # is the connection; write it before the client's SIGKILL comes.
        stopped = exc.code if isinstance(exc, _Stopped) else EXIT_INTERRUPTED
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C: not now
        agent_ended, returncode = False, stopped
    finally:
        if stopped is None:  # else they stay ignored until the cassette is written
            for sig, handler in previous.items():
                signal.signal(sig, handler)
    with lines.lock:
        entries = list(lines.entries)
    records = [
        Record.from_json(TranscriptEntry(d, t, line).to_record())  # type: ignore[arg-type]
        for d, t, line in entries
    ]
    if agent_ended:
        # Replay ends the connection there too.
        last = records[-1].time if records else 0.0
        records.append(Record("exit", last, returncode=returncode))
    try:
        Cassette((recording_of(records, agent=shlex.join(argv)),)).save(target)
        err.write(f"acp-lite: recorded {len(records)} lines to {target}\n")
    except OSError as exc:
        raise CliError(f"cannot write the cassette {target}: {exc}", EXIT_USAGE) from None
    finally:
        if stopped is not None:
            _stop(proc, STOP_GRACE)
    return returncode if returncode >= 0 else 128 - returncode
