"""Every built-in scenario over real pipes.

A small independent check of the lifecycle rules (a few of those the plugin's
conformance mode enforces) shows that the regular scenarios follow them and
that each ``broken_*`` scenario breaks the rule it is named after.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable

import attrs
import pytest

from acp_lite.testing import (
    SCENARIOS,
    Background,
    Script,
    Sleep,
    Text,
    Turn,
    WaitForPrompt,
    scenario,
)

from ._agentproc import RawAgent, drive_turn
from ._gated import GATED, gated, two_prompts
from ._schema import schema_errors

Spawn = Callable[..., RawAgent]
KNOWN_STOP_REASONS = {
    "end_turn",
    "max_tokens",
    "max_turn_requests",
    "refusal",
    "cancelled",
    "error",
}
CHUNKS = {"user_message_chunk", "agent_message_chunk", "agent_thought_chunk"}
FINAL = {"completed", "failed", "cancelled"}

# Scenarios that cannot complete one turn by design, tested separately below.
NOT_A_TURN = {"crash", "hang", "unresponsive", "wrong_protocol_version", "flood", "oversize_line"}
CANCEL_TO_END = {"slow_cancel", "broken_cancel_not_confirmed"}


def violations(agent: RawAgent, session_id: str, prompt_id: int) -> set[str]:
    """Rule ids this one-turn transcript breaks."""
    found: set[str] = set()
    for line in agent.lines:
        try:
            message = json.loads(line)
        except ValueError:
            found.add("stdout-garbage")
            continue
        if not isinstance(message, dict | list) or (
            isinstance(message, dict) and message.get("jsonrpc") != "2.0"
        ):
            found.add("stdout-garbage")
    updates = [m["params"] for m in agent.messages if m.get("method") == "session/update"]
    if any(p["sessionId"] != session_id for p in updates):
        found.add("wrong-session-id")
    seq = [p["update"] for p in updates]
    states = [u for u in seq if u["sessionUpdate"] == "state_update"]
    # An initial idle snapshot without a stop reason is allowed before work starts.
    active = [u for u in states if not (u["state"] == "idle" and "stopReason" not in u)]
    if not active or active[0]["state"] != "running":
        found.add("no-running")
    ended = [u for u in states if u["state"] == "idle" and "stopReason" in u]
    if not ended:
        found.add("no-idle")
    elif any(u["stopReason"] not in KNOWN_STOP_REASONS for u in ended):
        found.add("bad-stop-reason")
    running = False
    for u in seq:
        if u["sessionUpdate"] == "state_update":
            running = u["state"] in ("running", "requires_action")
        elif u["sessionUpdate"] in CHUNKS | {"agent_message"} and not running:
            found.add("output-while-idle")
    final: set[str] = set()
    for u in seq:
        if u["sessionUpdate"] == "tool_call_update" and "status" in u:
            if u["toolCallId"] in final and u["status"] not in FINAL:
                found.add("tool-call-reopened")
            if u["status"] in FINAL:
                final.add(u["toolCallId"])
    announced = {u.get("toolCallId") or u.get("terminalId") for u in seq}
    for u in states:
        if any(
            (item.get("toolCallId") or item.get("terminalId")) not in announced
            for item in u.get("background") or []
        ):
            found.add("background-not-announced")
    responses = [m for m in agent.messages if m.get("id") in agent.sent and "result" in m]
    inserted = [m["result"]["messageId"] for m in responses if "messageId" in m["result"]]
    if len(inserted) != len(set(inserted)):
        found.add("duplicate-message-id")
    if any(u["sessionUpdate"] in CHUNKS and "messageId" not in u for u in seq):
        found.add("chunk-without-message-id")
    response = agent.response(prompt_id)
    user_ids = {u["messageId"] for u in seq if u["sessionUpdate"] == "user_message"}
    if "result" in response and response["result"]["messageId"] not in user_ids:
        found.add("no-user-message-echo")
    return found


def run_one_turn(spawn: Spawn, name: str) -> tuple[RawAgent, str, int]:
    # The "while busy" scenarios get their second prompt during the first one's work,
    # in a window that lasts until it arrives (_gated.py).
    agent = spawn(script=gated(name)) if name in GATED else spawn(name)
    if name == "auth_required":
        agent.call("initialize", {"protocolVersion": 2, "info": {"name": "t", "version": "1"}})
        agent.call("auth/login", {"methodId": "token"})
        sid = agent.call("session/new", {"cwd": "/tmp"})["sessionId"]
    else:
        sid = agent.start_session("/tmp", capabilities={"elicitation": {"form": {}}})
    if name in CANCEL_TO_END:
        rid = agent.prompt(sid, "hello scenario")
        agent.response(rid)
        agent.notify("session/cancel", {"sessionId": sid})
        # Answered, a request sent after the cancel proves it was read (a broken
        # agent's end_turn is then a cancel ignored, not one crossed on the wire).
        assert agent.call("_acp_lite/sync") == {"echo": {}}
        agent.wait_for(lambda m: m.get("method") == "session/update"
                       and m["params"]["update"].get("state") == "idle")  # fmt: skip
    elif name == "broken_no_idle":
        rid = agent.prompt(sid, "hello scenario")
        agent.response(rid)
        assert agent.call("_acp_lite/sync") == {"echo": {}}
    elif name == "broken_duplicate_message_id":  # needs two submissions
        drive_turn(agent, sid, "first")
        since = len(agent.messages)
        rid = agent.prompt(sid, "second")
        agent.wait_for(lambda m: m.get("method") == "session/update"
                       and "stopReason" in m["params"]["update"], since=since)  # fmt: skip
    elif name in GATED:
        rid = two_prompts(agent, sid, "hello scenario")
    else:
        rid = drive_turn(agent, sid, "hello scenario")
    if name == "broken_idle_before_running":  # its first idle is the premature one
        agent.wait_for(lambda _: sum("stopReason" in u for u in agent.updates(sid)) == 2)
    return agent, sid, rid


REGULAR = sorted(n for n in SCENARIOS if not n.startswith("broken_") and n not in NOT_A_TURN)
BROKEN = {
    "broken_no_running": "no-running",
    "broken_chunk_without_message_id": "chunk-without-message-id",
    "broken_bad_stop_reason": "bad-stop-reason",
    "broken_stdout_garbage": "stdout-garbage",
    "broken_no_user_message_echo": "no-user-message-echo",
    "broken_wrong_session_id": "wrong-session-id",
    "broken_no_idle": "no-idle",
    "broken_cancel_not_confirmed": "cancel-not-confirmed",
    "broken_idle_before_running": "output-while-idle",
    "broken_tool_call_reopened": "tool-call-reopened",
    "broken_duplicate_message_id": "duplicate-message-id",
    "broken_background_not_announced": "background-not-announced",
}


@pytest.mark.parametrize("name", REGULAR)
def test_regular_scenarios_follow_the_lifecycle(spawn: Spawn, name: str) -> None:
    agent, sid, rid = run_one_turn(spawn, name)
    assert violations(agent, sid, rid) == set()
    assert agent.poll() is None


@pytest.mark.parametrize("name", GATED)
def test_gated_is_the_named_scenario_but_the_wait(name: str) -> None:
    named, fast = scenario(name), gated(name)
    (turn,) = named.turns
    sleeps = [s for s in turn.steps if isinstance(s, Sleep)]
    assert len(sleeps) == 1 and sleeps[0].seconds > 0  # the named turns are slow
    assert attrs.evolve(fast, turns=named.turns) == named  # while_busy and all
    first, later = fast.turns
    assert attrs.evolve(first, steps=turn.steps) == turn
    assert attrs.evolve(later, steps=turn.steps) == turn
    swapped = [(a, b) for a, b in zip(turn.steps, first.steps, strict=True) if a != b]
    assert swapped == [(sleeps[0], WaitForPrompt())]
    assert later.steps == [s for s in turn.steps if s is not sleeps[0]]


def test_every_broken_scenario_is_listed() -> None:
    assert set(BROKEN) == {n for n in SCENARIOS if n.startswith("broken_")}


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_broken_scenarios_break_their_rule(spawn: Spawn, name: str) -> None:
    agent, sid, rid = run_one_turn(spawn, name)
    found = violations(agent, sid, rid)
    if name == "broken_cancel_not_confirmed":
        idle = [u for u in agent.updates(sid) if u.get("state") == "idle"]
        assert idle[-1]["stopReason"] == "end_turn"  # a cancel confirmed as end_turn
        found.add("cancel-not-confirmed")
    assert BROKEN[name] in found
    if name == "broken_chunk_without_message_id":  # also caught by the schema check
        assert schema_errors(agent.messages, agent.sent) != []
    assert SCENARIOS[name](None).description.startswith("BROKEN:")


def check_background_is_announced_listed_finalised_then_unlisted(agent: RawAgent, sid: str) -> None:
    """After the "background" scenario's turn: its work outlives the idle, then ends.

    Run by ``test_conformance.py``'s ``test_conforming_scenario_has_no_violation
    [background]``, which drives the scenario anyway (its work takes 0.3 s).
    """
    agent.wait_for(lambda m: m.get("method") == "session/update"
                   and m["params"]["update"].get("status") == "completed")  # fmt: skip
    final_snapshot = agent.wait_for(
        lambda m: (
            m.get("method") == "session/update"
            and m["params"]["update"].get("sessionUpdate") == "state_update"
            and m["params"]["update"]["background"] == []
            and m["params"]["update"]["state"] == "idle"
            and "stopReason" not in m["params"]["update"]
        )
    )
    seq = [(u["sessionUpdate"], u.get("status"), u.get("state"), bool(u.get("background")))
           for u in agent.updates(sid)]  # fmt: skip
    announce = seq.index(("tool_call_update", "in_progress", None, False))
    listed = seq.index(("state_update", None, "running", True))
    idle = next(i for i, u in enumerate(agent.updates(sid)) if u.get("stopReason") == "end_turn")
    completed = seq.index(("tool_call_update", "completed", None, False))
    assert announce < listed < idle < completed < len(seq) - 1
    assert agent.updates(sid)[-1] == final_snapshot["params"]["update"]
    assert agent.updates(sid)[idle]["background"] == [{"type": "tool_call", "toolCallId": "bg-1"}]


@pytest.mark.parametrize(("kind", "method", "key"), [
    ("tool_call", "tool_call/cancel", "toolCallId"),
    ("terminal", "terminal/cancel", "terminalId"),
])  # fmt: skip
def test_cancel_background_item(spawn: Spawn, kind: str, method: str, key: str) -> None:
    script = Script(
        turns=[Turn(steps=[Background(id="w", kind=kind, seconds=30), Text(text="ok")])]
    )
    agent = spawn(script=script)
    sid = agent.start_session()
    drive_turn(agent, sid, "go")
    wrong = agent.request(method, {"sessionId": sid, key: "nope"})
    assert agent.response(wrong)["error"]["code"] == -32602
    since = len(agent.messages)
    rid = agent.request(method, {"sessionId": sid, key: "w"})
    agent.wait_for(lambda m: m.get("method") == "session/update"
                   and m["params"]["update"].get("background") == [], since=since)  # fmt: skip
    order = [m.get("id") or m["params"]["update"]["sessionUpdate"] for m in agent.messages[-3:]]
    final_update = "terminal_update" if kind == "terminal" else "tool_call_update"
    assert order == [rid, final_update, "state_update"]
    final = agent.messages[-2]["params"]["update"]
    if kind == "terminal":
        assert final["exitStatus"] == {"signal": "SIGTERM"}
        assert base64.b64decode(final["output"]["data"]) == b"stopped\n"
    else:
        assert final["status"] == "cancelled"
    again = agent.request(method, {"sessionId": sid, key: "w"})
    assert agent.response(again)["error"]["code"] == -32602


def test_elicitation_without_client_capability_takes_the_unsupported_branch(spawn: Spawn) -> None:
    agent = spawn("elicitation")
    sid = agent.start_session()  # no elicitation capability advertised
    drive_turn(agent, sid, "go")
    texts = [u["content"]["text"] for u in agent.updates(sid)
             if u["sessionUpdate"] == "agent_message_chunk"]  # fmt: skip
    assert texts == ["Your client cannot show forms."]
    assert not [m for m in agent.messages if m.get("method") == "elicitation/create"]


def test_elicitation_accept(spawn: Spawn) -> None:
    agent, sid, _ = run_one_turn(spawn, "elicitation")
    request = next(m for m in agent.messages if m.get("method") == "elicitation/create")
    assert request["params"]["mode"] == "form"
    assert request["params"]["sessionId"] == sid
    texts = [u["content"]["text"] for u in agent.updates(sid)
             if u["sessionUpdate"] == "agent_message_chunk"]  # fmt: skip
    assert texts == ["Thanks!"]


def test_updates_before_response_arrive_before_the_prompt_response(spawn: Spawn) -> None:
    agent, _, rid = run_one_turn(spawn, "updates_before_response")
    order = [m.get("id") or m["params"]["update"]["sessionUpdate"] for m in agent.messages[2:]]
    assert order.index("user_message") < order.index("agent_message_chunk") < order.index(rid)


def test_custom_update_is_underscore_prefixed(spawn: Spawn) -> None:
    agent, sid, _ = run_one_turn(spawn, "custom_update")
    custom = [u for u in agent.updates(sid) if u["sessionUpdate"].startswith("_")]
    assert custom == [{"sessionUpdate": "_acp_lite/progress", "percent": 50, "label": "halfway"}]


def test_flood_streams_count_chunks(spawn: Spawn) -> None:
    agent = spawn("flood", count=5000)
    sid = agent.start_session()
    drive_turn(agent, sid, "go")
    chunks = [u for u in agent.updates(sid) if u["sessionUpdate"] == "agent_message_chunk"]
    assert len(chunks) == 5000
    assert len({c["messageId"] for c in chunks}) == 1


def test_oversize_line_is_one_valid_line_followed_by_normal_output(spawn: Spawn) -> None:
    agent = spawn("oversize_line", count=300_000)
    sid = agent.start_session()
    drive_turn(agent, sid, "go")
    big = max(agent.lines, key=len)
    assert len(big) > 300_000
    assert json.loads(big)["params"]["sessionId"] == sid
    assert agent.updates(sid)[-2]["content"]["text"] == "Still here after the big line."


def test_hang_reports_running_and_never_answers(spawn: Spawn) -> None:
    agent = spawn("hang")
    sid = agent.start_session()
    rid = agent.prompt(sid, "go")
    agent.wait_stderr("hanging forever")  # a cancel before this point would be honoured
    agent.notify("session/cancel", {"sessionId": sid})
    assert agent.call("_acp_lite/sync") == {"echo": {}}
    assert agent.call("_acp_lite/sync") == {"echo": {}}
    assert not [m for m in agent.messages if m.get("id") == rid]
    assert [u["state"] for u in agent.updates(sid)] == ["running"]


def test_unresponsive_never_answers_initialize(spawn: Spawn) -> None:
    agent = spawn("unresponsive")
    rid = agent.request("initialize", {"protocolVersion": 2, "info": {"name": "t", "version": "1"}})
    assert agent.call("_acp_lite/sync") == {"echo": {}}
    assert not [m for m in agent.messages if m.get("id") == rid]


def test_wrong_protocol_version(spawn: Spawn) -> None:
    agent = spawn("wrong_protocol_version")
    result = agent.call("initialize", {"protocolVersion": 2, "info": {"name": "t", "version": "1"}})
    assert result["protocolVersion"] == 1


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_scenario_scripts_round_trip_through_dicts(name: str) -> None:
    script = scenario(name, count=3)
    assert Script.from_dict(json.loads(script.to_json())) == script


def test_unknown_scenario_names_the_known_ones() -> None:
    with pytest.raises(KeyError, match="echo"):
        scenario("nope")
