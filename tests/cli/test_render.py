"""The terminal renderer, fed wire dicts directly (no process)."""

from __future__ import annotations

import io
from pathlib import Path

from acp_lite.cli.render import Renderer, content_text, same_destination


def _render(*updates: dict[str, object], shared: bool = True) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    r = Renderer(out, err, color=False, shared=shared)
    for u in updates:
        r.update(u)
    r.finish()
    return out.getvalue(), err.getvalue()


def _chunk(text: str, mid: str = "m1", tag: str = "agent_message_chunk") -> dict[str, object]:
    return {"sessionUpdate": tag, "messageId": mid, "content": {"type": "text", "text": text}}


def test_agent_text_goes_to_stdout_only() -> None:
    out, err = _render(
        {"sessionUpdate": "state_update", "state": "running"},
        _chunk("Hel"),
        _chunk("lo"),
        {"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"},
    )
    # On a shared terminal the status line after "Hello" starts on a new line,
    # and that line break ends the answer's line too.
    assert out == "Hello"
    assert err == "state: running\n\nstate: idle (end_turn)\n"


def test_no_separator_on_stderr_when_stdout_goes_elsewhere() -> None:
    out, err = _render(
        _chunk("Hello"),
        {"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"},
        shared=False,
    )
    assert (out, err) == ("Hello\n", "state: idle (end_turn)\n")


def test_same_destination(tmp_path: Path) -> None:
    with open(tmp_path / "a", "w") as a, open(tmp_path / "b", "w") as b:
        assert same_destination(a, a)
        assert not same_destination(a, b)
    assert not same_destination(io.StringIO(), io.StringIO())


def test_full_message_upsert_prints_only_the_new_part() -> None:
    out, _ = _render(
        _chunk("Hello"),
        {
            "sessionUpdate": "agent_message",
            "messageId": "m1",
            "content": [{"type": "text", "text": "Hello world"}],
        },
    )
    assert out == "Hello world\n"


def test_replaced_message_content_is_printed_again() -> None:
    out, _ = _render(
        _chunk("draft"),
        {
            "sessionUpdate": "agent_message",
            "messageId": "m1",
            "content": [{"type": "text", "text": "final"}],
        },
    )
    assert out == "draft\nfinal\n"


def test_thoughts_and_tool_status_changes() -> None:
    out, err = _render(
        _chunk("hmm", tag="agent_thought_chunk"),
        {"sessionUpdate": "tool_call_update", "toolCallId": "t1", "title": "Read", "kind": "read"},
        {"sessionUpdate": "tool_call_update", "toolCallId": "t1", "status": "in_progress"},
        {"sessionUpdate": "tool_call_update", "toolCallId": "t1", "status": "in_progress"},
        {"sessionUpdate": "tool_call_update", "toolCallId": "t1", "status": "completed"},
    )
    assert out == ""
    assert err.splitlines() == [
        "thinking: hmm",
        "tool: Read (read) [pending]",
        "tool: Read -> in_progress",
        "tool: Read -> completed",
    ]


def test_same_message_id_for_thought_and_message_are_distinct_entities() -> None:
    out, err = _render(_chunk("think", tag="agent_thought_chunk"), _chunk("say"))
    assert out == "say\n"
    assert "thinking: think" in err


def test_plan_notice_usage_and_unknown_updates() -> None:
    _, err = _render(
        {
            "sessionUpdate": "plan_update",
            "plan": {
                "type": "items",
                "planId": "p",
                "entries": [
                    {"content": "a", "priority": "high", "status": "completed"},
                    {"content": "b", "priority": "low", "status": "pending"},
                ],
            },
        },
        {
            "sessionUpdate": "notice",
            "severity": "warning",
            "title": "Slow",
            "description": "retrying",
        },
        {"sessionUpdate": "usage_update", "used": 10, "size": 100},
        {"sessionUpdate": "_vendor_thing", "x": 1},
    )
    assert "plan:\n  [x] a\n  [ ] b\n" in err
    assert "notice (warning): Slow - retrying" in err
    assert "usage: 10/100 tokens" in err
    assert '[_vendor_thing] {"x":1}' in err


def test_repeated_state_snapshot_is_shown_once() -> None:
    _, err = _render(
        {"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"},
        {"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"},
    )
    assert err.count("state: idle") == 1


def test_malformed_updates_do_not_break_rendering() -> None:
    out, err = _render(
        {"sessionUpdate": "agent_message_chunk", "messageId": "m", "content": "not a block"},
        {"sessionUpdate": "plan_update", "plan": None},
        {"no": "tag"},
        _chunk("ok"),
    )
    assert out == "ok\n"
    assert "plan: (malformed)" in err


def test_content_text_placeholders() -> None:
    assert (
        content_text({"type": "image", "mimeType": "image/png", "data": ""}) == "<image image/png>"
    )
    assert content_text({"type": "resource_link", "uri": "file:///a", "name": "a"}) == "<a>"
    assert content_text({"type": "resource", "resource": {"uri": "u", "text": "body"}}) == "body"
    assert content_text({"type": "_custom"}) == "<_custom>"


def test_streamed_text_renders_in_linear_time() -> None:
    """Rendering N chunks costs O(N): 10x the chunks takes about 10x the time, not
    100x (the printed text was re-concatenated per chunk). Same-run ratio, CPU time."""
    import io
    import time

    from acp_lite.cli.render import Renderer

    def cost(n: int) -> float:
        r = Renderer(io.StringIO(), io.StringIO(), color=False, shared=False)
        chunk = {
            "sessionUpdate": "agent_message_chunk",
            "messageId": "m1",
            "content": {"type": "text", "text": "word " * 8},
        }
        started = time.process_time()
        for _ in range(n):
            r.update(chunk)
        return time.process_time() - started

    small = min(cost(5_000) for _ in range(3))
    large = cost(50_000)
    assert large < 30 * max(small, 1e-3), (small, large)
