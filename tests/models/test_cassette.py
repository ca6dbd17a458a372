"""Model cassettes without IO: the SSE parser, the file format, redaction, and the
replay handler's matching (acp_lite.models.cassette, acp_lite.models.replay)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from acp_lite.errors import CassetteError
from acp_lite.models import (
    Body,
    CassetteRequest,
    CassetteResponse,
    EventStream,
    HttpRequest,
    HttpResponse,
    Interaction,
    ModelCassette,
    Redaction,
    ReplayModel,
    SseEvent,
    SseParser,
)

# --- the SSE parser -----------------------------------------------------------------

STREAM = (
    b": keep-alive comment\r\n\r\n"
    b'event: message_start\r\ndata: {"a": 1}\r\n\r\n'
    b"data: line one\ndata:line two\nid: 7\nretry: 10\n\n"
    b"data: [DONE]\r\r"
    b"data: unended"
)


def test_sse_parser_splits_events_whatever_the_chunks() -> None:
    expected = [
        SseEvent('{"a": 1}', "message_start"),
        SseEvent("line one\nline two"),
        SseEvent("[DONE]"),
        SseEvent("unended"),  # no blank line: dispatched at the end of the stream
    ]
    for size in (1, 2, 3, 7, len(STREAM)):
        parser = SseParser()
        got: list[SseEvent] = []
        for n in range(0, len(STREAM), size):
            got.extend(parser.feed(STREAM[n : n + size]))
        assert got == expected[:3], size
        assert parser.close() == expected[3:]


# --- bodies and the file ------------------------------------------------------------


def test_body_kinds_round_trip() -> None:
    assert Body.of(b"") == Body("none")
    assert Body.of(b'{"x": [1, "\xc3\xa9"]}') == Body("json", {"x": [1, "é"]})
    assert Body.of(b"plain words") == Body("text", "plain words")
    assert Body.of(b"\xff\x00") == Body("base64", "/wA=")
    for body in (Body.of(b"plain words"), Body.of(b"\xff\x00"), Body.of(b"")):
        assert body.data() in (b"plain words", b"\xff\x00", b"")
    assert json.loads(Body.of(b'{"x": 1}').data()) == {"x": 1}


def cassette() -> ModelCassette:
    chat = CassetteRequest(
        method="POST",
        path="/v1/chat/completions",
        headers=(("content-type", "application/json"),),
        body=Body("json", {"model": "m", "messages": [{"role": "user", "content": "one"}]}),
    )
    return ModelCassette(
        upstream="https://api.example",
        interactions=(
            Interaction(
                chat,
                CassetteResponse(
                    status=200,
                    headers=(("content-type", "application/json"),),
                    body=Body("json", {"n": 1}),
                ),
            ),
            Interaction(
                CassetteRequest(
                    method="POST",
                    path="/v1/chat/completions",
                    body=Body(
                        "json", {"model": "m", "messages": [{"role": "user", "content": "two"}]}
                    ),
                ),
                CassetteResponse(
                    status=200,
                    headers=(("content-type", "text/event-stream"),),
                    events=(SseEvent("{}", "delta"), SseEvent("[DONE]")),
                    truncated=True,
                ),
            ),
            Interaction(
                CassetteRequest(
                    method="POST",
                    path="/v1beta/models/g:generateContent",
                    query={"key": "<redacted>"},
                ),
                CassetteResponse(status=500, body=Body("text", "oops")),
            ),
        ),
    )


def test_a_cassette_round_trips_through_its_file(tmp_path: Path) -> None:
    original = cassette()
    path = tmp_path / "deep" / "t.model.json"
    original.save(path)
    loaded = ModelCassette.load(path)
    assert loaded == original
    assert '\n     ["content-type", "application/json"]\n' in path.read_text()  # one a line
    document = json.loads(path.read_text())
    assert document["acpModelCassette"] == 1
    stream = document["interactions"][1]["response"]
    assert stream["events"] == [{"event": "delta", "data": "{}"}, {"data": "[DONE]"}]
    assert stream["truncated"] is True
    assert document["interactions"][2]["response"]["text"] == "oops"


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("{nope", "not JSON"),
        ('{"acpModelCassette": 2, "interactions": []}', "acpModelCassette is 2"),
        ('{"acpModelCassette": 1}', "interactions must be a list"),
        (
            '{"acpModelCassette": 1, "interactions": [{"request": {}}]}',
            "interaction 0 request needs",
        ),
        (
            '{"acpModelCassette": 1, "interactions": [{"request": {"method": "GET", "path": "/"},'
            ' "response": {"status": 99}}]}',
            "interaction 0 response needs a status",
        ),
        (
            '{"acpModelCassette": 1, "interactions": [{"request": {"method": "GET", "path": "/",'
            ' "json": 1, "text": "x"}, "response": {"status": 200}}]}',
            "more than one body",
        ),
    ],
)
def test_a_bad_cassette_is_one_error_naming_the_file(text: str, error: str) -> None:
    with pytest.raises(CassetteError, match=r"^my\.model\.json: ") as caught:
        ModelCassette.loads(text, "my.model.json")
    assert error in str(caught.value)


# --- redaction ----------------------------------------------------------------------

KEY = "sk-live-0123456789abcdef"


def test_redaction_of_keys_org_ids_cookies_and_request_ids() -> None:
    redaction = Redaction(secrets={"env-secret-value": "<redacted:MY_TOKEN>"})
    request = HttpRequest(
        "POST",
        "/v1beta/models/g:streamGenerateContent",
        {"alt": "sse", "key": KEY},
        (
            ("host", "127.0.0.1:1234"),
            ("authorization", f"Bearer {KEY}"),
            ("x-api-key", KEY),
            ("x-goog-api-key", KEY),
            ("cookie", "session=abc"),
            ("openai-organization", "org-123"),
            ("openai-project", "proj_123"),
            ("x-stainless-custom-token", "t0ken-value"),
            ("x-request-id", "req-1"),
            ("content-type", "application/json"),
            ("content-length", "99"),
        ),
        json.dumps({"echo": f"my key is {KEY}", "env": "has env-secret-value in it"}).encode(),
    )
    stored = redaction.request(request)
    headers = dict(stored.headers)
    assert "host" not in headers and "content-length" not in headers
    for name in (
        "authorization",
        "x-api-key",
        "x-goog-api-key",
        "cookie",
        "openai-organization",
        "openai-project",
        "x-stainless-custom-token",
        "x-request-id",
    ):
        assert headers[name] == "<redacted>", name
    assert headers["content-type"] == "application/json"
    assert stored.query == {"alt": "sse", "key": "<redacted>"}
    assert stored.body == Body(
        "json", {"echo": "my key is <redacted>", "env": "has <redacted:MY_TOKEN> in it"}
    )
    assert KEY not in json.dumps(stored.to_json())
    response = redaction.response_headers(
        [
            ("Content-Type", "text/event-stream"),
            ("anthropic-organization-id", "org-uuid"),
            ("request-id", "req_1"),
            ("set-cookie", "__cf_bm=x"),
            ("date", "today"),
            ("Transfer-Encoding", "chunked"),
            ("retry-after", "3"),
        ]
    )
    assert response == (
        ("content-type", "text/event-stream"),
        ("anthropic-organization-id", "<redacted>"),
        ("request-id", "<redacted>"),
        ("retry-after", "3"),
    )
    kept = Redaction(secrets={}, request_ids=False).response_headers([("request-id", "req_1")])
    assert kept == (("request-id", "req_1"),)


# --- replay -------------------------------------------------------------------------


def ask(text: str, *, path: str = "/v1/chat/completions", **query: str) -> HttpRequest:
    body = {"model": "m", "messages": [{"role": "user", "content": text}]}
    return HttpRequest(
        "POST", path, query, (("authorization", "Bearer x"),), json.dumps(body).encode()
    )


def replay() -> ReplayModel:
    return ReplayModel(
        cassette(), name="model cassette t.model.json", redaction=Redaction(secrets={})
    )


def test_replay_matches_by_route_and_order_preferring_an_equal_body() -> None:
    model = replay()
    # "two" first: its equal body wins over the recorded order (concurrent requests).
    second = model(ask("two"))
    assert isinstance(second, EventStream) and list(second.items)[-1] == SseEvent("[DONE]")
    # A drifted body: the next one of the route in order.
    first = model(ask("one, but with today's date"))
    assert isinstance(first, HttpResponse) and json.loads(first.body) == {"n": 1}
    # All used: an equal body is answered again (a retry).
    again = model(ask("two"))
    assert isinstance(again, EventStream)
    # Gemini's key matches whatever its value; the query must be there though.
    gemini = model(ask("x", path="/v1beta/models/g:generateContent", key="another-key"))
    assert isinstance(gemini, HttpResponse) and (gemini.status, gemini.body) == (500, b"oops")
    assert [r.step for r in model.requests] == [1, 0, 1, 2]
    assert [r.api for r in model.requests] == ["openai_chat"] * 3 + ["gemini"]
    assert model.requests[0].headers == (("authorization", "<redacted>"),)
    assert model.failures == () and model.unused == ()
    model.check(all_steps_used=True)


def test_an_unmatched_request_is_a_provider_error_and_a_failure() -> None:
    model = replay()
    model(ask("one"))
    model(ask("two"))
    answer = model(ask("three"))
    assert isinstance(answer, HttpResponse) and answer.status == 400
    message = json.loads(answer.body)["error"]["message"]
    assert "model cassette t.model.json" in message and "POST /v1/chat/completions" in message
    other = model(HttpRequest("GET", "/v1/models"))
    assert isinstance(other, HttpResponse) and other.status == 400
    assert model.unmatched == (model.requests[2], model.requests[3])
    with pytest.raises(AssertionError) as caught:
        model.check()
    shown = str(caught.value)
    assert shown.startswith("model cassette t.model.json: 2 problem(s)")
    assert "no recorded interaction left for POST /v1/chat/completions (request #2)" in shown
    assert '"content": "three"' in shown  # the request, shown
    assert "no recorded interaction for GET /v1/models (request #3); it holds" in shown
    fresh = replay()
    with pytest.raises(AssertionError, match=r"interaction #2 .*was never replayed"):
        fresh.check(all_steps_used=True)
