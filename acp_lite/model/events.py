"""The event log: every ``session/update`` received, in order, with its raw payload.

The log stores its columns in parallel arrays rather than one object per update:
a retained Python object per update would make the cyclic garbage collector walk
every one of them again and again, which costs more than the rest of applying a
chunk. :class:`Event` objects are built on access and are cheap views.

For the same reason the connection passes the received *line* (``bytes``, which
the transcript holds anyway and the collector never tracks) instead of the decoded
payload: such an entry keeps only its ``sessionUpdate`` tag, and its ``raw`` dict
and typed ``update`` are decoded again from the line when first read (then cached).
The log still holds the raw payload of every update, as bytes.

A streamed chunk decoded by its stream's compact line
(:class:`~acp_lite.protocol.chunk_lines.CompactLine`) is kept smaller still: the
compact line (shared by the whole stream) and the chunk's text (the ``str`` the
message's content holds anyway). Its ``raw`` and ``update`` are rebuilt from those
two (``CompactLine.params`` / ``CompactLine.update``) exactly as decoding the line
gives them. A run of such
chunks that arrived in one receive buffer is logged in one step
(:meth:`EventLog.extend_chunks`), stamped with one time, as the transcript stamps
the lines received together.
"""

from __future__ import annotations

from array import array
from bisect import bisect_right
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any, cast, overload

from acp_lite.protocol import converter, structure_update
from acp_lite.protocol.chunk_lines import CompactLine
from acp_lite.protocol.jsonrpc import loads_json, loads_json_lines

if TYPE_CHECKING:
    from acp_lite.jsontypes import JsonObject
    from acp_lite.protocol import SessionUpdate


class Event:
    """One received ``session/update``: its decoded ``update`` and the ``raw`` payload.

    ``raw`` is the ``update`` object as received (the value of ``params.update``);
    when the connection did not pass it, it is re-encoded from ``update`` on first
    access. ``time`` is ``time.monotonic()`` at apply; ``replayed`` marks updates
    received during a ``session/resume`` history replay. Events are views built on
    access: two views of the same logged update compare equal. ``update`` is
    decoded from the received line on first read when the log kept only the line.
    """

    __slots__ = ("_log", "_update", "index", "replayed", "time")

    def __init__(
        self,
        index: int,
        update: SessionUpdate | None,  # None: read it from the log
        replayed: bool,
        time: float,
        log: EventLog | None = None,
    ) -> None:
        self.index = index
        self._update = update  # None: read it from the log
        self.replayed = replayed
        self.time = time
        self._log = log

    @property
    def update(self) -> SessionUpdate:
        """The decoded ``SessionUpdate`` (a typed wire object)."""
        update = self._update
        if update is None:
            assert self._log is not None
            update = self._update = self._log.update(self.index)
        return update

    @property
    def raw(self) -> JsonObject:
        """The raw ``update`` payload (a dict), exactly as received when known."""
        if self._log is None:
            return _encode(self.update)
        return self._log.raw(self.index)

    @property
    def source(self) -> str:
        """The method that carried this update: ``"session/update"``, or for example
        ``"session/request_permission"`` for the tool call a permission request
        carries, which clients apply "exactly like a ``tool_call_update``" (schema,
        ``ToolCallPermissionSubject.toolCall``) although the agent never streamed it."""
        if self._log is None:
            return "session/update"
        return self._log.source(self.index)

    @property
    def synthesized(self) -> bool:
        """True for an update no wire message carried: made up by the v1 translator
        (``source == "v1:synthesized"``: a v1 turn's running / user message / idle)."""
        return self.source == "v1:synthesized"

    @property
    def tag(self) -> str:
        """The ``sessionUpdate`` tag of this update."""
        if self._update is None:
            assert self._log is not None
            return self._log.tag(self.index)
        return str(getattr(self._update, "session_update", ""))

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not Event:
            return NotImplemented
        assert isinstance(other, Event)
        return (self.index, self.replayed, self.time, self.update) == (
            other.index,
            other.replayed,
            other.time,
            other.update,
        )

    def __hash__(self) -> int:
        return hash((self.index, self.replayed, self.time))

    def __repr__(self) -> str:
        return (
            f"Event(index={self.index!r}, update={self.update!r}, "
            f"replayed={self.replayed!r}, time={self.time!r})"
        )


class TextRun:
    """Consecutive logged text chunks of one stream (events ``index`` ..
    ``index + len(texts) - 1``), as :meth:`EventLog.runs` yields them: the chunks'
    compact line and their texts, read without building an event per chunk.

    Each chunk's raw payload is ``payload(i)``: the stream's payload with
    ``texts[i]`` (what ``Event.raw`` of that event gives).
    """

    __slots__ = ("index", "line", "texts")

    def __init__(self, index: int, line: CompactLine, texts: list[str]) -> None:
        self.index = index
        self.line = line
        self.texts = texts

    def __len__(self) -> int:
        return len(self.texts)

    def payload(self, i: int = 0) -> JsonObject:
        """The raw payload of chunk ``i`` of the run (a new dict)."""
        update: JsonObject = self.line.params(self.texts[i])["update"]
        return update

    def split(self, count: int) -> tuple[TextRun, TextRun]:
        """The run's first ``count`` chunks and the rest (``0 < count < len``)."""
        texts = self.texts
        return (
            TextRun(self.index, self.line, texts[:count]),
            TextRun(self.index + count, self.line, texts[count:]),
        )

    def __repr__(self) -> str:
        return f"<TextRun {len(self.texts)} chunks from {self.index} of {self.line!r}>"


class LineRun:
    """Consecutive streamed updates the log keeps as their received lines (events
    ``index`` .. ``index + len(lines) - 1``), as :meth:`EventLog.runs` yields them:
    ``payloads()`` decodes them again, without building an event per update."""

    __slots__ = ("index", "lines")

    def __init__(self, index: int, lines: list[bytes]) -> None:
        self.index = index
        self.lines = lines

    def __len__(self) -> int:
        return len(self.lines)

    def payload(self, i: int = 0) -> JsonObject:
        """The raw payload of update ``i`` of the run, decoded again (a new dict)."""
        return _from_line(self.lines[i])

    def payloads(self) -> list[JsonObject]:
        """Every update's raw payload decoded again (new dicts, nothing cached)."""
        return [value["params"]["update"] for value in loads_json_lines(self.lines)]

    def deeper_than(self, depth: int) -> list[int]:
        """The positions in the run of the updates that may nest containers more than
        ``depth`` deep (their lines open more containers than that)."""
        return [
            i
            for i, line in enumerate(self.lines)
            if len(line) > 2 * depth and line.count(b"{") + line.count(b"[") > depth
        ]

    def split(self, count: int) -> tuple[LineRun, LineRun]:
        """The run's first ``count`` updates and the rest (``0 < count < len``)."""
        lines = self.lines
        return LineRun(self.index, lines[:count]), LineRun(self.index + count, lines[count:])

    def __repr__(self) -> str:
        return f"<LineRun {len(self.lines)} lines from {self.index}>"


def _encode(update: Any) -> dict[str, Any]:
    data = converter.unstructure(update)
    return data if isinstance(data, dict) else {"value": data}


def _from_line(line: bytes) -> dict[str, Any]:
    # A line the connection already decoded once: a session/update notification.
    update: dict[str, Any] = loads_json(line)["params"]["update"]
    return update


class EventLog(Sequence[Event]):
    """Append-only, indexable log of events (read-only for everyone but the model).

    Indices are absolute: event ``i`` is the ``i``-th update the session received,
    and ``len()`` counts every update received. With ``max_events`` the log keeps at
    least the newest ``max_events`` (trimmed in blocks, so appending stays amortised
    O(1)); reading an older event raises ``IndexError`` and :attr:`dropped` says how
    many were let go. What those updates did to the model stays applied.
    """

    __slots__ = (
        "_base",
        "_max",
        "_raws",
        "_replayed",
        "_sources",
        "_time_starts",
        "_times",
        "_updates",
    )

    def __init__(self, max_events: int | None = None) -> None:
        if max_events is not None and max_events < 1:
            raise ValueError("max_events must be at least 1 (or None to keep every event)")
        self._max = max_events
        self._base = 0  # absolute index of the first kept event (= events dropped)
        # An update column entry is the typed update, or (when the raw column holds
        # the received line) just its tag, a ``str``: decoded again when read, or a
        # chunk's compact line (the raw column then holds the chunk's text, a ``str``).
        self._updates: list[Any] = []
        self._raws: list[dict[str, Any] | bytes | str | None] = []
        # Times run-length encoded, as the transcript keeps them: a run of updates
        # applied together (a chunk run) shares one time, so a streamed message
        # costs no float per chunk. _time_starts[k]: the column position where the
        # run of time _times[k] starts.
        self._time_starts = array("q")
        self._times = array("d")
        self._replayed = bytearray()
        # Sparse: only updates that did not come from session/update (rare).
        self._sources: dict[int, str] = {}

    @property
    def dropped(self) -> int:
        """How many of the oldest events were let go (``max_events``)."""
        return self._base

    def _at(self, index: int) -> int:
        """Column position of absolute ``index``."""
        pos = index - self._base
        if pos < 0:
            raise IndexError(
                f"event {index} was dropped: the log keeps the newest {self._max} "
                "(Limits.max_session_events)"
            )
        return pos

    def _trim(self) -> None:
        # Trim in blocks (when twice the limit is held) to keep appends O(1) amortised.
        assert self._max is not None
        cut = len(self._updates) - self._max
        del self._updates[:cut]
        del self._raws[:cut]
        starts = self._time_starts
        first = bisect_right(starts, cut) - 1  # the run holding the first kept update
        self._time_starts = array("q", (max(0, x - cut) for x in starts[first:]))
        del self._times[:first]
        del self._replayed[:cut]
        self._base += cut
        if self._sources:
            self._sources = {i: s for i, s in self._sources.items() if i >= self._base}

    def append(
        self,
        update: SessionUpdate,
        raw: dict[str, Any] | bytes | CompactLine | None,
        time: float,
        replayed: bool,
        source: str | None = None,
    ) -> int:
        """Log one update; return its index.

        ``raw`` is the ``update`` dict as received, or the whole received JSON-RPC
        line (``bytes``; the payload is its ``params.update``), or the compact line
        that decoded ``update`` (a chunk) from its line, or ``None``.
        """
        pos = len(self._updates)
        index = self._base + pos
        times = self._times
        if not times or times[-1] != time:
            self._time_starts.append(pos)
            times.append(time)
        if raw.__class__ is CompactLine:
            # Hottest path: two shared objects, nothing new retained (module doc).
            self._updates.append(raw)
            # A compact line decodes text chunks only (protocol.chunk_lines); no cast
            # call on the hottest path.
            self._raws.append(update.content.text)  # type: ignore[union-attr]
        else:
            tag = getattr(update, "session_update", None) if raw.__class__ is bytes else None
            if tag.__class__ is str:
                # Hot path: retain no GC-tracked object for this update (module doc).
                self._updates.append(tag)
            else:
                self._updates.append(update)
            self._raws.append(raw)  # type: ignore[arg-type]
        self._replayed.append(replayed)
        if source is not None:
            self._sources[index] = source
        if self._max is not None and len(self._updates) >= 2 * self._max:
            self._trim()
        return index

    def extend_chunks(
        self, line: CompactLine, texts: list[str], time: float, replayed: bool
    ) -> int:
        """Log ``len(texts)`` chunk updates of ``line``'s stream (as :meth:`append`
        logs each, all stamped ``time``); return the first one's index.

        Trimmed at the very points :meth:`append` would trim (``max_events``)."""
        index = self._base + len(self._updates)
        n = len(texts)
        flag = b"\x01" if replayed else b"\x00"
        limit = self._max
        done = 0
        while done < n:
            take = n - done
            if limit is not None:
                take = min(take, 2 * limit - len(self._updates))
            part = texts if take == n else texts[done : done + take]
            # The update column last: readers size the log by it.
            times = self._times
            if not times or times[-1] != time:
                self._time_starts.append(len(self._updates))
                times.append(time)
            self._raws.extend(part)
            self._replayed.extend(flag * take)
            self._updates.extend([line] * take)
            done += take
            if limit is not None and len(self._updates) >= 2 * limit:
                self._trim()
        return index

    def source(self, index: int) -> str:
        """The method that carried event ``index`` (see :attr:`Event.source`)."""
        return self._sources.get(index, "session/update")

    def time(self, index: int) -> float:
        """``time.monotonic()`` when event ``index`` was applied."""
        return self._time_at(self._at(index))

    def _time_at(self, pos: int) -> float:
        return self._times[bisect_right(self._time_starts, pos) - 1]

    def _expand(self, pos: int) -> dict[str, Any]:
        # A compact entry becomes tag + raw dict, as if fed by line and then read.
        t: CompactLine = self._updates[pos]
        raw: dict[str, Any] = t.params(self._raws[pos])["update"]  # type: ignore[arg-type]
        self._raws[pos] = raw
        self._updates[pos] = t.tag
        return raw

    def raw(self, index: int) -> JsonObject:
        """The raw payload of event ``index`` (re-encoded once if it was not kept)."""
        pos = self._at(index)
        raw = self._raws[pos]
        if raw is None:
            raw = self._raws[pos] = _encode(self._updates[pos])
        elif raw.__class__ is str:
            raw = self._expand(pos)
        elif isinstance(raw, bytes):
            raw = self._raws[pos] = _from_line(raw)
        return raw  # type: ignore[return-value]

    def kept_raw(self, index: int) -> JsonObject | None:
        """The raw payload as passed to ``apply`` (``None`` when it was not)."""
        pos = self._at(index)
        raw = self._raws[pos]
        if raw.__class__ is str:
            raw = self._expand(pos)
        elif isinstance(raw, bytes):
            raw = self._raws[pos] = _from_line(raw)
        return raw  # type: ignore[return-value]

    def set_raw(self, index: int, raw: dict[str, Any]) -> None:
        self._raws[self._at(index)] = raw

    def tag(self, index: int) -> str:
        """The ``sessionUpdate`` tag of event ``index`` (without decoding it)."""
        update = self._updates[self._at(index)]
        if update.__class__ is str:
            return update
        if update.__class__ is CompactLine:
            return update.tag
        return str(getattr(update, "session_update", ""))

    def update(self, index: int) -> SessionUpdate:
        """The decoded update of event ``index``."""
        pos = self._at(index)
        stored = self._updates[pos]  # the update, its tag, or the compact line
        if stored.__class__ is CompactLine:
            compact: CompactLine = stored
            text = cast("str", self._raws[pos])
            self._expand(pos)  # the raw dict, kept beside the update from now on
            decoded: SessionUpdate = compact.update(text)
        elif stored.__class__ is str:
            decoded = structure_update(self.raw(index))
        else:
            return stored  # type: ignore[no-any-return]  # appended as a SessionUpdate
        self._updates[pos] = decoded
        return decoded

    def __len__(self) -> int:
        return self._base + len(self._updates)

    @overload
    def __getitem__(self, index: int) -> Event: ...

    @overload
    def __getitem__(self, index: slice) -> list[Event]: ...

    def __getitem__(self, index: int | slice) -> Event | list[Event]:
        total = len(self)
        if isinstance(index, slice):
            start, stop, step = index.indices(total)
            if step > 0:
                start = max(start, self._base)
            return [self.event(i) for i in range(start, stop, step) if i >= self._base]
        if index < 0:
            index += total
        if not 0 <= index < total:
            raise IndexError(f"event index {index} out of range (0..{total - 1})")
        self._at(index)  # a clear error for a dropped event
        return self.event(index)

    def __iter__(self) -> Iterator[Event]:
        """The kept events, oldest first."""
        for i in range(self._base, len(self)):
            yield self.event(i)

    def runs(
        self, start: int | None = None, stop: int | None = None
    ) -> Iterator[Event | TextRun | LineRun]:
        """The kept events of ``[start, stop)`` in order, with each run of two or more
        consecutive text chunks of one stream still kept compactly given as one
        :class:`TextRun`, and each run of ``session/update`` lines still kept as
        received as one :class:`LineRun`, instead of an event per update (what a
        reader of many updates, such as a snapshot, walks without per-update
        objects)."""
        first = self._base if start is None else max(start, self._base)
        last = len(self) if stop is None else min(stop, len(self))
        updates, raws, base, sources = self._updates, self._raws, self._base, self._sources
        pos, end = first - base, last - base
        while pos < end:
            stored = updates[pos]
            if raws[pos].__class__ is bytes and not (sources and pos + base in sources):
                run_end = pos + 1
                while (
                    run_end < end
                    and raws[run_end].__class__ is bytes
                    and not (sources and run_end + base in sources)
                ):
                    run_end += 1
                yield LineRun(pos + base, cast("list[bytes]", raws[pos:run_end]))
                pos = run_end
                continue
            if stored.__class__ is CompactLine:
                run_end = pos + 1
                while run_end < end and updates[run_end] is stored:
                    run_end += 1
                if run_end - pos >= 2:
                    texts = cast("list[str]", raws[pos:run_end])
                    yield TextRun(pos + base, stored, texts)
                    pos = run_end
                    continue
            yield self.event(pos + base)
            pos += 1

    def event(self, i: int) -> Event:
        """Event ``i`` (no bounds normalisation: ``i`` must be a valid index)."""
        pos = i - self._base
        update = self._updates[pos]
        if update.__class__ is str or update.__class__ is CompactLine:
            update = None  # decoded when read (module doc)
        return Event(i, update, bool(self._replayed[pos]), self._time_at(pos), self)

    def __repr__(self) -> str:
        kept = len(self._updates)
        dropped = f", {self._base} dropped" if self._base else ""
        return f"<EventLog {kept} events{dropped}>"


__all__ = ["Event", "EventLog", "LineRun", "TextRun"]
