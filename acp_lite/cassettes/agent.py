"""The replay agent over trio streams: in this process, or on stdio.

* :class:`ReplayAgent` is a trio-native ``async def agent(stream)`` for
  ``acp_lite.connect_in_memory`` (what pytest_acp's fixtures use in replay);
* :func:`serve_stdio` runs it on this process's stdin/stdout (``acp-lite replay``).

Timing is not replayed: each agent line goes out as soon as the client lines
recorded before it arrived. ``speed`` (e.g. ``1.0``: as recorded, ``2.0``: twice as
fast) waits before each agent line the recorded time between it and the line
before it (the client's or the agent's).
"""

from __future__ import annotations

import math
import sys
from collections.abc import Iterable

import trio

from acp_lite.cassettes._format import Recording
from acp_lite.cassettes._match import DEFAULT_MATCH_ON
from acp_lite.cassettes._redact import Redactor
from acp_lite.cassettes._replay import Replayer

__all__ = ["MAX_LINE", "STDIO_MISMATCH_GRACE", "ReplayAgent", "serve_stdio"]

STDIO_MISMATCH_GRACE = 1.0
"""How long ``acp-lite replay`` keeps the connection after a mismatch (seconds)."""

MAX_LINE = 64 * 1024 * 1024
"""A client line longer than this is refused (the replay stops) instead of buffered."""


class ReplayAgent:
    """Plays ``recording``'s agent side to one connection (see :class:`Replayer`:
    ``match_on``, ``name``, ``redactors``); ``speed``: see the module docstring.

    After a mismatch the connection ends, so that a client waiting for a recorded
    answer does not hang: at once, or after ``mismatch_grace`` seconds (refusing
    further requests meanwhile) for clients that drop what is still unread when
    the connection closes (the TypeScript SDK does)."""

    def __init__(
        self,
        recording: Recording,
        *,
        match_on: Iterable[str] = DEFAULT_MATCH_ON,
        speed: float | None = None,
        name: str = "the cassette",
        redactors: Iterable[Redactor] = (),
        mismatch_grace: float = 0.0,
    ) -> None:
        if speed is not None and not (speed > 0 and math.isfinite(speed)):
            raise ValueError(f"replay speed must be a positive number, not {speed!r}")
        self.replayer = Replayer(recording, match_on=match_on, name=name, redactors=redactors)
        self.speed = speed
        self.mismatch_grace = mismatch_grace
        #: Whether the client's input ended (it closed the connection).
        self.input_ended = False
        self._wake = trio.Event()
        self._done = False

    @property
    def returncode(self) -> int | None:
        """The recorded agent's exit status once the replay reached its exit; ``1``
        once a mismatch stopped the replay; ``None`` while it runs."""
        if self.replayer.broken and self._done:
            return 1
        return self.replayer.returncode if self.replayer.exited else None

    def stderr_tail(self) -> list[str]:
        """The replay's failure report, if any (what a process's stderr would say)."""
        verdict = self.replayer.verdict(ended=self.input_ended)
        return verdict.splitlines() if verdict else []

    async def __call__(self, stream: trio.abc.Stream) -> None:
        try:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(self._reader, stream)
                await self._writer(stream)
                nursery.cancel_scope.cancel()
        finally:
            self._done = True

    async def _reader(self, stream: trio.abc.ReceiveStream) -> None:
        buffer = bytearray()
        try:
            while True:
                data = await stream.receive_some(65536)
                if not data:
                    break
                buffer += data
                while (end := buffer.find(b"\n")) >= 0:
                    line = bytes(buffer[:end]).rstrip(b"\r")
                    del buffer[: end + 1]
                    if line.strip():
                        self.replayer.receive_line(line)
                if len(buffer) > MAX_LINE:
                    self.replayer.receive_line(bytes(buffer[:200]) + b"...")
                    buffer.clear()
                self._wake.set()
            if buffer.strip():
                self.replayer.receive_line(bytes(buffer))
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            pass
        self.input_ended = True
        self._wake.set()

    async def _writer(self, stream: trio.abc.SendStream) -> None:
        while True:
            for out in self.replayer.take():
                if self.speed is not None:
                    await trio.sleep(out.delay / self.speed)
                try:
                    await stream.send_all(out.line + b"\n")
                except (trio.BrokenResourceError, trio.ClosedResourceError):
                    return
            if self.replayer.exited:
                return  # the recorded agent exited here: end the connection
            if self.replayer.broken:
                await self._linger(stream)
                return
            if self.input_ended:
                return
            await self._wake.wait()
            self._wake = trio.Event()

    async def _linger(self, stream: trio.abc.SendStream) -> None:
        """Refuse requests for ``mismatch_grace`` seconds, or until the input ends."""
        with trio.move_on_after(self.mismatch_grace):
            while not self.input_ended:
                await self._wake.wait()
                self._wake = trio.Event()
                for out in self.replayer.take():
                    try:
                        await stream.send_all(out.line + b"\n")
                    except (trio.BrokenResourceError, trio.ClosedResourceError):
                        return


async def _serve(agent: ReplayAgent) -> None:
    stdin = trio.lowlevel.FdStream(sys.stdin.fileno())
    stdout = trio.lowlevel.FdStream(sys.stdout.fileno())
    await agent(trio.StapledStream(stdout, stdin))


def serve_stdio(
    recording: Recording,
    *,
    match_on: Iterable[str] = DEFAULT_MATCH_ON,
    speed: float | None = None,
    name: str = "the cassette",
    mismatch_grace: float = STDIO_MISMATCH_GRACE,
) -> ReplayAgent:
    """Replay ``recording`` on stdin/stdout until the client closes stdin (or the
    recorded agent exits); returns the agent, whose ``replayer`` says how it went."""
    agent = ReplayAgent(
        recording, match_on=match_on, speed=speed, name=name, mismatch_grace=mismatch_grace
    )
    trio.run(_serve, agent)
    return agent
