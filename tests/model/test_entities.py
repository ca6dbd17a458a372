"""Entities, timeline and patch semantics (spec 000: "Entity IDs", "Message IDs", ...)."""

from __future__ import annotations

import base64

import attrs
import pytest

from acp_lite.model import SessionModel
from acp_lite.protocol import UNSET

from .helpers import chunk, feed, message, rules, terminal, text, tool


def test_entities_are_keyed_by_kind_and_id() -> None:
    m = SessionModel("s")
    feed(
        m,
        message("x", ["answer"]),
        message("x", ["reasoning"], kind="agent_thought"),
        message("x", ["question"], kind="user_message"),
        message("x", ["to child"], kind="session_message"),
        tool("x", title="tool"),
        terminal("x", command="ls"),
    )
    kinds = [(e.kind, e.id) for e in m.timeline]
    assert kinds == [
        ("agent_message", "x"),
        ("agent_thought", "x"),
        ("user_message", "x"),
        ("session_message", "x"),
        ("tool_call", "x"),
        ("terminal", "x"),
    ]
    # A thought with the id of an agent message leaves the message unchanged.
    feed(m, message("x", ["more reasoning"], kind="agent_thought"))
    assert m.entity("agent_message", "x").text == "answer"
    assert m.entity("agent_thought", "x").text == "more reasoning"


def test_update_for_unseen_id_creates_entity_then_applies() -> None:
    m = SessionModel("s")
    out = base64.b64encode(b"out").decode()
    feed(
        m,
        chunk("m1", "B"),
        chunk("t1", "think", kind="agent_thought"),
        chunk("u1", "hi", kind="user_message"),
        chunk("s1", "note", kind="session_message"),
        {
            "sessionUpdate": "tool_call_content_chunk",
            "toolCallId": "tc",
            "content": {"type": "content", "content": text("partial")},
        },
        {"sessionUpdate": "terminal_output_chunk", "terminalId": "term", "data": out},
        {"sessionUpdate": "compaction_summary_chunk", "compactionId": "c1", "content": text("S")},
    )
    assert m.entity("agent_message", "m1").text == "B"
    assert m.entity("agent_thought", "t1").text == "think"
    assert m.entity("user_message", "u1").text == "hi"
    assert m.entity("session_message", "s1").text == "note"
    call = m.entity("tool_call", "tc")
    assert (call.text, call.status, call.tool_kind, call.title) == (
        "partial",
        "pending",
        "other",
        None,
    )
    assert m.entity("terminal", "term").output == b"out"
    comp = m.entity("compaction", "c1")
    assert (comp.status, comp.text) == ("in_progress", "S")
    assert rules(m) == []


def test_first_update_fixes_timeline_position() -> None:
    m = SessionModel("s")
    feed(
        m,
        chunk("m1", "a"),
        tool("t1", status="in_progress"),
        chunk("m2", "x"),
        chunk("m1", "b"),  # a new id did not end m1
        {"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"},
        tool("t1", status="completed"),
        chunk("m1", "c"),  # patched in place even after idle
    )
    assert [(e.kind, e.id, e.position) for e in m.timeline] == [
        ("agent_message", "m1", 0),
        ("tool_call", "t1", 1),
        ("agent_message", "m2", 2),
    ]
    assert m.entity("agent_message", "m1").text == "abc"
    assert m.entity("tool_call", "t1").status == "completed"
    assert m.text() == "abc\nx"


def test_seed_example_a_then_chunk_b_then_c_then_chunk() -> None:
    """Spec 000 "Message IDs": [A] + chunk B = [A, B]; [C] replaces; chunks append to [C]."""
    m = SessionModel("s")
    feed(m, message("m", ["A"]), chunk("m", "B"))
    msg = m.entity("agent_message", "m")
    assert [b.text for b in msg.content] == ["A", "B"]
    feed(m, message("m", ["C"]))
    assert [b.text for b in msg.content] == ["C"]
    feed(m, chunk("m", "D"))
    assert [b.text for b in msg.content] == ["C", "D"]
    assert msg.text == "CD"


@pytest.mark.parametrize(
    "kind", ["user_message", "agent_message", "agent_thought", "session_message"]
)
def test_message_content_patch_omitted_null_empty_value(kind: str) -> None:
    m = SessionModel("s")
    feed(m, chunk("m", "one", kind=kind), chunk("m", "two", kind=kind))
    msg = m.entity(kind, "m")
    feed(m, message("m", kind=kind, _meta={"k": 1}))  # content omitted: unchanged
    assert msg.text == "onetwo" and msg.meta == {"k": 1}
    feed(m, message("m", None, kind=kind))  # null clears
    assert msg.content == [] and msg.text == ""
    feed(m, chunk("m", "three", kind=kind), message("m", [], kind=kind))  # [] clears
    assert msg.content == []
    feed(m, message("m", ["four"], kind=kind), chunk("m", "five", kind=kind))
    assert msg.text == "fourfive"
    assert len(m.timeline) == 1


def test_meta_patches_by_top_level_key() -> None:
    m = SessionModel("s")
    feed(m, message("m", ["A"], _meta={"a": 1, "b": {"x": 1}, "c": 3}))
    msg = m.entity("agent_message", "m")
    feed(m, message("m", ["B"], _meta={"b": {"y": 2}, "a": None}))  # replaces content too
    assert msg.meta == {"b": {"y": 2}, "c": 3}  # nested objects are not merged
    assert msg.text == "B"
    feed(m, message("m"))
    assert msg.meta == {"b": {"y": 2}, "c": 3}
    feed(m, message("m", _meta=None))
    assert msg.meta is None
    feed(m, message("m", _meta={"z": 0}))
    assert msg.meta == {"z": 0}


def test_chunk_meta_is_chunk_scoped() -> None:
    m = SessionModel("s")
    feed(m, message("m", ["A"], _meta={"keep": True}), chunk("m", "B", _meta={"chunk": 1}))
    msg = m.entity("agent_message", "m")
    assert msg.meta == {"keep": True}
    assert msg.content[1].text == "B"


def test_tool_call_defaults_and_patches() -> None:
    m = SessionModel("s")
    feed(m, tool("t"))
    call = m.entity("tool_call", "t")
    assert (call.name, call.title, call.tool_kind, call.status) == (None, None, "other", "pending")
    assert (call.content, call.locations, call.raw_input, call.capabilities) == ([], [], None, None)
    feed(
        m,
        tool(
            "t",
            name="read",
            title="Read file",
            kind="read",
            status="in_progress",
            locations=[{"path": "/a"}],
            rawInput={"p": 1},
            _meta={"m": 1},
        ),
    )
    assert (call.name, call.title, call.tool_kind, call.status) == (
        "read",
        "Read file",
        "read",
        "in_progress",
    )
    assert call.raw_input == {"p": 1} and call.meta == {"m": 1}
    assert [loc.path for loc in call.locations] == ["/a"]
    feed(m, tool("t", rawOutput={"ok": True}))  # omitted fields unchanged
    assert (call.title, call.tool_kind, call.raw_input, call.raw_output) == (
        "Read file",
        "read",
        {"p": 1},
        {"ok": True},
    )
    feed(m, tool("t", title=None, kind=None, status=None, locations=None, rawInput=None))
    assert (call.title, call.tool_kind, call.status, call.locations, call.raw_input) == (
        None,
        "other",
        "pending",
        [],
        None,
    )
    feed(m, tool("t", status="_custom"))  # unknown statuses are kept and still live
    assert call.status == "_custom" and not call.is_final


def test_tool_call_content_chunk_appends_and_update_replaces() -> None:
    m = SessionModel("s")
    item = {"type": "content", "content": text("x")}
    feed(
        m,
        tool("t", content=[{"type": "content", "content": text("A")}]),
        {"sessionUpdate": "tool_call_content_chunk", "toolCallId": "t", "content": item},
        {"sessionUpdate": "tool_call_content_chunk", "toolCallId": "t", "content": item},
    )
    call = m.entity("tool_call", "t")
    assert call.text == "Axx" and len(call.content) == 3
    feed(m, tool("t", content=[{"type": "content", "content": text("final")}]))
    assert call.text == "final" and len(call.content) == 1
    feed(m, tool("t", content=[]))
    assert call.content == []
    feed(m, {"sessionUpdate": "tool_call_content_chunk", "toolCallId": "t", "content": item})
    feed(m, tool("t", content=None))
    assert call.content == []


def test_terminal_output_chunks_append_bytes_per_terminal() -> None:
    m = SessionModel("s")

    def out(tid: str, data: bytes) -> dict[str, object]:
        return {
            "sessionUpdate": "terminal_output_chunk",
            "terminalId": tid,
            "data": base64.b64encode(data).decode(),
        }

    feed(m, terminal("a", command="make"), out("a", b"\x00ab"), out("b", b"other"), out("a", b"c"))
    a = m.entity("terminal", "a")
    assert a.output == b"\x00abc" and a.command == "make" and not a.exited
    assert m.entity("terminal", "b").output == b"other"
    feed(m, terminal("a", output={"data": base64.b64encode(b"snap").decode()}), out("a", b"!"))
    assert a.output == b"snap!"
    feed(m, terminal("a", output=None))
    assert a.output is None
    feed(m, terminal("a", exitStatus={"exitCode": 0}, cwd="/w"))
    assert a.exited and a.exit_status.exit_code == 0 and a.cwd == "/w" and a.command == "make"
    feed(m, terminal("a", command=None))
    assert a.command is None


def test_session_message_participants_patch() -> None:
    m = SessionModel("s")
    feed(m, message("sm", ["task"], kind="session_message", senderSessionId="parent"))
    msg = m.entity("session_message", "sm")
    assert (msg.sender_session_id, msg.recipient_session_id) == ("parent", None)
    feed(
        m,
        chunk("sm", " more", kind="session_message"),
        message("sm", kind="session_message", senderMessageId="p-m1"),
    )
    assert (msg.sender_session_id, msg.sender_message_id, msg.text) == (
        "parent",
        "p-m1",
        "task more",
    )
    feed(m, message("sm", kind="session_message", senderSessionId=None))
    assert msg.sender_session_id is None and msg.sender_message_id == "p-m1"


def test_compaction_status_summary_and_error_patches() -> None:
    m = SessionModel("s")
    upd = {"sessionUpdate": "compaction_update", "compactionId": "c"}
    chk = {"sessionUpdate": "compaction_summary_chunk", "compactionId": "c"}
    feed(
        m,
        {**upd, "status": "in_progress"},
        {**chk, "content": text("a")},
        {**chk, "content": text("b")},
    )
    comp = m.entity("compaction", "c")
    assert comp.text == "ab" and comp.content is comp.summary
    feed(m, {**upd, "status": "in_progress", "summary": [text("S")]}, {**chk, "content": text("+")})
    assert comp.text == "S+"
    feed(m, {**upd, "status": "failed", "error": "boom", "summary": []})
    assert (comp.status, comp.error, comp.summary) == ("failed", "boom", [])
    feed(m, {**upd, "status": "_custom", "error": None})
    assert (comp.status, comp.error) == ("_custom", None)


def test_plan_update_replaces_whole_plan_and_removal() -> None:
    m = SessionModel("s")

    def plan(pid: str, *entries: str) -> dict[str, object]:
        items = [{"content": e, "priority": "medium", "status": "pending"} for e in entries]
        return {
            "sessionUpdate": "plan_update",
            "plan": {"type": "items", "planId": pid, "entries": items},
        }

    feed(m, plan("p1", "a", "b"), plan("p2", "x"), plan("p1", "c"))
    assert [e.content for e in m.entity("plan", "p1").entries] == ["c"]
    assert m.latest_plan is m.entity("plan", "p1")
    feed(m, {"sessionUpdate": "plan_removed", "planId": "p1"})
    assert m.entity("plan", "p1").removed
    assert m.latest_plan is m.entity("plan", "p2")
    feed(
        m,
        {
            "sessionUpdate": "plan_update",
            "plan": {"type": "markdown", "planId": "p3", "content": "# hi"},
        },
        {"sessionUpdate": "plan_update", "plan": {"type": "_mine", "planId": "p4"}},
    )
    assert m.entity("plan", "p3").plan_type == "markdown" and m.entity("plan", "p3").entries == []
    assert m.entity("plan", "p4").plan_type == "_mine"
    assert [p.id for p in m.plans] == ["p1", "p2", "p3", "p4"]


def test_subagent_fields_patch() -> None:
    m = SessionModel("s")
    up = {"sessionUpdate": "subagent_update", "sessionId": "child"}
    feed(m, {**up, "title": "Helper", "state": {"state": "running"}, "cwd": "/c"})
    sub = m.entity("subagent", "child")
    assert (sub.title, sub.state.state, sub.cwd) == ("Helper", "running", "/c")
    feed(m, {**up, "description": "does things"})
    assert (sub.title, sub.description) == ("Helper", "does things")
    feed(m, {**up, "state": None, "additionalDirectories": ["/x"]})
    assert sub.state is None and sub.additional_directories == ["/x"]


def test_usage_used_size_replaced_cost_patched() -> None:
    m = SessionModel("s")
    assert m.usage is None
    base = {"sessionUpdate": "usage_update"}
    feed(m, {**base, "used": 10, "size": 100, "cost": {"amount": 0.5, "currency": "USD"}})
    assert m.usage is not None
    assert (m.usage.used, m.usage.size, m.usage.cost.amount) == (10, 100, 0.5)
    feed(m, {**base, "used": 20, "size": 100})  # cost omitted: unchanged
    assert (m.usage.used, m.usage.cost.amount) == (20, 0.5)
    feed(m, {**base, "used": 5, "size": 50, "cost": {"amount": 3, "currency": "credits"}})
    assert (m.usage.size, m.usage.cost.currency) == (50, "credits")
    feed(m, {**base, "used": 5, "size": 50, "cost": None})
    assert m.usage.cost is None


def test_config_commands_and_session_info_are_current_values() -> None:
    m = SessionModel("s")
    cmd = {"type": "command", "name": "plan", "description": "Make a plan"}
    opt = {"type": "boolean", "configId": "fast", "name": "Fast", "currentValue": True}
    feed(
        m,
        {"sessionUpdate": "available_commands_update", "availableCommands": [cmd]},
        {"sessionUpdate": "config_option_update", "configOptions": [opt]},
        {
            "sessionUpdate": "session_info_update",
            "title": "T1",
            "updatedAt": "2026-01-01T00:00:00Z",
            "_meta": {"a": 1},
        },
        {"sessionUpdate": "session_info_update", "_meta": {"b": 2}},
    )
    assert [c.name for c in m.available_commands] == ["plan"]
    assert [o.config_id for o in m.config_options] == ["fast"]
    assert rules(m) == []
    assert (m.title, m.session_info.updated_at, m.session_info.meta) == (
        "T1",
        "2026-01-01T00:00:00Z",
        {"a": 1, "b": 2},
    )
    feed(
        m,
        {"sessionUpdate": "available_commands_update", "availableCommands": []},
        {"sessionUpdate": "session_info_update", "title": None},
    )
    assert m.available_commands == [] and m.title is None
    assert not m.timeline  # current values are not timeline entities


def test_setup_response_fills_only_values_not_reported_yet() -> None:
    m = SessionModel("s")
    cmd = {"type": "command", "name": "late", "description": "from update"}
    feed(m, {"sessionUpdate": "available_commands_update", "availableCommands": [cmd]})
    m.setup_response(
        {"sessionId": "s", "availableCommands": [{"name": "early"}], "configOptions": [{"id": "x"}]}
    )
    assert [c.name for c in m.available_commands] == ["late"]
    assert m.config_options == [{"id": "x"}]


def test_text_reads_are_incremental_and_correct() -> None:
    m = SessionModel("s")
    expected = ""
    for i in range(50):
        feed(m, chunk("m", f"{i},"))
        expected += f"{i},"
        assert m.entity("agent_message", "m").text == expected
    feed(
        m,
        {
            "sessionUpdate": "agent_message_chunk",
            "messageId": "m",
            "content": {"type": "image", "data": "AA==", "mimeType": "image/png"},
        },
    )
    assert m.text() == expected
    feed(m, message("m", ["short"]))
    assert m.text() == "short"


def test_entity_lookup_errors_are_clear() -> None:
    m = SessionModel("s")
    feed(m, chunk("m1", "x", kind="agent_thought"))
    with pytest.raises(KeyError, match="agent_thought with that id"):
        m.entity("agent_message", "m1")
    with pytest.raises(KeyError, match="unknown entity kind"):
        m.entity("bogus", "m1")
    assert m.get_entity("agent_message", "m1") is None
    assert m.get_entity("agent_thought", "m1") is not None


def test_unset_is_never_stored_in_entities() -> None:
    m = SessionModel("s")
    feed(
        m,
        tool("t"),
        terminal("x"),
        message("m"),
        {"sessionUpdate": "subagent_update", "sessionId": "c"},
        {"sessionUpdate": "compaction_update", "compactionId": "c", "status": "completed"},
    )
    assert len(m.timeline) == 5
    for ent in m.timeline:
        for field in attrs.fields(type(ent)):
            assert getattr(ent, field.name) is not UNSET, (ent.kind, field.name)


def test_text_read_after_every_chunk_stays_correct_when_old_text_is_kept() -> None:
    """The cache grows its string in place only when nobody else holds it; a text
    returned earlier must never change."""
    m = SessionModel("s")
    feed(m, chunk("m", "a"))
    msg = m.entity("agent_message", "m")
    seen = [msg.text]
    for part in "bcdef":
        feed(m, chunk("m", part))
        seen.append(msg.text)
        msg.text  # noqa: B018 - a second read without a new chunk
    assert seen == ["a", "ab", "abc", "abcd", "abcde", "abcdef"]
    feed(m, message("m", ["X"]), chunk("m", "Y"))
    assert msg.text == "XY" and seen[-1] == "abcdef"


def test_tool_call_entity_keeps_unknown_fields() -> None:
    from acp_lite.model import SessionModel
    from acp_lite.protocol import structure_update

    model = SessionModel("s")
    base = {"sessionUpdate": "tool_call_update", "toolCallId": "t1"}
    model.apply(structure_update({**base, "title": "x", "_vendor": 1, "future": {"a": 1}}))
    model.apply(structure_update({**base, "future": {"a": 2}}))
    entity = model.entity("tool_call", "t1")
    assert entity.extra == {"_vendor": 1, "future": {"a": 2}}
    assert entity.title == "x"
