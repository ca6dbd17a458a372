"""Property tests: arbitrary JSON never makes the decoder raise anything but the documented
error (WireError, and only for non-objects), and unknown keys survive a round trip."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from unittest import mock

from hypothesis import given, note, settings
from hypothesis import strategies as st
from hypothesis_budget import examples
from protocol_examples import def_example, schema, variant_count

from acp_lite.protocol import (
    DEFINITIONS,
    InvalidMessage,
    Notification,
    UnrecognizedSessionUpdate,
    WireError,
    converter,
    decode_line,
    encode_message,
    jsonrpc,
    structure_update,
    unstructure,
)

JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=16,
)

KNOWN_KEYS = sorted(
    {k for d in schema()["$defs"].values() for k in d.get("properties", {})} | {"_meta"}
)
TAGS = sorted(
    {
        v["properties"]["sessionUpdate"]["const"]
        for v in schema()["$defs"]["SessionUpdate"]["anyOf"]
        if "const" in v["properties"]["sessionUpdate"]
    }
)
STATES = ["running", "idle", "requires_action", "unknown", "paused"]
CONTENT_TYPES = ["text", "image", "audio", "resource", "resource_link", "_custom"]


@st.composite
def update_payloads(draw: st.DrawFn) -> dict[str, Any]:
    """Objects that look like updates: known tags and keys, arbitrary values."""
    d: dict[str, Any] = draw(
        st.dictionaries(st.sampled_from(KNOWN_KEYS) | st.text(max_size=6), JSON, max_size=6)
    )
    d["sessionUpdate"] = draw(st.sampled_from(TAGS) | st.text(max_size=10) | JSON)
    if draw(st.booleans()):
        d["state"] = draw(st.sampled_from(STATES) | JSON)
    if draw(st.booleans()):
        content = draw(st.dictionaries(st.sampled_from(KNOWN_KEYS), JSON, max_size=4))
        content["type"] = draw(st.sampled_from(CONTENT_TYPES) | JSON)
        d["content"] = draw(st.sampled_from([content, [content], content]))
    return d


BACKENDS = ["json", "orjson"] if jsonrpc.JSON_BACKEND == "orjson" else ["json"]


@contextmanager
def backend(name: str) -> Iterator[None]:
    if name == "orjson":
        yield
        return
    with (
        mock.patch.object(jsonrpc, "_loads", jsonrpc._std_loads),
        mock.patch.object(jsonrpc, "_dumps", jsonrpc._std_dumps),
    ):
        yield


@settings(max_examples=examples(1.5))
@given(update_payloads())
def test_any_update_object_structures_and_round_trips(update: dict[str, Any]) -> None:
    obj = structure_update(update)
    assert unstructure(obj) == update
    if isinstance(obj, UnrecognizedSessionUpdate):
        assert obj.raw == update


# Each generated example is checked with every backend (generating it costs more than
# checking it); a failure's notes name the backend.


@settings(max_examples=examples(1.5))
@given(update=update_payloads() | JSON, session_id=st.text(max_size=5) | JSON)
def test_decode_line_never_raises_on_any_update(update: Any, session_id: Any) -> None:
    wire = {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": session_id}}
    wire["params"]["update"] = update
    line = json.dumps(wire)
    for name in BACKENDS:
        note(f"JSON backend: {name}")
        with backend(name):
            msg = decode_line(line)
            if isinstance(msg, InvalidMessage):
                # Only the envelope-level fields can make a session/update invalid.
                assert msg.error.code == -32602 and msg.method == "session/update"
                assert not isinstance(session_id, str) or not isinstance(update, dict)
                continue
            assert isinstance(msg, Notification)
            assert json.loads(encode_message(msg)) == wire


@settings(max_examples=examples(1.5))
@given(raw=st.binary(max_size=40) | st.text(max_size=40).map(str.encode))
def test_decode_line_never_raises_on_garbage(raw: bytes) -> None:
    for name in BACKENDS:
        note(f"JSON backend: {name}")
        with backend(name):
            got = decode_line(raw)
        assert got is not None


@settings(max_examples=examples(1.5))
@given(value=JSON, name=st.sampled_from(sorted(DEFINITIONS)))
def test_structure_raises_only_wire_error(value: Any, name: str) -> None:
    try:
        obj = converter.structure(value, DEFINITIONS[name])
    except WireError:
        return
    # Whatever was accepted must come back unchanged (tags of bare variants aside).
    back = converter.unstructure(obj)
    if isinstance(value, dict):
        assert {k: v for k, v in back.items() if k in value} == value
    else:
        assert back == value


UPDATE_VARIANTS = [
    def_example("SessionUpdate", mode, 0, i)
    for i in range(variant_count("SessionUpdate"))
    for mode in ("full", "min")
]


@settings(max_examples=examples(1.5))
@given(
    base=st.sampled_from(UPDATE_VARIANTS),
    unknown=st.dictionaries(
        st.text(min_size=1, max_size=6).map(lambda s: "x-" + s), JSON, max_size=4
    ),
    nested=st.dictionaries(
        st.text(min_size=1, max_size=6).map(lambda s: "y-" + s), JSON, max_size=3
    ),
)
def test_unknown_keys_survive(
    base: dict[str, Any], unknown: dict[str, Any], nested: dict[str, Any]
) -> None:
    wire = {**base, **unknown}
    if isinstance(wire.get("content"), dict):
        wire["content"] = {**wire["content"], **nested}
    obj = structure_update(wire)
    assert unstructure(obj) == wire
    if not isinstance(obj, UnrecognizedSessionUpdate):
        assert obj.extra == unknown
        if nested and isinstance(wire.get("content"), dict):
            content = obj.content
            kept = content.raw if hasattr(content, "raw") else content.extra
            assert nested.items() <= kept.items()
