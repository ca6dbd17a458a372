"""The model server on a real socket on 127.0.0.1, with real clients: stdlib
``http.client``, raw sockets, and the official ``openai`` client.

What only a socket shows: the free port, keep-alive over TCP, a reset from a client
that leaves mid-stream, a client's own read timeout, the thread wrapper starting,
stopping and freeing its port. Timing is tested on the mock clock in
tests/models/test_server_memory.py; the few real delays here are tens of ms.
"""

from __future__ import annotations

import http.client
import importlib
import json
import logging
import re
import socket
import sys
import threading
from collections.abc import Iterator
from typing import Any

import openai
import pytest
import trio

from acp_lite.models import EventStream, Hang, HttpRequest, HttpResponse, Pause, SseEvent
from acp_lite.models.server import ServerLimits, open_model_server, run_in_thread

COMPLETION = {
    "id": "chatcmpl-1",
    "object": "chat.completion",
    "created": 1700000000,
    "model": "scripted",
    "choices": [
        {
            "index": 0,
            "message": {"role": "assistant", "content": "hello"},
            "finish_reason": "stop",
        }
    ],
    "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4},
}


def chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> SseEvent:
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    body = {
        "id": "chatcmpl-2",
        "object": "chat.completion.chunk",
        "created": 1700000000,
        "model": "scripted",
        "choices": [choice],
        **extra,
    }
    return SseEvent(json.dumps(body))


def chat(request: HttpRequest) -> HttpResponse | EventStream:
    """A tiny OpenAI Chat Completions: a fixed answer, streamed when asked."""
    if request.path == "/v1/models":
        return HttpResponse(200, b'{"object": "list", "data": []}')
    if request.path != "/v1/chat/completions":
        return HttpResponse(404, b'{"error": {"message": "no such path"}}')
    if not json.loads(request.body).get("stream"):
        return HttpResponse(200, json.dumps(COMPLETION).encode())
    usage = {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}
    return EventStream(
        [
            chunk({"role": "assistant", "content": ""}),
            chunk({"content": "hel"}),
            Pause(0.01),
            chunk({"content": "lo"}),
            chunk({}, "stop", usage=usage),
            SseEvent("[DONE]"),
        ]
    )


@pytest.fixture
def server_url() -> Iterator[str]:
    with run_in_thread(chat) as server:
        yield server.url


def test_the_openai_client_reads_a_completion_and_a_stream(server_url: str) -> None:
    client = openai.OpenAI(base_url=server_url + "/v1", api_key="sk-none", max_retries=0)
    messages: Any = [{"role": "user", "content": "hi"}]
    completion = client.chat.completions.create(model="scripted", messages=messages)
    assert completion.choices[0].message.content == "hello"
    assert completion.usage is not None and completion.usage.total_tokens == 4
    stream = client.chat.completions.create(model="scripted", messages=messages, stream=True)
    chunks = list(stream)
    assert "".join(c.choices[0].delta.content or "" for c in chunks) == "hello"
    assert chunks[-1].choices[0].finish_reason == "stop"
    assert chunks[-1].usage is not None and chunks[-1].usage.completion_tokens == 2
    with pytest.raises(openai.NotFoundError, match="no such path"):
        client.embeddings.create(model="scripted", input="x")
    client.close()


def test_keep_alive_serves_two_requests_on_one_connection(server_url: str) -> None:
    host, port = server_url.removeprefix("http://").split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=5)
    connection.request("GET", "/v1/models")
    first = connection.getresponse()
    assert (first.status, first.read()) == (200, b'{"object": "list", "data": []}')
    sock = connection.sock
    connection.request("POST", "/v1/chat/completions", body=b'{"stream": true}')
    second = connection.getresponse()
    assert second.status == 200 and second.getheader("content-type") == "text/event-stream"
    assert second.read().endswith(b"data: [DONE]\n\n")  # http.client undid the chunks
    assert connection.sock is sock  # the same TCP connection
    connection.close()


def raw_exchange(url: str, data: bytes) -> bytes:
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=5) as sock:
        sock.sendall(data)
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


def test_garbage_and_a_raising_handler_leave_the_server_serving(
    caplog: pytest.LogCaptureFixture,
) -> None:
    def handler(request: HttpRequest) -> HttpResponse:
        if request.path == "/boom":
            raise KeyError("step")
        return HttpResponse(200, b"{}")

    with caplog.at_level(logging.INFO, "acp_lite.models"), run_in_thread(handler) as server:
        out = raw_exchange(server.url, b"NOT HTTP AT ALL\r\n\r\n")
        assert out.startswith(b"HTTP/1.1 400 Bad Request\r\n")  # and the server closed
        out = raw_exchange(
            server.url, b"GET /boom HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
        )
        assert out.startswith(b"HTTP/1.1 500 ") and b"the handler raised KeyError" in out
        out = raw_exchange(server.url, b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        assert out.startswith(b"HTTP/1.1 200 OK\r\n")
    levels = [(r.levelname, r.getMessage().split(":")[0]) for r in caplog.records]
    assert ("ERROR", "the handler failed on GET /boom") in levels
    assert [level for level, _ in levels if level != "INFO"] == ["ERROR"]


def test_a_client_that_leaves_mid_stream_leaves_the_server_serving(
    caplog: pytest.LogCaptureFixture,
) -> None:
    ended = threading.Event()

    def endless() -> Iterator[Any]:
        try:
            while True:
                yield SseEvent("tick")
                yield Pause(0.002)
        finally:
            ended.set()

    def handler(request: HttpRequest) -> HttpResponse | EventStream:
        return EventStream(endless()) if request.path == "/stream" else HttpResponse(200)

    with caplog.at_level(logging.DEBUG, "acp_lite.models"), run_in_thread(handler) as server:
        host, port = server.url.removeprefix("http://").split(":")
        with socket.create_connection((host, int(port)), timeout=5) as sock:
            sock.sendall(b"GET /stream HTTP/1.1\r\nHost: x\r\n\r\n")
            got = b""
            while b"data: tick" not in got:
                got += sock.recv(65536)
        # Closed with ticks unread: the kernel resets the connection; the server's
        # next write fails and it closes the stream's generator.
        assert ended.wait(5)
        assert raw_exchange(server.url, b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    assert max(r.levelno for r in caplog.records) == logging.INFO
    assert any("went away before its response ended" in r.getMessage() for r in caplog.records)


def test_a_hang_holds_until_the_client_times_out_and_stops_with_the_server() -> None:
    def handler(request: HttpRequest) -> HttpResponse | EventStream:
        if request.path == "/hang":
            return EventStream([SseEvent("started"), Hang()])
        return HttpResponse(200, b"{}")

    before = set(threading.enumerate())
    with run_in_thread(handler, stop_timeout=2.0) as server:
        host, port = server.url.removeprefix("http://").split(":")
        given_up = http.client.HTTPConnection(host, int(port), timeout=0.05)
        given_up.request("GET", "/hang")
        response = given_up.getresponse()
        assert response.read(len(b"data: started\n\n")) == b"data: started\n\n"
        with pytest.raises(TimeoutError):
            response.read(1)  # the client's own timeout: nothing more comes
        given_up.close()
        held = http.client.HTTPConnection(host, int(port), timeout=5)
        held.request("GET", "/hang")  # still hanging when the server stops
        assert held.getresponse().status == 200
        other = http.client.HTTPConnection(host, int(port), timeout=5)
        other.request("GET", "/")
        assert other.getresponse().read() == b"{}"  # hangs do not block other clients
        other.close()
    # The exit did not wait for the hanging client (it would raise after 2 s).
    assert set(threading.enumerate()) == before
    held.close()


def test_the_thread_starts_stops_and_frees_its_port() -> None:
    before = set(threading.enumerate())
    with run_in_thread(chat) as server:
        assert server.url == f"http://127.0.0.1:{server.port}"
        assert server.port > 0
        running = set(threading.enumerate()) - before
        assert [t.name for t in running] == ["acp-lite-model-server"]
        assert all(t.daemon for t in running)
        assert raw_exchange(
            server.url, b"GET /v1/models HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
        )
    assert set(threading.enumerate()) == before
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", server.port), timeout=5)


def test_a_port_in_use_fails_the_start_and_leaves_no_thread() -> None:
    before = set(threading.enumerate())
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(OSError), run_in_thread(chat, port=port):
            pass  # pragma: no cover - the start fails
    assert set(threading.enumerate()) == before


def test_a_body_over_the_limit_is_refused_with_413() -> None:
    with run_in_thread(chat, limits=ServerLimits(max_body=100)) as server:
        out = raw_exchange(
            server.url,
            b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 5000\r\n\r\n"
            + b"x" * 5000,
        )
        assert out.startswith(b"HTTP/1.1 413 ")  # read by the client, not reset away
        assert raw_exchange(
            server.url, b"GET /v1/models HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
        )


@pytest.mark.trio
async def test_open_model_server_serves_trio_clients() -> None:
    async with open_model_server(chat) as server:
        stream = await trio.open_tcp_stream("127.0.0.1", server.port)
        await stream.send_all(b"GET /v1/models HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        got = b""
        while chunk := await stream.receive_some():
            got += chunk
        await stream.aclose()
    assert got.startswith(b"HTTP/1.1 200 OK\r\n") and got.endswith(b'"data": []}')
    with pytest.raises(OSError):
        await trio.open_tcp_stream("127.0.0.1", server.port)


@pytest.mark.parametrize("field", ["max_body", "read_timeout", "idle_timeout"])
@pytest.mark.parametrize("value", [0, -1.0, True, "5"])
def test_limits_are_positive_numbers(field: str, value: Any) -> None:
    with pytest.raises(ValueError, match=f"{field}= must be a positive number"):
        ServerLimits(**{field: value})


def test_without_h11_the_import_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "h11", None)  # what an absent package looks like
    monkeypatch.delitem(sys.modules, "acp_lite.models.server")
    with pytest.raises(ImportError, match=re.escape("pip install 'acp-lite[models]'")):
        importlib.import_module("acp_lite.models.server")
