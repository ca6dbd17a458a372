"""The timeline: wire lines -> typed items, streams folded, v2 and v1 alike."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from acp_lite.cassettes import Cassette, from_transcript
from acp_lite.errors import CassetteError
from acp_lite.view import ViewFinding, read_timelines
from acp_lite.view.items import (
    ErrorItem,
    Item,
    Message,
    Permission,
    Plan,
    PromptAnswered,
    PromptSent,
    RawItem,
    StateChange,
    Thought,
    ToolCall,
    Update,
)
from acp_lite.view.timeline import Timeline

from .conftest import request, response, run_scenario, update, write_ndjson

Records = Callable[..., list[dict[str, Any]]]


def timeline_of(tmp_path: Path, records: list[dict[str, Any]], **kw: Any) -> Timeline:
    (timeline,) = read_timelines(write_ndjson(tmp_path / "t.ndjson", records), **kw)
    return timeline


def of(timeline: Timeline, cls: type[Item]) -> list[Any]:
    return [i for i in timeline.items if isinstance(i, cls)]


@pytest.mark.parametrize("protocol", [2, 1])
def test_chunks_join_one_message(tmp_path: Path, scenario_records: Records, protocol: int) -> None:
    t = timeline_of(tmp_path, scenario_records("streaming", protocol))
    agent = [m for m in of(t, Message) if m.role == "agent"]
    assert [m.text for m in agent] == ["Streaming a reply in several small chunks."]
    assert agent[0].chunks == agent[0].wire.count == 7
    assert list(agent[0].wire.indexes) == sorted(agent[0].wire.indexes)
    assert t.protocol_version == protocol
    assert agent[0].message_id == ("agent-1-1" if protocol == 2 else None)


def test_v2_prompt_insertion_and_user_message(tmp_path: Path, scenario_records: Records) -> None:
    t = timeline_of(tmp_path, scenario_records("streaming"))
    (sent,) = of(t, PromptSent)
    (answered,) = of(t, PromptAnswered)
    assert sent.text == "hello"
    assert answered.message_id == "user-1" and answered.stop_reason is None
    user = [m for m in of(t, Message) if m.role == "user"]
    assert [(m.message_id, m.text) for m in user] == [("user-1", "hello")]


def test_v1_prompt_response_ends_the_turn(tmp_path: Path, scenario_records: Records) -> None:
    t = timeline_of(tmp_path, scenario_records("streaming", 1))
    (answered,) = of(t, PromptAnswered)
    assert answered.stop_reason == "end_turn" and answered.message_id is None
    assert t.items[-1] is answered


@pytest.mark.parametrize("protocol", [2, 1])
def test_a_tool_call_keeps_its_status_changes(
    tmp_path: Path, scenario_records: Records, protocol: int
) -> None:
    t = timeline_of(tmp_path, scenario_records("tool_call_permission", protocol))
    (tool,) = of(t, ToolCall)
    assert tool.title == "Write notes.txt" and tool.tool_kind == "edit"
    assert [c.status for c in tool.changes] == ["pending", "in_progress", "completed"]
    assert tool.content == ["Wrote notes.txt"]  # the last update's content replaced the chunk
    assert tool.wire.count == tool.updates


@pytest.mark.parametrize("protocol", [2, 1])
def test_a_permission_request_and_its_answer(
    tmp_path: Path, scenario_records: Records, protocol: int
) -> None:
    t = timeline_of(tmp_path, scenario_records("tool_call_permission", protocol))
    (asked,) = of(t, Permission)
    assert asked.title == "Allow writing notes.txt?"
    assert asked.tool_call_id == "call-1"
    assert [o.option_kind for o in asked.options] == ["allow_once", "allow_always", "reject_once"]
    assert asked.answer == "Allow once [allow_once]"
    assert asked.wire.count == 2  # the request and the client's answer


def test_a_rejected_and_a_cancelled_permission(tmp_path: Path) -> None:
    from acp_lite import permissions

    records = run_scenario("tool_call_permission", policy=permissions.reject_once)
    (asked,) = of(timeline_of(tmp_path, records), Permission)
    assert asked.answer == "Reject [reject_once]"
    params = {"sessionId": "s-1", "title": "Run rm?", "options": []}
    cancelled = [
        request(0.1, "recv", 7, "session/request_permission", params),
        response(0.2, "send", 7, {"outcome": {"outcome": "cancelled"}}),
    ]
    (asked,) = of(timeline_of(tmp_path, cancelled), Permission)
    assert asked.answer == "cancelled" and asked.answer_time == 0.2


def test_state_changes(tmp_path: Path, scenario_records: Records) -> None:
    t = timeline_of(tmp_path, scenario_records("tool_call_permission"))
    states = of(t, StateChange)
    assert [s.state for s in states] == ["running", "requires_action", "running", "idle"]
    assert states[-1].stop_reason == "end_turn"


@pytest.mark.parametrize("protocol", [2, 1])
def test_a_failed_turn_is_an_error(
    tmp_path: Path, scenario_records: Records, protocol: int
) -> None:
    t = timeline_of(tmp_path, scenario_records("failure", protocol))
    (error,) = of(t, ErrorItem)
    # v2 ends the work with stopReason error; v1 answers the prompt with an error.
    assert error.source == ("stopReason error" if protocol == 2 else "session/prompt (id 3)")
    assert (error.code, error.message) == (-32603, "Model provider unavailable")
    (tool,) = of(t, ToolCall)
    assert tool.status == "failed"


def test_an_error_response(tmp_path: Path) -> None:
    records = [
        request(0.0, "send", 5, "session/load", {"sessionId": "nope"}),
        response(0.5, "recv", 5, error={"code": -32602, "message": "no session 'nope'"}),
    ]
    t = timeline_of(tmp_path, records)
    call, error = t.items
    assert isinstance(error, ErrorItem)
    assert (error.code, error.message) == (-32602, "no session 'nope'")
    assert error.source == "session/load (id 5)"
    assert error.gap == 0.5
    assert call.wire.count == 2 and list(error.wire.indexes) == [1]


def test_unknown_update_kinds_are_kept_whole(tmp_path: Path, scenario_records: Records) -> None:
    t = timeline_of(tmp_path, scenario_records("custom_update"))
    (custom,) = [u for u in of(t, Update) if u.update_kind.startswith("_")]
    assert custom.update_kind == "_acp_lite/progress"
    assert custom.payload["percent"] == 50
    made_up = timeline_of(tmp_path, [update(0.0, {"sessionUpdate": "weather", "sky": "blue"})])
    (item,) = made_up.items
    assert isinstance(item, Update) and item.update_kind == "weather"
    assert item.summary == '{"sky": "blue"}'


def test_thoughts_and_plans(tmp_path: Path, scenario_records: Records) -> None:
    thinking = timeline_of(tmp_path, scenario_records("thinking"))
    (thought,) = of(thinking, Thought)
    assert thought.text == "Let me think about that." and thought.kind == "thought"
    for protocol in (2, 1):
        (plan,) = of(timeline_of(tmp_path, scenario_records("plan", protocol)), Plan)
        assert plan.revisions == 3
        assert {e.status for e in plan.entries} == {"completed"}


def test_diffs_and_content_chunks(tmp_path: Path) -> None:
    diff = {"type": "diff", "path": "/w/a.py", "oldText": "x = 1\n", "newText": "x = 2\n"}
    records = [
        update(0.0, {"sessionUpdate": "tool_call_update", "toolCallId": "t", "status": "pending"}),
        update(
            0.1,
            {
                "sessionUpdate": "tool_call_content_chunk",
                "toolCallId": "t",
                "content": {"type": "content", "content": {"type": "text", "text": "step"}},
            },
        ),
        update(0.2, {"sessionUpdate": "tool_call_update", "toolCallId": "t", "content": [diff]}),
        update(
            0.3, {"sessionUpdate": "tool_call_update", "toolCallId": "t", "status": "completed"}
        ),
        update(0.4, {"sessionUpdate": "tool_call_update", "toolCallId": "t", "rawInput": {"a": 1}}),
    ]
    (tool,) = timeline_of(tmp_path, records).items
    assert isinstance(tool, ToolCall)
    assert [(d.path, d.old_text, d.new_text) for d in tool.diffs] == [
        ("/w/a.py", "x = 1\n", "x = 2\n")
    ]
    assert [(c.time, c.status) for c in tool.changes] == [(0.0, "pending"), (0.3, "completed")]
    assert (tool.raw_input, tool.raw_output) == ('{"a": 1}', None)


def test_v1_chunks_without_ids_join_while_consecutive(tmp_path: Path) -> None:
    def chunk(t: float, kind: str, text: str) -> dict[str, Any]:
        return update(t, {"sessionUpdate": kind, "content": {"type": "text", "text": text}})

    records = [
        chunk(0.0, "agent_message_chunk", "a"),
        chunk(0.1, "agent_message_chunk", "b"),
        chunk(0.2, "agent_thought_chunk", "hm"),
        chunk(0.3, "agent_message_chunk", "c"),
    ]
    t = timeline_of(tmp_path, records)
    assert [(type(i).__name__, i.text) for i in t.items] == [  # type: ignore[attr-defined]
        ("Message", "ab"),
        ("Thought", "hm"),
        ("Message", "c"),
    ]
    assert [round(i.gap, 3) for i in t.items] == [0.0, 0.2, 0.1]


def test_raw_lines_batches_and_exit(tmp_path: Path) -> None:
    batch = [
        {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "s-1"}},
        {"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": 3}},
    ]
    records = [
        {"dir": "recv", "t": 0.0, "raw": "warning: not json"},
        {"dir": "send", "t": 0.1, "msg": batch},
        {"dir": "exit", "t": 0.2, "returncode": 3},
    ]
    t = timeline_of(tmp_path, records)
    kinds = [i.kind for i in t.items]
    assert kinds == ["raw", "call", "call", "raw"]
    assert t.items[1].wire.indexes[0] == t.items[2].wire.indexes[0] == 1
    assert isinstance(t.items[3], RawItem) and "return code 3" in t.items[3].text
    assert t.lines == 2


def test_findings_sit_on_the_item_of_their_line(tmp_path: Path, scenario_records: Records) -> None:
    records = scenario_records("tool_call_permission")
    ask = next(i for i, r in enumerate(records) if "request_permission" in str(r))
    findings = [ViewFinding(ask, "ACP-PERM-001", "asked twice"), ViewFinding(999, "X-1", "far")]
    t = timeline_of(tmp_path, records, findings=findings)
    (asked,) = of(t, Permission)
    assert [f.requirement for f in asked.findings] == ["ACP-PERM-001"]
    assert [f.requirement for f in t.unplaced] == ["X-1"]


def test_cassettes_and_transcript_objects(tmp_path: Path, scenario_records: Records) -> None:
    from acp_lite import connect_in_memory
    from acp_lite.testing import InProcessAgent

    plain = write_ndjson(tmp_path / "t.ndjson", scenario_records("streaming"))
    cassette = from_transcript(plain, agent="ref")
    two = cassette.with_recordings(cassette.recordings)
    two.save(tmp_path / "c.acp.jsonl")
    timelines = read_timelines(tmp_path / "c.acp.jsonl")
    (expected,) = read_timelines(plain)
    assert len(timelines) == 2
    for t in timelines:
        assert [i.kind for i in t.items] == [i.kind for i in expected.items]
        assert t.lines == expected.lines
    assert [t.connection for t in timelines] == [0, 1]
    assert isinstance(Cassette.load(tmp_path / "c.acp.jsonl"), Cassette)
    with connect_in_memory(InProcessAgent("thinking")) as client:
        client.new_session(cwd="/tmp").run("hi")
        (live,) = read_timelines(client.transcript)
    assert [m.text for m in live.items if isinstance(m, Thought)] == ["Let me think about that."]


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("not json\n", "t.ndjson:1: not JSON"),
        ('{"dir": "sideways", "t": 0}\n', "t.ndjson:1: not a transcript record"),
        ("[1, 2]\n", "t.ndjson:1: not a transcript record"),
        ('{"acpCassette": 99}\n', "cassette format 99"),
    ],
)
def test_malformed_files_name_the_line(tmp_path: Path, text: str, says: str) -> None:
    path = tmp_path / "t.ndjson"
    path.write_text(text)
    with pytest.raises(CassetteError, match=says):
        read_timelines(path)


def test_deep_json_is_kept_as_text_and_brackets_in_text_are_not_depth(tmp_path: Path) -> None:
    deep: Any = "x"
    for _ in range(400):
        deep = [deep]
    text = "{[" * 300
    chunk = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}}
    records = [update(0.0, {"sessionUpdate": "weird", "v": deep}), update(0.1, chunk)]
    t = timeline_of(tmp_path, records)
    raw, message = t.items
    assert isinstance(raw, RawItem) and raw.text.startswith('{"dir"')
    assert isinstance(message, Message) and message.text == text
