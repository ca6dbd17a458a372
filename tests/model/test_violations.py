"""One test per conformance rule in ``acp_lite.model.rules.RULES``, named after it.

Each test feeds a violating sequence (the rule is recorded with the offending event
index, nothing raises) and the conforming counterpart (nothing is recorded).
"""

from __future__ import annotations

import base64
import sys

from acp_lite.model import RULES, SessionModel, Violation

from .helpers import (
    bg_terminal,
    bg_tool,
    chunk,
    decode,
    feed,
    idle,
    message,
    rules,
    state,
    terminal,
    tool,
)


def only(m: SessionModel, rule: str) -> Violation:
    assert rules(m) == [rule], m.violations
    v = m.violations[0]
    assert v.spec == RULES[rule].spec and v.level == RULES[rule].level and v.message
    return v


def test_rule_chunk_without_message_id() -> None:
    m = SessionModel("s")
    feed(
        m,
        chunk("m", "ok"),
        {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "x"}},
    )
    assert only(m, "chunk-without-message-id").event_index == 1
    assert m.text() == "ok" and len(m.events) == 2
    m2 = SessionModel("s")
    feed(m2, {"sessionUpdate": "user_message", "content": []})
    assert only(m2, "chunk-without-message-id").event_index == 0


def test_rule_malformed_update() -> None:
    m = SessionModel("s")
    feed(m, {"sessionUpdate": "_custom", "x": 1}, {"sessionUpdate": "usage_update", "used": 1})
    assert only(m, "malformed-update").event_index == 1  # a custom tag is fine
    m2 = SessionModel("s")
    m2.apply({"not": "decoded"})
    assert only(m2, "malformed-update").event_index == 0


def test_rule_update_for_other_session() -> None:
    m = SessionModel("s1")
    m.apply(decode(chunk("m", "mine")), session_id="s1")
    m.apply(decode(chunk("m", "theirs")), session_id="s2")
    assert only(m, "update-for-other-session").event_index == 1
    assert m.text() == "mine" and len(m.events) == 2  # logged, not applied
    adopt = SessionModel()
    adopt.apply(decode(chunk("m", "x")), session_id="s9")
    assert adopt.session_id == "s9" and rules(adopt) == []


def test_rule_unknown_stop_reason() -> None:
    m = SessionModel("s")
    feed(m, state("running"), idle("_vendor_reason"), state("running"), idle("finished"))
    assert only(m, "unknown-stop-reason").event_index == 3
    assert m.is_idle and m.stop_reason == "finished"


def test_rule_reserved_state() -> None:
    m = SessionModel("s")
    feed(m, state("_warming_up"), state("thinking"))
    assert only(m, "reserved-state").event_index == 1
    assert m.state == "thinking" and not m.is_idle


def test_rule_idle_without_stop_reason() -> None:
    m = SessionModel("s")
    feed(m, idle(), state("running"), idle("end_turn"), state("running"), idle(None))
    v = only(m, "idle-without-stop-reason")
    assert v.event_index == 4 and v.level == "SHOULD"


def test_rule_error_stop_reason_without_error() -> None:
    m = SessionModel("s")
    err = {"code": 1, "message": "boom"}
    feed(m, state("running"), idle("error", error=err), state("running"), idle("error"))
    assert only(m, "error-stop-reason-without-error").event_index == 3


def test_rule_background_omitted() -> None:
    m = SessionModel("s")
    feed(m, state("running"), idle("end_turn"), state("running", background=[]), idle("end_turn"))
    assert only(m, "background-omitted").event_index == 3
    assert m.background is None


def test_rule_background_malformed() -> None:
    m = SessionModel("s")
    feed(m, state("running", background=[]), state("running", background={"type": "terminal"}))
    assert only(m, "background-malformed").event_index == 1
    assert m.background is None


def test_rule_background_item_not_announced() -> None:
    m = SessionModel("s")
    feed(m, terminal("t1"), idle(background=[bg_terminal("t1")]))
    feed(m, idle(background=[bg_terminal("t1"), bg_tool("ghost")]))
    assert only(m, "background-item-not-announced").event_index == 2
    feed(m, idle(background=[bg_terminal("t1"), bg_tool("ghost")]))  # reported once per item
    assert len(m.violations) == 1


def test_rule_background_removed_before_final() -> None:
    m = SessionModel("s")
    feed(
        m,
        terminal("t1"),
        tool("w", status="in_progress"),
        idle(background=[bg_terminal("t1"), bg_tool("w")]),
        tool("w", status="completed"),
        idle(background=[bg_terminal("t1")]),  # w finalized first: fine
        idle(background=[]),  # t1 never reported exitStatus
    )
    assert only(m, "background-removed-before-final").event_index == 5


def test_rule_background_duplicate_item() -> None:
    m = SessionModel("s")
    feed(m, terminal("t1"), idle(background=[bg_terminal("t1"), bg_terminal("t1")]))
    assert only(m, "background-duplicate-item").event_index == 1


def test_rule_tool_call_reopened() -> None:
    m = SessionModel("s")
    feed(m, tool("t", status="in_progress"), tool("t", status="paused"), tool("t", status="failed"))
    feed(m, tool("t", status="in_progress"))
    assert only(m, "tool-call-reopened").event_index == 3


def test_rule_tool_call_unfinished_at_failure() -> None:
    m = SessionModel("s")
    err = {"code": 1, "message": "model error"}
    feed(m, tool("old", status="in_progress"), idle())  # not part of the next work
    feed(m, terminal("srv"), state("running", background=[bg_terminal("srv")]))
    feed(
        m,
        tool("ok", status="in_progress"),
        tool("ok", status="failed"),
        tool("uses-srv", status="in_progress", content=[{"type": "terminal", "terminalId": "srv"}]),
        tool("left", status="in_progress"),
        idle("error", error=err, background=[bg_terminal("srv")]),
    )
    v = only(m, "tool-call-unfinished-at-failure")
    assert v.event_index == 8 and "'left'" in v.message and "'old'" not in v.message


def test_rule_terminal_output_not_base64() -> None:
    m = SessionModel("s")
    ok = base64.b64encode(b"fine").decode()
    feed(
        m,
        {"sessionUpdate": "terminal_output_chunk", "terminalId": "t", "data": ok},
        {"sessionUpdate": "terminal_output_chunk", "terminalId": "t", "data": "%%%"},
    )
    assert only(m, "terminal-output-not-base64").event_index == 1
    assert m.entity("terminal", "t").output == b"fine"


def test_rule_notice_replayed() -> None:
    m = SessionModel("s")
    note = {"sessionUpdate": "notice", "severity": "info", "title": "Hi"}
    feed(m, note)
    feed(m, note, replayed=True)
    v = only(m, "notice-replayed")
    assert v.event_index == 1 and v.level == "SHOULD"


def test_rule_prompt_response_without_message_id() -> None:
    m = SessionModel("s")
    sub = m.submit(1, None)
    m.prompt_accepted(1, None)
    v = only(m, "prompt-response-without-message-id")
    assert v.event_index is None and sub.status == "inserted"
    feed(m, state("running"), idle("end_turn"))  # only the fallback can finish it
    assert sub.done


def test_rule_duplicate_submission_message_id() -> None:
    m = SessionModel("s")
    m.submit(1, None)
    m.submit(2, None)
    m.prompt_accepted(1, "u1")
    m.prompt_accepted(2, "u2")
    assert rules(m) == []
    m.submit(3, None)
    m.prompt_accepted(3, "u1")
    assert only(m, "duplicate-submission-message-id").event_index is None


def test_rule_user_message_not_echoed() -> None:
    m = SessionModel("s")
    m.submit(1, None)
    m.prompt_accepted(1, "u1")
    feed(m, state("running"), idle("end_turn"))
    assert rules(m) == []  # a late echo is allowed: only the end can tell
    m.finish()
    assert only(m, "user-message-not-echoed").event_index == 1
    good = SessionModel("s")
    good.submit(1, None)
    good.prompt_accepted(1, "u1")
    feed(good, state("running"), message("u1", ["q"], kind="user_message"), idle("end_turn"))
    good.finish()
    assert rules(good) == []
    late = SessionModel("s")  # echoed after the idle that ended its work
    late.submit(1, None)
    late.prompt_accepted(1, "u1")
    feed(late, state("running"), idle("end_turn"), message("u1", ["q"], kind="user_message"))
    assert late.submission(1).done
    late.finish()
    assert rules(late) == []


def test_rule_user_message_unmatched() -> None:
    m = SessionModel("s")
    feed(m, message("old", ["history"], kind="user_message"), replayed=True)
    m.submit(1, None)
    feed(m, message("u1", ["q"], kind="user_message"), message("stray", ["?"], kind="user_message"))
    m.prompt_accepted(1, "u1")
    assert rules(m) == []  # only the end of the session can tell
    assert only_after_finish(m).event_index == 2
    assert m.finish() == []  # idempotent


def only_after_finish(m: SessionModel) -> Violation:
    found = m.finish()
    assert [v.rule for v in found] == ["user-message-unmatched"]
    return only(m, "user-message-unmatched")


def test_rule_user_message_unmatched_waits_for_pending_submissions() -> None:
    m = SessionModel("s")
    m.submit(1, None)
    feed(m, message("u1", ["q"], kind="user_message"))
    assert m.finish() == []  # the pending request might own u1


def test_rule_resume_without_state_snapshot() -> None:
    m = SessionModel("s")
    m.resume_requested()
    feed(m, message("u0", ["old"], kind="user_message"), replayed=True)
    m.setup_response({}, resumed=True)
    only(m, "resume-without-state-snapshot")
    good = SessionModel("s")
    good.resume_requested()
    feed(good, chunk("a", "old"), idle("end_turn", background=[]), replayed=True)
    good.setup_response({}, resumed=True)
    assert rules(good) == []
    # The resume snapshot reports the state without a transition or completion.
    assert (good.stop_reason, good.completions) == ("end_turn", 0)


def test_failed_resume_ends_the_resume_snapshot_window() -> None:
    m = SessionModel("s")
    m.resume_requested()
    m.resume_failed()
    feed(m, state("running"), idle("end_turn"))
    assert m.completions == 1 and rules(m) == []
    m2 = SessionModel("s")
    m2.resume_requested()
    feed(m2, idle("end_turn"))
    m2.submit(1, None)  # prompting means the resume is over
    feed(m2, state("running"), idle("end_turn"))
    assert m2.completions == 1


def test_every_rule_has_a_test_named_after_it() -> None:
    names = set(vars(sys.modules[__name__]))
    missing = [r for r in RULES if f"test_rule_{r.replace('-', '_')}" not in names]
    assert missing == []
    for rule in RULES.values():
        assert rule.summary and rule.spec and rule.level in ("MUST", "SHOULD")
