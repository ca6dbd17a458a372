"""The transcript: every wire line both ways, in order, with monotonic time.

Raw lines are stored as received or sent (never re-serialised), in columns (no
object per line); :class:`TranscriptEntry` objects are built only when read.
"""

from __future__ import annotations

import importlib
import json
import time
from array import array
from bisect import bisect_right
from collections.abc import Iterator, Mapping
from itertools import groupby, repeat
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, overload

from acp_lite import _lazy_attrs as lazy_attrs

if TYPE_CHECKING:
    # For annotations only: the transcript does not load the wire layer (the pytest
    # plugin imports it at start-up); a compact line comes from the connection.
    from acp_lite.jsontypes import JsonObject, JsonValue
    from acp_lite.protocol.chunk_lines import LineShape
    from acp_lite.protocol.jsonrpc import Message

__all__ = ["Direction", "Transcript", "TranscriptEntry", "dumps_record", "record_line"]

Direction = Literal["send", "recv"]


@lazy_attrs.frozen
class TranscriptEntry:
    """One wire line: ``direction`` ("send" = client -> agent), ``time``
    (``time.monotonic()``) and ``line`` (raw bytes without the newline)."""

    direction: Direction
    time: float
    line: bytes

    def json(self) -> JsonValue:
        """The line's JSON value (raises ``ValueError`` when it is not JSON)."""
        value: JsonValue = json.loads(self.line)
        return value

    def message(self) -> Message | list[Message]:
        """The decoded JSON-RPC message (``acp_lite.protocol.decode_line``)."""
        # Imported lazily: the transcript is used before/without the wire layer.
        protocol: Any = importlib.import_module("acp_lite.protocol")
        decoded: Message | list[Message] = protocol.decode_line(self.line)
        return decoded

    def to_record(self, t0: float = 0.0) -> JsonObject:
        """The NDJSON record of this entry (docs/architecture.md "Transcript").

        ``msg`` holds the line's JSON value; a line that is not strict JSON (not
        UTF-8, ``NaN``, nested too deep to re-encode ...) is kept as text in
        ``raw`` instead (undecodable bytes as ``surrogateescape`` code points).
        """
        record: JsonObject = {"dir": self.direction, "t": round(self.time - t0, 6)}
        try:
            value = _strict_loads(self.line)
            dumps_record(value)  # deep values load but may not encode
        except (ValueError, RecursionError):
            record["raw"] = self.line.decode("utf-8", errors="surrogateescape")
        else:
            record["msg"] = value
        return record


_DIRS: tuple[Direction, Direction] = ("send", "recv")


def _expand_times(starts: array[int], times: array[float], lo: int, n: int) -> list[float]:
    """The time of each line ``lo..n-1`` from the runs (``starts[i]``: the first line
    stamped ``times[i]``)."""
    out: list[float] = []
    runs = min(len(starts), len(times))
    r = bisect_right(starts, lo, 0, runs) - 1
    pos = lo
    while pos < n:
        end = starts[r + 1] if r + 1 < runs else n
        end = min(end, n)
        out.extend(repeat(times[r], end - pos))
        pos = end
        r += 1
    return out


def _line(item: bytes | str, compact: LineShape | None) -> bytes:
    if compact is None:
        return item  # type: ignore[return-value]
    return compact.line(item)  # type: ignore[arg-type]


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


_strict_decoder = json.JSONDecoder(parse_constant=_reject_constant)


def _strict_loads(line: bytes) -> Any:
    return _strict_decoder.decode(line.decode("utf-8"))


def dumps_record(value: object) -> str:
    """One strict JSON text (a transcript record): lone surrogates, valid in JSON
    strings but not in UTF-8, are escaped."""
    text = json.dumps(value, ensure_ascii=False, allow_nan=False)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = json.dumps(value, ensure_ascii=True, allow_nan=False)
    return text


def record_line(record: Mapping[str, object]) -> bytes:
    """The wire line of an NDJSON record made by :meth:`TranscriptEntry.to_record`."""
    if "msg" in record:
        return json.dumps(record["msg"], ensure_ascii=False, separators=(",", ":")).encode(
            "utf-8", errors="surrogatepass"
        )
    return str(record.get("raw", "")).encode("utf-8", errors="surrogateescape")


class _ShapeRuns:
    """The shapes of the items kept as text, run-length encoded: a stream's lines
    share one shape, so a streamed message costs no pointer per line for it. A run
    starts at ``starts[k]`` (a column position) with shape ``vals[k]``; raw lines
    (``bytes`` items) need no shape and never start a run. Appended to by the writer
    (value first, then its start); replaced, never cut in place, by a trim."""

    __slots__ = ("starts", "vals")

    def __init__(self, starts: array[int] | None = None, vals: list[Any] | None = None) -> None:
        self.starts = starts if starts is not None else array("q")
        self.vals: list[Any] = vals if vals is not None else []

    def extend(self, base: int, shapes: list[LineShape | None]) -> None:
        """Record ``shapes``, the shapes of the items from column position ``base``."""
        vals, starts = self.vals, self.starts
        last = vals[-1] if vals else None
        pos = base
        for shape, run in groupby(shapes):
            if shape is not None and shape is not last:
                vals.append(shape)
                starts.append(pos)
                last = shape
            pos += len(list(run))

    def at(self, pos: int) -> Any:
        """The shape of the text item at column position ``pos``."""
        return self.vals[bisect_right(self.starts, pos) - 1]

    def cut(self, cut: int) -> _ShapeRuns:
        """These runs for the columns less their first ``cut`` positions."""
        first = max(bisect_right(self.starts, cut) - 1, 0)
        starts = array("q", (max(0, x - cut) for x in self.starts[first:]))
        return _ShapeRuns(starts, self.vals[first:])

    def copy(self) -> _ShapeRuns:
        vals = list(self.vals)  # first: a start copied has its value
        return _ShapeRuns(array("q", self.starts[: len(vals)]), vals)


_Columns = tuple["list[bytes | str]", _ShapeRuns, "array[int]", "array[float]", bytearray]

_SLACK = 1024
"""A bounded transcript drops its oldest entries in blocks of at least this many
(appending stays amortised O(1)); reads see only the newest ``max_entries``."""


class Transcript:
    """An ordered, optionally bounded record of wire lines.

    Appends happen on the connection's trio thread; reads may come from any
    thread (reads take a snapshot of the columns first; dropping old entries
    replaces the columns at once, never changes them in place).

    Storage: parallel columns, no object per line. A line is kept as its ``bytes``,
    or, when the connection recognised it as a streamed chunk's line whose text
    is written between the fixed bytes of its stream (as plain UTF-8, or with the
    escapes a JSON encoder writes), as that text (the ``str`` the message's content
    holds anyway) and its stream's shape
    (:class:`~acp_lite.protocol.chunk_lines.CompactLine` or ``EscapedLine``);
    :attr:`TranscriptEntry.line` rebuilds those bytes exactly (``shape.line``).
    Times are kept once per batch of lines received together (run-length: where
    each run starts, and its time), directions a byte each.
    """

    def __init__(self, max_entries: int | None = None) -> None:
        if max_entries is not None and max_entries < 0:
            raise ValueError("max_entries must be at least 0 (or None to keep every line)")
        self._max = max_entries
        # Bytes and floats are not tracked by the cyclic GC: a long transcript costs
        # the collector nothing.
        self._cols: _Columns = ([], _ShapeRuns(), array("q"), array("d"), bytearray())
        self._cut = 0  # entries removed from the front of the columns
        self._t0: float | None = None
        #: The agent's exit status when it exited on its own (its traffic ended
        #: there), ``None`` otherwise; saved as a final ``{"dir": "exit"}`` record.
        self.agent_exit: int | None = None
        self._exited = False

    @property
    def max_entries(self) -> int | None:
        """The retention bound (``None``: unbounded)."""
        return self._max

    @property
    def dropped(self) -> int:
        """Entries dropped because of the retention bound."""
        cut, n = self._cut, len(self._cols[4])
        return cut + n - (n if self._max is None or n <= self._max else self._max)

    def record(self, direction: Direction, line: bytes) -> None:
        """Append one raw line (without its newline)."""
        now = time.monotonic()
        if self._t0 is None:
            self._t0 = now
        lines, _shapes, starts, times, dirs = self._cols
        lines.append(line)
        if not times or times[-1] != now:
            starts.append(len(dirs))
            times.append(now)
        dirs.append(direction == "recv")
        if self._max is not None and len(dirs) >= 2 * self._max + _SLACK:
            self._trim()

    def record_many(
        self,
        direction: Direction,
        lines: list[bytes] | list[bytes | str],
        shapes: list[LineShape | None] | None = None,
    ) -> None:
        """Append lines received (or sent) together, with one timestamp.

        With ``shapes`` (as long as ``lines``), an item whose shape is not ``None``
        is the text of a line that is exactly ``shape.line(text)`` (the caller
        checked it); the others are raw lines.
        """
        now = time.monotonic()
        if self._t0 is None:
            self._t0 = now
        n = len(lines)
        col_lines, col_shapes, starts, times, dirs = self._cols
        base = len(col_lines)
        col_lines.extend(lines)
        if shapes is not None:
            col_shapes.extend(base, shapes)
        if n and (not times or times[-1] != now):
            starts.append(len(dirs))
            times.append(now)
        dirs.extend((b"\x01" if direction == "recv" else b"\x00") * n)  # in C
        if self._max is not None and len(dirs) >= 2 * self._max + _SLACK:
            self._trim()

    def _trim(self) -> None:
        assert self._max is not None
        lines, shapes, starts, times, dirs = self._cols
        cut = len(dirs) - self._max
        first = bisect_right(starts, cut) - 1  # the run holding the first kept line
        new_starts = array("q", (max(0, x - cut) for x in starts[first:]))
        # New columns, swapped in at once: a reader holds the old ones, unchanged.
        self._cols = (lines[cut:], shapes.cut(cut), new_starts, times[first:], dirs[cut:])
        self._cut += cut

    def _snapshot(self) -> tuple[list[bytes | str], list[LineShape | None], list[float], bytes]:
        # Copy the columns first (each copy is atomic under the GIL), directions
        # first: the writer appends to them last, so every line they count is in
        # the other columns (which may be longer: cut to one length).
        lines, shapes, starts, times, dirs = self._cols
        d = bytes(dirs)
        t, st, s, ls = array("d", times), array("q", starts), shapes.copy(), list(lines)
        n = len(d)
        lo = n - self._max if self._max is not None and n > self._max else 0
        kept = ls[lo:n]
        at = s.at
        shaped = [None if x.__class__ is bytes else at(lo + i) for i, x in enumerate(kept)]
        return kept, shaped, _expand_times(st, t, lo, n), d[lo:n]

    def entries(self) -> list[TranscriptEntry]:
        """A snapshot of the retained entries, oldest first."""
        lines, shapes, times, dirs = self._snapshot()
        return [
            TranscriptEntry(_DIRS[dirs[i]], times[i], _line(lines[i], shapes[i]))
            for i in range(len(dirs))
        ]

    def stored(
        self, start: int = 0
    ) -> list[tuple[Direction, float, bytes | str, LineShape | None]]:
        """The retained entries from position ``start`` as kept, oldest first:
        ``(direction, time, line, None)`` for a line kept as its bytes, and
        ``(direction, time, text, shape)`` for a streamed chunk's line kept as its
        text (``shape.line(text)`` is the line; ``shape`` is a
        :data:`~acp_lite.protocol.chunk_lines.LineShape`). What reads many lines
        (a conformance check) can skip decoding those: they are chunk lines of a
        stream whose every field but the text is known."""
        lines, shapes, times, dirs = self._snapshot()
        return [(_DIRS[dirs[i]], times[i], lines[i], shapes[i]) for i in range(start, len(dirs))]

    def __len__(self) -> int:
        n = len(self._cols[4])
        return n if self._max is None or n <= self._max else self._max

    def __iter__(self) -> Iterator[TranscriptEntry]:
        return iter(self.entries())

    @overload
    def __getitem__(self, index: int) -> TranscriptEntry: ...
    @overload
    def __getitem__(self, index: slice) -> list[TranscriptEntry]: ...
    def __getitem__(self, index: int | slice) -> TranscriptEntry | list[TranscriptEntry]:
        if isinstance(index, slice):
            return self.entries()[index]
        lines, shapes, starts, times, dirs = self._cols
        n = len(dirs)
        kept = n if self._max is None or n <= self._max else self._max
        if index < 0:
            index += kept
        if not 0 <= index < kept:
            raise IndexError("transcript index out of range")
        pos = n - kept + index
        stamp = times[bisect_right(starts, pos) - 1]
        item = lines[pos]
        shape = None if item.__class__ is bytes else shapes.at(pos)
        return TranscriptEntry(_DIRS[dirs[pos]], stamp, _line(item, shape))

    def to_ndjson(self) -> str:
        """The transcript as NDJSON text, times relative to the first entry.

        Always valid NDJSON, whatever the agent wrote: every record is one strict
        JSON object (no ``NaN``, lone surrogates escaped) that :meth:`load` reads
        back to the same entries. When the agent exited on its own, a last
        ``{"dir": "exit", "t", "returncode"}`` record says so.
        """
        t0 = self._t0 or 0.0
        text = "".join(dumps_record(e.to_record(t0)) + "\n" for e in self.entries())
        if self._exited:
            # After the last line: the traffic ended with the agent's exit.
            times = self._cols[3]
            last = times[-1] - t0 if times else 0.0
            end = {"dir": "exit", "t": round(last, 6), "returncode": self.agent_exit}
            text += dumps_record(end) + "\n"
        return text

    def agent_exited(self, returncode: int | None) -> None:
        """Record that the agent exited on its own (``returncode``, if known)."""
        self._exited = True
        self.agent_exit = returncode

    @property
    def exited(self) -> bool:
        """Whether the agent exited on its own (see :meth:`agent_exited`)."""
        return self._exited

    def save(self, path: str | Path) -> None:
        """Write :meth:`to_ndjson` to ``path`` (UTF-8)."""
        Path(path).write_text(self.to_ndjson(), encoding="utf-8")

    @classmethod
    def load(cls, path: str | Path) -> Transcript:
        """Read a transcript saved with :meth:`save` (times relative to its start)."""
        transcript = cls()
        # Split on "\n" only: str.splitlines() also splits on U+0085, U+2028 ..., which
        # a record may hold raw (records are written with ensure_ascii=False).
        for n, text in enumerate(Path(path).read_text(encoding="utf-8").split("\n"), 1):
            if not text.strip():
                continue
            try:
                record = json.loads(text)
            except ValueError as exc:
                raise ValueError(f"{path}:{n}: not a transcript record: {exc}") from None
            if isinstance(record, dict) and record.get("dir") == "exit":
                code = record.get("returncode")
                transcript.agent_exited(code if isinstance(code, int) else None)
                continue
            if not isinstance(record, dict) or record.get("dir") not in _DIRS:
                raise ValueError(f"{path}:{n}: not a transcript record (no 'dir' send/recv)")
            lines, _shapes, starts, times, dirs = transcript._cols
            lines.append(record_line(record))
            starts.append(len(dirs))
            times.append(float(record.get("t", 0.0)))
            dirs.append(record["dir"] == "recv")
        transcript._t0 = 0.0
        return transcript

    def __repr__(self) -> str:
        return f"<Transcript {len(self)} entries>"
