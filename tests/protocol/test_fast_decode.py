"""The hot-path decoders equal the generic path, with both JSON backends.

``decode_line`` builds text message/thought chunks directly (``jsonrpc._fast_update``);
the stdlib backend calls the JSON scanner directly. Whatever shape a line has, the
result must be what the generic path (``json.loads`` + ``decode_value``, i.e. the
generated structure functions) builds: same classes, same fields, same ``extra``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from unittest import mock

import attrs
import pytest
from hypothesis import given, note, settings
from hypothesis import strategies as st
from hypothesis_budget import examples

from acp_lite.protocol import (
    DEFINITIONS,
    InvalidMessage,
    Notification,
    converter,
    decode_line,
    decode_value,
    encode_message,
    jsonrpc,
)

PARAMS_TYPE = DEFINITIONS["UpdateSessionNotification"]

# orjson is tested when it is active (the `fast` extra installed); no skips.
BACKENDS = ["json", "orjson"] if jsonrpc.JSON_BACKEND == "orjson" else ["json"]


@contextmanager
def backend(name: str) -> Iterator[None]:
    if name == "orjson":
        assert jsonrpc._loads is not jsonrpc._std_loads
        yield
        return
    with (
        mock.patch.object(jsonrpc, "_loads", jsonrpc._std_loads),
        mock.patch.object(jsonrpc, "_dumps", jsonrpc._std_dumps),
    ):
        yield


def same(a: Any, b: Any, path: str = "") -> None:
    """Deep equality that also checks classes and every attrs field (set or not)."""
    assert type(a) is type(b), f"{path}: {type(a).__name__} != {type(b).__name__}"
    if attrs.has(type(a)):
        for f in attrs.fields(type(a)):
            same(getattr(a, f.name), getattr(b, f.name), f"{path}.{f.name}")
    elif type(a) is dict:
        assert list(a) == list(b), f"{path}: keys {list(a)} != {list(b)}"
        for k in a:
            same(a[k], b[k], f"{path}[{k!r}]")
    elif type(a) is list:
        assert len(a) == len(b), path
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            same(x, y, f"{path}[{i}]")
    else:
        assert a == b, f"{path}: {a!r} != {b!r}"


texts = st.text(alphabet=st.characters(exclude_categories=()), max_size=8)  # incl. surrogates
odd_values = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.floats(allow_nan=False, allow_infinity=False),
    texts,
    st.lists(st.integers(0, 2), max_size=2),
    st.dictionaries(st.sampled_from(["a", "_b", "type"]), st.integers(0, 2), max_size=2),
)
TAGS = ["agent_message_chunk", "agent_thought_chunk", "user_message_chunk"]
BLOCK_TYPES = ["text", "image", "audio", "resource_link", "resource", "x_vendor"]


@st.composite
def chunk_params(draw: st.DrawFn) -> dict[str, Any]:
    """``session/update`` params of a chunk, the fast shape or something near it."""
    block_type = draw(st.sampled_from(BLOCK_TYPES[:1] * 4 + BLOCK_TYPES))
    content: dict[str, Any] = {"type": block_type}
    if block_type == "text" or draw(st.booleans()):
        content["text"] = draw(texts | odd_values) if draw(st.integers(0, 4)) == 0 else draw(texts)
    if block_type in ("image", "audio"):
        content.update(data="aGk=", mimeType="image/png")
    if block_type == "resource_link":
        content.update(uri="file:///a", name="a")
    if draw(st.integers(0, 3)) == 0:
        content["annotations"] = draw(
            st.sampled_from([{"priority": 0.5}, {"audience": ["user"]}, None, "bad"])
        )
    update: dict[str, Any] = {"sessionUpdate": draw(st.sampled_from(TAGS)), "content": content}
    if draw(st.integers(0, 5)):
        update["messageId"] = draw(
            st.sampled_from(["m1", "m-\u00e9"]) if draw(st.integers(0, 4)) else odd_values
        )
    params: dict[str, Any] = {
        "sessionId": draw(st.sampled_from(["s1", ""]) if draw(st.integers(0, 4)) else odd_values)
    }
    params["update"] = update
    # Extra keys, _meta, and reordering, at every level.
    for target in (params, update, content):
        if draw(st.integers(0, 3)) == 0:
            target[draw(st.sampled_from(["_meta", "zz_unknown", "extra"]))] = draw(odd_values)
        if draw(st.integers(0, 6)) == 0:
            items = list(target.items())
            target.clear()
            target.update(reversed(items))
    if draw(st.integers(0, 8)) == 0:
        update["content"] = draw(st.sampled_from([[content], "text", None]))
    return params


def line_of(params: Any, *, compact: bool = True) -> bytes:
    msg = {"jsonrpc": "2.0", "method": "session/update", "params": params}
    seps = (",", ":") if compact else (", ", ": ")
    return json.dumps(msg, separators=seps).encode()


def check_line(line: bytes) -> None:
    """decode_line and decode_update_line on ``line`` equal the generic decode."""
    parsed = json.loads(line)
    generic = [decode_value(m) for m in parsed] if type(parsed) is list else decode_value(parsed)
    got = decode_line(line)
    if isinstance(generic, list) or not isinstance(generic, InvalidMessage):
        same(got, generic)
    else:
        assert isinstance(got, InvalidMessage)
        assert got.error.code == generic.error.code
    if isinstance(got, Notification):
        # raw_params is not compared by attrs eq: check it here.
        assert got.raw_params == parsed["params"]


# Each generated example is checked with every backend (generating it costs more than
# checking it); a failure's notes name the backend.


@settings(max_examples=examples(3))
@given(params=chunk_params(), compact=st.booleans())
def test_chunks_decode_like_the_generic_path(params: Any, compact: bool) -> None:
    line = line_of(params, compact=compact)
    for name in BACKENDS:
        note(f"JSON backend: {name}")
        with backend(name):
            check_line(line)
            check_line(line + b"\n")
            msg = decode_line(line)
            if isinstance(msg, Notification) and not isinstance(msg.params, dict):
                # Re-encoding what was decoded gives back the payload (unknown keys included).
                generic = converter.structure(params, PARAMS_TYPE)
                assert json.loads(encode_message(msg))["params"] == converter.unstructure(generic)


@settings(max_examples=examples(3))
@given(batch=st.lists(chunk_params(), min_size=1, max_size=4))
def test_batches_decode_like_the_generic_path(batch: list[Any]) -> None:
    msgs = [{"jsonrpc": "2.0", "method": "session/update", "params": p} for p in batch]
    line = json.dumps(msgs).encode()
    for name in BACKENDS:
        note(f"JSON backend: {name}")
        with backend(name):
            check_line(line)
            got = decode_line(line)
            assert isinstance(got, list) and len(got) == len(batch)


@pytest.mark.parametrize("name", BACKENDS)
@pytest.mark.parametrize("tag", ["agent_message_chunk", "agent_thought_chunk"])
def test_the_fast_shape_takes_the_fast_path(name: str, tag: str) -> None:
    """Guard: the shape the hot path exists for really is built directly (if this broke,
    the property tests would still pass but every chunk would take the slow path)."""
    params = {
        "sessionId": "s1",
        "update": {
            "sessionUpdate": tag,
            "messageId": "m1",
            "content": {"type": "text", "text": "é"},
        },
    }
    with backend(name):
        line = line_of(params)
        with mock.patch.object(jsonrpc, "_PARAMS", {}):  # the generic path is not used
            msg = decode_line(line)
        assert isinstance(msg, Notification) and msg.params.session_id == "s1"
        assert msg.params.update.content.text == "é"
        check_line(line)


@pytest.mark.parametrize("name", BACKENDS)
@pytest.mark.parametrize(
    "envelope",
    [
        {"jsonrpc": "2.0", "method": "session/update", "id": 1},  # a request, not a notification
        {"jsonrpc": "1.0", "method": "session/update"},
        {"method": "session/update"},
        {"jsonrpc": "2.0", "method": "session/other"},
    ],
)
def test_non_notification_envelopes_are_not_shortcut(name: str, envelope: dict[str, Any]) -> None:
    params = {
        "sessionId": "s1",
        "update": {
            "sessionUpdate": "agent_message_chunk",
            "messageId": "m1",
            "content": {"type": "text", "text": "x"},
        },
    }
    with backend(name):
        line = json.dumps({**envelope, "params": params}).encode()
        with mock.patch.object(jsonrpc, "text_chunk_update", lambda u: pytest.fail("shortcut")):
            check_line(line)


# Whitespace and trailing data around a JSON value: the stdlib backend calls the
# scanner directly and must fall back to JSONDecoder.decode for all of these.
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | texts,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(texts, inner, max_size=3),
    max_leaves=6,
)
pads = st.sampled_from(["", " ", "\n", "\t", "\r\n", " x", "]", "1", "\ufeff"])


@settings(max_examples=examples(3))
@given(value=json_values, before=pads, after=pads)
def test_std_loads_equals_json_loads(value: Any, before: str, after: str) -> None:
    text = before + json.dumps(value) + after
    try:
        want = json.loads(text)
    except ValueError:
        for arg in (text, text.encode("utf-8", "surrogatepass")):
            with pytest.raises(ValueError):
                jsonrpc._std_loads(arg)
        return
    assert jsonrpc._std_loads(text) == want
    assert jsonrpc._std_loads(text.encode("utf-8", "surrogatepass")) == want


@pytest.mark.parametrize("name", BACKENDS)
@pytest.mark.parametrize(
    "raw", [b"", b" ", b"{", b'{"a":1} {"b":2}', b"NaN", b"[1,]", b"\xff", b'"\\ud800"']
)
def test_invalid_or_odd_lines_agree(name: str, raw: bytes) -> None:
    with backend(name):
        got = decode_line(raw)
        try:
            parsed = json.loads(raw)
        except ValueError:
            assert isinstance(got, InvalidMessage) and got.error.code == -32700
            return
        generic = decode_value(parsed)
        assert type(got) is type(generic)
