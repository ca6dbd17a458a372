"""What the model server and the provider APIs exchange: plain values, no IO.

A :data:`Handler` takes one :class:`HttpRequest` and returns an
:class:`HttpResponse` (a whole body) or an :class:`EventStream` (a
``text/event-stream`` response: :class:`SseEvent` items, with :class:`Pause` and
:class:`Hang` where the script says so). The server (``acp_lite.models.server``)
parses HTTP, calls the handler, and writes what it returns; the provider modules
turn a script step into these values. So every provider format is tested without
a socket, and the server without a provider.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, Awaitable, Callable, Iterable, Mapping
from typing import TypeAlias

import attrs

__all__ = [
    "Answer",
    "AnyHandler",
    "AsyncEventStream",
    "AsyncHandler",
    "EventStream",
    "Handler",
    "Hang",
    "HttpRequest",
    "HttpResponse",
    "Pause",
    "SseEvent",
]


@attrs.frozen
class HttpRequest:
    """One request as the server read it. ``path`` is without the query string,
    ``query`` its decoded parameters (last value wins); header names are lower case."""

    method: str
    path: str
    query: Mapping[str, str] = attrs.field(factory=dict)
    headers: tuple[tuple[str, str], ...] = ()
    body: bytes = b""

    def header(self, name: str) -> str | None:
        """The last value of header ``name`` (any case), or ``None``."""
        name = name.lower()
        found = None
        for key, value in self.headers:
            if key == name:
                found = value
        return found


@attrs.frozen
class HttpResponse:
    """A whole response: status, headers (``content-length`` is the server's) and body.
    ``delay``: seconds the server waits before it answers (a scripted slow model)."""

    status: int
    body: bytes = b""
    headers: tuple[tuple[str, str], ...] = (("content-type", "application/json"),)
    delay: float = 0.0


@attrs.frozen
class SseEvent:
    """One server-sent event: ``data`` (one or more lines) and an optional ``event`` name."""

    data: str
    event: str | None = None

    def encode(self) -> bytes:
        """The event as written on the wire (``event:`` / ``data:`` lines, a blank line)."""
        lines = [f"event: {self.event}"] if self.event is not None else []
        lines.extend(f"data: {line}" for line in self.data.split("\n"))
        return ("\n".join(lines) + "\n\n").encode("utf-8")


@attrs.frozen
class Pause:
    """Wait ``seconds`` before the next item of the stream (a scripted delay)."""

    seconds: float


@attrs.frozen
class Hang:
    """Send nothing more and keep the connection open until the client goes away
    (a scripted hang)."""


StreamItem: TypeAlias = SseEvent | Pause | Hang


@attrs.frozen
class EventStream:
    """A ``text/event-stream`` response: ``items`` in order (``Pause`` / ``Hang``
    are the server's to carry out, not written)."""

    items: Iterable[StreamItem]
    status: int = 200
    headers: tuple[tuple[str, str], ...] = (
        ("content-type", "text/event-stream"),
        ("cache-control", "no-cache"),
    )


@attrs.frozen
class AsyncEventStream:
    """An :class:`EventStream` whose items come from an async iterable: what an async
    handler returns for a stream it produces while it answers (a proxied upstream).
    The server closes the iterable (``aclose``) when the stream ends or the client
    goes away."""

    items: AsyncIterable[StreamItem]
    status: int = 200
    headers: tuple[tuple[str, str], ...] = (
        ("content-type", "text/event-stream"),
        ("cache-control", "no-cache"),
    )


Handler: TypeAlias = Callable[[HttpRequest], "HttpResponse | EventStream"]
"""What the server calls for each request (in the server's thread: it must not block)."""

Answer: TypeAlias = HttpResponse | EventStream | AsyncEventStream
"""Whatever a handler may answer."""

AsyncHandler: TypeAlias = Callable[[HttpRequest], Awaitable[Answer]]
"""A handler the server awaits (in its event loop: it may do IO the loop's way)."""

AnyHandler: TypeAlias = Callable[[HttpRequest], "Answer | Awaitable[Answer]"]
"""What the server runs: a :data:`Handler`, an :data:`AsyncHandler`, or one that
answers some requests at once and awaits others (the server awaits what is awaitable)."""
