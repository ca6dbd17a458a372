"""The conformance of a shared agent's traffic, fed once and checked per test
(``pytest_acp._incremental``), equals ``check_transcript`` over the same traffic at
every point: checking leaves the state intact. The connection rules are fed line by
line; the session model's rules come from the client's live models, and equal the
replay of the transcript ``check_transcript`` does, test by test."""

from __future__ import annotations

import json
from typing import Any

import pytest

from acp_lite import Session, connect_in_memory
from acp_lite.limits import Limits
from acp_lite.testing import InProcessAgent
from acp_lite.transcript import Transcript
from pytest_acp._incremental import IncrementalCheck, shifted
from pytest_acp._tracking import Tracked, tracked_violations
from pytest_acp.conformance import check_transcript

#: Scenarios whose traffic breaks connection rules, model rules (in the live stream
#: and at finish), or none; each driven through two sessions, as two tests sharing
#: the agent would.
SCENARIOS = [
    "echo",
    "broken_no_user_message_echo",
    "broken_duplicate_message_id",
    "broken_wrong_session_id",
    "broken_stdout_garbage",
    "broken_bad_stop_reason",
    "broken_no_running",
    "broken_chunk_without_message_id",
    "broken_tool_call_reopened",
    "unmatched_user_message",
]


def unmatched_user_message() -> list[Any]:
    """Two sessions; the first gets a user message no prompt response returned (a
    finding of the session model's finish())."""
    t = Transcript()

    def send(m: dict[str, Any]) -> None:
        t.record("send", json.dumps({"jsonrpc": "2.0", **m}).encode())

    def recv(m: dict[str, Any]) -> None:
        t.record("recv", json.dumps({"jsonrpc": "2.0", **m}).encode())

    def update(sid: str, u: dict[str, Any]) -> None:
        recv({"method": "session/update", "params": {"sessionId": sid, "update": u}})

    send({"id": 1, "method": "initialize", "params": {"protocolVersion": 2}})
    recv({"id": 1, "result": {"protocolVersion": 2}})
    for n, sid in enumerate(("s1", "s2")):
        base = 10 * (n + 1)
        send({"id": base, "method": "session/new", "params": {"cwd": "/", "mcpServers": []}})
        recv({"id": base, "result": {"sessionId": sid}})
        prompt = [{"type": "text", "text": "hi"}]
        send({"id": base + 1, "method": "session/prompt",
              "params": {"sessionId": sid, "prompt": prompt}})  # fmt: skip
        update(sid, {"sessionUpdate": "state_update", "state": "running", "background": []})
        recv({"id": base + 1, "result": {"messageId": f"{sid}-m"}})
        update(sid, {"sessionUpdate": "user_message", "messageId": f"{sid}-m", "content": prompt})
        if sid == "s1":
            update(sid, {"sessionUpdate": "user_message", "messageId": "ghost", "content": prompt})
        idle = {"sessionUpdate": "state_update", "state": "idle", "background": []}
        update(sid, {**idle, "stopReason": "end_turn"})
    return t.entries()


def run_to_the_agents_idle(session: Session, text: str) -> None:
    """Prompt, then wait for the agent's idle with a stop reason: the end of its
    turn, whether or not the model sees it end the work (``broken_no_running``'s
    second idle, without a running, does not)."""
    updates = session.iter_updates()  # from now: before the prompt is sent
    session.submit(text)
    for event in updates:
        if event.raw.get("state") == "idle" and "stopReason" in event.raw:
            return


def traffic(scenario: str) -> list[Any]:
    if scenario == "unmatched_user_message":
        return unmatched_user_message()
    limits = Limits(default_timeout=10.0)
    # The agent in this process: the traffic is what counts, not the process.
    with connect_in_memory(InProcessAgent(scenario=scenario), limits=limits) as client:
        for text in ("one", "two"):
            session = client.new_session(cwd="/")
            run_to_the_agents_idle(session, text)
        return client.transcript.entries()


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_equals_check_transcript_at_every_point(scenario: str) -> None:
    entries = traffic(scenario)
    boundaries = [
        i for i, e in enumerate(entries) if e.direction == "send" and b"session/new" in e.line
    ]
    assert len(boundaries) == 2 and len(entries) > 8
    check = IncrementalCheck()
    reported: set[str] = set()
    for k in range(len(entries) + 1):
        check.feed(entries[:k], 0)  # what a test sees: the transcript so far
        start = max((b for b in boundaries if b <= k), default=0)
        for s in {0, start}:
            for ended in (False, True):
                expected = check_transcript(entries[:k], start=s, ended=ended, model=False)
                assert check.violations(start=s, ended=ended) == expected, (k, s, ended)
                reported.update(v.rule for v in expected)
    if scenario != "echo":
        assert reported, "the broken scenario's rule was never reported"


def test_bounded_transcript_is_read_incrementally() -> None:
    entries = traffic("broken_bad_stop_reason")
    bounded = Transcript(max_entries=5)
    check = IncrementalCheck()
    for n, entry in enumerate(entries, 1):
        bounded.record(entry.direction, entry.line)
        dropped = check.feed_from(bounded)
        assert check.fed == n and dropped == max(0, n - 5)
    # Every line was fed before the bound dropped it: the findings are those of the
    # whole traffic, numbered as positions in the retained transcript.
    expected = check_transcript(entries, ended=True, model=False)
    assert expected
    found = shifted(check.violations(start=0, ended=True), bounded.dropped)
    assert found == shifted(expected, len(entries) - 5)
    assert [v.entry_index for v in found] == [
        None if v.entry_index is None else v.entry_index - (len(entries) - 5) for v in expected
    ]


@pytest.mark.parametrize("scenario", [s for s in SCENARIOS if s != "unmatched_user_message"])
def test_live_models_judge_each_test_as_the_replay_does(scenario: str) -> None:
    """Two tests sharing one client: each one's findings (connection rules fed once,
    session rules from the live models) equal ``check_transcript`` over the traffic
    so far, from where the test started."""
    limits = Limits(default_timeout=10.0)
    with connect_in_memory(InProcessAgent(scenario), limits=limits, conformance=True) as client:
        check = IncrementalCheck()
        reported: set[str] = set()
        for test in ("one", "two"):
            tracked = Tracked(client, len(client.transcript), check)
            session = client.new_session(cwd="/")
            for text in ("a", "b"):  # two prompts: a duplicate message id shows
                run_to_the_agents_idle(session, text)
            client.request("_acp_lite/sync")
            entries = client.transcript.entries()
            expected = check_transcript(entries, start=tracked.start)
            assert tracked_violations(tracked) == expected, test
            reported.update(v.rule for v in expected)
    if scenario != "echo":
        assert reported, "the broken scenario's rule was never reported"
