"""``NO_EXTRA``: the one shared, read-only, empty ``extra`` of decoded objects without
unknown keys (docs/architecture.md, "Wire layer")."""

from __future__ import annotations

import copy
import json
import pickle
from collections.abc import Callable
from typing import Any

import attrs
import pytest

from acp_lite.protocol import (
    AgentMessageChunk,
    Notification,
    SessionUpdate,
    TextContent,
    ToolCallUpdate,
    converter,
    decode_line,
    encode_message,
    jsonrpc,
    unstructure,
)
from acp_lite.protocol._runtime import NO_EXTRA

# orjson is tested when it is active (the `fast` extra installed); no skips.
BACKENDS = ["json", "orjson"] if jsonrpc.JSON_BACKEND == "orjson" else ["json"]

MUTATIONS: list[tuple[str, Callable[[dict[str, Any]], Any]]] = [
    ("setitem", lambda d: d.__setitem__("k", 1)),
    ("delitem", lambda d: d.__delitem__("k")),
    ("ior", lambda d: d.__ior__({"k": 1})),
    ("setdefault", lambda d: d.setdefault("k", 1)),
    ("update", lambda d: d.update(k=1)),
    ("update-empty", lambda d: d.update()),
    ("pop", lambda d: d.pop("k", None)),
    ("popitem", lambda d: d.popitem()),
    ("clear", lambda d: d.clear()),
]


@pytest.mark.parametrize("mutate", [m for _, m in MUTATIONS], ids=[n for n, _ in MUTATIONS])
def test_mutation_raises_a_helpful_type_error(mutate: Callable[[dict[str, Any]], Any]) -> None:
    with pytest.raises(TypeError, match=r"read-only.*assign a new dict"):
        mutate(NO_EXTRA)
    assert NO_EXTRA == {} and len(NO_EXTRA) == 0


def test_augmented_assignment_on_a_decoded_object_raises() -> None:
    block = converter.structure({"type": "text", "text": "x"}, TextContent)
    assert block.extra is NO_EXTRA
    with pytest.raises(TypeError, match="assign a new dict"):
        block.extra["zz"] = 1
    with pytest.raises(TypeError):
        block.extra |= {"zz": 1}
    block.extra = {"zz": 1}  # the documented way
    assert unstructure(block) == {"type": "text", "text": "x", "zz": 1}
    assert NO_EXTRA == {}


def test_it_reads_like_an_empty_dict() -> None:
    assert NO_EXTRA == {} and {}.__eq__(NO_EXTRA) and not NO_EXTRA
    assert isinstance(NO_EXTRA, dict) and repr(NO_EXTRA) == "{}"
    assert list(NO_EXTRA) == [] and NO_EXTRA.get("k") is None and "k" not in NO_EXTRA
    assert json.dumps(NO_EXTRA) == "{}"
    assert {**NO_EXTRA, "a": 1} == {"a": 1}
    for made in (NO_EXTRA | {"a": 1}, NO_EXTRA.copy(), dict(NO_EXTRA)):
        assert type(made) is dict
        made["b"] = 2  # a new, ordinary dict
    assert NO_EXTRA == {}


@pytest.mark.parametrize(
    "clone",
    [copy.copy, copy.deepcopy, lambda d: pickle.loads(pickle.dumps(d))],
    ids=["copy", "deepcopy", "pickle"],
)
def test_copies_and_pickles_are_plain_dicts(clone: Callable[[Any], Any]) -> None:
    c = clone(NO_EXTRA)
    assert type(c) is dict and c == {} and c is not NO_EXTRA
    c["k"] = 1
    assert NO_EXTRA == {}


@pytest.mark.parametrize(
    "clone",
    [copy.deepcopy, lambda o: pickle.loads(pickle.dumps(o))],
    ids=["deepcopy", "pickle"],
)
def test_deep_copies_of_decoded_objects_get_a_mutable_extra(clone: Callable[[Any], Any]) -> None:
    update: Any = converter.structure(
        {
            "sessionUpdate": "agent_message_chunk",
            "messageId": "m",
            "content": {"type": "text", "text": "x"},
        },
        SessionUpdate,  # type: ignore[arg-type]
    )
    assert update.extra is NO_EXTRA and update.content.extra is NO_EXTRA
    c = clone(update)
    assert c == update
    assert type(c.extra) is dict and type(c.content.extra) is dict
    c.extra["k"] = 1
    c.content.extra["k"] = 2
    assert NO_EXTRA == {} and update.extra == {}


def test_user_built_objects_get_their_own_dict() -> None:
    a, b = TextContent(text="a"), TextContent(text="b")
    assert a.extra is not NO_EXTRA and a.extra is not b.extra
    a.extra["zz"] = 1
    assert b.extra == {} and NO_EXTRA == {}
    u = ToolCallUpdate(tool_call_id="c")
    u.extra["vendor"] = True
    assert unstructure(u)["vendor"] is True
    chunk = AgentMessageChunk(message_id="m", content=a)
    assert chunk.extra is not NO_EXTRA and type(chunk.extra) is dict
    # attrs.evolve of a decoded object shares the read-only extra (a shallow copy):
    # assigning a new dict is the way to add keys.
    decoded = converter.structure({"type": "text", "text": "x"}, TextContent)
    evolved = attrs.evolve(decoded, text="y", extra={"k": 1})
    assert evolved.extra == {"k": 1} and decoded.extra is NO_EXTRA


def test_decoded_objects_with_unknown_keys_get_their_own_dict() -> None:
    a = converter.structure({"type": "text", "text": "x", "zz": 1}, TextContent)
    b = converter.structure({"type": "text", "text": "x", "zz": 1}, TextContent)
    assert a.extra == {"zz": 1} and a.extra is not b.extra and a.extra is not NO_EXTRA
    a.extra["more"] = 2
    assert b.extra == {"zz": 1}


WIRE: list[dict[str, Any]] = [
    {
        "sessionUpdate": "agent_message_chunk",
        "messageId": "m",
        "content": {"type": "text", "text": "x"},
    },
    {
        "sessionUpdate": "agent_thought_chunk",
        "messageId": "m",
        "content": {"type": "text", "text": "x"},
    },
    {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "c",
        "status": "completed",
        "content": [{"type": "content", "content": {"type": "text", "text": "out"}}],
        "locations": [{"path": "/a", "line": 3}],
    },
    {"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn", "background": []},
    {"sessionUpdate": "plan_update", "planId": "p", "content": {"type": "items", "entries": []}},
]


@pytest.mark.parametrize("wire", WIRE, ids=[w["sessionUpdate"] for w in WIRE])
@pytest.mark.parametrize("backend", BACKENDS)
def test_unstructure_and_encode_of_decoded_objects_are_unchanged(
    wire: dict[str, Any], backend: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    if backend == "json":
        monkeypatch.setattr(jsonrpc, "_loads", jsonrpc._std_loads)
        monkeypatch.setattr(jsonrpc, "_dumps", jsonrpc._std_dumps)
    update: Any = converter.structure(wire, SessionUpdate)  # type: ignore[arg-type]
    assert unstructure(update) == wire
    line = json.dumps(
        {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s", "update": wire}}
    ).encode()
    msg = decode_line(line)
    assert isinstance(msg, Notification) and msg.params.extra is NO_EXTRA
    assert json.loads(encode_message(msg)) == json.loads(line)
    # Encoding the shared empty extra directly works with the active backend too.
    assert json.loads(jsonrpc._dumps({"extra": NO_EXTRA})) == {"extra": {}}
    assert NO_EXTRA == {}
