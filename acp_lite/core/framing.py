"""Newline-delimited framing of the agent's output, with a line-size bound (sans-IO).

ACP stdio transport: one JSON-RPC message per line (docs-v2-draft/transports.mdx,
"stdio"). An oversize line is skipped up to its newline and reported as an
:class:`OversizeLine`, so the connection survives it (a common failure of other
SDKs is a reader that dies on one long line).
"""

from __future__ import annotations

from acp_lite import _lazy_attrs as lazy_attrs

__all__ = ["HEAD_BYTES", "LineFramer", "OversizeLine"]

HEAD_BYTES = 200
"""How much of an oversize line is kept (for the transcript and error messages)."""


@lazy_attrs.frozen
class OversizeLine:
    """A line longer than the limit: its total ``size`` and its first bytes."""

    size: int
    head: bytes


class LineFramer:
    """Splits a byte stream into lines (without ``\\n``), many per chunk."""

    __slots__ = ("_buf", "_head", "_max", "_skipped", "_skipping", "plain")

    def __init__(self, max_line_bytes: int) -> None:
        self._max = max_line_bytes
        self._buf = bytearray()
        self._skipping = False
        self._skipped = 0
        self._head = b""
        #: True when the last lines :meth:`feed` returned are all plain: ``bytes``, not
        #: empty, no ``\r``.
        self.plain = False

    def feed(self, chunk: bytes | bytearray) -> list[bytes | OversizeLine]:
        """Add bytes; return the lines they complete."""
        block = self.feed_block(chunk)
        if block.__class__ is bytes:
            lines = block.split(b"\n")
            self.plain = b"" not in lines and b"\r" not in block
            return lines  # type: ignore[return-value]
        self.plain = False
        return block  # type: ignore[return-value]

    def feed_block(self, chunk: bytes | bytearray) -> bytes | list[bytes | OversizeLine]:
        """Add bytes; return the lines they complete: as one ``bytes``, the lines joined
        by ``\\n``, when none is oversize (the common case: the connection's hot path
        then finds runs of lines in it, and splits it only when it must), else as a
        list, oversize lines as :class:`OversizeLine` (``[]``: no line completed)."""
        out: list[bytes | OversizeLine] = []
        if self._skipping:
            nl = chunk.find(b"\n")
            if nl < 0:
                self._skipped += len(chunk)
                return out
            self._skipped += nl
            out.append(OversizeLine(self._skipped, self._head))
            self._skipping = False
            chunk = chunk[nl + 1 :]
        last = chunk.rfind(b"\n")
        if last < 0:
            self._buf += chunk
            if len(self._buf) > self._max:
                self._start_skipping()
            return out
        # Only the new chunk is searched: a long line spanning many chunks costs O(n).
        # The partial line kept and this chunk's lines: copied once, into one bytes.
        head = self._buf
        data = b"".join((head, memoryview(chunk)[:last])) if head else bytes(chunk[:last])
        self._buf = bytearray(chunk[last + 1 :])
        limit = self._max
        if len(self._buf) > limit:
            self._start_skipping()
        if not out and len(data) <= limit:
            return data  # no line can be oversize
        for line in data.split(b"\n"):
            if len(line) > limit:
                out.append(OversizeLine(len(line), line[:HEAD_BYTES]))
            else:
                out.append(line)
        return out

    def finish(self) -> list[bytes | OversizeLine]:
        """End of stream: the partial last line, if any, as a line."""
        self.plain = False
        out: list[bytes | OversizeLine] = []
        if self._skipping:
            out.append(OversizeLine(self._skipped, self._head))
        elif self._buf:
            out.append(bytes(self._buf))
        self._buf = bytearray()
        self._skipping = False
        return out

    def _start_skipping(self) -> None:
        self._skipping = True
        self._skipped = len(self._buf)
        self._head = bytes(self._buf[:HEAD_BYTES])
        self._buf = bytearray()
