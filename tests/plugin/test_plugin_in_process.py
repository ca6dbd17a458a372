"""Agents in this process, end to end in one pytester run: ``python:MODULE:NAME`` in
the ini file, in a marker and from ``acp_agent_command``, ``in_process=`` with a
factory, a trio-native agent or a factory of one; what the plugin reads from them
(exit status, stderr); a shared agent that died is replaced; and each mistake is one
clear error."""

from __future__ import annotations

import pytest

from .conftest import IN_PROCESS, LEAN_TRIO

AGENTS = """
from acp_lite.testing import InProcessAgent


def thinking():
    return InProcessAgent(scenario="thinking")
"""

SUITE = (
    IN_PROCESS
    + '''
import json

import trio
from acp_lite.errors import AgentExited

import inproc_agents

CLIENTS = {}


async def native_echo(stream):
    """A trio-native agent: the handshake, then an echo of each prompt; a prompt
    "boom" makes it raise."""

    async def send(message):
        await stream.send_all(json.dumps({"jsonrpc": "2.0", **message}).encode() + b"\\n")

    async def update(sid, body):
        await send({"method": "session/update", "params": {"sessionId": sid, "update": body}})

    buffer = b""
    while data := await stream.receive_some():
        *lines, buffer = (buffer + data).split(b"\\n")
        for line in lines:
            msg = json.loads(line)
            method, rid = msg.get("method"), msg.get("id")
            if method == "initialize":
                info = {"name": "native-echo", "version": "0"}
                result = {"protocolVersion": 2, "info": info, "capabilities": {}}
                await send({"id": rid, "result": result})
            elif method == "session/new":
                await send({"id": rid, "result": {"sessionId": "s1"}})
            elif method == "session/prompt":
                sid, prompt = msg["params"]["sessionId"], msg["params"]["prompt"]
                if prompt[0]["text"] == "boom":
                    raise RuntimeError("native agent boom")
                await update(sid, {"sessionUpdate": "state_update", "state": "running"})
                await send({"id": rid, "result": {"messageId": "u1"}})
                await update(
                    sid, {"sessionUpdate": "user_message", "messageId": "u1", "content": prompt}
                )
                chunk = {"sessionUpdate": "agent_message_chunk", "messageId": "a1"}
                await update(sid, {**chunk, "content": prompt[0]})
                idle = {"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"}
                await update(sid, idle)


def test_ini_spec(acp_agent_command, acp_client, acp_session):
    assert acp_agent_command.in_process is inproc_agents.thinking
    assert acp_agent_command.argv == () and str(acp_agent_command) == (
        "python:inproc_agents:thinking"
    )
    assert acp_client.pid is None
    assert acp_session.run("q").text == "Here is my answer."


@pytest.mark.acp_agent("python:acp_lite.testing:InProcessAgent")
def test_marker_spec_beats_the_ini(acp_session):
    assert acp_session.run("hi there").text == "hi there"


@pytest.mark.acp_agent(in_process=native_echo)
@pytest.mark.acp_conformance("strict")
def test_trio_native_agent(acp_client, acp_session):
    assert acp_session.run("hi native").text == "hi native"
    assert acp_client.returncode is None and acp_client.stderr_tail() == []


@pytest.mark.acp_agent(in_process=lambda: native_echo)
def test_factory_of_a_trio_native_agent(acp_session):
    assert acp_session.run("made").text == "made"


@pytest.mark.acp_agent(in_process=native_echo)
def test_trio_native_agent_that_raises(acp_client, acp_session):
    with pytest.raises(AgentExited):
        acp_session.run("boom")
    assert acp_client.returncode == 1  # as a process that died of an exception
    assert "RuntimeError: native agent boom" in acp_client.stderr_tail()


@pytest.mark.trio
@pytest.mark.acp_agent(in_process=native_echo)
async def test_async_fixtures_with_a_trio_native_agent(acp_async_session):
    turn = await acp_async_session.run("async native")
    assert turn.text == "async native"


class TestSpecFromTheFixture:
    @pytest.fixture
    def acp_agent_command(self):
        return "python:acp_lite.testing:InProcessAgent"

    def test_spec_from_an_overridden_fixture(self, acp_client, acp_session):
        assert acp_client.pid is None and acp_session.run("echo me").text == "echo me"


class TestSharedAgentThatDied:
    pytestmark = [pytest.mark.acp_scope("module"), scenario("crash")]

    def test_crash(self, acp_client, acp_session):
        CLIENTS["crashed"] = acp_client
        with pytest.raises(AgentExited):
            acp_session.run("x")
        assert acp_client.returncode == 3

    def test_next_test_gets_a_new_agent(self, acp_client):
        assert acp_client is not CLIENTS["crashed"] and acp_client.returncode is None


@pytest.mark.acp_agent(in_process=InProcessAgent())
def test_error_agent_instead_of_a_factory(acp_client):
    pass


@pytest.mark.acp_agent(in_process=lambda: 42)
def test_error_factory_returns_no_agent(acp_client):
    pass


@pytest.mark.acp_agent("python:no_such_module_xyz:agent")
def test_error_module_not_found(acp_client):
    pass


@pytest.mark.acp_agent("python:acp_lite.testing")
def test_error_spec_without_a_name(acp_client):
    pass


@pytest.mark.acp_agent(in_process=InProcessAgent, env={"A": "1"})
def test_error_env_for_an_agent_in_this_process(acp_client):
    pass


@pytest.mark.acp_agent(in_process="acp_lite.testing:InProcessAgent")
def test_error_not_callable(acp_client):
    pass


@scenario("wrong_protocol_version")
def test_error_handshake_fails(acp_client):
    pass
'''
)


def test_agents_in_this_process(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nacp_agent = python:inproc_agents:thinking\n")
    pytester.makepyfile(inproc_agents=AGENTS, test_suite=SUITE)
    pytester.syspathinsert()
    # --tb=native: the errors' messages are the point here; pytest's own traceback
    # format parses the source file of every frame, which was half of this run.
    result = pytester.runpytest(*LEAN_TRIO, "-rE", "--tb=native")
    result.assert_outcomes(passed=9, errors=7)
    errors = {
        "test_error_agent_instead_of_a_factory": "in_process= takes a factory (the class, a "
        "function), not the agent <InProcessAgent script='echo' running>",
        "test_error_factory_returns_no_agent": "returned 42: expected a PipeAgent (such as "
        "acp_lite.testing.InProcessAgent) or an async def agent(stream)",
        "test_error_module_not_found": "cannot load 'python:no_such_module_xyz:agent': "
        "No module named 'no_such_module_xyz'",
        "test_error_spec_without_a_name": "expected python:MODULE:NAME, got "
        "'python:acp_lite.testing'",
        "test_error_env_for_an_agent_in_this_process": "an agent in this process takes no "
        "command, env or cwd",
        "test_error_not_callable": "in_process= needs a callable, not "
        "'acp_lite.testing:InProcessAgent'",
        "test_error_handshake_fails": "could not start the agent python:acp_lite.testing."
        "inprocess:InProcessAgent(scenario='wrong_protocol_version'): ",
    }
    out = result.stdout.str()
    for name, message in errors.items():
        report = out.split(f"_ ERROR at setup of {name} _")[1].split("\n____")[0]
        assert message in report, (name, report)
    # A failed handshake shows the agent's log, as a process's stderr tail would be.
    report = out.split("_ ERROR at setup of test_error_handshake_fails _")[1]
    assert "[agent] ready: scenario 'wrong_protocol_version', in process" in report
