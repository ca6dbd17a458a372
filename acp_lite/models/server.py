"""The HTTP server of the scripted model provider: trio and h11, bytes only.

It parses HTTP/1.1 (h11), calls a :data:`~acp_lite.models.http.Handler` for each
request and writes what the handler returns: an :class:`~acp_lite.models.http.HttpResponse`
with a ``content-length``, or an :class:`~acp_lite.models.http.EventStream` written
event by event as it is produced (chunked, as SSE clients read it), carrying out its
``Pause`` and ``Hang`` items. What a path means (and a provider-style 404) is the
handler's business. A handler may also be async (an
:data:`~acp_lite.models.http.AsyncHandler`: what it returns is awaited), and answer
an :class:`~acp_lite.models.http.AsyncEventStream`, whose items it produces in the
server's event loop (the upstream proxy of :mod:`acp_lite.models.upstream`).

Entry points, from the bottom up: :func:`handle_connection` serves one connection over
any trio stream (so it is tested over memory streams on trio's mock clock);
:func:`serve_models` listens on ``127.0.0.1`` (a free port by default) and serves each
connection in its own task; :func:`open_model_server` runs that for the body of an
``async with``; :func:`run_in_thread` runs it in a background thread for blocking code
and pytest fixtures.

Bad input never stops the server: a malformed request gets a 400 (a body over
:attr:`ServerLimits.max_body` a 413, a request that stalls a 408) and its connection is
closed; a handler that raises gets a logged 500 with a JSON body naming the error; a
client that goes away mid-stream ends that stream (logged at INFO). Everything is
logged on the ``acp_lite.models`` logger.

h11 is the ``acp-lite[models]`` extra; nothing of the client imports this module.
"""

from __future__ import annotations

import contextlib
import functools
import http
import inspect
import json
import logging
import threading
import urllib.parse
from collections.abc import AsyncIterator, Iterable, Iterator
from typing import Any

import attrs
import trio

from acp_lite.models.http import (
    Answer,
    AnyHandler,
    AsyncEventStream,
    EventStream,
    Hang,
    HttpRequest,
    HttpResponse,
    Pause,
    SseEvent,
    StreamItem,
)

try:
    import h11
except ImportError as _missing:
    raise ImportError(
        "acp_lite.models.server needs h11, which the models extra installs: "
        "pip install 'acp-lite[models]'"
    ) from _missing

__all__ = [
    "DEFAULT_LIMITS",
    "DEFAULT_START_TIMEOUT",
    "DEFAULT_STOP_TIMEOUT",
    "ModelServer",
    "ServerLimits",
    "handle_connection",
    "open_model_server",
    "run_in_thread",
    "serve_models",
]

log = logging.getLogger("acp_lite.models")

_RECEIVE_SIZE = 65536
_END = object()  # the end of an event stream's items
_LINGER = 1.0
"""Seconds a connection the server closes keeps reading (and dropping) what the
client still sends, so that closing with unread bytes does not reset the connection
before the client has read the error response."""

DEFAULT_START_TIMEOUT = 10.0
"""Seconds :func:`run_in_thread` waits for the server to listen."""
DEFAULT_STOP_TIMEOUT = 5.0
"""Seconds :func:`run_in_thread` waits for the server thread to end."""


def _positive(_: object, attribute: attrs.Attribute[Any], value: float) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
        raise ValueError(f"{attribute.name}= must be a positive number, not {value!r}")


@attrs.frozen
class ServerLimits:
    """What one connection may take: ``max_body`` bytes of request body, ``read_timeout``
    seconds from the first byte of a request to its end, ``idle_timeout`` seconds of
    silence on a kept-alive connection before the server closes it."""

    max_body: int = attrs.field(default=16 * 1024 * 1024, validator=_positive)
    read_timeout: float = attrs.field(default=30.0, validator=_positive)
    idle_timeout: float = attrs.field(default=60.0, validator=_positive)


DEFAULT_LIMITS = ServerLimits()
"""The limits the server runs with unless told otherwise."""


@attrs.frozen
class ModelServer:
    """Where a running server listens."""

    host: str
    port: int

    @property
    def url(self) -> str:
        """``http://HOST:PORT``, the base URL to give a provider client."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"


class _Refuse(Exception):
    """A request the server answers itself (``status``) and then closes the connection."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class _Gone(Exception):
    """The client closed the connection (or reset it)."""


def _peer(stream: trio.abc.Stream) -> str:
    sock = getattr(stream, "socket", None)
    try:
        host, port = sock.getpeername()[:2]  # type: ignore[union-attr]
    except (AttributeError, OSError, TypeError, ValueError):
        return "a client"
    return f"{host}:{port}"


def _error_body(kind: str, message: str) -> bytes:
    # Shaped so both OpenAI's and Anthropic's clients find a message in it.
    return json.dumps({"type": "error", "error": {"type": kind, "message": message}}).encode()


def _reason(status: int) -> bytes:
    try:
        return http.HTTPStatus(status).phrase.encode("ascii")
    except ValueError:
        return b""


class _Connection:
    """One connection: the stream, its h11 state machine, the handler and the limits."""

    def __init__(self, stream: trio.abc.Stream, handler: AnyHandler, limits: ServerLimits) -> None:
        self.stream = stream
        self.handler = handler
        self.limits = limits
        self.conn = h11.Connection(h11.SERVER)
        self.peer = _peer(stream)
        self.begun = False
        self.deadline = 0.0

    async def send(self, event: h11.Event) -> None:
        data = self.conn.send(event)
        if data:
            try:
                await self.stream.send_all(data)
            except (trio.BrokenResourceError, trio.ClosedResourceError) as exc:
                raise _Gone from exc

    async def receive(self) -> bytes:
        try:
            data = await self.stream.receive_some(_RECEIVE_SIZE)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            return b""
        return data if isinstance(data, bytes) else bytes(data)

    # --- reading -------------------------------------------------------------------

    async def next_event(self) -> h11.Event:
        """The next h11 event, reading until the deadline: ``_Refuse`` on a bad request,
        ``TimeoutError`` at the deadline (see :meth:`read_request`)."""
        while True:
            try:
                event = self.conn.next_event()
            except h11.RemoteProtocolError as exc:
                raise _Refuse(exc.error_status_hint, f"bad request: {exc}") from exc
            if isinstance(event, h11.Event):
                return event
            # PAUSED comes only after a whole request, and this runs only before one.
            assert event is h11.NEED_DATA, event
            if self.conn.they_are_waiting_for_100_continue:
                await self.send(h11.InformationalResponse(status_code=100, headers=[]))
            with trio.move_on_at(self.deadline):
                data = await self.receive()
                if data and not self.begun:
                    self.begin()
                self.conn.receive_data(data)
                continue
            raise TimeoutError

    def begin(self) -> None:
        """A request has begun: it must be whole within the read timeout."""
        self.begun = True
        self.deadline = trio.current_time() + self.limits.read_timeout

    async def read_request(self) -> HttpRequest | None:
        """The next whole request, or ``None`` when the client is done with the connection
        (it closed it, or left it idle for ``idle_timeout``)."""
        self.begun = False
        self.deadline = trio.current_time() + self.limits.idle_timeout
        if self.conn.trailing_data[0]:
            self.begin()  # pipelined: already begun
        try:
            event = await self.next_event()
        except TimeoutError:
            if self.begun:
                raise _Refuse(408, "the request did not arrive in time") from None
            log.debug(
                "closing a connection from %s idle for %s s", self.peer, self.limits.idle_timeout
            )
            return None
        if isinstance(event, h11.ConnectionClosed):
            return None
        if not isinstance(event, h11.Request):  # h11's first event is a Request
            raise _Refuse(400, f"bad request: unexpected {type(event).__name__}")
        length = _header(event.headers, b"content-length")
        if length is not None and int(length) > self.limits.max_body:
            raise _Refuse(413, f"the request body is over {self.limits.max_body} bytes")
        chunks: list[bytes] = []
        size = 0
        while True:
            try:
                part = await self.next_event()
            except TimeoutError:
                raise _Refuse(408, "the request body did not arrive in time") from None
            if isinstance(part, h11.Data):
                size += len(part.data)
                if size > self.limits.max_body:
                    raise _Refuse(413, f"the request body is over {self.limits.max_body} bytes")
                chunks.append(bytes(part.data))
            elif isinstance(part, h11.EndOfMessage):
                break
            else:  # ConnectionClosed mid-body: h11 raises before this, but be safe
                raise _Gone
        return _request(event, b"".join(chunks))

    # --- writing -------------------------------------------------------------------

    async def call_handler(self, request: HttpRequest) -> Answer:
        try:
            answer = self.handler(request)
            response = await answer if inspect.isawaitable(answer) else answer
            if not isinstance(response, HttpResponse | EventStream | AsyncEventStream):
                raise TypeError(
                    "a handler returns an HttpResponse, an EventStream or an "
                    f"AsyncEventStream, not {response!r}"
                )
            # Built here so a status or header h11 refuses is the handler's 500 too.
            _head(response, 0 if isinstance(response, HttpResponse) else None)
        except Exception as exc:
            log.exception("the handler failed on %s %s", request.method, request.path)
            return HttpResponse(
                500, _error_body("handler_error", f"the handler raised {type(exc).__name__}: {exc}")
            )
        return response

    async def respond(self, request: HttpRequest) -> None:
        response = await self.call_handler(request)
        log.debug("%s %s %s -> %s", self.peer, request.method, request.path, response.status)
        bodiless = request.method == "HEAD" or response.status in (204, 304)
        if isinstance(response, HttpResponse):
            if response.delay > 0:
                await trio.sleep(response.delay)
            await self.send(_head(response, 0 if bodiless else len(response.body)))
            if response.body and not bodiless:
                await self.send(h11.Data(data=response.body))
            await self.send(h11.EndOfMessage())
            return
        if isinstance(response, AsyncEventStream):
            await self.stream_async(response, request, bodiless=bodiless)
            await self.send(h11.EndOfMessage())
            return
        await self.send(_head(response, None))
        if not bodiless:
            await self.stream_items(response.items, request)
        await self.send(h11.EndOfMessage())

    async def stream_items(self, items: Iterable[StreamItem], request: HttpRequest) -> None:
        iterator = iter(items)
        try:
            while True:
                try:
                    item: object = next(iterator, _END)
                    if item is _END:
                        return
                    if not isinstance(item, SseEvent | Pause | Hang):
                        raise TypeError(
                            f"an event stream holds SseEvent, Pause, Hang, not {item!r}"
                        )
                except Exception:
                    # Headers are out: end the connection without the last chunk, so the
                    # client sees a truncated stream rather than a complete one.
                    log.exception("the event stream of %s %s failed", request.method, request.path)
                    raise _Gone from None
                await self.write_item(item)
        finally:
            close = getattr(iterator, "close", None)
            if close is not None:
                close()

    async def stream_async(
        self, response: AsyncEventStream, request: HttpRequest, *, bodiless: bool
    ) -> None:
        """Write an async stream's head and items, watching the client meanwhile: a
        producer may be silent for long (an upstream model thinking), and a client
        that leaves must end it then, not at the next write. The items are closed
        whatever happens (the head not sent included)."""
        iterator = aiter(response.items)
        gone = False
        try:
            await self.send(_head(response, None))
            if bodiless:
                return
            async with trio.open_nursery() as nursery:

                async def watch() -> None:
                    nonlocal gone
                    while data := await self.receive():
                        self.conn.receive_data(data)  # pipelined: for the next cycle
                    gone = True
                    nursery.cancel_scope.cancel()

                nursery.start_soon(watch)
                try:
                    await self.pump_async(iterator, request)
                except _Gone:
                    gone = True
                nursery.cancel_scope.cancel()
        finally:
            aclose = getattr(iterator, "aclose", None)
            if aclose is not None:
                # Shielded: the producer's cleanup (closing an upstream, recording
                # what it got) must run even when the server is being cancelled.
                with trio.CancelScope(shield=True), trio.move_on_after(_LINGER):
                    await aclose()
        if gone:
            raise _Gone

    async def pump_async(self, iterator: AsyncIterator[StreamItem], request: HttpRequest) -> None:
        while True:
            try:
                item: object = await anext(iterator, _END)
                if item is _END:
                    return
                if not isinstance(item, SseEvent | Pause | Hang):
                    raise TypeError(f"an event stream holds SseEvent, Pause, Hang, not {item!r}")
            except Exception:
                # As in stream_items: a truncated stream, not a complete one.
                log.exception("the event stream of %s %s failed", request.method, request.path)
                raise _Gone from None
            if isinstance(item, Hang):
                log.debug("hanging a stream to %s as its producer says", self.peer)
                await trio.sleep_forever()  # the watcher ends it when the client leaves
            await self.write_item(item)

    async def write_item(self, item: SseEvent | Pause | Hang) -> None:
        if isinstance(item, SseEvent):
            await self.send(h11.Data(data=item.encode()))
        elif isinstance(item, Pause):
            await trio.sleep(max(0.0, item.seconds))
        else:
            await self.hang()

    async def hang(self) -> None:
        """Write nothing more; wait for the client to go away (or the server to stop)."""
        log.debug("hanging a stream to %s as scripted", self.peer)
        while await self.receive():
            pass  # whatever the client sends now is dropped: this response never ends
        raise _Gone

    async def refuse(self, refusal: _Refuse) -> None:
        log.info("answering %s to %s: %s", refusal.status, self.peer, refusal.message)
        if self.conn.our_state not in (h11.IDLE, h11.SEND_RESPONSE):
            return
        body = _error_body("invalid_request_error", refusal.message)
        head = HttpResponse(refusal.status, body, (("content-type", "application/json"),))
        with contextlib.suppress(_Gone, h11.LocalProtocolError):
            await self.send(_head(head, len(body), close=True))
            await self.send(h11.Data(data=body))
            await self.send(h11.EndOfMessage())

    async def linger_close(self) -> None:
        with trio.move_on_after(_LINGER):
            if isinstance(self.stream, trio.abc.HalfCloseableStream):
                with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError):
                    await self.stream.send_eof()
            while await self.receive():
                pass

    async def serve(self) -> None:
        while True:
            try:
                request = await self.read_request()
                if request is None:
                    return
                await self.respond(request)
            except _Refuse as refusal:
                await self.refuse(refusal)
                await self.linger_close()
                return
            except _Gone:
                log.info("%s went away before its response ended", self.peer)
                return
            if self.conn.our_state is not h11.DONE or self.conn.their_state is not h11.DONE:
                await self.linger_close()  # the client asked to close, or spoke HTTP/1.0
                return
            self.conn.start_next_cycle()


def _header(headers: Iterable[tuple[bytes, bytes]], name: bytes) -> bytes | None:
    found = None
    for key, value in headers:
        if key == name:
            found = value
    return found


def _request(event: h11.Request, body: bytes) -> HttpRequest:
    target = urllib.parse.urlsplit(event.target.decode("latin-1"))
    query = dict(urllib.parse.parse_qsl(target.query, keep_blank_values=True))
    headers = tuple((k.decode("latin-1"), v.decode("latin-1")) for k, v in event.headers)
    path = urllib.parse.unquote(target.path)
    return HttpRequest(event.method.decode("ascii"), path, query, headers, body)


def _head(response: Answer, length: int | None, *, close: bool = False) -> h11.Response:
    """The status line and headers; ``length`` is the body's (``None``: streamed)."""
    headers = [(k, v) for k, v in response.headers if k.lower() != "content-length"]
    if length is not None:
        headers.append(("content-length", str(length)))
    if close:
        headers.append(("connection", "close"))
    return h11.Response(
        status_code=response.status, headers=headers, reason=_reason(response.status)
    )


async def handle_connection(
    stream: trio.abc.Stream, handler: AnyHandler, limits: ServerLimits = DEFAULT_LIMITS
) -> None:
    """Serve HTTP/1.1 requests on ``stream`` (kept alive) until either side closes it,
    then close it. It never raises but trio's cancellation: every failure is logged
    and ends this connection only."""
    try:
        await _Connection(stream, handler, limits).serve()
    except Exception:  # a bug of this module: it must not take the server down
        log.exception("the connection from %s failed", _peer(stream))
    finally:
        await trio.aclose_forcefully(stream)


async def serve_models(
    handler: AnyHandler,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    limits: ServerLimits = DEFAULT_LIMITS,
    task_status: trio.TaskStatus[ModelServer] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Listen on ``host`` (an IP address) and ``port`` (0: a free one) and serve each
    connection in its own task until cancelled; ``task_status.started`` gets the
    :class:`ModelServer` once the port is listening."""
    serve = functools.partial(handle_connection, handler=handler, limits=limits)
    async with trio.open_nursery() as nursery:
        listeners = await nursery.start(functools.partial(trio.serve_tcp, serve, port, host=host))
        bound = listeners[0].socket.getsockname()
        log.debug("the model server listens on %s:%s", bound[0], bound[1])
        task_status.started(ModelServer(host, bound[1]))


@contextlib.asynccontextmanager
async def open_model_server(
    handler: AnyHandler,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    limits: ServerLimits = DEFAULT_LIMITS,
) -> AsyncIterator[ModelServer]:
    """Serve ``handler`` for the body of the ``async with`` (listening when it starts,
    stopped, connections and all, when it ends)."""
    async with trio.open_nursery() as nursery:
        server: ModelServer = await nursery.start(
            functools.partial(serve_models, handler, host=host, port=port, limits=limits)
        )
        try:
            yield server
        finally:
            nursery.cancel_scope.cancel()


class _Thread:
    """A ``trio.run`` of :func:`serve_models` in a daemon thread."""

    def __init__(self, handler: AnyHandler, host: str, port: int, limits: ServerLimits) -> None:
        self.serve = functools.partial(serve_models, handler, host=host, port=port, limits=limits)
        self.ready = threading.Event()
        self.server: ModelServer | None = None
        self.error: BaseException | None = None
        self.token: trio.lowlevel.TrioToken | None = None
        self.scope = trio.CancelScope()  # cancelled in the trio thread only
        self.lock = threading.Lock()
        self.stopping = False
        self.thread = threading.Thread(target=self.run, name="acp-lite-model-server", daemon=True)

    def run(self) -> None:
        try:
            trio.run(self.main)
        except BaseException as exc:
            while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
                exc = exc.exceptions[0]
            self.error = exc
        finally:
            self.ready.set()

    async def main(self) -> None:
        with self.lock:
            self.token = trio.lowlevel.current_trio_token()
            if self.stopping:  # stopped (a start timeout) before trio ran
                return
        with self.scope:
            async with trio.open_nursery() as nursery:
                self.server = await nursery.start(self.serve)
                self.ready.set()

    def stop(self) -> None:
        with self.lock:
            self.stopping = True
            token = self.token
        if token is not None:
            with contextlib.suppress(trio.RunFinishedError):
                token.run_sync_soon(self.scope.cancel)


@contextlib.contextmanager
def run_in_thread(
    handler: AnyHandler,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    limits: ServerLimits = DEFAULT_LIMITS,
    start_timeout: float = DEFAULT_START_TIMEOUT,
    stop_timeout: float = DEFAULT_STOP_TIMEOUT,
) -> Iterator[ModelServer]:
    """Serve ``handler`` from a background thread for the body of the ``with``: it
    listens when the body starts; on exit it is stopped and its thread joined (at most
    ``stop_timeout`` seconds: ``RuntimeError`` if it is still running)."""
    runner = _Thread(handler, host, port, limits)
    runner.thread.start()
    try:
        if not runner.ready.wait(start_timeout):
            raise RuntimeError(f"the model server did not start within {start_timeout} s")
        if runner.error is not None:
            raise runner.error
        assert runner.server is not None
        yield runner.server
    finally:
        runner.stop()
        runner.thread.join(stop_timeout)
        if runner.thread.is_alive():
            raise RuntimeError(f"the model server thread did not stop within {stop_timeout} s")
    if runner.error is not None:  # the server failed while the body ran
        raise runner.error
