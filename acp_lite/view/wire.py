"""The viewer's input: the wire lines of a transcript or a cassette, read in one pass.

A file is read line by line (never held in memory) with the cassette format's
public readers (:class:`acp_lite.cassettes.Header`, :class:`~acp_lite.cassettes.Record`):
a plain transcript is one connection, a cassette one per header line. A
:class:`~acp_lite.transcript.Transcript` object is one connection too.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from acp_lite.cassettes import Header, Record, nests_deeper, parse_line

if TYPE_CHECKING:
    from acp_lite.jsontypes import JsonValue
    from acp_lite.transcript import Transcript

__all__ = ["Connection", "WireLine", "connection_of", "connections_of_file"]

WireDirection = Literal["send", "recv", "exit"]


@dataclass(frozen=True, slots=True)
class WireLine:
    """One transcript record: its 0-based ``index`` among the connection's wire lines
    (what conformance findings name), direction, time (seconds since the start),
    and its JSON value (``message``) or text (``raw``, a line that was not JSON).
    An ``exit`` record (the agent exited) has ``returncode`` and index -1."""

    index: int
    direction: WireDirection
    time: float
    message: JsonValue = None
    raw: str | None = None
    returncode: int | None = None

    def text(self) -> str:
        """The line as text (JSON re-encoded compactly; ``raw`` as it was)."""
        if self.direction == "exit":
            return f"(the agent exited, return code {self.returncode})"
        if self.raw is not None:
            return self.raw
        try:
            return json.dumps(self.message, ensure_ascii=False, separators=(",", ":"))
        except (ValueError, RecursionError):
            return repr(self.message)


@dataclass(frozen=True, slots=True)
class Connection:
    """One recorded connection: the agent its header names (if any), the protocol
    version it names, and its wire lines (an iterator: read once)."""

    number: int
    agent: str
    protocol_version: int | None
    lines: Iterator[WireLine]


def _entries(path: Path) -> Iterator[tuple[int, Header | Record]]:
    # The cassette format's own line reader; a line nested too deep to walk is
    # kept as its text, to be shown as it is.
    name = str(path)
    with open(path, "rb") as f:
        for n, data in enumerate(f, 1):
            entry = parse_line(data, name, n, keep_deep=True)
            if entry is not None:
                yield n, entry


def connections_of_file(path: str | Path) -> Iterator[Connection]:
    """The connections of a transcript or cassette file, in order, each read lazily:
    consume a connection's ``lines`` before asking for the next one. Raises
    :class:`~acp_lite.errors.CassetteError` (file and line named) on a malformed
    line, ``OSError`` when the file cannot be read."""
    entries = _entries(Path(path))
    pending: list[Header] = []
    found = next(entries, None)
    if found is None:
        return
    entry: Header | Record = found[1]
    number = 0
    while True:
        header = entry if isinstance(entry, Header) else None
        start = entry if isinstance(entry, Record) else None
        yield Connection(
            number,
            header.agent if header else "",
            header.protocol_version if header else None,
            _lines(start, entries, pending),
        )
        number += 1
        if not pending:
            return
        entry = pending.pop()


def _wire(record: Record, index: int) -> WireLine:
    if record.direction == "exit":
        return WireLine(-1, "exit", record.time, returncode=record.returncode)
    return WireLine(index, record.direction, record.time, record.message, record.raw)


def _lines(
    start: Record | None, entries: Iterator[tuple[int, Header | Record]], pending: list[Header]
) -> Iterator[WireLine]:
    """The records up to the next header (left in ``pending``)."""
    index = 0
    if start is not None:
        yield _wire(start, index)
        index += start.direction != "exit"
    for _, entry in entries:
        if isinstance(entry, Header):
            pending.append(entry)
            return
        yield _wire(entry, index)
        index += entry.direction != "exit"


def connection_of(transcript: Transcript) -> Connection:
    """The one connection of an in-memory transcript (times made relative to its
    first line)."""
    entries = transcript.entries()
    t0 = entries[0].time if entries else 0.0

    def lines() -> Iterator[WireLine]:
        for i, entry in enumerate(entries):
            text = entry.line.decode("utf-8", errors="surrogateescape")
            value: JsonValue = None
            raw: str | None = text
            with contextlib.suppress(ValueError, RecursionError):
                parsed = json.loads(text)
                if not nests_deeper(text, parsed):
                    value, raw = parsed, None
            yield WireLine(i, entry.direction, entry.time - t0, value, raw)
        if transcript.exited:
            last = entries[-1].time - t0 if entries else 0.0
            yield WireLine(-1, "exit", last)

    return Connection(0, "", None, lines())
