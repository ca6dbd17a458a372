"""pytest_acp.conformance: each connection rule on a hand-written transcript, plus the
session model's rules through the transcript replay."""

from __future__ import annotations

import json
from typing import Any

import pytest

from acp_lite.transcript import Transcript
from pytest_acp.conformance import RULES, check_transcript, format_violations, rule_info

SID = "s1"


class Wire:
    """Builds a transcript line by line (client = "send", agent = "recv")."""

    def __init__(self) -> None:
        self.t = Transcript()
        self._id = 0

    def send(self, msg: dict[str, Any]) -> Wire:
        self.t.record("send", json.dumps({"jsonrpc": "2.0", **msg}).encode())
        return self

    def recv(self, msg: dict[str, Any] | str) -> Wire:
        line = msg if isinstance(msg, str) else json.dumps({"jsonrpc": "2.0", **msg})
        self.t.record("recv", line.encode())
        return self

    def request(self, method: str, params: dict[str, Any]) -> int:
        self._id += 1
        self.send({"id": self._id, "method": method, "params": params})
        return self._id

    def open(self, sid: str = SID) -> Wire:
        rid = self.request("session/new", {"cwd": "/tmp", "mcpServers": []})
        return self.recv({"id": rid, "result": {"sessionId": sid}})

    def update(self, update: dict[str, Any], sid: str = SID) -> Wire:
        return self.recv(
            {"method": "session/update", "params": {"sessionId": sid, "update": update}}
        )

    def state(self, state: str, **fields: Any) -> Wire:
        return self.update({"sessionUpdate": "state_update", "state": state, **fields})

    def user(self, mid: str) -> Wire:
        content = [{"type": "text", "text": "hi"}]
        return self.update({"sessionUpdate": "user_message", "messageId": mid, "content": content})

    def say(self, text: str, mid: str = "a1") -> Wire:
        content = {"type": "text", "text": text}
        return self.update(
            {"sessionUpdate": "agent_message_chunk", "messageId": mid, "content": content}
        )

    def prompt(self) -> int:
        return self.request(
            "session/prompt", {"sessionId": SID, "prompt": [{"type": "text", "text": "hi"}]}
        )

    def good_turn(self, mid: str = "u1") -> Wire:
        rid = self.prompt()
        self.state("running").recv({"id": rid, "result": {"messageId": mid}}).user(mid)
        return self.say("hello", "a-" + mid).state("idle", stopReason="end_turn")

    def rules(self, **kw: Any) -> list[str]:
        return [v.rule for v in check_transcript(self.t, **kw)]


def test_a_conforming_exchange_has_no_violation() -> None:
    w = Wire().open().good_turn("u1").good_turn("u2")
    # Orderings the spec allows: user message and idle before the response.
    rid = w.prompt()
    w.state("running").user("u3").say("x", "a3").state("idle", stopReason="_custom_done")
    w.recv({"id": rid, "result": {"messageId": "u3"}})
    assert w.rules() == []


def test_prompt_response_without_message_id() -> None:
    w = Wire().open()
    rid = w.prompt()
    w.state("running").recv({"id": rid, "result": {"messageId": ""}}).state(
        "idle", stopReason="end_turn"
    )
    assert w.rules() == ["prompt-response-without-message-id"]


def test_user_message_not_echoed_only_once_work_ended() -> None:
    w = Wire().open()
    rid = w.prompt()
    w.state("running").recv({"id": rid, "result": {"messageId": "u1"}})
    assert w.rules() == []  # the echo may still come
    w.say("x").state("idle", stopReason="end_turn")
    assert w.rules() == ["user-message-not-echoed"]


def test_rejected_prompt_echoed() -> None:
    w = Wire().open()
    rid = w.prompt()
    w.user("u-ghost").recv({"id": rid, "error": {"code": -32602, "message": "no"}})
    assert w.rules() == ["rejected-prompt-echoed"]  # the model's duplicate is dropped
    assert w.rules(model=False) == ["rejected-prompt-echoed"]


def test_idle_without_running_and_output_while_idle() -> None:
    w = Wire().open()
    rid = w.prompt()
    w.recv({"id": rid, "result": {"messageId": "u1"}}).user("u1").say("hi").state(
        "idle", stopReason="end_turn"
    )
    assert w.rules() == ["output-while-idle", "idle-without-running"]


def test_running_may_come_after_the_user_message() -> None:
    w = Wire().open()
    rid = w.prompt()
    w.recv({"id": rid, "result": {"messageId": "u1"}}).user("u1").state("running").say("x")
    assert w.state("idle", stopReason="end_turn").rules() == []


def test_cancel_must_end_with_cancelled() -> None:
    w = Wire().open()
    rid = w.prompt()
    w.state("running").recv({"id": rid, "result": {"messageId": "u1"}}).user("u1")
    w.send({"method": "session/cancel", "params": {"sessionId": SID}})
    # Answered before the idle, a request sent after the cancel proves it was read.
    pid = w.request("_x/ping", {})
    w.recv({"id": pid, "error": {"code": -32601, "message": "Method not found"}})
    w.state("idle", stopReason="end_turn")
    assert w.rules() == ["cancel-not-cancelled"]
    ok = Wire().open()
    rid = ok.prompt()
    ok.state("running").recv({"id": rid, "result": {"messageId": "u1"}}).user("u1")
    ok.send({"method": "session/cancel", "params": {"sessionId": SID}})
    assert ok.state("idle", stopReason="cancelled").rules() == []
    idle_cancel = Wire().open().good_turn()
    idle_cancel.send({"method": "session/cancel", "params": {"sessionId": SID}})
    assert idle_cancel.rules() == []  # nothing was running


def test_custom_stop_reasons_and_states_need_an_underscore() -> None:
    w = Wire().open()
    rid = w.prompt()
    w.state("running").recv({"id": rid, "result": {"messageId": "u1"}}).user("u1")
    w.state("thinking_hard").state("_mine").state("idle", stopReason="finished")
    assert w.rules() == ["reserved-state", "unknown-stop-reason"]


def test_update_for_unknown_session_and_early_updates() -> None:
    w = Wire()
    rid = w.request("session/new", {"cwd": "/tmp", "mcpServers": []})
    w.state("idle", background=[])  # before the response: allowed
    w.recv({"id": rid, "result": {"sessionId": SID}})
    w.update({"sessionUpdate": "subagent_update", "sessionId": "child-1"})
    w.update({"sessionUpdate": "state_update", "state": "idle"}, sid="child-1")
    assert w.rules() == []
    w.update(
        {
            "sessionUpdate": "agent_message_chunk",
            "messageId": "m",
            "content": {"type": "text", "text": "x"},
        },
        sid="nope",
    )
    assert w.rules() == ["update-unknown-session"]


def test_stdout_garbage_and_stray_responses() -> None:
    w = Wire().open().recv("hello world").recv('{"just": "json"}').recv({"id": 99, "result": {}})
    w.recv('[{"jsonrpc": "2.0", "method": "_x/ping"}]')  # a batch of notifications is fine
    assert w.rules() == ["stdout-not-jsonrpc", "stdout-not-jsonrpc", "response-without-request"]


def test_work_not_ended_only_when_traffic_ended() -> None:
    w = Wire().open()
    rid = w.prompt()
    w.state("running").recv({"id": rid, "result": {"messageId": "u1"}}).user("u1").say("x")
    assert w.rules() == []
    assert w.rules(ended=True) == ["work-not-ended"]


def test_work_cut_short_by_an_exited_agent_is_not_a_violation() -> None:
    # Spec "Failures": no update can report an exited agent; the client detects it.
    w = Wire().open()
    rid = w.prompt()
    w.state("running").recv({"id": rid, "result": {"messageId": "u1"}}).user("u1").say("x")
    assert w.rules(ended=True, agent_exited=True) == []
    w.state("idle", stopReason="finished")  # what the agent did send is still checked
    assert w.rules(ended=True, agent_exited=True) == ["unknown-stop-reason"]


def test_model_rules_come_through_the_replay() -> None:
    w = Wire().open()
    rid = w.prompt()
    w.state("running").recv({"id": rid, "result": {"messageId": "u1"}}).user("u1")
    w.update({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "x"}})
    w.state("idle", stopReason="end_turn")
    found = check_transcript(w.t)
    assert [(v.rule, v.source, v.entry_index) for v in found] == [
        ("chunk-without-message-id", "model", 6)
    ]
    assert check_transcript(w.t, model=False) == []


def test_start_skips_earlier_traffic_but_keeps_its_state() -> None:
    w = Wire().open()
    rid = w.prompt()
    w.state("running").recv({"id": rid, "result": {"messageId": "u1"}}).user("u1")
    start = len(w.t)  # a second test on the same connection starts here
    w.state("idle", stopReason="weird")
    assert [v.rule for v in check_transcript(w.t, start=start)] == ["unknown-stop-reason"]
    w2 = Wire().open()
    w2.state("idle", stopReason="weird")
    assert check_transcript(w2.t, start=len(w2.t)) == []


def test_saved_ndjson_transcript_is_checked_the_same() -> None:
    w = Wire().open()
    w.recv("garbage")
    records = [json.loads(line) for line in w.t.to_ndjson().splitlines()]
    assert [v.rule for v in check_transcript(records)] == ["stdout-not-jsonrpc"]


@pytest.mark.parametrize("rule", sorted(RULES))
def test_every_rule_has_a_summary_and_spec_section(rule: str) -> None:
    info = rule_info(rule)
    assert info is not None and info.summary and info.spec
    assert "\n" not in info.summary


def test_model_rules_are_known_and_violations_format_readably() -> None:
    info = rule_info("chunk-without-message-id")
    assert info is not None and "messageId" in info.summary
    assert rule_info("no-such-rule") is None
    w = Wire().open().recv("junk")
    text = format_violations(check_transcript(w.t))
    assert "stdout-not-jsonrpc (transcript line 2)" in text and "transports#stdio" in text


def test_one_rule_and_violation_record_for_model_and_plugin() -> None:
    """pytest_acp re-exports the model's Rule / Violation: one record type, whose
    findings carry the model's ``event_index`` and the transcript's ``entry_index``."""
    import pytest_acp
    from acp_lite.model import rules

    assert pytest_acp.Rule is rules.Rule and pytest_acp.Violation is rules.Violation
    assert all(isinstance(r, rules.Rule) for r in (*RULES.values(), *rules.RULES.values()))
    w = Wire().open()
    rid = w.prompt()
    w.state("running").recv({"id": rid, "result": {"messageId": "u1"}}).user("u1")
    w.update({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "x"}})
    w.state("idle", stopReason="weird").recv("junk")
    by_rule = {v.rule: v for v in check_transcript(w.t)}
    chunk = by_rule["chunk-without-message-id"]
    assert (chunk.source, chunk.entry_index, chunk.event_index) == ("model", 6, 2)
    assert (chunk.session_id, chunk.spec) == (SID, rules.RULES[chunk.rule].spec)
    stop = by_rule["unknown-stop-reason"]
    assert (stop.source, stop.entry_index, stop.event_index) == ("connection", 7, None)
    assert stop.level == RULES["unknown-stop-reason"].level
    assert str(stop) == f"unknown-stop-reason: {stop.message} [{stop.spec}]"


def test_each_line_is_parsed_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """The connection checker's decoded value feeds the session-model replay too; a
    shared client's lines are parsed once for the connection rules (its session rules
    come from its live models)."""
    import pytest_acp._safejson as safejson_mod
    from pytest_acp._incremental import IncrementalCheck

    w = Wire().open()
    rid = w.prompt()
    w.state("running").recv({"id": rid, "result": {"messageId": "u1"}}).user("u1")
    w.update({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "x"}})
    w.state("idle", stopReason="end_turn").recv("junk")
    expected = check_transcript(w.t)
    calls: list[Any] = []

    def counting(line: Any, *args: Any, **kwargs: Any) -> Any:
        calls.append(line)
        return json.loads(line, *args, **kwargs)

    fake = type("json", (), {"loads": staticmethod(counting), "dumps": staticmethod(json.dumps)})
    # Every JSON parse of the plugin goes through pytest_acp._safejson.
    monkeypatch.setattr(safejson_mod, "json", fake)
    assert check_transcript(w.t) == expected
    assert len(calls) == len(w.t)
    calls.clear()
    check = IncrementalCheck()
    check.feed_from(w.t)
    assert len(calls) == len(w.t)
    calls.clear()
    assert check.violations(start=0) == check_transcript(w.t, model=False)
