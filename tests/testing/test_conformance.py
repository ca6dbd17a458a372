"""Every built-in scenario against the project's conformance checks
(``pytest_acp.conformance.check_transcript``: the connection rules plus the session
model's rules), on the wire transcript of a raw-pipe client: they pass on every built-in
scenario except the deliberately broken ones.

* ``conforming`` scenarios: no violation, with the traffic treated as ended (so
  work left running would be reported too);
* ``broken`` scenarios: the rule each is documented to break is reported;
* ``fault`` scenarios: the fault happens, and what the agent sent is checked.

A new scenario is ``conforming`` unless it is named ``broken_*`` or listed in
``scenarios.FAULTS``, so it is checked here by default; a new fault needs an entry
in ``FAULT_CHECKS`` (the guard test fails otherwise).
"""

from __future__ import annotations

import signal
from collections.abc import Callable
from typing import Any

import pytest

from acp_lite.limits import Limits
from acp_lite.testing import SCENARIOS, Raw
from acp_lite.testing.scenarios import BROKEN_RULES, FAULTS, get, kind
from pytest_acp.conformance import Violation, check_transcript, format_violations, rule_info

from ._agentproc import RawAgent, drive_turn
from ._gated import two_prompts
from .test_scenarios import (
    check_background_is_announced_listed_finalised_then_unlisted,
    run_one_turn,
)

Spawn = Callable[..., RawAgent]
INIT = {"protocolVersion": 2, "info": {"name": "t", "version": "1"}}

#: Sizes that keep the sized scenarios quick (flood: "keep it small").
COUNTS = {"flood": 2000, "many_sessions": 3}
CONFORMING = sorted(n for n in SCENARIOS if kind(n) == "conforming")


def rules(found: list[Violation]) -> list[str]:
    return [v.rule for v in found]


def strict(agent: RawAgent, **kwargs: Any) -> list[Violation]:
    """All violations, the traffic being over (``work-not-ended`` counts)."""
    return check_transcript(agent.wire, ended=True, **kwargs)


def resume_and_prompt(agent: RawAgent) -> None:
    agent.call("initialize", INIT)
    listed = agent.call("session/list", {})["sessions"]
    sid = listed[0]["sessionId"]
    agent.call("session/resume", {"sessionId": sid, "cwd": "/tmp", "replayFrom": {"type": "start"}})
    drive_turn(agent, sid, "hello again")


def drive(agent: RawAgent, name: str) -> None:
    """Run the scenario's work to its end, the way a client would use it."""
    if name == "many_sessions":
        resume_and_prompt(agent)
        return
    if name == "auth_required":
        agent.call("initialize", INIT)
        agent.call("auth/login", {"methodId": "token"})
        sid = agent.call("session/new", {"cwd": "/tmp"})["sessionId"]
    else:
        sid = agent.start_session("/tmp", capabilities={"elicitation": {"form": {}}})
    if name == "slow_cancel":
        agent.response(agent.prompt(sid, "work"))
        agent.notify("session/cancel", {"sessionId": sid})
        agent.wait_idle(sid, "cancelled")
    elif name in ("queueing", "steering"):
        # The named scenarios, sleeps and all (tests elsewhere use _gated.gated).
        two_prompts(agent, sid)
    else:
        drive_turn(agent, sid, "hello")
    if name == "background":  # until the background work is finalised and unlisted
        check_background_is_announced_listed_finalised_then_unlisted(agent, sid)


@pytest.mark.parametrize("name", CONFORMING)
def test_conforming_scenario_has_no_violation(spawn: Spawn, name: str) -> None:
    agent = spawn(name, count=COUNTS.get(name))
    drive(agent, name)
    assert agent.call("_acp_lite/sync") == {"echo": {}}  # everything it sent has arrived
    found = strict(agent)
    assert found == [], format_violations(found)
    assert agent.poll() is None


@pytest.mark.parametrize("name", sorted(BROKEN_RULES))
def test_broken_scenario_breaks_its_rule(spawn: Spawn, name: str) -> None:
    agent, _, _ = run_one_turn(spawn, name)
    assert agent.call("_acp_lite/sync") == {"echo": {}}
    assert BROKEN_RULES[name] in rules(strict(agent))


# -- faults -----------------------------------------------------------------------


def check_crash(spawn: Spawn) -> None:
    agent = spawn("crash")
    sid = agent.start_session()
    agent.prompt(sid, "hi")
    assert agent.wait_exit() == 3
    agent.wait_eof()
    # The turn never ended, and no update could say why: the client sees the exit.
    assert strict(agent, agent_exited=True) == []
    assert rules(strict(agent)) == ["work-not-ended"]  # a client that assumed no exit


def check_hang(spawn: Spawn) -> None:
    agent = spawn("hang")
    sid = agent.start_session()
    rid = agent.prompt(sid, "hi")
    agent.wait_stderr("hanging forever")  # a cancel before the turn starts gets -32800
    agent.notify("session/cancel", {"sessionId": sid})
    assert agent.call("_acp_lite/sync") == {"echo": {}}
    assert not any(m.get("id") == rid for m in agent.messages)
    assert check_transcript(agent.wire) == []  # nothing wrong yet, live
    assert rules(strict(agent)) == ["work-not-ended"]  # the client gives up: caught


def check_unresponsive(spawn: Spawn) -> None:
    agent = spawn("unresponsive")
    rid = agent.request("initialize", INIT)
    assert agent.call("_acp_lite/sync") == {"echo": {}}  # read after the initialize
    assert not any(m.get("id") == rid for m in agent.messages)
    assert agent.poll() is None
    assert strict(agent) == []


def check_wrong_protocol_version(spawn: Spawn) -> None:
    agent = spawn("wrong_protocol_version")
    assert agent.call("initialize", INIT)["protocolVersion"] == 1
    assert strict(agent) == []


def check_oversize_line(spawn: Spawn) -> None:
    # By default the line is over the client's limit; its content is spec-valid,
    # checked here at a size the limit allows.
    sizes = [s.repeat for s in get("oversize_line").turns[0].steps if isinstance(s, Raw)]
    assert max(sizes) > Limits().max_line_bytes
    agent = spawn("oversize_line", count=100_000)
    drive_turn(agent, agent.start_session(), "hi")
    assert max(len(line) for line in agent.lines) > 100_000
    assert strict(agent) == []


def check_ignore_sigterm(spawn: Spawn) -> None:
    agent = spawn("ignore_sigterm", process=True)
    drive_turn(agent, agent.start_session(), "hi")
    assert agent.call("_acp_lite/sync") == {"echo": {}}
    assert strict(agent) == []
    agent.proc.send_signal(signal.SIGTERM)
    agent.wait_stderr("ignoring SIGTERM")
    assert agent.poll() is None  # the fixture's teardown kills it


FAULT_CHECKS: dict[str, Callable[[Spawn], None]] = {
    "crash": check_crash,
    "hang": check_hang,
    "unresponsive": check_unresponsive,
    "wrong_protocol_version": check_wrong_protocol_version,
    "oversize_line": check_oversize_line,
    "ignore_sigterm": check_ignore_sigterm,
}


@pytest.mark.parametrize("name", sorted(FAULTS))
def test_fault_scenario(spawn: Spawn, name: str) -> None:
    assert name in FAULT_CHECKS, f"fault scenario {name!r} has no check in FAULT_CHECKS"
    FAULT_CHECKS[name](spawn)


def test_every_scenario_is_checked_broken_or_a_fault() -> None:
    for name in SCENARIOS:
        assert (
            (kind(name) == "conforming" and name in CONFORMING)
            or (kind(name) == "broken" and name in BROKEN_RULES)
            or (kind(name) == "fault" and name in FAULT_CHECKS)
        ), name
    assert set(FAULTS) == set(FAULT_CHECKS)
    assert sorted(BROKEN_RULES) == sorted(n for n in SCENARIOS if n.startswith("broken_"))
    assert all(rule_info(rule) is not None for rule in BROKEN_RULES.values())
    assert not set(FAULTS) & set(BROKEN_RULES)
