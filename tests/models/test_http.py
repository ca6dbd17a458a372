"""The values the model server and the provider APIs exchange."""

from __future__ import annotations

from acp_lite.models import HttpRequest, SseEvent


def test_an_event_is_written_as_sse_lines() -> None:
    assert SseEvent('{"a": 1}').encode() == b'data: {"a": 1}\n\n'
    assert SseEvent("x", event="message_start").encode() == b"event: message_start\ndata: x\n\n"
    # A multi-line payload is one data: line per line, which SSE readers join with \n.
    assert SseEvent("a\nb").encode() == b"data: a\ndata: b\n\n"


def test_header_lookup_is_case_blind_and_takes_the_last_value() -> None:
    request = HttpRequest("POST", "/v1/messages", headers=(("x-api-key", "a"), ("x-api-key", "b")))
    assert request.header("X-API-Key") == "b"
    assert request.header("authorization") is None
