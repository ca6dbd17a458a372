"""The transcript: every wire line both ways, in order, with monotonic time.

Raw lines are stored as received or sent (never re-serialised), so recording costs
one tuple per line; :class:`TranscriptEntry` objects are built only when read.
"""

from __future__ import annotations

import importlib
import json
import time
from collections import deque
from collections.abc import Iterator
from itertools import repeat
from pathlib import Path
from typing import Any, Literal, overload

import attrs

__all__ = ["Direction", "Transcript", "TranscriptEntry", "dumps_record", "record_line"]

Direction = Literal["send", "recv"]


@attrs.frozen(slots=True)
class TranscriptEntry:
    """One wire line: ``direction`` ("send" = client -> agent), ``time``
    (``time.monotonic()``) and ``line`` (raw bytes without the newline)."""

    direction: Direction
    time: float
    line: bytes

    def json(self) -> Any:
        """The line's JSON value (raises ``ValueError`` when it is not JSON)."""
        return json.loads(self.line)

    def message(self) -> Any:
        """The decoded JSON-RPC message (``acp_lite.protocol.decode_line``)."""
        # Imported lazily: the transcript is used before/without the wire layer.
        protocol: Any = importlib.import_module("acp_lite.protocol")
        return protocol.decode_line(self.line)

    def to_record(self, t0: float = 0.0) -> dict[str, Any]:
        """The NDJSON record of this entry (docs/architecture.md "Transcript").

        ``msg`` holds the line's JSON value; a line that is not strict JSON (not
        UTF-8, ``NaN``, nested too deep to re-encode ...) is kept as text in
        ``raw`` instead (undecodable bytes as ``surrogateescape`` code points).
        """
        record: dict[str, Any] = {"dir": self.direction, "t": round(self.time - t0, 6)}
        try:
            value = _strict_loads(self.line)
            dumps_record(value)  # deep values load but may not encode
        except (ValueError, RecursionError):
            record["raw"] = self.line.decode("utf-8", errors="surrogateescape")
        else:
            record["msg"] = value
        return record


_DIRS: tuple[Direction, Direction] = ("send", "recv")


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


_strict_decoder = json.JSONDecoder(parse_constant=_reject_constant)


def _strict_loads(line: bytes) -> Any:
    return _strict_decoder.decode(line.decode("utf-8"))


def dumps_record(value: Any) -> str:
    """One strict JSON text (a transcript record): lone surrogates, valid in JSON
    strings but not in UTF-8, are escaped."""
    text = json.dumps(value, ensure_ascii=False, allow_nan=False)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = json.dumps(value, ensure_ascii=True, allow_nan=False)
    return text


def record_line(record: dict[str, Any]) -> bytes:
    """The wire line of an NDJSON record made by :meth:`TranscriptEntry.to_record`."""
    if "msg" in record:
        return json.dumps(record["msg"], ensure_ascii=False, separators=(",", ":")).encode(
            "utf-8", errors="surrogatepass"
        )
    return str(record.get("raw", "")).encode("utf-8", errors="surrogateescape")


class Transcript:
    """An ordered, optionally bounded record of wire lines.

    Appends happen on the connection's trio thread; reads may come from any
    thread (``deque`` appends are atomic, reads take a snapshot first).
    """

    def __init__(self, max_entries: int | None = None) -> None:
        # Parallel columns instead of one tuple per line: bytes and floats are not
        # tracked by the cyclic GC, so a long transcript costs the collector nothing.
        self._lines: deque[bytes] = deque(maxlen=max_entries)
        self._times: deque[float] = deque(maxlen=max_entries)
        self._dirs: deque[bool] = deque(maxlen=max_entries)  # True: recv
        self._t0: float | None = None
        #: Entries dropped because of the retention bound.
        self.dropped = 0
        #: The agent's exit status when it exited on its own (its traffic ended
        #: there), ``None`` otherwise; saved as a final ``{"dir": "exit"}`` record.
        self.agent_exit: int | None = None
        self._exited = False

    @property
    def max_entries(self) -> int | None:
        """The retention bound (``None``: unbounded)."""
        return self._lines.maxlen

    def record(self, direction: Direction, line: bytes) -> None:
        """Append one raw line (without its newline)."""
        now = time.monotonic()
        if self._t0 is None:
            self._t0 = now
        lines = self._lines
        if lines.maxlen is not None and len(lines) == lines.maxlen:
            self.dropped += 1
        lines.append(line)
        self._times.append(now)
        self._dirs.append(direction == "recv")

    def record_many(self, direction: Direction, lines: list[bytes]) -> None:
        """Append lines received (or sent) together, with one timestamp."""
        now = time.monotonic()
        if self._t0 is None:
            self._t0 = now
        n = len(lines)
        cap = self._lines.maxlen
        if cap is not None:
            self.dropped += max(0, len(self._lines) + n - cap)
        self._lines.extend(lines)
        self._times.extend(repeat(now, n))
        self._dirs.extend(repeat(direction == "recv", n))

    def entries(self) -> list[TranscriptEntry]:
        """A snapshot of the retained entries, oldest first."""
        # Copy the columns first (atomic under the GIL) then pair them; an append
        # from the trio thread in between only makes a column one longer.
        lines, times, dirs = list(self._lines), list(self._times), list(self._dirs)
        n = min(len(lines), len(times), len(dirs))
        return [TranscriptEntry(_DIRS[dirs[i]], times[i], lines[i]) for i in range(n)]

    def __len__(self) -> int:
        return len(self._dirs)

    def __iter__(self) -> Iterator[TranscriptEntry]:
        return iter(self.entries())

    @overload
    def __getitem__(self, index: int) -> TranscriptEntry: ...
    @overload
    def __getitem__(self, index: slice) -> list[TranscriptEntry]: ...
    def __getitem__(self, index: int | slice) -> TranscriptEntry | list[TranscriptEntry]:
        if isinstance(index, slice):
            return self.entries()[index]
        return TranscriptEntry(_DIRS[self._dirs[index]], self._times[index], self._lines[index])

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
            last = self._times[-1] - t0 if self._times else 0.0
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
        for n, text in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
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
            transcript._lines.append(record_line(record))
            transcript._times.append(float(record.get("t", 0.0)))
            transcript._dirs.append(record["dir"] == "recv")
        transcript._t0 = 0.0
        return transcript

    def __repr__(self) -> str:
        return f"<Transcript {len(self)} entries>"
