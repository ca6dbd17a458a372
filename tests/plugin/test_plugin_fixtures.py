"""Fixtures end to end, in one pytester run: clients, sessions, the transcript
fixture, policies (names and a callable), env/cwd, timeouts, scopes, async
fixtures with pytest-trio, report sections and saved transcripts. The run's agent
is the reference agent in this process (``--acp-agent python:...``); agent
processes where the process matters (env, cwd, stderr, exit status, process
sharing), and once for each client fixture."""

from __future__ import annotations

import json

import pytest

from .conftest import IN_PROCESS, LEAN, LEAN_TRIO, REFERENCE_AGENT

SUITE = (
    IN_PROCESS
    + f"""
import os, sys, time
import pytest
from acp_lite import Client
from acp_lite.errors import AgentExited
from pytest_acp import normalize

AGENT = {REFERENCE_AGENT!r}
CLIENTS = {{}}
PIDS = {{}}


def test_client_and_session(acp_client, acp_session, acp_transcript, tmp_path):
    CLIENTS["first"] = acp_client
    assert isinstance(acp_client, Client) and acp_client.pid is None  # no process
    assert acp_client.protocol_version == 2
    turn = acp_session.run("hello pytest")
    assert turn.stop_reason == "end_turn" and turn.text == "hello pytest"
    # A Turn, the session's event log and the wire transcript are the same stream.
    updates = normalize(turn)
    assert updates == normalize(turn.updates) == normalize(acp_session.model.events)
    assert updates == normalize(acp_transcript) and len(updates) == 4
    sent = acp_transcript.messages("send")
    assert [m["method"] for m in sent[:3]] == ["initialize", "session/new", "session/prompt"]
    assert sent[1]["params"]["cwd"] == str(tmp_path)
    assert acp_transcript.violations() == []
    assert '"dir": "recv"' in acp_transcript.to_ndjson()
    assert acp_client.returncode is None
    assert any("ready: scenario 'echo', in process" in line for line in acp_client.stderr_tail())


@scenario("tool_call_permission")
def test_permission_rejected_by_default(acp_session):
    assert "did not write" in acp_session.run("write it").text


@scenario("tool_call_permission")
@pytest.mark.acp_permission("allow_once")
def test_permission_marker(acp_session):
    assert "notes.txt is written" in acp_session.run("write it").text


ASKED = []


def allow(request, session):
    ASKED.append(request.title)
    return "allow"


# A custom policy callable on the marker, by keyword: pytest takes a lone callable
# marker argument for the decorated function.
@scenario("tool_call_permission")
@pytest.mark.acp_permission(policy=allow)
def test_permission_callable_by_keyword(acp_session):
    turn = acp_session.run("write the notes")
    assert ASKED == ["Allow writing notes.txt?"]
    assert turn.text == "Done: notes.txt is written."


@scenario("elicitation")
def test_elicitation_declined_by_default(acp_session):
    assert acp_session.run("ask me").text == "No problem."


@scenario("elicitation")
@pytest.mark.acp_elicitation("cancel")
def test_elicitation_marker(acp_session):
    assert acp_session.run("ask me").text == "Cancelled the form."


# One agent process for the marker's env and cwd and for the report sections of a
# process's failed test: both directions of the wire, and its stderr.
@pytest.mark.acp_agent(
    ["sh", "-c", 'echo "FOO=$FOO BAR=$BAR" >&2; pwd >&2; exec "$0" -m acp_lite.testing.agent '
     "--scenario streaming", sys.executable],
    env={{"FOO": "from-marker"}},
    cwd="/",
)
def test_env_cwd_and_a_process_failing_on_purpose(acp_client, acp_session):
    deadline = time.monotonic() + 5
    while not any("ready" in line for line in acp_client.stderr_tail()):
        assert time.monotonic() < deadline
        time.sleep(0.02)
    tail = acp_client.stderr_tail()
    assert "/" in tail  # the marker's cwd
    # The marker's env, and --acp-env merged under it.
    assert "FOO=from-marker BAR=from-cli" in tail
    acp_session.run("please stream")
    assert False, "deliberate failure"


@scenario("hang")
@pytest.mark.acp_timeout(0.05)
def test_timeout_marker(acp_client, tmp_path):
    # The session opens within a timeout of its own (an answer that must come); the
    # turn the agent never ends, within the marker's.
    session = acp_client.new_session(cwd=tmp_path, timeout=10)
    start = time.monotonic()
    with pytest.raises(TimeoutError):
        session.run("never answered")
    assert time.monotonic() - start < 5


class TestModuleScope:
    # One agent process for the class: the overriding command's (an argv list).
    pytestmark = pytest.mark.acp_scope("module")

    @pytest.fixture
    def acp_agent_command(self):
        return [*AGENT, "--scenario", "thinking"]

    def test_first_runs_the_overriding_command(self, acp_client, acp_session):
        PIDS["module"] = acp_client.pid
        assert acp_client.pid is not None
        turn = acp_session.run("q")
        assert turn.text == "Here is my answer."
        assert "agent_thought_chunk" in [e.tag for e in turn.updates]

    def test_second_shares_the_agent(self, acp_client, acp_session, acp_transcript):
        assert acp_client.pid == PIDS["module"]
        acp_session.run("two")
        # Only this test's traffic: no initialize, and its own session/new.
        methods = [m.get("method") for m in acp_transcript.messages("send")]
        assert methods[0] == "session/new" and "initialize" not in methods


class TestModuleScopeInProcess:
    pytestmark = pytest.mark.acp_scope("module")

    def test_first(self, acp_client, acp_session):
        CLIENTS["module"] = acp_client
        acp_session.run("one")

    def test_second_shares_the_agent(self, acp_client, acp_transcript):
        assert acp_client is CLIENTS["module"]
        methods = [m.get("method") for m in acp_transcript.messages("send")]
        assert methods == []  # none yet in this test


def test_function_scope_is_fresh(acp_client):
    assert acp_client is not CLIENTS["first"] and acp_client is not CLIENTS["module"]


@scenario("crash")
@pytest.mark.acp_conformance("strict")
def test_agent_crash_is_not_a_conformance_violation(acp_client, acp_session):
    # Work left running by an agent that exited is not `work-not-ended`: no update
    # can report an exit (spec "Prompt Lifecycle", Failures). The same for an agent
    # process: test_docs_recipes.py.
    with pytest.raises(AgentExited):
        acp_session.run("x")
    assert acp_client.returncode == 3  # the in-process agent's exit status


@pytest.mark.trio
async def test_async_fixtures(acp_async_client, acp_async_session, acp_transcript):
    turn = await acp_async_session.run("async hello")
    assert turn.text == "async hello"
    assert acp_async_client.protocol_version == 2 and acp_async_client.pid is None
    assert len(acp_transcript) >= 6
    assert any("in process" in line for line in acp_async_client.stderr_tail())


@pytest.mark.trio
@pytest.mark.acp_agent(AGENT)
async def test_async_fixtures_with_a_process(acp_async_client, acp_async_session):
    turn = await acp_async_session.run("async hello")
    assert turn.text == "async hello" and acp_async_client.pid is not None


@scenario("broken_bad_stop_reason")
def test_conformance_warns_by_default(acp_session):
    acp_session.run("x")


@scenario("broken_bad_stop_reason")
@pytest.mark.acp_waive("unknown-stop-reason")
def test_waived_rule(acp_session):
    acp_session.run("x")


@scenario("broken_bad_stop_reason")
@pytest.mark.acp_conformance("off")
def test_conformance_off(acp_session):
    acp_session.run("x")


@scenario("broken_bad_stop_reason")
@pytest.mark.acp_conformance("strict")
def test_conformance_strict_marker(acp_session):
    acp_session.run("x")


@pytest.mark.acp_agent(in_process=functools.partial(InProcessAgent, script="no_stop_reason.json"))
@pytest.mark.acp_conformance("strict")
def test_should_rules_only_warn_in_strict_mode(acp_session):
    acp_session.run("x")


@scenario("streaming")
def test_fails_in_process_on_purpose(acp_session):
    acp_session.run("please stream")
    assert False, "deliberate failure"
"""
)


def test_fixtures_markers_and_diagnostics(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_suite=SUITE)
    script = {"turns": [{"steps": [{"type": "echo"}], "stop_reason": None}]}
    (pytester.path / "no_stop_reason.json").write_text(json.dumps(script))
    result = pytester.runpytest(
        *LEAN_TRIO,
        "--acp-agent=python:acp_lite.testing:InProcessAgent",
        "--acp-env=BAR=from-cli",
        "--acp-transcripts=saved",
        "-rP",
        "-W",
        "default::pytest_acp.plugin.AcpConformanceWarning",
    )
    out = result.stdout.str()
    result.assert_outcomes(passed=19, failed=3)

    # Conformance: warn (default) -> a warning naming the rule; waived / off -> nothing;
    # the strict marker fails the test with the rule, its explanation and spec section.
    result.stdout.fnmatch_lines(
        [
            "*test_suite.py::test_conformance_warns_by_default*",
            "*AcpConformanceWarning: ACP conformance: 1 violation(s) of unknown-stop-reason*",
        ]
    )
    result.stdout.fnmatch_lines(
        [
            "*test_suite.py::test_should_rules_only_warn_in_strict_mode*",
            "*violation(s) of idle-without-stop-reason",
            "*idle-without-stop-reason (SHOULD) (transcript line*",
        ]
    )
    assert "test_waived_rule" not in out.split("warnings summary")[1].split("short test")[0]
    assert "test_conformance_off" not in out.split("warnings summary")[1]
    result.stdout.fnmatch_lines(
        [
            "*AcpConformanceError: ACP conformance: 1 violation(s) of unknown-stop-reason",
            "*stopReason 'finished' is not a spec stop reason*prompt-lifecycle#stop-reasons]",
        ]
    )

    # Report sections of the failed test: both directions of the wire and stderr.
    failure = out.split("_ test_env_cwd_and_a_process_failing_on_purpose _")[1]
    assert "deliberate failure" in failure
    transcript = failure.split("ACP transcript")[1].split("ACP agent stderr")[0]
    assert '--> {"jsonrpc":"2.0","id":1,"method":"initialize"' in transcript
    assert "<-- " in transcript and '"text":"Streaming "' in transcript
    assert "[agent] ready: scenario 'streaming'" in failure.split("ACP agent stderr")[1]
    # The same sections for an agent in this process: its log is its stderr.
    failure = out.split("_ test_fails_in_process_on_purpose _")[1].split("\n____")[0]
    transcript = failure.split("ACP transcript")[1].split("ACP agent stderr")[0]
    assert '--> {"jsonrpc":"2.0","id":1,"method":"initialize"' in transcript
    assert '"text":"Streaming "' in transcript
    assert "[agent] ready: scenario 'streaming', in process" in failure
    # Only failed tests get the sections: the three failures, none of the passes (-rP
    # would print a passed test's report sections under PASSES).
    assert out.count(" ACP transcript ") == 3 and out.count(" ACP agent stderr ") == 3
    assert "ACP" not in out.split("= PASSES =")[1]

    # --acp-transcripts: one NDJSON file per test that used a client.
    saved = sorted(p.name for p in (pytester.path / "saved").iterdir())
    assert "test_suite.py_test_client_and_session.ndjson" in saved
    assert "test_suite.py_TestModuleScope_test_second_shares_the_agent.ndjson" in saved
    assert len(saved) == 22  # every test above uses an ACP client
    records = [
        json.loads(line)
        for line in (pytester.path / "saved" / "test_suite.py_test_client_and_session.ndjson")
        .read_text()
        .splitlines()
    ]
    assert records[0]["dir"] == "send" and records[0]["msg"]["method"] == "initialize"
    assert {r["dir"] for r in records} == {"send", "recv"} and records[0]["t"] == 0.0


def test_session_scope_and_policy_options(pytester: pytest.Pytester) -> None:
    # Session scope with agents in this process: one agent per kind of agent for the
    # whole run, whatever the file (a process shared per module: the run above).
    pytester.makeconftest(IN_PROCESS + "\nCLIENTS = []\n")
    pytester.makepyfile(
        session_agents="""
        from acp_lite.testing import InProcessAgent

        def thinking():
            return InProcessAgent(scenario="thinking")
        """,
        test_a="""
        from conftest import CLIENTS, scenario

        def test_a(acp_client):
            CLIENTS.append(acp_client)

        @scenario("tool_call_permission")
        def test_permission_option(acp_session):
            assert "notes.txt is written" in acp_session.run("write").text
        """,
        test_b="""
        import pytest
        from conftest import CLIENTS, scenario

        def test_b_shares_the_session_agent(acp_client):
            assert len(CLIENTS) == 1 and CLIENTS[0] is acp_client

        def test_agent_from_the_command_line(acp_session):
            assert acp_session.run("q").text == "Here is my answer."

        @scenario("elicitation")
        def test_elicitation_option(acp_session):
            assert acp_session.run("ask").text == "Cancelled the form."

        @scenario("broken_bad_stop_reason")
        @pytest.mark.acp_conformance("strict")
        def test_shared_broken_agent(acp_session):
            acp_session.run("x")

        @scenario("broken_bad_stop_reason")
        @pytest.mark.acp_conformance("strict")
        def test_shared_agent_later_test_sees_only_its_traffic(acp_client):
            CLIENTS.append(acp_client)  # the broken agent again, nothing sent this time
        """,
    )
    pytester.syspathinsert()
    result = pytester.runpytest(
        *LEAN,
        "--acp-scope=session",
        "--acp-agent=python:session_agents:thinking",
        "--acp-permission=allow_once",
        "--acp-elicitation=cancel",
    )
    result.assert_outcomes(passed=6, failed=1)
    result.stdout.fnmatch_lines(
        ["*AcpConformanceError: ACP conformance: 1 violation(s) of unknown-stop-reason*"]
    )
    result.stdout.fnmatch_lines(["FAILED test_b.py::test_shared_broken_agent - *"])
