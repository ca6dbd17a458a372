"""pytest_acp.normalize: placeholders, redaction, views, text redaction, normalisers."""

from __future__ import annotations

import base64
import itertools
import uuid
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis_budget import examples

from pytest_acp.normalize import IdMap, extract_updates, normalize


def chunk(mid: str, text: str, tag: str = "agent_message_chunk") -> dict[str, Any]:
    return {"sessionUpdate": tag, "messageId": mid, "content": {"type": "text", "text": text}}


def turn(ids: dict[str, str], pieces: list[str]) -> list[dict[str, Any]]:
    """A small but complete turn whose ids come from ``ids``, text split as ``pieces``."""
    sid = ids["session"]
    updates: list[dict[str, Any]] = [
        {"sessionUpdate": "state_update", "state": "running"},
        {
            "sessionUpdate": "user_message",
            "messageId": ids["user"],
            "content": [{"type": "text", "text": "hi"}],
        },
        *(chunk(ids["agent"], p) for p in pieces),
        {"sessionUpdate": "tool_call_update", "toolCallId": ids["tool"], "status": "pending"},
        {"sessionUpdate": "tool_call_update", "toolCallId": ids["tool"], "status": "completed"},
        {"sessionUpdate": "subagent_update", "sessionId": ids["child"], "title": "helper"},
        {"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"},
    ]
    return [{"sessionId": sid, "update": u} for u in updates]


def random_ids() -> dict[str, str]:
    return {k: uuid.uuid4().hex for k in ("session", "user", "agent", "tool", "child")}


def test_placeholders_by_first_appearance_per_kind() -> None:
    out = normalize(turn(random_ids(), ["Hello"]), "raw")
    assert out[1]["messageId"] == "<message:1>"  # the user message comes first
    assert out[2]["messageId"] == "<message:2>"
    assert out[3]["toolCallId"] == out[4]["toolCallId"] == "<tool_call:1>"
    assert out[5]["sessionId"] == "<session:1>"


def test_normalisation_is_identical_for_different_random_ids() -> None:
    assert normalize(turn(random_ids(), ["a", "b"])) == normalize(turn(random_ids(), ["a", "b"]))


def test_same_id_string_in_two_kinds_gets_two_placeholders() -> None:
    out = normalize(
        [
            {"sessionUpdate": "tool_call_update", "toolCallId": "x"},
            {"sessionUpdate": "terminal_update", "terminalId": "x"},
            {"sessionUpdate": "tool_call_update", "toolCallId": "x"},
        ],
        "raw",
    )
    assert [next(v for k, v in u.items() if k.endswith("Id")) for u in out] == [
        "<tool_call:1>",
        "<terminal:1>",
        "<tool_call:1>",
    ]


def test_ids_nested_in_background_lists_and_tool_content_are_replaced() -> None:
    out = normalize(
        [
            {"sessionUpdate": "terminal_update", "terminalId": "T9"},
            {
                "sessionUpdate": "tool_call_update",
                "toolCallId": "C1",
                "content": [{"type": "terminal", "terminalId": "T9"}],
            },
            {
                "sessionUpdate": "state_update",
                "state": "idle",
                "background": [{"type": "terminal", "terminalId": "T9"}],
            },
        ],
        "raw",
    )
    assert out[1]["content"] == [{"terminalId": "<terminal:1>", "type": "terminal"}]
    assert out[2]["background"] == [{"terminalId": "<terminal:1>", "type": "terminal"}]


def test_shared_id_map_keeps_placeholders_across_calls() -> None:
    ids = IdMap()
    first = normalize([chunk("m1", "a")], ids=ids)
    second = normalize([chunk("m2", "b"), chunk("m1", "c")], ids=ids)
    assert first[0]["messageId"] == second[1]["messageId"] == "<message:1>"
    assert second[0]["messageId"] == "<message:2>"


def test_placeholders_can_be_disabled() -> None:
    assert normalize([chunk("m1", "a")], placeholders=False)[0]["messageId"] == "m1"


def test_volatile_values_are_redacted_by_default_and_kept_on_request() -> None:
    updates = [
        {"sessionUpdate": "session_info_update", "title": "t", "updatedAt": "2026-01-01T00:00:00Z"},
        {
            "sessionUpdate": "usage_update",
            "used": 12,
            "size": 1000,
            "cost": {"amount": 0.5, "currency": "USD"},
        },
        {
            "sessionUpdate": "state_update",
            "state": "idle",
            "stopReason": "end_turn",
            "usage": {"totalTokens": 7, "inputTokens": 3, "outputTokens": 4},
        },
        {
            "sessionUpdate": "tool_call_update",
            "toolCallId": "t",
            "rawOutput": {"durationMs": 41, "elapsed": 2.5, "items": 3, "format": "x"},
        },
    ]
    out = normalize(updates, "raw")
    assert out[0]["updatedAt"] == "<timestamp>"
    assert (out[1]["used"], out[1]["size"], out[1]["cost"]) == (
        "<tokens>",
        "<tokens>",
        {"amount": "<cost>", "currency": "USD"},
    )
    assert set(out[2]["usage"].values()) == {"<tokens>"}
    assert out[3]["rawOutput"] == {
        "durationMs": "<duration>",
        "elapsed": "<duration>",
        "items": 3,
        "format": "x",
    }
    kept = normalize(updates, "raw", redact=False)
    assert kept[1]["used"] == 12 and kept[0]["updatedAt"].startswith("2026")
    only_cost = normalize(updates, "raw", redact={"cost"})
    assert only_cost[1]["used"] == 12 and only_cost[1]["cost"]["amount"] == "<cost>"
    with pytest.raises(ValueError, match="unknown redaction"):
        normalize(updates, redact={"colour"})


def test_null_values_are_not_redacted() -> None:
    out = normalize([{"sessionUpdate": "session_info_update", "updatedAt": None}], "raw")
    assert out[0]["updatedAt"] is None


def test_tmp_paths_become_placeholder(tmp_path: Path) -> None:
    target = tmp_path / "src" / "main.py"
    out = normalize(
        [
            {
                "sessionUpdate": "tool_call_update",
                "toolCallId": "t",
                "locations": [{"path": str(target)}],
                "content": [
                    {
                        "type": "content",
                        "content": {"type": "resource_link", "uri": target.as_uri(), "name": "m"},
                    }
                ],
            }
        ],
        "raw",
        tmp_path=tmp_path,
    )
    assert out[0]["locations"] == [{"path": "<tmp>/src/main.py"}]
    assert out[0]["content"][0]["content"]["uri"] == "file://<tmp>/src/main.py"


@settings(max_examples=examples(0.6), deadline=None)
@given(text=st.text(min_size=1, max_size=40), cuts=st.lists(st.integers(0, 40), max_size=8))
def test_merged_and_final_views_do_not_depend_on_chunk_boundaries(
    text: str, cuts: list[int]
) -> None:
    bounds = sorted({0, len(text), *(c for c in cuts if c < len(text))})
    pieces = [text[a:b] for a, b in itertools.pairwise(bounds)]
    ids = random_ids()
    assert normalize(turn(ids, pieces)) == normalize(turn(random_ids(), [text]))
    assert normalize(turn(ids, pieces), "final") == normalize(turn(ids, [text]), "final")


def test_merged_view_keeps_interleaved_entities_apart() -> None:
    out = normalize([chunk("a", "1"), chunk("b", "2"), chunk("a", "3"), chunk("a", "4")])
    assert [(u["messageId"], u["content"]["text"]) for u in out] == [
        ("<message:1>", "1"),
        ("<message:2>", "2"),
        ("<message:1>", "34"),
    ]


def test_merged_view_does_not_merge_different_kinds_meta_or_non_text() -> None:
    image = {
        "sessionUpdate": "agent_message_chunk",
        "messageId": "a",
        "content": {"type": "image", "data": "AA==", "mimeType": "image/png"},
    }
    with_meta = {**chunk("a", "y"), "_meta": {"k": 1}}
    out = normalize(
        [
            chunk("a", "x"),
            chunk("a", "x", "agent_thought_chunk"),
            image,
            image,
            with_meta,
            chunk("a", "z"),
        ]
    )
    assert len(out) == 6


def test_merged_view_merges_tool_content_compaction_and_terminal_chunks() -> None:
    def tc(text: str) -> dict[str, Any]:
        return {
            "sessionUpdate": "tool_call_content_chunk",
            "toolCallId": "t",
            "content": {"type": "content", "content": {"type": "text", "text": text}},
        }

    def term(data: bytes) -> dict[str, Any]:
        return {
            "sessionUpdate": "terminal_output_chunk",
            "terminalId": "x",
            "data": base64.b64encode(data).decode(),
        }

    comp = [
        {
            "sessionUpdate": "compaction_summary_chunk",
            "compactionId": "c",
            "content": {"type": "text", "text": t},
        }
        for t in ("sum", "mary")
    ]
    out = normalize([tc("a"), tc("b"), *comp, term(b"he"), term(b"llo\n")])
    assert out[0]["content"]["content"]["text"] == "ab"
    assert out[1]["content"]["text"] == "summary"
    assert base64.b64decode(out[2]["data"]) == b"hello\n"
    assert len(out) == 3


def test_final_view_folds_entities_in_timeline_order_then_session_state() -> None:
    updates = [
        {"sessionUpdate": "state_update", "state": "running"},
        chunk("m", "Hel"),
        {
            "sessionUpdate": "tool_call_update",
            "toolCallId": "t",
            "title": "Read",
            "status": "pending",
            "_meta": {"a": 1, "b": 2},
        },
        chunk("m", "lo"),
        {"sessionUpdate": "notice", "severity": "info", "title": "not state"},
        {
            "sessionUpdate": "tool_call_update",
            "toolCallId": "t",
            "status": "completed",
            "title": None,
            "_meta": {"a": None, "c": 3},
        },
        {"sessionUpdate": "plan_update", "plan": {"type": "items", "planId": "p", "entries": []}},
        {"sessionUpdate": "_custom_thing", "x": 1},
        {"sessionUpdate": "usage_update", "used": 1, "size": 9},
        {
            "sessionUpdate": "terminal_update",
            "terminalId": "x",
            "command": "ls",
            "output": {"data": base64.b64encode(b"a").decode()},
        },
        {
            "sessionUpdate": "terminal_output_chunk",
            "terminalId": "x",
            "data": base64.b64encode(b"b").decode(),
        },
        {"sessionUpdate": "plan_removed", "planId": "p"},
        {
            "sessionUpdate": "agent_message",
            "messageId": "m2",
            "content": [{"type": "text", "text": "A"}],
        },
        chunk("m2", "B"),
        {"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"},
    ]
    out = normalize(updates, "final", redact=False)
    assert [u["sessionUpdate"] for u in out] == [
        "agent_message",
        "tool_call_update",
        "plan_removed",
        "_custom_thing",
        "terminal_update",
        "agent_message",
        "usage_update",
        "state_update",
    ]
    assert out[0]["content"] == [{"text": "Hello", "type": "text"}]
    assert out[1] == {
        "sessionUpdate": "tool_call_update",
        "_meta": {"b": 2, "c": 3},
        "status": "completed",
        "title": None,
        "toolCallId": "<tool_call:1>",
    }
    assert base64.b64decode(out[4]["output"]["data"]) == b"ab"
    assert out[5]["content"] == [{"text": "AB", "type": "text"}]
    assert out[-1]["stopReason"] == "end_turn"


def test_final_view_content_replacement_and_clearing() -> None:
    updates = [
        chunk("m", "A", "user_message_chunk"),
        {
            "sessionUpdate": "user_message",
            "messageId": "m",
            "content": [{"type": "text", "text": "C"}],
        },
        chunk("m", "D", "user_message_chunk"),
        {
            "sessionUpdate": "tool_call_content_chunk",
            "toolCallId": "t",
            "content": {"type": "diff", "changes": []},
        },
        {"sessionUpdate": "tool_call_update", "toolCallId": "t", "content": []},
    ]
    out = normalize(updates, "final")
    assert out[0]["content"] == [{"text": "CD", "type": "text"}]  # [A] + full [C] + chunk D
    assert out[1]["content"] == []


def test_text_false_redacts_text_but_keeps_shape() -> None:
    a = normalize(turn(random_ids(), ["one ", "two"]), text=False)
    b = normalize(turn(random_ids(), ["completely different"]), text=False)
    assert a == b
    assert a[2]["content"] == {"text": "<text>", "type": "text"}
    plan = normalize(
        [
            {
                "sessionUpdate": "plan_update",
                "plan": {
                    "type": "items",
                    "planId": "p",
                    "entries": [{"content": "step", "priority": "high", "status": "pending"}],
                },
            }
        ],
        text=False,
    )
    assert plan[0]["plan"]["entries"][0]["content"] == "<text>"


def test_normalisers_mutate_replace_or_drop() -> None:
    def drop_thoughts(u: dict[str, Any]) -> bool | None:
        return False if u["sessionUpdate"].startswith("agent_thought") else None

    def scrub_meta(u: dict[str, Any]) -> dict[str, Any]:
        u.pop("_meta", None)
        return u

    out = normalize(
        [
            chunk("t", "hmm", "agent_thought_chunk"),
            {**chunk("m", "x"), "_meta": {"trace": "r4nd0m"}},
        ],
        normalizers=[drop_thoughts, scrub_meta],
    )
    assert out == [
        {
            "sessionUpdate": "agent_message_chunk",
            "content": {"text": "x", "type": "text"},
            "messageId": "<message:1>",
        }
    ]


class _Event:
    def __init__(self, raw: dict[str, Any]) -> None:
        self.raw = raw


class _Turn:
    def __init__(self, updates: list[Any]) -> None:
        self.updates = updates


class _Entry:
    def __init__(self, direction: str, line: bytes) -> None:
        self.direction, self.time, self.line = direction, 0.0, line


def test_inputs_events_turns_transcripts_and_notifications() -> None:
    payload = chunk("m", "x")
    notification = {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {"sessionId": "s", "update": payload},
    }
    expected = normalize([payload])
    assert normalize([_Event(payload)]) == expected
    assert normalize(_Turn([_Event(payload)])) == expected
    assert normalize([notification]) == expected
    entries = [
        _Entry("send", b'{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{}}'),
        _Entry("recv", b"not json"),
        _Entry("recv", b'{"jsonrpc":"2.0","id":1,"result":{"messageId":"m"}}'),
        _Entry("recv", __import__("json").dumps(notification).encode()),
    ]
    assert normalize(entries) == expected
    assert (
        normalize(
            [
                {"dir": "recv", "t": 0.1, "msg": notification},
                {"dir": "recv", "t": 0.2, "raw": "junk"},
            ]
        )
        == expected
    )
    assert extract_updates(payload) == [payload]


def test_bad_input_is_a_clear_error() -> None:
    with pytest.raises(TypeError, match="not an ACP update"):
        normalize([{"hello": 1}])
    with pytest.raises(TypeError, match="cannot read"):
        normalize([object()])
    with pytest.raises(ValueError, match="unknown view"):
        normalize([], view="pretty")


def test_usable_as_pytest_acp_normalize() -> None:
    import pytest_acp

    assert pytest_acp.normalize is normalize
    assert pytest_acp.normalize([chunk("m", "x")], view="final")[0]["sessionUpdate"] == (
        "agent_message"
    )
