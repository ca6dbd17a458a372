"""decode_line's fast path for text message/thought chunks (jsonrpc._fast_update) must
build exactly what the generic structure functions build, and hand everything else
(extra keys, other block types, odd values) to the generic path unchanged."""

from __future__ import annotations

import json
from typing import Any

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis_budget import examples

from acp_lite.protocol import (
    DEFINITIONS,
    Notification,
    converter,
    decode_line,
    encode_message,
    jsonrpc,
)

PARAMS_TYPE = DEFINITIONS["UpdateSessionNotification"]

values = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-2, 2),
    st.text(max_size=4),
    st.lists(st.integers(0, 2), max_size=2),
    st.dictionaries(st.sampled_from(["a", "_b"]), st.integers(0, 2), max_size=2),
)
TAGS = ["agent_message_chunk", "agent_thought_chunk", "user_message_chunk", "agent_message"]


@st.composite
def near_fast_params(draw: st.DrawFn) -> dict[str, Any]:
    """The fast-path shape, with a random subset of perturbations."""
    content: dict[str, Any] = {"type": "text", "text": draw(st.text(max_size=6))}
    update: dict[str, Any] = {
        "sessionUpdate": draw(st.sampled_from(TAGS)),
        "messageId": "m1",
        "content": content,
    }
    params: dict[str, Any] = {"sessionId": "s1", "update": update}
    for target in (params, update, content):
        if draw(st.booleans()):
            key = draw(st.sampled_from(list(target)))
            target[key] = draw(values)
        if draw(st.integers(0, 3)) == 0:
            target[draw(st.sampled_from(["_meta", "zz", "annotations"]))] = draw(values)
        if draw(st.integers(0, 5)) == 0:
            target.pop(draw(st.sampled_from(list(target))), None)
    return params


def _line(params: Any) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "method": "session/update", "params": params}).encode()


def _same(a: Any, b: Any) -> None:
    assert type(a) is type(b)
    if attrs.has(type(a)):
        for f in attrs.fields(type(a)):
            _same(getattr(a, f.name), getattr(b, f.name))  # AttributeError if unset
    else:
        assert a == b


def _check(params: Any) -> None:
    line = _line(params)
    msg = decode_line(line)
    try:
        generic = converter.structure(params, PARAMS_TYPE)
    except Exception:
        assert not isinstance(msg, Notification) or msg.method != "session/update"
        return
    assert isinstance(msg, Notification)
    _same(msg.params, generic)
    assert msg.raw_params == params
    assert json.loads(encode_message(msg))["params"] == params


@pytest.mark.parametrize("tag", ["agent_message_chunk", "agent_thought_chunk"])
def test_fast_shape_equals_generic_structure(tag: str) -> None:
    params = {
        "sessionId": "s1",
        "update": {
            "sessionUpdate": tag,
            "messageId": "m1",
            "content": {"type": "text", "text": "hé\n"},
        },
    }
    assert jsonrpc._fast_update(params) is not None  # the shape really takes the fast path
    _check(params)


@settings(max_examples=examples(4))
@given(near_fast_params())
def test_near_fast_shapes_decode_like_the_generic_path(params: dict[str, Any]) -> None:
    _check(params)
