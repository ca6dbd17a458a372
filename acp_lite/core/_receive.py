"""Bytes in: framing, the transcript, decoding and the hot path of streamed chunks.

:class:`Receiver` owns the line framer, the transcript (every wire line, both
ways) and the hot stream's state. What the agent wrote is cut into lines
(:class:`~acp_lite.core.framing.LineFramer`), recorded in the transcript, decoded
by the connection's dialect and routed, in receive order: ``session/update`` to
the dialect's router, anything else to the connection's dispatcher.

The hot path: a run of lines of one chunk stream (``protocol/chunk_lines.py``),
the common case of a streamed message, is found in the receive buffer without a
Python step per line (:func:`~acp_lite.protocol.chunk_lines.run_texts`) and
applied to its session's model in one step (``SessionModel.feed_chunks``), with
the same result as handling each line alone: the same model, event log and
transcript (``tests/core/test_chunk_runs.py``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, Final, cast

from acp_lite.core._dialect import Dialect
from acp_lite.core._reports import Reports
from acp_lite.core._router import SessionRouter
from acp_lite.core.framing import LineFramer, OversizeLine
from acp_lite.errors import ProtocolError
from acp_lite.limits import Limits
from acp_lite.protocol import Notification
from acp_lite.protocol.chunk_lines import (
    ChunkLines,
    CompactLine,
    LineShape,
    escapes_as_encoded,
    run_texts,
)
from acp_lite.transcript import Transcript

__all__ = ["Receiver"]

logger = logging.getLogger("acp_lite.connection")

_COMPACT_AFTER: Final = 8
"""Lines of a chunk stream kept as bytes before the rest are kept compactly (its
compact line and each text): the compact line, ~1.2 KB, then references are held
for as long as those lines are, so a stream of a few chunks keeps its bytes instead."""

_UPDATE: Final = "session/update"


class Receiver:
    """What :meth:`receive_data` does with the agent's bytes (see the module doc)."""

    def __init__(
        self,
        limits: Limits,
        reports: Reports,
        router: SessionRouter,
        dispatch: Callable[[Any], None],
        dialect: Dialect,
    ) -> None:
        #: Every wire line, both ways, in order.
        self.transcript = Transcript(limits.max_transcript_entries)
        self._max_line = limits.max_line_bytes
        self._framer = LineFramer(limits.max_line_bytes)
        self._reports = reports
        self._router = router
        self._findings = router.findings
        self._dispatch = dispatch
        # The compact line of the latest hits and how many in a row: a stream's
        # lines are kept compactly only past _COMPACT_AFTER (receive_data).
        self._hot: tuple[CompactLine | None, int] = (None, 0)
        #: Whether the last bytes received ended with a line of a hot chunk stream
        #: (past _COMPACT_AFTER lines of it in a row): a message is streaming, and
        #: more of it is likely to follow (what the IO layer may wait for).
        self.streaming = False
        self.speak(dialect)

    def speak(self, dialect: Dialect) -> None:
        """Decode and route what arrives from now on with ``dialect``."""
        self._decode = dialect.decode
        # The connection's own chunk streams (protocol/chunk_lines.py): how it
        # decodes never depends on another connection's traffic. Without them (v1)
        # an empty cache that nothing fills: no stream is ever hot.
        lines = dialect.chunk_lines
        self._lines = lines if lines is not None else ChunkLines()
        self._chunk = lines.decode if lines is not None else None
        self._route = dialect.route_update
        router = self._router
        # Runs of chunk lines skip what they would not feed: per-update events. (The
        # findings locate a run's events line by line; a streamed chunk is kept as
        # its compact line and text whether or not raw payloads are kept: _router.py.)
        self._runs = lines is not None and not router.update_events

    @property
    def next_index(self) -> int:
        """The transcript index the next line will get (dropped lines counted)."""
        transcript = self.transcript
        return transcript.dropped + len(transcript)

    def record_sent(self, lines: list[bytes]) -> None:
        """Record lines written to the agent (each ends with a newline)."""
        record = self.transcript.record
        for line in lines:
            record("send", line[:-1])

    def receive_data(self, data: bytes) -> None:
        """Feed bytes the agent wrote; ``b""`` means its output ended."""
        self.streaming = False
        if not data:
            self._receive_lines(self._framer.finish())
            return
        block = self._framer.feed_block(data)
        if block.__class__ is not bytes:
            if block:
                self._receive_lines(cast("list[bytes | OversizeLine]", block))
            return
        data = block
        hot, hits = self._hot
        newest = self._lines.kept[:1]
        if (
            hits >= _COMPACT_AFTER
            and hot is not None
            and self._runs
            and newest
            and newest[0] is hot  # in use order, as ChunkLines.decode keeps them
        ):
            # A run of the hot stream's lines first (the module doc).
            run = run_texts(data, hot)
            if run is not None and self._receive_run(hot, run[0], run[1]):
                self._hot = (hot, hits + len(run[0]))
                if run[2] > len(data):
                    self.streaming = True
                    return
                data = data[run[2] :]
        lines = data.split(b"\n")
        if b"" in lines or b"\r" in lines:
            # Empty lines (a CRLF's too) are skipped, as _receive_lines skips them.
            lines = [x for x in lines if x and x != b"\r"]
        self._receive_plain(lines)

    def _receive_run(
        self, t: CompactLine, texts: list[str], escaped: list[tuple[int, bytes]]
    ) -> bool:
        """Apply a run of lines of ``t``'s stream carrying ``texts`` (``escaped``: the
        index and line of those not written verbatim), as :meth:`_receive_plain`
        would; ``False``: nothing done."""
        state = self._router.sessions.get(t.session_id)
        if state is None:
            return False
        findings = self._findings
        if findings is not None:
            # Located as line by line: each event at its own line (FindingsLog).
            at, n = self.next_index, len(texts)
            before = findings.touched(t.session_id)
            findings.at = at
            findings.events(t.session_id, at, n)
        try:
            if not state.model.feed_chunks(t, texts, state.replaying):
                if findings is not None:
                    findings.withdraw(t.session_id, n, before)
                return False
        except Exception as exc:  # never let a run kill the connection
            first = dict(escaped).get(0) or t.line(texts[0])
            self._line_failed(first, exc)
        # As kept for each line of a stream past _COMPACT_AFTER: its text and its
        # stream's shape (CompactLine.shape: verbatim or raw UTF-8 escapes; else
        # CompactLine.escaped), or the line itself when no encoder's escaping gives
        # back its bytes.
        kept: list[bytes | str] = texts  # type: ignore[assignment]
        shapes: list[LineShape | None] = [t.shape] * len(texts)
        # The TypeScript SDK's texts all end in a newline: every line has escapes, and
        # one check for the run spares a Python step per line when all are t.shape.
        if escaped and not escapes_as_encoded(t, texts, escaped):
            copied = False
            for i, line in escaped:
                shape = shapes[i] = t.escaped(line, texts[i])
                if shape is None:
                    if not copied:
                        kept, copied = kept.copy(), True
                    kept[i] = line
        self.transcript.record_many("recv", kept, shapes)
        self._router.touch(state)
        return True

    def _receive_plain(self, lines: list[bytes]) -> None:
        # Non-empty lines, none oversize; one transcript call for all of them, made once
        # they are handled: a streamed chunk's line whose text is written verbatim is
        # then kept as that text and its stream's compact line (transcript.py).
        transcript = self.transcript
        decode = self._decode
        # A streamed chunk's line like the previous ones: its session id and typed
        # update straight away (no envelope objects; protocol/chunk_lines.py).
        chunk = self._chunk
        route = self._route
        findings = self._findings
        at = transcript.dropped + len(transcript)  # the first line's index
        # The fresh list: a verbatim chunk's line is replaced by its text.
        kept: list[bytes | str] = lines  # type: ignore[assignment]
        shapes: list[LineShape | None] | None = None
        k = -1
        hot, hits = self._hot
        streaming = False  # the line handled last was a hot stream's
        try:
            for line in lines:
                k += 1
                streaming = False
                if findings is not None:
                    findings.at = at
                    at += 1
                try:
                    if chunk is not None:
                        hit = chunk(line)
                        if hit is not None:
                            t = hit[2]
                            if t is hot:
                                hits += 1
                            else:
                                hot, hits = t, 1
                            if hits <= _COMPACT_AFTER:
                                route(hit[0], hit[1], line, None)
                                continue
                            streaming = True
                            text = hit[1].content.text
                            shape = t.shape if hit[3] else t.escaped(line, text)
                            if shape is not None:
                                if shapes is None:
                                    shapes = [None] * len(kept)
                                kept[k] = text
                                shapes[k] = shape
                            route(hit[0], hit[1], line, None, t)
                            continue
                    msg = decode(line)
                    if msg.__class__ is Notification and msg.method == _UPDATE:
                        params = msg.params
                        route(params.session_id, params.update, line, msg)
                    else:
                        self._dispatch(msg)
                except Exception as exc:  # never let one line kill the connection
                    self._line_failed(line, exc)
        finally:
            self._hot = (hot, hits)
            self.streaming = streaming
            transcript.record_many("recv", kept, shapes)

    def _receive_lines(self, lines: list[bytes | OversizeLine]) -> None:
        # Lines with an oversize or empty one among them, one by one.
        for line in lines:
            if line.__class__ is OversizeLine:
                self._on_oversize(line)
                continue
            data = cast("bytes", line)
            if not data or data == b"\r":
                continue
            self._record_received(data)
            try:
                msg = self._decode(data)
                if msg.__class__ is Notification and msg.method == _UPDATE:
                    params = msg.params
                    self._route(params.session_id, params.update, data, msg)
                else:
                    self._dispatch(msg)
            except Exception as exc:  # never let one line kill the connection
                self._line_failed(data, exc)

    def _line_failed(self, line: bytes, exc: Exception) -> None:
        """Handling ``line`` raised ``exc`` (a bug, or input nothing foresaw): log it
        with its traceback, record it, and go on with the next line."""
        logger.error("error while handling a line from the agent", exc_info=exc)
        self._reports.log_event("protocol_error", data=line, error=exc)
        self._reports.foreign_line(line)

    def _on_oversize(self, line: OversizeLine) -> None:
        # Recorded in the transcript as what we saw: the head, marked as truncated.
        self._record_received(line.head + b"...<truncated>")
        err = ProtocolError(
            f"line of {line.size} bytes exceeds Limits.max_line_bytes={self._max_line}; skipped",
            stderr_tail=self._reports.stderr_tail(),
        )
        self._reports.log_event("oversize_line", data=line, error=err)

    def _record_received(self, line: bytes) -> None:
        transcript = self.transcript
        transcript.record("recv", line)
        if self._findings is not None:
            self._findings.at = transcript.dropped + len(transcript) - 1
