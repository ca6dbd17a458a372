"""JSON-RPC envelope codec: decode_line / encode_message (docs/architecture.md, "Wire layer")."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from acp_lite.protocol import (
    METHODS,
    UNSET,
    AgentMessageChunk,
    ErrorCode,
    ErrorObject,
    ErrorResponse,
    InvalidMessage,
    Notification,
    PromptRequest,
    PromptResponse,
    Request,
    Response,
    TextContent,
    UpdateSessionNotification,
    converter,
    decode_line,
    encode_message,
    jsonrpc,
)

# The orjson backend is tested when it is active (the `fast` extra installed); no skips.
BACKENDS = ["json", "orjson"] if jsonrpc.JSON_BACKEND == "orjson" else ["json"]


@pytest.fixture(params=BACKENDS, autouse=True)
def backend(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """Run every test with the stdlib codec, and with orjson when it is active."""
    if request.param == "json":
        monkeypatch.setattr(jsonrpc, "_loads", jsonrpc._std_loads)
        monkeypatch.setattr(jsonrpc, "_dumps", jsonrpc._std_dumps)
    yield request.param


def line(obj: Any) -> bytes:
    return json.dumps(obj).encode() + b"\n"


CHUNK = {
    "jsonrpc": "2.0",
    "method": "session/update",
    "params": {
        "sessionId": "s1",
        "update": {
            "sessionUpdate": "agent_message_chunk",
            "messageId": "m1",
            "content": {"type": "text", "text": "hello\nworld"},
        },
    },
}


def test_notification_is_typed_and_keeps_raw_params() -> None:
    msg = decode_line(line(CHUNK))
    assert isinstance(msg, Notification)
    assert msg.method == "session/update"
    assert isinstance(msg.params, UpdateSessionNotification)
    assert isinstance(msg.params.update, AgentMessageChunk)
    assert msg.params.update.content == TextContent(text="hello\nworld")
    assert msg.raw_params == CHUNK["params"]
    assert json.loads(encode_message(msg)) == CHUNK


def test_request_typed_params_and_str_input() -> None:
    wire = {
        "jsonrpc": "2.0",
        "id": "r-1",
        "method": "session/prompt",
        "params": {"sessionId": "s", "prompt": [{"type": "text", "text": "hi"}]},
    }
    msg = decode_line(json.dumps(wire))
    assert isinstance(msg, Request)
    assert msg.id == "r-1"
    assert isinstance(msg.params, PromptRequest)
    assert msg.params.prompt == [TextContent(text="hi")]
    assert json.loads(encode_message(msg)) == wire


def test_unknown_method_keeps_raw_params() -> None:
    wire = {"jsonrpc": "2.0", "id": 3, "method": "_vendor/x", "params": {"a": [1, None]}}
    msg = decode_line(line(wire))
    assert msg == Request(3, "_vendor/x", {"a": [1, None]})
    notif = {"jsonrpc": "2.0", "method": "_vendor/n"}
    assert decode_line(line(notif)) == Notification("_vendor/n")
    assert json.loads(encode_message(Notification("_vendor/n"))) == notif


def test_responses_and_result_structuring() -> None:
    ok = decode_line(line({"jsonrpc": "2.0", "id": 7, "result": {"messageId": "m"}}))
    assert ok == Response(7, {"messageId": "m"})
    assert isinstance(ok, Response)
    typed = converter.structure(ok.result, METHODS["session/prompt"].result)
    assert typed == PromptResponse(message_id="m")
    err = decode_line(
        line({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "bad"}})
    )
    assert err == ErrorResponse(None, ErrorObject(-32700, "bad"))
    with_data = {"jsonrpc": "2.0", "id": 1, "error": {"code": -32602, "message": "m", "data": None}}
    decoded = decode_line(line(with_data))
    assert isinstance(decoded, ErrorResponse) and decoded.error.data is None
    assert json.loads(encode_message(decoded)) == with_data


def test_batch_is_a_list() -> None:
    batch = [CHUNK, {"jsonrpc": "2.0", "id": 1, "result": None}, 5]
    got = decode_line(line(batch))
    assert isinstance(got, list) and len(got) == 3
    assert isinstance(got[0], Notification)
    assert got[1] == Response(1, None)
    assert isinstance(got[2], InvalidMessage)
    assert got[2].error.code == ErrorCode.INVALID_REQUEST
    out = encode_message(got[:2])
    assert json.loads(out) == batch[:2]


@pytest.mark.parametrize(
    ("raw", "code"),
    [
        (b"{not json", ErrorCode.PARSE_ERROR),
        (b"\xff\xfe\x00garbage", ErrorCode.PARSE_ERROR),
        (b"", ErrorCode.PARSE_ERROR),
        (b"[]", ErrorCode.INVALID_REQUEST),
        (b"42", ErrorCode.INVALID_REQUEST),
        (b'{"id": 1, "method": "x"}', ErrorCode.INVALID_REQUEST),
        (b'{"jsonrpc": "2.0", "id": null, "method": "x"}', ErrorCode.INVALID_REQUEST),
        (b'{"jsonrpc": "2.0", "id": 1.5, "method": "x"}', ErrorCode.INVALID_REQUEST),
        (b'{"jsonrpc": "2.0", "method": 5}', ErrorCode.INVALID_REQUEST),
        (b'{"jsonrpc": "2.0", "method": "_x", "params": 3}', ErrorCode.INVALID_REQUEST),
        (b'{"jsonrpc": "2.0", "id": 1}', ErrorCode.INVALID_REQUEST),
        (b'{"jsonrpc": "2.0", "id": 1, "result": 1, "error": {}}', ErrorCode.INVALID_REQUEST),
        (b'{"jsonrpc": "2.0", "id": 1, "error": {"code": "x"}}', ErrorCode.INVALID_REQUEST),
        (b'{"jsonrpc": "2.0", "id": true, "result": 1}', ErrorCode.INVALID_REQUEST),
    ],
)
def test_invalid_input_is_classified(raw: bytes, code: int) -> None:
    got = decode_line(raw)
    assert isinstance(got, InvalidMessage), got
    assert got.error.code == code
    encoded = json.loads(encode_message(got))
    assert encoded["error"]["code"] == code


def test_params_that_do_not_structure_give_invalid_params_with_id_and_method() -> None:
    wire = {"jsonrpc": "2.0", "id": 9, "method": "session/prompt", "params": {"sessionId": 1}}
    got = decode_line(line(wire))
    assert isinstance(got, InvalidMessage)
    assert (got.error.code, got.id, got.method) == (ErrorCode.INVALID_PARAMS, 9, "session/prompt")
    assert got.raw == wire
    missing = decode_line(line({"jsonrpc": "2.0", "id": 2, "method": "session/prompt"}))
    assert isinstance(missing, InvalidMessage) and missing.error.code == ErrorCode.INVALID_PARAMS


def test_malformed_update_is_kept_not_rejected() -> None:
    bad = json.loads(json.dumps(CHUNK))
    bad["params"]["update"]["messageId"] = 5
    got = decode_line(line(bad))
    assert isinstance(got, Notification)
    assert got.params.update.error is not None
    assert json.loads(encode_message(got)) == bad


def test_encoding_is_one_line_without_embedded_newlines() -> None:
    msg = Notification("_x", {"text": "a\nb\r\u2028c", "lone": "\ud800"})
    out = encode_message(msg)
    assert out.endswith(b"\n") and out.count(b"\n") == 1 and b"\r" not in out
    out.decode("utf-8")  # valid UTF-8 even with a lone surrogate (escaped)
    back = decode_line(out)
    assert back == msg


def test_encode_rejects_non_messages() -> None:
    with pytest.raises(TypeError):
        encode_message("nope")  # type: ignore[arg-type]


def test_methods_table_covers_the_acp_methods() -> None:
    to_agent = [
        "initialize", "auth/login", "auth/logout", "session/new", "session/list",
        "session/delete", "session/resume", "session/close", "session/set_config_option",
        "session/prompt", "tool_call/cancel", "terminal/cancel",
    ]  # fmt: skip
    for m in to_agent:
        spec = METHODS[m]
        assert spec.direction == "to_agent" and not spec.notification and spec.result is not None
    assert METHODS["session/cancel"].notification
    for m in ("session/request_permission", "elicitation/create"):
        assert METHODS[m].direction == "to_client" and not METHODS[m].notification
    for m in ("session/update", "elicitation/complete"):
        assert METHODS[m].direction == "to_client" and METHODS[m].notification
    assert METHODS["$/cancel_request"].direction == "both"
    assert METHODS["$/cancel_request"].params is not None
    assert PromptRequest(session_id="s", prompt=[]).meta is UNSET


def test_locally_built_messages_encode_typed_values() -> None:
    reply = Response(5, PromptResponse(message_id="m"))
    assert json.loads(encode_message(reply)) == {
        "jsonrpc": "2.0",
        "id": 5,
        "result": {"messageId": "m"},
    }
    err = ErrorResponse(6, ErrorObject(-32602, "bad", {"why": [1]}))
    assert json.loads(encode_message(err)) == {
        "jsonrpc": "2.0",
        "id": 6,
        "error": {"code": -32602, "message": "bad", "data": {"why": [1]}},
    }
    req = Request(
        1, "session/prompt", PromptRequest(session_id="s", prompt=[TextContent(text="x")])
    )
    decoded = decode_line(encode_message(req))
    assert decoded == req
    assert isinstance(decoded, Request) and decoded.raw_params == {
        "sessionId": "s",
        "prompt": [{"type": "text", "text": "x"}],
    }


def test_known_method_without_params_is_validated_as_empty_object() -> None:
    got = decode_line(b'{"jsonrpc": "2.0", "id": 1, "method": "auth/logout"}')
    assert isinstance(got, Request)
    assert json.loads(encode_message(got))["params"] == {}


def test_invalid_request_keeps_id_for_the_reply() -> None:
    got = decode_line(b'{"jsonrpc": "1.0", "id": "abc", "method": "x"}')
    assert isinstance(got, InvalidMessage) and got.id == "abc"
    assert json.loads(encode_message(got))["id"] == "abc"


@pytest.mark.parametrize(
    "number", [-9223372036854775809, 18446744073709551616, 10**30, -(10**25), 2**63 - 1]
)
def test_integers_beyond_64_bits_are_exact(number: int) -> None:
    wire = {"jsonrpc": "2.0", "method": "_x", "params": {"n": number, "s": "12345678901234567890"}}
    got = decode_line(line(wire))
    assert isinstance(got, Notification) and got.params["n"] == number
    assert type(got.params["n"]) is int
    assert json.loads(encode_message(got)) == wire


@pytest.mark.parametrize("raw", [b"NaN", b'{"a": Infinity}', b"[-Infinity]"])
def test_non_json_constants_are_parse_errors(raw: bytes) -> None:
    got = decode_line(raw)
    assert isinstance(got, InvalidMessage) and got.error.code == ErrorCode.PARSE_ERROR


def test_bytes_like_and_str_lines() -> None:
    text = json.dumps(CHUNK)
    for form in (text, text.encode(), bytearray(text.encode()), memoryview(text.encode())):
        got = decode_line(form)  # type: ignore[arg-type]
        assert isinstance(got, Notification) and got.raw_params == CHUNK["params"]
    bad = decode_line(5)  # type: ignore[arg-type]
    assert isinstance(bad, InvalidMessage) and bad.error.code == ErrorCode.PARSE_ERROR
