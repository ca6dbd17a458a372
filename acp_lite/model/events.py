"""The event log: every ``session/update`` received, in order, with its raw payload.

The log stores its columns in parallel arrays rather than one object per update:
a retained Python object per update would make the cyclic garbage collector walk
every one of them again and again, which costs more than the rest of applying a
chunk. :class:`Event` objects are built on access and are cheap views.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator, Sequence
from typing import Any, overload

import attrs

from acp_lite.protocol import converter


@attrs.define(unsafe_hash=True)
class Event:
    """One received ``session/update``: its decoded ``update`` and the ``raw`` payload.

    ``raw`` is the ``update`` object as received (the value of ``params.update``);
    when the connection did not pass it, it is re-encoded from ``update`` on first
    access. ``time`` is ``time.monotonic()`` at apply; ``replayed`` marks updates
    received during a ``session/resume`` history replay. Events are views built on
    access: two views of the same logged update compare equal.
    """

    index: int
    update: Any = attrs.field(hash=False)
    replayed: bool
    time: float
    _log: EventLog | None = attrs.field(default=None, repr=False, eq=False)

    @property
    def raw(self) -> dict[str, Any]:
        """The raw ``update`` payload (a dict), exactly as received when known."""
        if self._log is None:
            return _encode(self.update)
        return self._log.raw(self.index)

    @property
    def tag(self) -> str:
        """The ``sessionUpdate`` tag of this update."""
        return str(getattr(self.update, "session_update", ""))


def _encode(update: Any) -> dict[str, Any]:
    data = converter.unstructure(update)
    return data if isinstance(data, dict) else {"value": data}


class EventLog(Sequence[Event]):
    """Append-only, indexable log of events (read-only for everyone but the model)."""

    __slots__ = ("_raws", "_replayed", "_times", "_updates")

    def __init__(self) -> None:
        self._updates: list[Any] = []
        self._raws: list[dict[str, Any] | None] = []
        self._times = array("d")
        self._replayed = bytearray()

    def append(self, update: Any, raw: dict[str, Any] | None, time: float, replayed: bool) -> int:
        """Log one update; return its index."""
        index = len(self._updates)
        self._updates.append(update)
        self._raws.append(raw)
        self._times.append(time)
        self._replayed.append(replayed)
        return index

    def raw(self, index: int) -> dict[str, Any]:
        """The raw payload of event ``index`` (re-encoded once if it was not kept)."""
        raw = self._raws[index]
        if raw is None:
            raw = self._raws[index] = _encode(self._updates[index])
        return raw

    def kept_raw(self, index: int) -> dict[str, Any] | None:
        """The raw payload as passed to ``apply`` (``None`` when it was not)."""
        return self._raws[index]

    def set_raw(self, index: int, raw: dict[str, Any]) -> None:
        self._raws[index] = raw

    def update(self, index: int) -> Any:
        """The decoded update of event ``index``."""
        return self._updates[index]

    def __len__(self) -> int:
        return len(self._updates)

    @overload
    def __getitem__(self, index: int) -> Event: ...

    @overload
    def __getitem__(self, index: slice) -> list[Event]: ...

    def __getitem__(self, index: int | slice) -> Event | list[Event]:
        if isinstance(index, slice):
            return [self.event(i) for i in range(*index.indices(len(self._updates)))]
        if index < 0:
            index += len(self._updates)
        if not 0 <= index < len(self._updates):
            raise IndexError(f"event index {index} out of range (0..{len(self._updates) - 1})")
        return self.event(index)

    def __iter__(self) -> Iterator[Event]:
        for i in range(len(self._updates)):
            yield self.event(i)

    def event(self, i: int) -> Event:
        """Event ``i`` (no bounds normalisation: ``i`` must be a valid index)."""
        return Event(i, self._updates[i], bool(self._replayed[i]), self._times[i], self)

    def __repr__(self) -> str:
        return f"<EventLog {len(self._updates)} events>"


__all__ = ["Event", "EventLog"]
