"""Recording through a real upstream (acp_lite.models.upstream): the upstream is our
own model server on another 127.0.0.1 port, plain HTTP, so no network is needed.

What is checked: the request goes on as the agent sent it (its key too, under the
upstream's host and prefix) and the cassette keeps it redacted; a stream reaches the
client event by event while the upstream produces it (not at its end); a body that
is not JSON both ways; an upstream that is down (a 502 and a failure); a client that
leaves mid-stream (the upstream connection closed, the stream recorded truncated);
and a recorded cassette replays the same answers."""

from __future__ import annotations

import datetime
import functools
import ipaddress
import json
import socket
import ssl
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import trio

from acp_lite.models import (
    AsyncEventStream,
    EventStream,
    HttpRequest,
    HttpResponse,
    ModelCassette,
    Redaction,
    ReplayModel,
    SseEvent,
)
from acp_lite.models.server import handle_connection, open_model_server
from acp_lite.models.upstream import RecordingModel, Upstream

pytestmark = pytest.mark.trio

KEY = "sk-test-0123456789abcdef"
CHAT = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "stream": False}


def raw_request(path: str, body: bytes, *headers: str, method: str = "POST") -> bytes:
    head = [
        f"{method} {path} HTTP/1.1",
        "Host: 127.0.0.1",
        f"Content-Length: {len(body)}",
        "Connection: close",
        *headers,
    ]
    return ("\r\n".join(head) + "\r\n\r\n").encode() + body


async def exchange(port: int, request: bytes) -> tuple[int, dict[str, str], bytes]:
    """Send ``request`` and read the whole answer: status, headers, body (unchunked)."""
    with trio.fail_after(10):
        stream = await trio.open_tcp_stream("127.0.0.1", port)
        async with stream:
            await stream.send_all(request)
            data = b""
            while chunk := await stream.receive_some():
                data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode().split("\r\n")
    headers = dict(line.lower().split(": ", 1) for line in lines[1:])
    if headers.get("transfer-encoding") == "chunked":
        out = b""
        while body:
            size, _, rest = body.partition(b"\r\n")
            n = int(size, 16)
            out, body = out + rest[:n], rest[n + 2 :]
        body = out
    return int(lines[0].split()[1]), headers, body


class Upstairs:
    """The fake provider: keeps the requests it got (as sent, keys and all)."""

    def __init__(self) -> None:
        self.requests: list[HttpRequest] = []
        self.release = trio.Event()
        self.closed = trio.Event()

    async def __call__(self, request: HttpRequest) -> HttpResponse | EventStream | AsyncEventStream:
        self.requests.append(request)
        if request.path.endswith("/text"):
            return HttpResponse(
                201, b"plain answer to " + request.body, (("content-type", "text/plain"),)
            )
        if request.path.endswith("/wait"):
            return AsyncEventStream(self.waiting())
        return HttpResponse(
            200,
            json.dumps({"echo": json.loads(request.body), "key_seen": KEY}).encode(),
            (
                ("content-type", "application/json"),
                ("openai-organization", "org-secret"),
                ("x-request-id", "req-1"),
                ("set-cookie", "session=upstream"),
            ),
        )

    async def waiting(self) -> AsyncIterator[SseEvent]:
        try:
            yield SseEvent('{"n": 1}', "delta")
            await self.release.wait()  # the test lets it go once the client has event 1
            yield SseEvent("[DONE]")
        finally:
            self.closed.set()


async def test_forwards_as_sent_and_records_redacted() -> None:
    upstairs = Upstairs()
    async with open_model_server(upstairs) as up:
        recorder = RecordingModel(
            Upstream(f"{up.url}/prefix"), redaction=Redaction(secrets={}), name="recorder"
        )
        async with open_model_server(recorder) as proxy:
            status, headers, body = await exchange(
                proxy.port,
                raw_request(
                    "/v1/chat/completions?x=1",
                    json.dumps(CHAT).encode(),
                    f"Authorization: Bearer {KEY}",
                    "Content-Type: application/json",
                    "Accept-Encoding: gzip",
                ),
            )
            assert status == 200
            assert json.loads(body)["echo"] == CHAT
            assert headers["openai-organization"] == "org-secret"  # the agent gets it all
            # A body that is not JSON, both ways.
            status, headers, body = await exchange(
                proxy.port, raw_request("/v1/text", b"{not json", "Content-Type: text/plain")
            )
            assert (status, body) == (201, b"plain answer to {not json")
    sent = upstairs.requests[0]
    assert sent.path == "/prefix/v1/chat/completions" and sent.query == {"x": "1"}
    assert sent.header("authorization") == f"Bearer {KEY}"  # the real key goes upstream
    assert sent.header("host") == f"127.0.0.1:{up.port}"
    assert sent.header("accept-encoding") == "identity"
    assert upstairs.requests[1].body == b"{not json"
    recorder.check()
    assert [r.status for r in recorder.requests] == [200, 201]
    text = recorder.cassette().dumps()
    assert KEY not in text and "org-secret" not in text and "req-1" not in text
    assert "session=upstream" not in text
    cassette = ModelCassette.loads(text)
    first, second = cassette.interactions
    assert dict(first.request.headers)["authorization"] == "<redacted>"
    assert first.request.body.value == CHAT
    assert first.response.body.value == {"echo": CHAT, "key_seen": "<redacted>"}
    assert dict(first.response.headers)["openai-organization"] == "<redacted>"
    assert (second.request.body.kind, second.request.body.value) == ("text", "{not json")
    assert (second.response.body.kind, second.response.status) == ("text", 201)
    # Replayed, no upstream: the same answers.
    replay = ReplayModel(cassette, redaction=Redaction(secrets={}))
    async with open_model_server(replay) as again:
        status, _, body = await exchange(
            again.port, raw_request("/v1/chat/completions?x=1", json.dumps(CHAT).encode())
        )
        assert status == 200 and json.loads(body)["echo"] == CHAT
        status, _, body = await exchange(again.port, raw_request("/v1/text", b"{not json"))
        assert (status, body) == (201, b"plain answer to {not json")
    replay.check(all_steps_used=True)


async def test_a_stream_is_passed_on_as_it_comes_and_replayed_as_recorded() -> None:
    upstairs = Upstairs()
    async with open_model_server(upstairs) as up:
        recorder = RecordingModel(up.url, redaction=Redaction(secrets={}))
        async with open_model_server(recorder) as proxy:
            with trio.fail_after(10):
                stream = await trio.open_tcp_stream("127.0.0.1", proxy.port)
                async with stream:
                    await stream.send_all(raw_request("/v1/wait", b"{}"))
                    data = b""
                    while b'data: {"n": 1}' not in data:  # before the upstream is done
                        data += await stream.receive_some()
                    assert b"[DONE]" not in data
                    upstairs.release.set()
                    while chunk := await stream.receive_some():
                        data += chunk
            assert b"data: [DONE]" in data and data.endswith(b"0\r\n\r\n")
    recorder.check()
    (interaction,) = recorder.cassette().interactions
    assert interaction.response.events == (SseEvent('{"n": 1}', "delta"), SseEvent("[DONE]"))
    assert not interaction.response.truncated
    answer = ReplayModel(recorder.cassette())(HttpRequest("POST", "/v1/wait", body=b"{}"))
    assert isinstance(answer, EventStream) and tuple(answer.items) == interaction.response.events


async def test_a_client_leaving_mid_stream_closes_the_upstream() -> None:
    upstairs = Upstairs()
    async with open_model_server(upstairs) as up:
        recorder = RecordingModel(up.url, redaction=Redaction(secrets={}))
        async with open_model_server(recorder) as proxy:
            with trio.fail_after(10):
                stream = await trio.open_tcp_stream("127.0.0.1", proxy.port)
                await stream.send_all(raw_request("/v1/wait", b"{}"))
                data = b""
                while b'data: {"n": 1}' not in data:
                    data += await stream.receive_some()
                await stream.aclose()  # gone, while the upstream is silent
                await upstairs.closed.wait()  # so its connection was closed
                # And the proxy still serves.
                status, _, _ = await exchange(proxy.port, raw_request("/v1/text", b"x"))
                assert status == 201
    recorder.check()  # the client's choice, no failure
    first = recorder.cassette().interactions[0]
    assert first.response.events == (SseEvent('{"n": 1}', "delta"),)
    assert first.response.truncated


async def test_an_upstream_that_is_down_is_a_502_and_a_failure() -> None:
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    recorder = RecordingModel(f"http://127.0.0.1:{port}", name="recorder t.model.json")
    async with open_model_server(recorder) as proxy:
        status, _, body = await exchange(
            proxy.port, raw_request("/v1/messages", json.dumps({"model": "claude"}).encode())
        )
    assert status == 502
    error = json.loads(body)
    assert error["type"] == "error"  # Anthropic's shape, for an Anthropic path
    assert f"cannot connect to the upstream http://127.0.0.1:{port}" in error["error"]["message"]
    with pytest.raises(AssertionError) as caught:
        recorder.check()
    shown = str(caught.value)
    assert shown.startswith("recorder t.model.json: 1 problem(s)")
    assert "request #0: POST /v1/messages" in shown and '"model": "claude"' in shown
    assert recorder.cassette().interactions == ()
    assert recorder.requests[0].status == 502


@pytest.mark.parametrize("url", ["ftp://x", "http://", "https://h/p?q=1", "http://h:99999"])
async def test_a_bad_upstream_url_is_refused(url: str) -> None:
    with pytest.raises(ValueError, match="upstream"):
        Upstream(url)
    with pytest.raises(ValueError, match="connect_timeout"):
        Upstream("http://h", connect_timeout=0)


def _self_signed(tmp_path: Path) -> tuple[Path, Path]:
    """A certificate for 127.0.0.1 and its key (PEM files)."""
    crypto = pytest.importorskip("cryptography")  # google-auth's, of the test extra
    del crypto
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "acp-lite test upstream")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_file, key_file = tmp_path / "cert.pem", tmp_path / "key.pem"
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_file, key_file


async def test_an_https_upstream_is_verified(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cert, key = _self_signed(tmp_path)
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    upstairs = Upstairs()
    serve = functools.partial(handle_connection, handler=upstairs)
    async with trio.open_nursery() as nursery:
        listeners = await nursery.start(
            functools.partial(
                trio.serve_ssl_over_tcp, serve, 0, context, host="127.0.0.1", https_compatible=True
            )
        )
        port = listeners[0].transport_listener.socket.getsockname()[1]
        # Not trusted: a clear 502. Trusted (SSL_CERT_FILE, as OpenSSL reads it): through.
        untrusting = RecordingModel(f"https://127.0.0.1:{port}", redaction=Redaction(secrets={}))
        monkeypatch.setenv("SSL_CERT_FILE", str(cert))
        trusting = RecordingModel(f"https://127.0.0.1:{port}", redaction=Redaction(secrets={}))
        request = HttpRequest("POST", "/v1/chat/completions", body=json.dumps(CHAT).encode())
        answer = await trusting(request)
        assert isinstance(answer, HttpResponse) and answer.status == 200
        assert json.loads(answer.body)["echo"] == CHAT
        monkeypatch.delenv("SSL_CERT_FILE")
        refused = await untrusting(request)
        assert isinstance(refused, HttpResponse) and refused.status == 502
        assert "certificate verify failed" in untrusting.failures[0]
        nursery.cancel_scope.cancel()
    trusting.check()
    assert len(trusting.cassette().interactions) == 1
    assert upstairs.requests[0].header("host") == f"127.0.0.1:{port}"


async def test_a_stream_closed_before_it_began_closes_its_upstream() -> None:
    # The server closes the items of a stream whose head it could not send (its client
    # left first): the upstream connection must not linger until its read timeout.
    upstairs = Upstairs()
    async with open_model_server(upstairs) as up:
        recorder = RecordingModel(up.url, redaction=Redaction(secrets={}))
        answer = await recorder(HttpRequest("POST", "/v1/wait", body=b"{}"))
        assert isinstance(answer, AsyncEventStream)
        aclose = getattr(answer.items, "aclose")  # noqa: B009
        await aclose()
        with trio.fail_after(5):
            await upstairs.closed.wait()
    assert recorder.cassette().interactions == ()  # nothing reached the client
