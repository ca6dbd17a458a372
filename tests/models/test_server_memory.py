"""The model server's connection handling over trio memory streams, on the mock clock.

``handle_connection`` takes any trio stream, so what HTTP/1.1 and time do (keep-alive,
bodies, limits, timeouts, Pause, Hang, a client going away) is tested here without a
socket or a real delay; tests/models/test_server_socket.py runs real clients.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from typing import Any

import pytest
import trio
import trio.testing

from acp_lite.models import EventStream, Hang, HttpRequest, HttpResponse, Pause, SseEvent
from acp_lite.models.http import StreamItem
from acp_lite.models.server import ServerLimits, handle_connection

pytestmark = pytest.mark.trio

GET = b"GET /v1/models HTTP/1.1\r\nHost: x\r\n\r\n"


def post(path: str, body: bytes, *extra: str) -> bytes:
    head = [f"POST {path} HTTP/1.1", "Host: x", f"Content-Length: {len(body)}", *extra]
    return ("\r\n".join(head) + "\r\n\r\n").encode() + body


class Recorder:
    """A handler answering ``{"n": N}`` (the request's number) and keeping the requests."""

    def __init__(self) -> None:
        self.requests: list[HttpRequest] = []

    def __call__(self, request: HttpRequest) -> HttpResponse:
        self.requests.append(request)
        return HttpResponse(200, json.dumps({"n": len(self.requests)}).encode())


async def receive_all(stream: trio.abc.ReceiveStream) -> bytes:
    chunks = []
    while chunk := await stream.receive_some():
        chunks.append(chunk)
    return b"".join(chunks)


async def exchange(handler: Any, data: bytes, limits: ServerLimits | None = None) -> bytes:
    """Send ``data`` (then end of input), return all the server wrote until it closed."""
    client, server = trio.testing.memory_stream_pair()
    extra = {} if limits is None else {"limits": limits}
    async with trio.open_nursery() as nursery:
        nursery.start_soon(lambda: handle_connection(server, handler, **extra))
        await client.send_all(data)
        await client.send_eof()
        return await receive_all(client)


async def test_two_requests_share_a_kept_alive_connection() -> None:
    handler = Recorder()
    out = await exchange(handler, GET + post("/v1/messages", b'{"a": 1}'))
    first, second = out.split(b"HTTP/1.1 ")[1:]
    assert first.startswith(b"200 OK\r\n") and b"content-length: 8\r\n" in first
    assert first.endswith(b'\r\n\r\n{"n": 1}') and second.endswith(b'{"n": 2}')
    assert [(r.method, r.path, r.body) for r in handler.requests] == [
        ("GET", "/v1/models", b""),
        ("POST", "/v1/messages", b'{"a": 1}'),
    ]
    assert handler.requests[1].header("Content-Length") == "8"


async def test_path_is_decoded_and_split_from_the_query() -> None:
    handler = Recorder()
    target = "/v1beta/models/gemini%2D2:streamGenerateContent?alt=sse&key=a&key=b"
    await exchange(handler, post(target, b"{}"))
    (request,) = handler.requests
    assert request.path == "/v1beta/models/gemini-2:streamGenerateContent"
    assert request.query == {"alt": "sse", "key": "b"}


async def test_a_chunked_request_body_reaches_the_handler_whole() -> None:
    handler = Recorder()
    head = b"POST /v1/responses HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
    out = await exchange(handler, head + b'3\r\n{"a\r\n5\r\n": 1}\r\n0\r\n\r\n')
    assert out.startswith(b"HTTP/1.1 200 ")
    assert handler.requests[0].body == b'{"a": 1}'


async def test_expect_100_continue_is_answered_before_the_body() -> None:
    client, server = trio.testing.memory_stream_pair()
    handler = Recorder()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(handle_connection, server, handler)
        head = post("/v1/messages", b"{}", "Expect: 100-continue").removesuffix(b"{}")
        await client.send_all(head)
        assert await client.receive_some() == b"HTTP/1.1 100 \r\n\r\n"
        assert handler.requests == []
        await client.send_all(b"{}")
        await client.send_eof()
        assert (await receive_all(client)).startswith(b"HTTP/1.1 200 OK")
    assert handler.requests[0].body == b"{}"


@pytest.mark.parametrize(
    "data",
    [
        post("/v1/messages", b"x" * 11),
        b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n8\r\n12345678\r\n"
        b"8\r\n12345678\r\n0\r\n\r\n",
    ],
    ids=["content-length", "chunked"],
)
async def test_a_body_over_the_limit_gets_413_and_the_connection_ends(data: bytes) -> None:
    handler = Recorder()
    out = await exchange(handler, data + GET, ServerLimits(max_body=10))
    assert out.startswith(b"HTTP/1.1 413 Request Entity Too Large\r\n")
    assert b"connection: close\r\n" in out
    body = json.loads(out.split(b"\r\n\r\n", 1)[1])
    assert body["error"]["message"] == "the request body is over 10 bytes"
    assert out.count(b"HTTP/1.1") == 1 and handler.requests == []


async def test_garbage_gets_400_and_the_connection_ends(caplog: pytest.LogCaptureFixture) -> None:
    handler = Recorder()
    with caplog.at_level(logging.DEBUG, "acp_lite.models"):
        out = await exchange(handler, b"\x16\x03\x01\x02\x00garbage\r\n\r\n" + GET)
    assert out.startswith(b"HTTP/1.1 400 Bad Request\r\n")
    assert b"bad request" in out and out.count(b"HTTP/1.1") == 1 and handler.requests == []
    assert [r.levelname for r in caplog.records] == ["INFO"]


async def test_a_stalled_request_gets_408_at_the_read_timeout(autojump_clock: Any) -> None:
    client, server = trio.testing.memory_stream_pair()
    limits = ServerLimits(read_timeout=3.0, idle_timeout=100.0)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(handle_connection, server, Recorder(), limits)
        await trio.sleep(50.0)  # idle, but under the idle timeout
        await client.send_all(b"POST /v1/messages HTTP/1.1\r\nHost: x\r\n")
        start = trio.current_time()
        out = await receive_all(client)
        assert trio.current_time() - start == pytest.approx(3.0)
    assert out.startswith(b"HTTP/1.1 408 Request Timeout\r\n")


async def test_a_stalled_body_gets_408_too(autojump_clock: Any) -> None:
    client, server = trio.testing.memory_stream_pair()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(handle_connection, server, Recorder(), ServerLimits(read_timeout=2.0))
        await client.send_all(post("/v1/messages", b"12345")[:-2])
        out = await receive_all(client)
        assert trio.current_time() == pytest.approx(2.0)
    assert out.startswith(b"HTTP/1.1 408 ")


async def test_an_idle_connection_is_closed_at_the_idle_timeout(autojump_clock: Any) -> None:
    client, server = trio.testing.memory_stream_pair()
    handler = Recorder()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(handle_connection, server, handler, ServerLimits(idle_timeout=7.0))
        await client.send_all(GET)
        answer, _ = await read_events(client, b'{"n": 1}')
        assert answer.startswith(b"HTTP/1.1 200 ")
        answered = trio.current_time()
        assert await receive_all(client) == b""  # closed without a word
        assert trio.current_time() - answered == pytest.approx(7.0)


async def test_a_handler_that_raises_gets_500_and_the_connection_serves_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    calls: list[str] = []

    def handler(request: HttpRequest) -> HttpResponse:
        calls.append(request.path)
        if request.path == "/boom":
            raise ValueError("no script step left")
        return HttpResponse(200, b"{}")

    with caplog.at_level(logging.DEBUG, "acp_lite.models"):
        out = await exchange(handler, post("/boom", b"{}") + GET)
    first, second = out.split(b"HTTP/1.1 ")[1:]
    assert first.startswith(b"500 Internal Server Error\r\n")
    error = json.loads(first.split(b"\r\n\r\n", 1)[1])["error"]
    assert error["message"] == "the handler raised ValueError: no script step left"
    assert second.startswith(b"200 OK") and calls == ["/boom", "/v1/models"]
    (failure,) = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert failure.name == "acp_lite.models" and failure.levelname == "ERROR"
    assert failure.exc_info is not None and "POST /boom" in failure.getMessage()


@pytest.mark.parametrize(
    ("answer", "named"),
    [
        ("not a response", "TypeError"),
        (HttpResponse(99), "LocalProtocolError"),
        (HttpResponse(200, headers=(("bad header", "x"),)), "LocalProtocolError"),
    ],
)
async def test_what_h11_refuses_of_a_handler_is_a_500(answer: Any, named: str) -> None:
    out = await exchange(lambda _request: answer, GET)
    assert out.startswith(b"HTTP/1.1 500 ") and named.encode() in out


async def read_events(stream: trio.abc.ReceiveStream, until: bytes) -> tuple[bytes, float]:
    """Read until ``until`` has arrived; return what was read and the time it took."""
    start = trio.current_time()
    got = b""
    while until not in got:
        chunk = await stream.receive_some()
        assert chunk, got
        got += chunk
    return got, trio.current_time() - start


async def test_an_event_stream_is_chunked_and_paused_as_scripted(autojump_clock: Any) -> None:
    items: list[StreamItem] = [
        SseEvent("one"),
        Pause(2.5),
        SseEvent("two", event="done"),
        SseEvent("[DONE]"),
    ]
    client, server = trio.testing.memory_stream_pair()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(handle_connection, server, lambda _r: EventStream(items))
        await client.send_all(GET)
        head, took = await read_events(client, b"data: one\n\n")
        assert took == 0.0
        assert head.startswith(b"HTTP/1.1 200 OK\r\n")
        assert b"content-type: text/event-stream\r\n" in head
        assert b"transfer-encoding: chunked\r\n" in head.lower()
        assert b"content-length" not in head
        rest, took = await read_events(client, b"0\r\n\r\n")
        assert took == pytest.approx(2.5)
        assert b"event: done\ndata: two\n\n" in rest and b"data: [DONE]\n\n" in rest
        await client.send_all(GET)  # the stream ended cleanly: the connection serves on
        again, _ = await read_events(client, b"0\r\n\r\n")
        assert again.startswith(b"HTTP/1.1 200 ")
        await client.send_eof()
        assert await receive_all(client) == b""


async def test_a_hang_sends_nothing_until_the_client_goes_away(
    autojump_clock: Any, caplog: pytest.LogCaptureFixture
) -> None:
    closed: list[bool] = []

    def items() -> Iterator[Any]:
        try:
            yield SseEvent("before")
            yield Hang()
            yield SseEvent("never")
        finally:
            closed.append(True)

    client, server = trio.testing.memory_stream_pair()
    with caplog.at_level(logging.DEBUG, "acp_lite.models"):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(handle_connection, server, lambda _r: EventStream(items()))
            await client.send_all(GET)
            await read_events(client, b"data: before\n\n")
            with trio.move_on_after(3600.0) as waited:
                await client.receive_some()
            assert waited.cancelled_caught  # an hour of nothing
            await client.aclose()  # the client gives up
    assert closed == [True]  # the stream's generator was closed, not left suspended
    assert max(r.levelno for r in caplog.records) == logging.INFO
    assert "went away" in caplog.records[-1].getMessage()


async def test_a_client_gone_mid_stream_ends_the_stream_quietly(
    caplog: pytest.LogCaptureFixture,
) -> None:
    sent: list[int] = []

    def items() -> Iterator[Any]:
        for n in range(1000):
            sent.append(n)
            yield SseEvent(str(n))

    client, server = trio.testing.memory_stream_pair()
    with caplog.at_level(logging.DEBUG, "acp_lite.models"):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(handle_connection, server, lambda _r: EventStream(items()))
            await client.send_all(GET)
            await read_events(client, b"data: 0\n\n")
            await client.aclose()
    assert len(sent) < 1000
    assert max(r.levelno for r in caplog.records) == logging.INFO


async def test_a_stream_that_fails_midway_is_cut_short(caplog: pytest.LogCaptureFixture) -> None:
    def items() -> Iterator[Any]:
        yield SseEvent("first")
        raise RuntimeError("script broke")

    with caplog.at_level(logging.DEBUG, "acp_lite.models"):
        out = await exchange(lambda _r: EventStream(items()), GET + GET)
    assert b"data: first\n\n" in out
    # No last chunk: the client sees a truncated body, not a complete stream.
    assert not out.endswith(b"0\r\n\r\n") and out.count(b"HTTP/1.1") == 1
    (failure,) = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert failure.levelname == "ERROR" and failure.exc_info is not None
    assert repr(failure.exc_info[1]) == "RuntimeError('script broke')"


async def test_an_item_that_is_not_a_stream_item_is_cut_short_too() -> None:
    items: list[Any] = [SseEvent("a"), "b"]
    out = await exchange(lambda _r: EventStream(items), GET)
    assert b"data: a\n\n" in out and not out.endswith(b"0\r\n\r\n")


async def test_connection_close_and_http_1_0_end_the_connection_after_the_response() -> None:
    handler = Recorder()
    out = await exchange(handler, b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n" + GET)
    assert out.count(b"HTTP/1.1 200") == 1 and len(handler.requests) == 1
    stream = await exchange(lambda _r: EventStream([SseEvent("x")]), b"GET / HTTP/1.0\r\n\r\n")
    # HTTP/1.0 has no chunks: the stream's end is the connection's.
    assert stream.startswith(b"HTTP/1.1 200 ") and stream.endswith(b"\r\n\r\ndata: x\n\n")


async def test_head_and_204_answers_have_no_body() -> None:
    out = await exchange(
        lambda _r: HttpResponse(200, b"abc"), b"HEAD / HTTP/1.1\r\nHost: x\r\n\r\n"
    )
    assert out.endswith(b"content-length: 0\r\n\r\n")
    out = await exchange(lambda _r: HttpResponse(204, b"abc"), GET)
    assert out.startswith(b"HTTP/1.1 204 No Content\r\n") and out.endswith(b"\r\n\r\n")


async def test_a_failure_of_the_connection_itself_is_logged_and_ends_it_only(
    caplog: pytest.LogCaptureFixture,
) -> None:
    client, server = trio.testing.memory_stream_pair()

    pump = server.send_stream.send_all_hook  # moves the bytes to the client's side
    assert pump is not None

    async def fail() -> None:
        await pump()
        raise RuntimeError("the stream broke oddly")

    server.send_stream.send_all_hook = fail
    async with trio.open_nursery() as nursery:
        nursery.start_soon(handle_connection, server, Recorder())
        await client.send_all(GET)
        await receive_all(client)  # the server closed its side
    (record,) = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert record.getMessage() == "the connection from a client failed"
    assert record.exc_info is not None and "broke oddly" in str(record.exc_info[1])


async def test_headers_over_h11s_limit_get_431() -> None:
    handler = Recorder()
    out = await exchange(handler, b"GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 20000)
    assert out.startswith(b"HTTP/1.1 431 Request Header Fields Too Large\r\n")
    assert handler.requests == []


async def test_a_delayed_answer_waits_before_its_status_line(autojump_clock: Any) -> None:
    def slow(request: HttpRequest) -> HttpResponse:
        return HttpResponse(200, b"{}", delay=7.0)

    start = trio.current_time()
    out = await exchange(slow, GET)
    assert out.startswith(b"HTTP/1.1 200 OK") and trio.current_time() - start >= 7.0


# --- async handlers (the upstream recorder's kind) ------------------------------------


async def test_an_async_handler_is_awaited_and_may_raise() -> None:
    async def handler(request: HttpRequest) -> HttpResponse:
        await trio.sleep(0)
        if request.path == "/boom":
            raise RuntimeError("async boom")
        return HttpResponse(200, b'{"async": true}')

    out = await exchange(handler, post("/ok", b"{}") + post("/boom", b"{}"))
    first, second = out.split(b"HTTP/1.1 ")[1:]
    assert first.startswith(b"200 OK") and first.endswith(b'{"async": true}')
    assert second.startswith(b"500 ") and b"async boom" in second


async def test_an_async_stream_is_written_as_it_comes_and_paused(autojump_clock: Any) -> None:
    from collections.abc import AsyncIterator

    from acp_lite.models import AsyncEventStream

    async def items() -> AsyncIterator[StreamItem]:
        yield SseEvent("one")
        yield Pause(5)
        yield SseEvent("two", "named")

    async def handler(request: HttpRequest) -> AsyncEventStream:
        return AsyncEventStream(items())

    # No end of input after the request: an async stream takes the client's EOF for
    # its leaving (as proxies do), since its producer may be silent a long while.
    client, server = trio.testing.memory_stream_pair()
    start = trio.current_time()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(handle_connection, server, handler)
        await client.send_all(post("/s", b"{}", "Connection: close"))
        out = await receive_all(client)
    assert trio.current_time() - start >= 5
    assert b"text/event-stream" in out and b"Transfer-Encoding: chunked" in out
    assert b"data: one\n\n" in out and b"event: named\ndata: two\n\n" in out
    assert out.endswith(b"0\r\n\r\n")


async def test_an_async_stream_ends_when_its_client_goes_away_even_if_silent() -> None:
    from collections.abc import AsyncIterator

    from acp_lite.models import AsyncEventStream

    closed = trio.Event()

    async def items() -> AsyncIterator[StreamItem]:
        try:
            yield SseEvent("one")
            yield Hang()
        finally:
            closed.set()

    async def handler(request: HttpRequest) -> AsyncEventStream:
        return AsyncEventStream(items())

    client, server = trio.testing.memory_stream_pair()
    with trio.fail_after(5):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(handle_connection, server, handler)
            await client.send_all(post("/s", b"{}"))
            data = b""
            while b"data: one" not in data:
                data += await client.receive_some()
            await client.aclose()
            await closed.wait()
