"""Forwarding to a real provider and recording what it answers (trio and h11).

:class:`RecordingModel` is an async handler for :mod:`acp_lite.models.server`: each
request goes on to the :class:`Upstream` (``https://api.openai.com``,
``https://api.anthropic.com``, ``https://generativelanguage.googleapis.com``, or
any ``http(s)://host[:port][/prefix]``), its headers as the agent sent them (the
agent's own key goes upstream; it never reaches the cassette: see
:class:`~acp_lite.models.cassette.Redaction`), and the answer comes back to the
agent as it arrives: a ``text/event-stream`` event by event, anything else whole.
:meth:`RecordingModel.cassette` is what was recorded.

The HTTP client is h11 over a trio TCP stream (TLS: ``trio.SSLStream`` with
``ssl.create_default_context()``), one connection per request: the ``models``
extra needs nothing more. ``accept-encoding`` is sent as ``identity`` (a stream
must be readable as it comes, and a cassette readable at all).

An upstream that cannot be reached gets the agent a provider-style 502 (504 when it
does not answer in time) and a failure :meth:`RecordingModel.check` reports; a
stream the upstream breaks off is cut short for the agent too (recorded as
truncated, and a failure); a client that leaves mid-stream closes the upstream
connection (recorded as truncated, no failure: the agent chose to leave).
"""

from __future__ import annotations

import logging
import ssl
import urllib.parse
from collections.abc import AsyncGenerator, AsyncIterator

import attrs
import trio

from acp_lite.models.cassette import (
    HOP_BY_HOP,
    Body,
    CassetteRequest,
    CassetteResponse,
    Interaction,
    ModelCassette,
    Redaction,
    SseParser,
)
from acp_lite.models.http import Answer, AsyncEventStream, HttpRequest, HttpResponse, SseEvent
from acp_lite.models.replay import ReplayModel, recorded_request
from acp_lite.models.scripted import RecordedRequest, RequestBook, provider_error

try:
    import h11
except ImportError as _missing:
    raise ImportError(
        "acp_lite.models.upstream needs h11, which the models extra installs: "
        "pip install 'acp-lite[models]'"
    ) from _missing

__all__ = [
    "DEFAULT_CONNECT_TIMEOUT",
    "DEFAULT_READ_TIMEOUT",
    "RecordingModel",
    "Upstream",
]

log = logging.getLogger("acp_lite.models")

DEFAULT_CONNECT_TIMEOUT = 10.0
"""Seconds to connect to the upstream (TLS handshake included)."""
DEFAULT_READ_TIMEOUT = 300.0
"""Seconds the upstream may stay silent: before its response head, and between two
chunks of its body (a model may think a long while before its first token)."""

_RECEIVE_SIZE = 65536
#: Request headers not forwarded: the framing (h11 makes its own), the host the
#: agent was pointed at (the upstream's goes instead), ``expect`` (the body is here
#: already: the server answered the agent's 100-continue) and ``accept-encoding``
#: (replaced by ``identity``).
_NOT_FORWARDED = HOP_BY_HOP | {"host", "content-length", "accept-encoding", "expect"}
#: Response headers not passed back: the framing (the server makes its own).
_NOT_PASSED_BACK = HOP_BY_HOP | {"content-length"}


class _UpstreamFailure(Exception):
    """The upstream could not be reached, or broke the exchange; ``status`` is what
    the agent gets for it (502, 504 for a timeout). It never leaves this module: the
    recorder answers it and remembers it as a failure."""

    def __init__(self, message: str, status: int = 502) -> None:
        super().__init__(message)
        self.status = status


def _positive(_: object, attribute: attrs.Attribute[float], value: float) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
        raise ValueError(f"{attribute.name}= must be a positive number, not {value!r}")


@attrs.frozen
class Upstream:
    """Where requests go: ``url`` is ``http(s)://host[:port][/prefix]`` (the prefix
    is put before each request's path)."""

    url: str
    connect_timeout: float = attrs.field(default=DEFAULT_CONNECT_TIMEOUT, validator=_positive)
    read_timeout: float = attrs.field(default=DEFAULT_READ_TIMEOUT, validator=_positive)

    def __attrs_post_init__(self) -> None:
        parts = urllib.parse.urlsplit(self.url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(
                f"an upstream is an http:// or https:// URL with a host, not {self.url!r}"
            )
        if parts.query or parts.fragment:
            raise ValueError(f"an upstream URL has no query or fragment: {self.url!r}")
        try:
            parts.port  # noqa: B018  # raises on a bad port
        except ValueError as exc:
            raise ValueError(f"upstream {self.url!r}: {exc}") from None

    @property
    def tls(self) -> bool:
        return urllib.parse.urlsplit(self.url).scheme == "https"

    @property
    def host(self) -> str:
        return urllib.parse.urlsplit(self.url).hostname or ""

    @property
    def port(self) -> int:
        return urllib.parse.urlsplit(self.url).port or (443 if self.tls else 80)

    def target(self, request: HttpRequest) -> str:
        """The request target sent upstream: prefix, path, query."""
        prefix = urllib.parse.urlsplit(self.url).path.rstrip("/")
        path = urllib.parse.quote(request.path, safe="/:@!$&'()*+,;=-._~")
        query = urllib.parse.urlencode(dict(request.query))
        return f"{prefix}{path}?{query}" if query else f"{prefix}{path}"

    def host_header(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        default = 443 if self.tls else 80
        return host if self.port == default else f"{host}:{self.port}"


class _Exchange:
    """One request to the upstream on its own connection: :meth:`open` sends it and
    reads the response head; :meth:`chunks` the body; :meth:`aclose` ends it."""

    def __init__(self, upstream: Upstream) -> None:
        self.upstream = upstream
        self.conn = h11.Connection(h11.CLIENT)
        self.stream: trio.abc.Stream | None = None
        self.status = 0
        self.headers: tuple[tuple[str, str], ...] = ()

    async def open(self, request: HttpRequest) -> None:
        up = self.upstream
        try:
            with trio.fail_after(up.connect_timeout):
                stream: trio.abc.Stream = await trio.open_tcp_stream(up.host, up.port)
                if up.tls:
                    context = ssl.create_default_context()
                    stream = trio.SSLStream(
                        stream, context, server_hostname=up.host, https_compatible=True
                    )
                    await stream.do_handshake()
        except trio.TooSlowError:
            raise _UpstreamFailure(
                f"cannot connect to the upstream {up.url} within {up.connect_timeout} s", 504
            ) from None
        except (OSError, trio.BrokenResourceError, ssl.SSLError) as exc:
            # trio's BrokenResourceError carries the TLS failure as its cause.
            reason = exc.__cause__ if exc.__cause__ is not None and not str(exc) else exc
            raise _UpstreamFailure(f"cannot connect to the upstream {up.url}: {reason}") from None
        self.stream = stream
        headers = [("host", up.host_header())]
        headers += [(k, v) for k, v in request.headers if k.lower() not in _NOT_FORWARDED]
        headers.append(("accept-encoding", "identity"))
        if request.body or request.method in ("POST", "PUT", "PATCH"):
            headers.append(("content-length", str(len(request.body))))
        try:
            data = self.conn.send(
                h11.Request(method=request.method, target=up.target(request), headers=headers)
            )
            data += self.conn.send(h11.Data(data=request.body)) if request.body else b""
            data += self.conn.send(h11.EndOfMessage())
        except h11.LocalProtocolError as exc:
            raise _UpstreamFailure(f"cannot forward the request: {exc}") from None
        await self._send(data)
        event = await self._next()
        while isinstance(event, h11.InformationalResponse):
            event = await self._next()
        if not isinstance(event, h11.Response):
            raise _UpstreamFailure(f"the upstream {up.url} closed the connection without answering")
        self.status = event.status_code
        self.headers = tuple((k.decode("latin-1"), v.decode("latin-1")) for k, v in event.headers)

    async def _send(self, data: bytes) -> None:
        assert self.stream is not None
        try:
            with trio.fail_after(self.upstream.read_timeout):
                await self.stream.send_all(data)
        except trio.TooSlowError:
            raise _UpstreamFailure(
                f"the upstream {self.upstream.url} did not take the request", 504
            ) from None
        except (OSError, trio.BrokenResourceError) as exc:
            raise _UpstreamFailure(
                f"sending to the upstream {self.upstream.url} failed: {exc}"
            ) from None

    async def _next(self) -> h11.Event:
        assert self.stream is not None
        while True:
            try:
                event = self.conn.next_event()
            except h11.RemoteProtocolError as exc:
                raise _UpstreamFailure(
                    f"the upstream {self.upstream.url} broke HTTP: {exc}"
                ) from None
            if event is not h11.NEED_DATA:
                assert isinstance(event, h11.Event)
                return event
            try:
                with trio.fail_after(self.upstream.read_timeout):
                    data = await self.stream.receive_some(_RECEIVE_SIZE)
            except trio.TooSlowError:
                raise _UpstreamFailure(
                    f"the upstream {self.upstream.url} was silent for "
                    f"{self.upstream.read_timeout} s",
                    504,
                ) from None
            except (OSError, trio.BrokenResourceError) as exc:
                raise _UpstreamFailure(
                    f"reading from the upstream {self.upstream.url}: {exc}"
                ) from None
            self.conn.receive_data(bytes(data))

    async def chunks(self) -> AsyncIterator[bytes]:
        """The body as it arrives; ``_UpstreamFailure`` when it breaks off."""
        while True:
            event = await self._next()
            if isinstance(event, h11.Data):
                yield bytes(event.data)
            elif isinstance(event, h11.EndOfMessage):
                return
            else:
                raise _UpstreamFailure(f"the upstream {self.upstream.url} ended its answer early")

    async def aclose(self) -> None:
        if self.stream is not None:
            await trio.aclose_forcefully(self.stream)


class RecordingModel(RequestBook):
    """An async handler that forwards each request to ``upstream`` and records the
    exchange (see the module docstring). With ``replay`` (``new_episodes``), a
    request the replay can answer is answered from it and not forwarded; the
    cassette then holds the replay's interactions and the new ones after them.

    Thread-safe for readers: the server's trio thread records, a test reads
    :attr:`requests` under the same lock.
    """

    def __init__(
        self,
        upstream: Upstream | str,
        *,
        redaction: Redaction | None = None,
        name: str = "model recorder",
        replay: ReplayModel | None = None,
    ) -> None:
        super().__init__()
        self.upstream = upstream if isinstance(upstream, Upstream) else Upstream(upstream)
        self.redaction = redaction if redaction is not None else Redaction()
        self.name = name
        self.replay = replay
        self._slots: list[Interaction | None] = []  # in the order the requests came

    @property
    def unmatched(self) -> tuple[RecordedRequest, ...]:
        """Nothing: every request is forwarded (the failures are upstream's)."""
        return ()

    def check(self, *, all_steps_used: bool = False) -> None:
        """Raise ``AssertionError`` listing the failures, each request shown."""
        problems = list(self.failures)
        if problems:
            head = f"{self.name}: {len(problems)} problem(s)"
            raise AssertionError("\n\n".join([head, *problems]))

    def cassette(self) -> ModelCassette:
        """What was recorded (after the replay's interactions, with ``replay``)."""
        with self._lock:
            recorded = tuple(i for i in self._slots if i is not None)
        before = self.replay.cassette.interactions if self.replay is not None else ()
        return ModelCassette(interactions=(*before, *recorded), upstream=self.upstream.url)

    async def __call__(self, request: HttpRequest) -> Answer:
        """Forward one request (the :data:`~acp_lite.models.http.AsyncHandler`)."""
        asked = self.redaction.request(request)
        if self.replay is not None and (found := self.replay.lookup(asked)) is not None:
            index, interaction = found
            with self._lock:
                status = interaction.response.status
                self._requests.append(
                    recorded_request(asked, index=len(self._requests), step=index, status=status)
                )
            return interaction.response.answer()
        with self._lock:
            n = len(self._requests)
            slot = len(self._slots)
            self._slots.append(None)
            self._requests.append(recorded_request(asked, index=n, step=None, status=0))
        exchange = _Exchange(self.upstream)
        try:
            await exchange.open(request)
        except _UpstreamFailure as exc:
            await exchange.aclose()
            return self._failed(request, n, exc)
        except BaseException:
            await exchange.aclose()
            raise
        self._status(n, exchange.status)
        headers = tuple((k, v) for k, v in exchange.headers if k.lower() not in _NOT_PASSED_BACK)
        content_type = dict((k.lower(), v) for k, v in exchange.headers).get("content-type", "")
        if content_type.lower().startswith("text/event-stream"):
            items = _Relay(self._stream(exchange, asked, request, n, slot), exchange)
            return AsyncEventStream(items, exchange.status, headers)
        chunks: list[bytes] = []
        try:
            async for chunk in exchange.chunks():
                chunks.append(chunk)
        except _UpstreamFailure as exc:
            return self._failed(request, n, exc)
        finally:
            await exchange.aclose()
        body = b"".join(chunks)
        table = self.redaction.table_for(request)
        response = CassetteResponse(
            status=exchange.status,
            headers=self.redaction.response_headers(exchange.headers),
            body=self.redaction.body(Body.of(body), table),
        )
        self._store(slot, Interaction(asked, response))
        return HttpResponse(exchange.status, body, headers)

    async def _stream(
        self, exchange: _Exchange, asked: CassetteRequest, request: HttpRequest, n: int, slot: int
    ) -> AsyncGenerator[SseEvent, None]:
        parser = SseParser()
        events: list[SseEvent] = []
        ended = False
        try:
            async for chunk in exchange.chunks():
                for event in parser.feed(chunk):
                    events.append(event)
                    yield event
            for event in parser.close():
                events.append(event)
                yield event
            ended = True
        except _UpstreamFailure as exc:
            self._failed(request, n, exc, answered=True)
            raise
        finally:
            if not ended:
                log.info("the stream of %s %s ended early", request.method, request.path)
            table = self.redaction.table_for(request)
            response = CassetteResponse(
                status=exchange.status,
                headers=self.redaction.response_headers(exchange.headers),
                events=tuple(self.redaction.event(e, table) for e in events),
                truncated=not ended,
            )
            # Stored before the close: under cancellation (the client left) the
            # close's await is where the Cancelled goes on.
            self._store(slot, Interaction(asked, response))
            await exchange.aclose()

    def _status(self, n: int, status: int) -> None:
        with self._lock:
            self._requests[n] = attrs.evolve(self._requests[n], status=status)

    def _store(self, slot: int, interaction: Interaction) -> None:
        with self._lock:
            self._slots[slot] = interaction

    def _failed(
        self, request: HttpRequest, n: int, error: _UpstreamFailure, *, answered: bool = False
    ) -> HttpResponse:
        why = str(error)
        log.warning("%s: %s (%s %s)", self.name, why, request.method, request.path)
        answer = provider_error(request, error.status, f"acp_lite {self.name}: {why}")
        with self._lock:
            if not answered:
                self._requests[n] = attrs.evolve(self._requests[n], status=answer.status)
            self._failures.append((why, self._requests[n]))
        return answer


class _Relay:
    """The recorder's stream as the server iterates it; :meth:`aclose` also closes
    the upstream connection of a stream the server never began (its client left
    before the response head): an async generator not started runs no ``finally``."""

    def __init__(self, events: AsyncGenerator[SseEvent, None], exchange: _Exchange) -> None:
        self.events = events
        self.exchange = exchange

    def __aiter__(self) -> _Relay:
        return self

    async def __anext__(self) -> SseEvent:
        return await anext(self.events)

    async def aclose(self) -> None:
        try:
            await self.events.aclose()
        finally:
            await self.exchange.aclose()
