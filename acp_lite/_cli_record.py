"""``acp-lite cassette record OUT -- AGENT``: a recording pass-through agent.

The client talks to this process as to the agent; each line goes through
unchanged (stdin -> AGENT's stdin, AGENT's stdout -> stdout), stamped with its
time. When the client closes stdin (AGENT then gets end of input and the usual
grace to exit) or AGENT exits, the lines are written to OUT as a cassette, with the
credential-like environment variables of this process redacted. AGENT's stderr is
passed through to ours.
"""

from __future__ import annotations

import contextlib
import shlex
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from typing import IO, TextIO

from acp_lite._cli_base import EXIT_START_FAILED, CliError

__all__ = ["EXIT_GRACE", "record"]

EXIT_GRACE = 5.0
"""Seconds AGENT gets to exit after the client closed its input, then SIGTERM."""


class _Lines:
    """The records of the connection, in the order the lines passed."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.t0 = time.monotonic()
        self.entries: list[tuple[str, float, bytes]] = []

    def add(self, direction: str, line: bytes) -> None:
        with self.lock:
            self.entries.append((direction, time.monotonic() - self.t0, line.rstrip(b"\r\n")))


def _pump(source: IO[bytes], target: IO[bytes], lines: _Lines, direction: str) -> None:
    try:
        for line in iter(source.readline, b""):
            lines.add(direction, line)
            target.write(line if line.endswith(b"\n") else line + b"\n")
            target.flush()
    except (BrokenPipeError, OSError, ValueError):
        pass  # the other side is gone: the connection ended
    finally:
        if direction == "send":
            with contextlib.suppress(OSError):
                target.close()  # end of input for the agent


def record(target: str, argv: Sequence[str], err: TextIO) -> int:
    """Run ``argv`` behind this process's stdio, write the cassette, return its status."""
    from acp_lite.cassettes import Cassette, Record
    from acp_lite.cassettes._convert import recording_of
    from acp_lite.transcript import TranscriptEntry

    try:
        proc = subprocess.Popen(list(argv), stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    except OSError as exc:
        message = f"cannot start the agent {shlex.join(argv)}: {exc}"
        raise CliError(message, EXIT_START_FAILED) from None
    assert proc.stdin is not None and proc.stdout is not None
    lines = _Lines()
    to_agent = threading.Thread(
        target=_pump, args=(sys.stdin.buffer, proc.stdin, lines, "send"), daemon=True
    )
    to_agent.start()
    _pump(proc.stdout, sys.stdout.buffer, lines, "recv")  # until the agent's output ends
    # Still reading the client: the agent ended the connection, not the client.
    agent_ended = to_agent.is_alive()
    try:
        returncode = proc.wait(timeout=EXIT_GRACE)
    except subprocess.TimeoutExpired:
        proc.terminate()
        try:
            returncode = proc.wait(timeout=EXIT_GRACE)
        except subprocess.TimeoutExpired:
            proc.kill()
            returncode = proc.wait()
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
    Cassette((recording_of(records, agent=shlex.join(argv)),)).save(target)
    err.write(f"acp-lite: recorded {len(records)} lines to {target}\n")
    return returncode if returncode >= 0 else 128 - returncode
