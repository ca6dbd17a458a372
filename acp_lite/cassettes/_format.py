"""The cassette file: a header line, then the transcript NDJSON of one connection.

A cassette is the NDJSON that ``Transcript.save``, ``--acp-transcripts`` and
``acp-lite prompt --transcript`` write (docs/architecture.md, "Transcript"), with a
header line before each recorded connection::

    {"acpCassette": 1, "protocolVersion": 2, "agent": "node agent.mjs",
     "acpLite": "0.1.0", "recordedAt": "2026-12-01T16:00:00Z"}
    {"dir": "send", "t": 0.0, "msg": {...}}
    {"dir": "recv", "t": 0.01, "msg": {...}}
    ...

A test that opens several connections keeps them one after the other, each after
its own header. A file without any header (a plain transcript) reads as one
connection with an empty header.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal, TypeGuard, TypeVar

import attrs

from acp_lite.errors import CassetteError
from acp_lite.jsontypes import JsonObject, JsonValue
from acp_lite.transcript import dumps_record

__all__ = [
    "FORMAT_VERSION",
    "Cassette",
    "CassetteError",
    "Header",
    "Record",
    "Recording",
    "StreamedRecording",
    "iter_entries",
    "library_version",
    "scan",
]

FORMAT_VERSION = 1
"""The ``acpCassette`` value of the headers this version writes."""

RecordDirection = Literal["send", "recv", "exit"]

_N = TypeVar("_N", int, float)


def library_version() -> str:
    """acp_lite's version (``acp_lite.__version__``)."""
    from acp_lite._version import __version__

    return __version__


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@attrs.frozen
class Header:
    """What a recorded connection was: the cassette format, the ACP version spoken,
    the agent command, the acp_lite version that recorded it, and when."""

    format: int = FORMAT_VERSION
    protocol_version: int | None = None
    agent: str = ""
    acp_lite: str = attrs.field(factory=library_version)
    recorded_at: str = attrs.field(factory=_now)

    def to_json(self) -> dict[str, object]:
        """The header line's JSON object."""
        return {
            "acpCassette": self.format,
            "protocolVersion": self.protocol_version,
            "agent": self.agent,
            "acpLite": self.acp_lite,
            "recordedAt": self.recorded_at,
        }

    @classmethod
    def from_json(cls, value: JsonObject) -> Header:
        """Read a header line's object (unknown keys are ignored; ``ValueError`` when
        ``acpCassette`` is not a format number)."""
        version = value.get("protocolVersion")
        number = _number(value.get("acpCassette", FORMAT_VERSION), "acpCassette", int)
        if not 1 <= number <= FORMAT_VERSION:
            raise ValueError(
                f"cassette format {number}: this acp_lite reads format 1 to {FORMAT_VERSION}"
            )
        return cls(
            format=number,
            protocol_version=version if isinstance(version, int) else None,
            agent=str(value.get("agent", "")),
            acp_lite=str(value.get("acpLite", "")),
            recorded_at=str(value.get("recordedAt", "")),
        )


def _is_direction(value: object) -> TypeGuard[RecordDirection]:
    return value in ("send", "recv", "exit")


def _number(value: JsonValue, key: str, kind: type[_N]) -> _N:
    # A number (or its text, as int() / float() read it); else the line is malformed.
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise ValueError(f"{key!r} is {value!r}, not a number")
    try:
        number = kind(value)
    except OverflowError:
        raise ValueError(f"{key!r} is {value!r}, not a finite number") from None
    if not math.isfinite(number):
        raise ValueError(f"{key!r} is {value!r}, not a finite number")
    return number


@attrs.frozen
class Record:
    """One transcript record: ``direction`` ``"send"`` (client -> agent), ``"recv"``
    (agent -> client) or ``"exit"`` (the agent exited, with ``returncode``);
    ``time`` in seconds since the connection started; the line's JSON value in
    ``message``, or its text in ``raw`` when it was not JSON."""

    direction: RecordDirection
    time: float
    message: JsonValue = None
    raw: str | None = None
    returncode: int | None = None

    def to_json(self) -> dict[str, object]:
        """The NDJSON record (the transcript format)."""
        out: dict[str, object] = {"dir": self.direction, "t": self.time}
        if self.direction == "exit":
            out["returncode"] = self.returncode
        elif self.raw is not None:
            out["raw"] = self.raw
        else:
            out["msg"] = self.message
        return out

    @classmethod
    def from_json(cls, value: JsonObject) -> Record:
        """Read one transcript record (``ValueError`` when it is not one)."""
        direction = value.get("dir")
        if not _is_direction(direction):
            raise ValueError(f"not a transcript record: 'dir' is {direction!r}")
        time = _number(value.get("t", 0.0), "t", float)
        if direction == "exit":
            code = value.get("returncode")
            return cls("exit", time, returncode=code if isinstance(code, int) else None)
        if "msg" in value:
            return cls(direction, time, message=value["msg"])
        return cls(direction, time, raw=str(value.get("raw", "")))

    def line(self) -> bytes:
        """The wire line (without newline) this record stands for."""
        if self.raw is not None:
            return self.raw.encode("utf-8", errors="surrogateescape")
        return json.dumps(self.message, ensure_ascii=False, separators=(",", ":")).encode(
            "utf-8", errors="surrogatepass"
        )


@attrs.frozen
class Recording:
    """One recorded connection: its header and its records, in wire order."""

    header: Header
    records: tuple[Record, ...]
    #: The 1-based line of the cassette file where each record is (diagnostics).
    lines: tuple[int, ...] = ()

    def line_of(self, index: int) -> int | None:
        """The cassette file line of record ``index`` (``None`` if unknown)."""
        return self.lines[index] if index < len(self.lines) else None

    def numbered(self) -> Iterator[tuple[int | None, Record]]:
        """Each record with its cassette file line (``None`` if unknown)."""
        for i, record in enumerate(self.records):
            yield self.line_of(i), record


@attrs.frozen
class StreamedRecording:
    """One recorded connection of a cassette file, read from the file as the replay
    goes (:meth:`numbered`), not held in memory: what ``acp-lite replay`` plays, so
    a large cassette replays in bounded memory. Get them with :func:`scan`."""

    path: Path
    #: Which connection of the file (0-based).
    index: int
    header: Header

    def numbered(self) -> Iterator[tuple[int | None, Record]]:
        """Each record of this connection with its file line, read lazily."""
        current = -1
        with open(self.path, "rb") as f:
            for n, entry in iter_entries(f, str(self.path)):
                if isinstance(entry, Header):
                    current += 1
                    if current > self.index:
                        return
                    continue
                current = max(current, 0)  # records before any header: connection 0
                if current == self.index:
                    yield n, entry


def scan(path: str | Path) -> tuple[StreamedRecording, ...]:
    """The connections of a cassette file, each to be read lazily. Every line is
    checked here (``CassetteError`` names the file and line), one at a time: the
    file is never held in memory."""
    target = Path(path)
    out: list[StreamedRecording] = []
    loose = False  # records before the first header: a plain transcript's connection
    with open(target, "rb") as f:
        for _, entry in iter_entries(f, str(target)):
            if isinstance(entry, Header):
                out.append(StreamedRecording(target, len(out), entry))
            elif not out and not loose:
                loose = True
                out.append(StreamedRecording(target, 0, Header(acp_lite="", recorded_at="")))
    return tuple(out)


@attrs.frozen
class Cassette:
    """A cassette: the recorded connections of one test, in the order they opened."""

    recordings: tuple[Recording, ...]

    def dumps(self) -> str:
        """The cassette file's text."""
        out: list[str] = []
        for recording in self.recordings:
            out.append(dumps_record(recording.header.to_json()) + "\n")
            out.extend(dumps_record(r.to_json()) + "\n" for r in recording.records)
        return "".join(out)

    def save(self, path: str | Path) -> None:
        """Write the cassette (UTF-8), creating its directory."""
        target = Path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(self.dumps(), encoding="utf-8")

    @classmethod
    def loads(cls, text: str, name: str = "<cassette>") -> Cassette:
        """Parse a cassette's (or a plain transcript's) text; ``CassetteError``
        names ``name`` and the line when it is neither."""
        return cls._collect(iter_entries(text.splitlines(), name))

    @classmethod
    def load(cls, path: str | Path) -> Cassette:
        """Read a cassette file (``OSError`` if missing, ``CassetteError`` if bad)."""
        with open(path, "rb") as f:
            return cls._collect(iter_entries(f, str(path)))

    @classmethod
    def _collect(cls, entries: Iterable[tuple[int, Header | Record]]) -> Cassette:
        recordings: list[Recording] = []
        header: Header | None = None
        records: list[Record] = []
        lines: list[int] = []

        def close() -> None:
            if header is not None or records:
                recordings.append(
                    Recording(
                        header or Header(acp_lite="", recorded_at=""), tuple(records), tuple(lines)
                    )
                )

        for n, entry in entries:
            if isinstance(entry, Header):
                close()
                header, records, lines = entry, [], []
            else:
                records.append(entry)
                lines.append(n)
        close()
        return cls(tuple(recordings))

    @classmethod
    def from_records(cls, records: Iterable[Record], header: Header | None = None) -> Cassette:
        """A one-connection cassette of ``records``."""
        return cls((Recording(header or Header(), tuple(records)),))

    def with_recordings(self, extra: Sequence[Recording]) -> Cassette:
        """This cassette with ``extra`` connections appended."""
        return Cassette((*self.recordings, *extra))


MAX_DEPTH = 256
"""Deeper JSON in a cassette line is refused: replaying it would exhaust the stack."""


def _depth_ok(value: JsonValue) -> bool:
    # Iterative: the check itself must not recurse.
    stack: list[tuple[JsonValue, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            if depth > MAX_DEPTH:
                return False
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, depth + 1) for child in children)
    return True


def nests_deeper(text: str, value: JsonValue) -> bool:
    """Whether ``value`` (parsed from ``text``) nests containers deeper than
    :data:`MAX_DEPTH` (a line with fewer brackets cannot: counting is cheap)."""
    return text.count("[") + text.count("{") > MAX_DEPTH and not _depth_ok(value)


def parse_line(
    text: str | bytes, name: str, n: int, *, keep_deep: bool = False
) -> Header | Record | None:
    """One cassette line: a :class:`Header`, a :class:`Record`, or ``None`` (blank);
    ``CassetteError`` naming ``name`` and line ``n`` when it is neither.
    ``keep_deep``: a record whose message nests deeper than :data:`MAX_DEPTH` is
    kept as its text (``Record.raw``) instead of being an error (what a viewer
    shows)."""
    where = f"{name}:{n}"
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise CassetteError(f"{where}: not UTF-8 text: {exc}") from None
    if not text.strip():
        return None
    try:
        value = json.loads(text)
    except RecursionError:
        raise CassetteError(f"{where}: JSON nested too deeply") from None
    except ValueError as exc:
        raise CassetteError(f"{where}: not JSON: {exc}") from None
    if not isinstance(value, dict):
        raise CassetteError(f"{where}: not a transcript record: {text[:80]}")
    deep = nests_deeper(text, value)
    if deep and not keep_deep:
        raise CassetteError(f"{where}: JSON nested deeper than {MAX_DEPTH} levels")
    try:
        if "acpCassette" in value:
            return Header.from_json(value)
        record = Record.from_json(value)
    except (ValueError, OverflowError) as exc:
        raise CassetteError(f"{where}: {exc}") from None
    if deep and record.raw is None:
        return Record(record.direction, record.time, raw=text.strip())
    return record


def iter_entries(
    lines: Iterable[str | bytes], name: str = "<cassette>"
) -> Iterator[tuple[int, Header | Record]]:
    """The headers and records of a cassette's lines, one at a time, with their
    1-based line numbers (a file object streams: nothing but one line is held)."""
    for n, text in enumerate(lines, 1):
        entry = parse_line(text, name, n)
        if entry is not None:
            yield n, entry
