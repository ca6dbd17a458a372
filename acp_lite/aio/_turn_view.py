"""What ``run`` returns: the turn's slice of the event log, its tool calls and the
agent's requests during it (both ``Turn`` flavours are built here)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, overload

from acp_lite.model.events import EventLog, LineRun, TextRun
from acp_lite.model.requests import (
    PERMISSION,
    AgentRequestRecord,
    ElicitationRecord,
    PermissionRequestRecord,
)
from acp_lite.turn import Turn

if TYPE_CHECKING:
    from acp_lite.model.entities import ToolCallEntity
    from acp_lite.model.events import Event
    from acp_lite.model.session import SessionModel
    from acp_lite.model.submissions import Submission

__all__ = ["EventSlice", "build_turn"]

_TOOL_TAGS = frozenset({"tool_call_update", "tool_call_content_chunk"})


class EventSlice(Sequence["Event"]):
    """A lazy view of ``events[start:stop]``: events are built only when read.

    A turn can hold hundreds of thousands of updates; building one object per
    update up front would cost more than receiving them. ``skip`` (sorted absolute
    indices) leaves out events the agent did not stream (the tool call a permission
    request carries); ``requests`` are the agent's requests received in the range,
    which snapshots place in the stream (``AgentRequestRecord.event_index``).
    """

    __slots__ = ("_events", "_skip", "_start", "_stop", "requests")

    def __init__(
        self,
        events: Sequence[Event],
        start: int,
        stop: int,
        skip: Sequence[int] = (),
        requests: Sequence[AgentRequestRecord] = (),
    ) -> None:
        self._events = events
        self._start = start
        self._stop = max(start, stop)
        self._skip = [i for i in skip if start <= i < self._stop]
        self.requests = tuple(requests)

    def __len__(self) -> int:
        return self._stop - self._start - len(self._skip)

    def _absolute(self, index: int) -> int:
        at = self._start + index
        for skipped in self._skip:  # sorted, and rare: a few per turn
            if skipped <= at:
                at += 1
            else:
                break
        return at

    @overload
    def __getitem__(self, index: int) -> Event: ...
    @overload
    def __getitem__(self, index: slice) -> list[Event]: ...
    def __getitem__(self, index: int | slice) -> Event | list[Event]:
        if isinstance(index, slice):
            return [self._events[self._absolute(i)] for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(index)
        return self._events[self._absolute(index)]

    def __iter__(self) -> Iterator[Event]:
        events = self._events
        skip = set(self._skip)
        for i in range(self._start, self._stop):
            if i not in skip:
                yield events[i]

    def runs(self) -> Iterator[Event | TextRun | LineRun]:
        """The slice's events in order, runs of one stream's text chunks and of
        updates kept as their lines as one :class:`~acp_lite.model.events.TextRun`
        or :class:`~acp_lite.model.events.LineRun` each (``EventLog.runs``)."""
        events = self._events
        if not isinstance(events, EventLog):
            yield from self
            return
        start = self._start
        if start < events.dropped and start < self._stop:
            events[start]  # raises the log's error for a dropped event, as iterating does
        for skipped in (*self._skip, self._stop):
            if start < skipped:
                yield from events.runs(start, skipped)
            start = skipped + 1

    def __repr__(self) -> str:
        skipped = f", {len(self._skip)} not streamed" if self._skip else ""
        return f"<{len(self)} events [{self._start}:{self._stop}]{skipped}>"


def _tool_calls(model: SessionModel, start: int, stop: int) -> list[ToolCallEntity]:
    """The tool calls that events ``start..stop-1`` created or updated, in timeline order."""
    found: list[ToolCallEntity] = []
    spanning: list[ToolCallEntity] = []
    for ent in model.tool_calls:
        first, last = ent.first_event_index, ent.last_event_index
        if last < start or first >= stop:
            continue
        if first >= start or last < stop:
            found.append(ent)
        else:
            spanning.append(ent)  # seen before and after the turn: during it too?
    if spanning:
        events = model.events
        touched: set[object] = set()
        for i in range(start, stop):
            if _kept(events, i):
                event = events[i]
                if event.tag in _TOOL_TAGS:
                    touched.add(getattr(event.update, "tool_call_id", None))
        found.extend(e for e in spanning if e.id in touched)
        found.sort(key=lambda e: e.position)
    return found


def _kept(events: Sequence[Event], index: int) -> bool:
    try:
        events[index]
    except IndexError:  # dropped (Limits.max_session_events)
        return False
    return True


def build_turn(
    model: SessionModel, submission: Submission, start: int, session_id: str | None
) -> Turn:
    """The :class:`~acp_lite.turn.Turn` of ``submission``, whose prompt was sent when
    the log held ``start`` events."""
    events = model.events
    end = submission.end_event_index
    stop = end + 1 if end is not None else len(events)
    requests: list[AgentRequestRecord] = model.requests.between(start, stop)
    # The tool call a permission request carries is applied to the model right
    # after the request is recorded: that event is the record's event_index.
    skip = [
        r.event_index
        for r in requests
        if r.method == PERMISSION
        and r.event_index < stop
        and _kept(events, r.event_index)
        and events[r.event_index].source == PERMISSION
    ]
    updates = EventSlice(events, start, stop, skip, requests)
    return Turn(
        submission=submission,
        message_id=submission.message_id,
        updates=updates,
        stop_reason=submission.stop_reason,
        error=submission.error,
        text=model.text(submission),
        session_id=session_id,
        requests=tuple(requests),
        permission_requests=tuple(r for r in requests if isinstance(r, PermissionRequestRecord)),
        elicitations=tuple(r for r in requests if isinstance(r, ElicitationRecord)),
        tool_calls=tuple(_tool_calls(model, start, stop)),
    )
