"""Properties of the v1 translator: random v1 update streams, plus garbage.

Whatever a v1 agent writes, ``receive_data`` never raises, the transcript holds
every line, and every v1 update of an open session appears in the session's
event log (translated, or kept as an ``UnrecognizedSessionUpdate``) with its
payload as received.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis_budget import examples

from acp_lite.core import ClientConnection
from acp_lite.limits import Limits

V1_INIT = {
    "protocolVersion": 1,
    "agentInfo": {"name": "v1-agent", "version": "0.1"},
    "agentCapabilities": {"loadSession": True},
}
MODES = {
    "currentModeId": "ask",
    "availableModes": [{"id": "ask", "name": "Ask"}, {"id": "code", "name": "Code"}],
}

scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)  # JSON has neither
    | st.text(max_size=8)
)
json_values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=8,
)
texts = st.text(max_size=12)
ids = st.sampled_from(["t1", "t2", "m1", "x"])
mode_ids = st.sampled_from(["ask", "code", "nope"])
blocks = st.fixed_dictionaries({"type": st.just("text"), "text": texts}) | json_values
statuses = st.sampled_from(["pending", "in_progress", "completed", "failed", "weird"])
diffs = st.fixed_dictionaries(
    {"type": st.just("diff"), "path": st.sampled_from(["/a", "/b/c.py"]), "newText": texts},
    optional={"oldText": st.none() | texts, "_meta": json_values},
)
tool_content = st.lists(
    diffs
    | st.fixed_dictionaries({"type": st.just("content"), "content": blocks})
    | st.fixed_dictionaries({"type": st.just("terminal"), "terminalId": ids})
    | json_values,
    max_size=3,
)
tool_fields = {
    "title": texts | json_values,
    "kind": st.sampled_from(["read", "edit", "other", "bogus"]),
    "status": statuses,
    "content": tool_content | json_values,
    "locations": st.lists(st.fixed_dictionaries({"path": st.just("/a")}), max_size=2),
    "rawInput": json_values,
    "_meta": json_values,
}
options = st.lists(
    st.fixed_dictionaries(
        {
            "id": st.sampled_from(["mode", "model", "effort"]),
            "name": texts,
            "type": st.sampled_from(["select", "boolean", "other"]),
            "currentValue": json_values,
        },
        optional={"options": json_values},
    )
    | json_values,
    max_size=3,
)


def _update(tag: str, required: dict[str, Any], optional: dict[str, Any]) -> Any:
    return st.fixed_dictionaries({"sessionUpdate": st.just(tag), **required}, optional=optional)


chunk_fields = {"messageId": st.none() | ids, "_meta": json_values}
v1_updates = st.one_of(
    *[
        _update(tag, {"content": blocks}, chunk_fields)
        for tag in ("user_message_chunk", "agent_message_chunk", "agent_thought_chunk")
    ],
    _update("tool_call", {"toolCallId": ids}, tool_fields),
    _update("tool_call_update", {"toolCallId": ids}, tool_fields),
    _update("tool_call", {}, tool_fields),  # missing toolCallId
    _update(
        "plan",
        {
            "entries": st.lists(
                st.fixed_dictionaries(
                    {
                        "content": texts,
                        "priority": st.sampled_from(["high", "low"]),
                        "status": statuses,
                    }
                )
                | json_values,
                max_size=3,
            )
            | json_values
        },
        {},
    ),
    _update("available_commands_update", {"availableCommands": st.lists(json_values)}, {}),
    _update("current_mode_update", {"currentModeId": mode_ids | json_values}, {}),
    _update("config_option_update", {"configOptions": options | json_values}, {}),
    _update("session_info_update", {}, {"title": texts | st.none(), "updatedAt": json_values}),
    _update("usage_update", {"used": st.integers(), "size": st.integers()}, {"cost": json_values}),
    _update("notice", {"severity": st.sampled_from(["info", "warning"]), "title": texts}, {}),
    _update("compaction_update", {"compactionId": ids, "status": texts}, {}),
    _update("compaction_summary_chunk", {"compactionId": ids, "content": blocks}, {}),
    _update("state_update", {"state": st.sampled_from(["idle", "running"])}, {}),  # v2-only tag
    st.fixed_dictionaries({"sessionUpdate": texts}, optional={"x": json_values}),
    st.dictionaries(st.text(max_size=6), json_values, max_size=3),  # no tag at all
)

# One step of what the agent writes (or the client does).
steps = st.one_of(
    st.tuples(st.just("update"), st.sampled_from(["s1", "s1", "s1", "other"]), v1_updates),
    st.tuples(st.just("garbage_update"), st.just("s1"), json_values),  # update not an object
    st.tuples(
        st.just("line"),
        st.just(""),
        st.binary(max_size=20) | json_values.map(lambda v: json.dumps(v).encode()),
    ),
    st.tuples(st.just("prompt"), st.just("s1"), texts),
    st.tuples(
        st.just("answer"),
        st.just("s1"),
        st.sampled_from(["end_turn", "cancelled", "error", "bad"]),
    ),
    st.tuples(st.just("cancel"), st.just("s1"), st.none()),
    st.tuples(st.just("permission"), st.just("s1"), json_values | st.just({"toolCallId": "t1"})),
)


def _line(obj: Any) -> bytes:
    return json.dumps(obj).encode() + b"\n"


def _open(conn: ClientConnection, modes: bool) -> None:
    init = conn.initialize({"protocolVersion": 2, "info": {"name": "c", "version": "1"}})
    conn.receive_data(_line({"jsonrpc": "2.0", "id": init.id, "result": V1_INIT}))
    new = conn.send_request("session/new", {"cwd": "/", "mcpServers": []})
    res: dict[str, Any] = {"sessionId": "s1"}
    if modes:
        res["modes"] = MODES
    conn.receive_data(_line({"jsonrpc": "2.0", "id": new.id, "result": res}))
    conn.data_to_send()
    assert conn.protocol_version == 1 and "s1" in conn.sessions


@settings(max_examples=examples(3))
@given(
    st.lists(steps, max_size=25),
    st.booleans(),
    st.booleans(),
    st.booleans(),
)
def test_random_v1_streams_never_raise_and_lose_nothing(
    script: list[tuple[str, str, Any]], modes: bool, keep_raw: bool, update_events: bool
) -> None:
    conn = ClientConnection(Limits(keep_raw_updates=keep_raw), update_events=update_events)
    _open(conn, modes)
    expected: list[Any] = []  # the v1 updates of s1, in order
    received: list[bytes] = []
    prompt_id: int | None = None
    perm = 0
    for kind, sid, value in script:
        data: bytes
        if kind == "update" or kind == "garbage_update":
            params = {"sessionId": sid, "update": value}
            data = _line({"jsonrpc": "2.0", "method": "session/update", "params": params})
            if sid == "s1" and isinstance(value, dict):
                expected.append(value)  # an object: a (maybe malformed) update
        elif kind == "line":
            data = value.replace(b"\n", b" ") + b"\n"
        elif kind == "prompt":
            if prompt_id is None:
                entry, _ = conn.prompt("s1", [{"type": "text", "text": value}])
                prompt_id = entry.id
            conn.data_to_send()
            continue
        elif kind == "cancel":
            conn.cancel("s1")
            conn.data_to_send()
            continue
        elif kind == "permission":
            perm += 1
            params = {
                "sessionId": sid,
                "toolCall": value,
                "options": [{"optionId": "a", "name": "A", "kind": "allow_once"}],
            }
            req = {"jsonrpc": "2.0", "id": f"p{perm}", "method": "session/request_permission"}
            data = _line({**req, "params": params})
        else:  # answer the prompt
            if prompt_id is None:
                continue
            if value == "error":
                body: dict[str, Any] = {"error": {"code": -32603, "message": "boom"}}
            elif value == "bad":
                body = {"result": ["not", "an", "object"]}
            else:
                body = {"result": {"stopReason": value}}
            data = _line({"jsonrpc": "2.0", "id": prompt_id, **body})
            prompt_id = None
        received.extend(data.split(b"\n"))
        conn.receive_data(data)  # must not raise
        conn.next_events()
        conn.changed_sessions()
        conn.data_to_send()

    recv = [e.line for e in conn.transcript if e.direction == "recv"]
    assert recv[2:] == [x for x in received if x and x != b"\r"]
    model = conn.sessions["s1"].model
    translated = [e for e in model.events if e.source == "v1:session/update"]
    assert len(translated) == len(expected)
    for event, sent_update in zip(translated, expected, strict=True):
        assert event.update is not None  # decodes
        assert not event.synthesized
        if keep_raw:
            assert event.raw == sent_update
    for event in model.events:
        if event.source == "v1:synthesized":
            assert event.tag in ("state_update", "user_message")
    # Every prompt answered ended: rejected (an error before any update), or
    # inserted and done; only an unanswered one may be pending.
    for sub in model.submissions:
        if sub.request_id == prompt_id:
            continue
        assert sub.status == "rejected" or (sub.status == "inserted" and sub.done), sub
    if prompt_id is None:
        assert model.outstanding() == []
    # The model is still readable.
    repr(model)
    model.text()
    list(model.timeline)
