"""Foreground state, background list, cancellation hint, notices, replay, event log."""

from __future__ import annotations

import base64

import pytest

from acp_lite.model import SessionModel

from .helpers import (
    bg_terminal,
    bg_tool,
    chunk,
    decode,
    feed,
    idle,
    rules,
    state,
    terminal,
    tool,
)


def test_state_starts_idle() -> None:
    m = SessionModel("s")
    assert (m.state, m.stop_reason, m.error, m.background) == ("idle", None, None, None)
    assert m.is_idle and not m.is_quiet and not m.state_reported and m.completions == 0


def test_standard_states_replace_each_other() -> None:
    m = SessionModel("s")
    for name in ("running", "requires_action", "running", "unknown"):
        feed(m, state(name))
        assert m.state == name and not m.is_idle
    assert m.last_known_state == "running"  # retained for context while unobservable
    feed(m, idle("end_turn"))
    assert (m.state, m.stop_reason, m.completions) == ("idle", "end_turn", 1)


@pytest.mark.parametrize("name", ["_compacting", "future_state"])
def test_unrecognised_state_is_kept_and_busy_never_idle(name: str) -> None:
    m = SessionModel("s")
    feed(m, idle("end_turn", background=[]), state(name, background=[]))
    assert m.state == name and not m.is_idle and not m.is_quiet
    assert m.stop_reason is None
    feed(m, idle("end_turn"))
    assert m.is_idle and m.completions == 2  # the unrecognised state was busy


def test_repeated_idle_without_new_stop_reason_is_not_a_new_completion() -> None:
    m = SessionModel("s")
    feed(m, state("running"), idle("end_turn", background=[]))
    assert m.completions == 1
    feed(m, idle("end_turn", background=[]), idle(background=[]), idle(None, background=[]))
    assert m.completions == 1
    assert m.stop_reason == "end_turn"  # a repeat keeps the last stop reason for context
    assert "idle-without-stop-reason" not in rules(m)


def test_initial_idle_without_stop_reason_is_not_a_completion() -> None:
    m = SessionModel("s")
    feed(m, idle())
    assert m.completions == 0 and m.state_reported


def test_state_reported_before_session_new_response_is_not_overwritten() -> None:
    m = SessionModel("s")
    feed(m, state("running"))
    m.setup_response({"sessionId": "s"})
    assert m.state == "running"
    m2 = SessionModel("s")
    m2.setup_response({"sessionId": "s"})
    assert m2.state == "idle"


@pytest.mark.parametrize("stop", [None, "", 42, "_custom_reason", "brand_new_reason"])
def test_idle_with_missing_null_or_unknown_stop_reason_ends_work(stop: object) -> None:
    m = SessionModel("s")
    fields = {} if stop is None else {"stopReason": stop}
    feed(m, state("running"), state("idle", **fields))
    assert m.is_idle and m.completions == 1
    assert m.stop_reason == (stop if isinstance(stop, str) else None)


def test_idle_error_belongs_to_error_stop_reason() -> None:
    m = SessionModel("s")
    err = {"code": -32000, "message": "auth required"}
    feed(m, state("running"), idle("error", error=err))
    assert m.stop_reason == "error" and m.error.code == -32000
    feed(m, state("running"))
    assert m.error is None and m.stop_reason is None
    feed(m, idle("end_turn", error=err))  # beside another reason, error is unknown
    assert m.error is None


def test_unknown_state_after_idle_then_idle_is_not_a_completion() -> None:
    m = SessionModel("s")
    feed(m, state("running"), idle("end_turn"), state("unknown"), idle("end_turn"))
    assert m.completions == 1
    feed(m, state("running"), state("unknown"), idle("end_turn"))
    assert m.completions == 2
    feed(m, state("unknown"), state("running"))  # work started while idle was last known
    assert m.stop_reason is None
    feed(m, idle("end_turn"))
    assert m.completions == 3


def test_idle_token_usage_is_not_counted_again_by_repeats() -> None:
    m = SessionModel("s")
    usage = {"totalTokens": 3, "inputTokens": 2, "outputTokens": 1}
    feed(m, state("running"), idle("end_turn", usage=usage))
    assert m.token_usage.total_tokens == 3
    feed(m, idle("end_turn", usage={**usage, "totalTokens": 99}))
    assert m.token_usage.total_tokens == 3


def test_background_latest_list_replaces_previous() -> None:
    m = SessionModel("s")
    feed(m, terminal("t1"), terminal("t2"))
    feed(m, state("running", background=[bg_terminal("t1")]))
    assert [b.terminal_id for b in m.background or ["unknown"]] == ["t1"]
    feed(m, terminal("t1", exitStatus={}), state("running", background=[bg_terminal("t2")]))
    assert [b.terminal_id for b in m.background or ["unknown"]] == ["t2"]
    feed(m, terminal("t2", exitStatus={}), idle("end_turn", background=[]))
    assert m.background == [] and m.is_quiet
    assert rules(m) == []


@pytest.mark.parametrize("fields", [{}, {"background": None}])
def test_background_omitted_or_null_is_unknown_not_empty(fields: dict[str, object]) -> None:
    m = SessionModel("s")
    feed(m, idle("end_turn", **fields))
    assert m.background is None and not m.is_quiet
    feed(m, idle("end_turn", background=[]), idle("end_turn", **fields))
    assert m.background is None and not m.is_quiet


def test_background_malformed_list_is_unknown() -> None:
    m = SessionModel("s")
    feed(m, idle("end_turn", background=[]), idle("end_turn", background="nope"))
    assert m.background is None and not m.is_quiet
    assert "background-malformed" in rules(m)


def test_background_items_of_unknown_type_still_count() -> None:
    m = SessionModel("s")
    feed(m, idle("end_turn", background=[{"type": "_cron", "id": "nightly"}]))
    background = m.background
    assert background is not None and len(background) == 1 and not m.is_quiet
    assert background[0].type == "_cron"
    assert rules(m) == []


def test_is_quiet_needs_idle_and_empty_background() -> None:
    m = SessionModel("s")
    feed(m, state("running", background=[]))
    assert not m.is_quiet
    feed(m, idle("end_turn", background=[]))
    assert m.is_quiet
    feed(m, tool("w", status="in_progress"), idle(background=[bg_tool("w")]))
    assert not m.is_quiet


def test_abandoned_only_when_idle_and_background_reported() -> None:
    m = SessionModel("s")
    term_ref = {"type": "terminal", "terminalId": "srv"}
    feed(
        m,
        state("running"),
        tool("lost", status="in_progress"),
        tool("watch", status="paused"),
        tool("runs-srv", status="in_progress", content=[term_ref]),
        tool("done", status="completed"),
        terminal("srv"),
        terminal("gone"),
        idle("end_turn"),
    )
    assert m.abandoned() == []  # background not reported: nothing may be abandoned
    feed(m, state("running", background=[bg_tool("watch"), bg_terminal("srv")]))
    assert m.abandoned() == []  # not idle
    feed(m, idle("end_turn", background=[bg_tool("watch"), bg_terminal("srv")]))
    assert [(e.kind, e.id) for e in m.abandoned()] == [("tool_call", "lost"), ("terminal", "gone")]
    live = [(e.kind, e.id) for e in m.live_entities()]
    assert live == [("tool_call", "watch"), ("tool_call", "runs-srv"), ("terminal", "srv")]


def test_cancel_marks_foreground_tool_calls_locally() -> None:
    m = SessionModel("s")
    term_ref = {"type": "terminal", "terminalId": "srv"}
    feed(
        m,
        terminal("srv"),
        tool("bg", status="in_progress"),
        state("running", background=[bg_tool("bg"), bg_terminal("srv")]),
        tool("fg1", status="in_progress"),
        tool("fg2", status="pending"),
        tool("uses-srv", status="in_progress", content=[term_ref]),
        tool("finished", status="completed"),
    )
    marked = m.cancel_sent()
    assert [t.id for t in marked] == ["fg1", "fg2"]
    assert [(t.id, t.display_status) for t in m.tool_calls] == [
        ("bg", "in_progress"),
        ("fg1", "cancelled"),
        ("fg2", "cancelled"),
        ("uses-srv", "in_progress"),
        ("finished", "completed"),
    ]
    fg1 = m.entity("tool_call", "fg1")
    assert fg1.display_status == "cancelled" and fg1.status == "in_progress"
    assert m.entity("tool_call", "bg").display_status == "in_progress"
    assert m.entity("tool_call", "uses-srv").display_status == "in_progress"
    feed(m, tool("fg1", title="still here"))  # no status: the mark stands
    assert fg1.display_status == "cancelled"
    feed(m, tool("fg1", status="failed"), tool("fg2", status="completed"))
    assert (fg1.display_status, m.entity("tool_call", "fg2").display_status) == (
        "failed",
        "completed",
    )


def test_cancel_skips_the_latest_reported_list_even_after_an_omission() -> None:
    m = SessionModel("s")
    feed(m, tool("bg", status="in_progress"), state("running", background=[bg_tool("bg")]))
    feed(m, tool("fg", status="in_progress"), state("running"))  # background omitted
    assert [t.id for t in m.cancel_sent()] == ["fg"]


def test_chunk_append_does_constant_work() -> None:
    """Structural check behind the O(1) claim (timing lives in bench/bench_session.py):
    a chunk appends to the same list and never joins text while applying."""
    m = SessionModel("s")
    feed(m, chunk("m", "first"))
    msg = m.entity("agent_message", "m")
    blocks = msg.content
    for i in range(1000):
        m.apply(decode(chunk("m", str(i))))
    assert msg.content is blocks and len(blocks) == 1001
    assert msg._cache.n == 0  # nothing was joined yet
    assert msg.text.startswith("first0123")
    assert msg._cache.n == 1001


def test_cancel_marks_only_tool_calls_of_the_current_active_work() -> None:
    """spec "Cancellation": only non-finished tool calls "pertaining to the current active
    work". One left unfinished by earlier work (before the latest idle snapshot; background
    not reported, so it may be unlisted background work) is not marked."""
    m = SessionModel("s")
    feed(m, state("running"), tool("earlier", status="in_progress"), idle("end_turn"))
    feed(m, tool("announced-while-idle", status="pending"), state("running"))
    feed(m, tool("now", status="in_progress"))
    assert [t.id for t in m.cancel_sent()] == ["announced-while-idle", "now"]
    assert m.entity("tool_call", "earlier").display_status == "in_progress"


def test_cancel_while_idle_marks_nothing() -> None:
    m = SessionModel("s")
    feed(m, tool("t", status="in_progress"), idle())
    assert m.cancel_sent() == []
    assert m.entity("tool_call", "t").display_status == "in_progress"


def test_notices_are_live_only_events_not_entities() -> None:
    m = SessionModel("s")
    note = {"sessionUpdate": "notice", "severity": "warning", "title": "Retrying"}
    feed(m, state("running"), note, chunk("m", "x"))
    assert m.timeline == [m.entity("agent_message", "m")]
    assert [e.update.title for e in m.notices] == ["Retrying"]
    assert m.notices[0].index == 1 and m.events[1].raw == note
    assert m.state == "running"  # even an error notice does not change state


def test_replayed_updates_are_marked() -> None:
    m = SessionModel("s")
    feed(m, chunk("old", "history", kind="user_message"), replayed=True)
    feed(m, idle("end_turn", background=[]), replayed=True)
    feed(m, chunk("new", "live"))
    assert [e.replayed for e in m.events] == [True, True, False]
    assert m.entity("user_message", "old").replayed
    assert not m.entity("agent_message", "new").replayed


def test_event_log_keeps_every_update_with_raw_payload() -> None:
    m = SessionModel("s")
    custom = {"sessionUpdate": "_vendor_progress", "pct": 50}
    broken = {"sessionUpdate": "tool_call_update"}  # toolCallId missing
    out = {
        "sessionUpdate": "terminal_output_chunk",
        "terminalId": "t",
        "data": base64.b64encode(b"x").decode(),
    }
    feed(m, custom, broken, out)
    m.apply(decode(chunk("m", "no raw given")))
    assert [e.index for e in m.events] == [0, 1, 2, 3]
    assert m.events[0].raw == custom and m.events[0].tag == "_vendor_progress"
    assert m.events[1].raw == broken
    assert m.events[2].raw is out  # the payload as received, not re-serialised
    assert m.events[3].raw == chunk("m", "no raw given")  # re-encoded on demand
    assert m.events[-1].index == 3 and len(m.events[1:3]) == 2
    assert rules(m) == ["malformed-update"]
    with pytest.raises(IndexError):
        m.events[4]


def test_apply_returns_the_logged_event() -> None:
    m = SessionModel("s")
    ev = m.apply(decode(chunk("m", "x")), replayed=True)
    assert (ev.index, ev.replayed, ev.tag) == (0, True, "agent_message_chunk")
    assert ev.update is m.events[0].update and ev.time == m.events[0].time
    assert ev == m.events[0] and hash(ev) == hash(m.events[0])
    assert m.events[0] in {ev}
