"""The ``acp_fake_agent`` fixture: scripted fake agents for testing ACP clients.

One pytester run holds the inner suite (expectations met, not met, unexpected,
unordered, v1 and v2, the permission flow, failures, a crash, a hang ended by
the client's timeout, updates before the prompt response); each inner test
asserts what the client saw, and the outer test what the fixture reported at
teardown. The other tests use the fixture directly: the command run as a child
process by a black-box client (the ``acp-lite`` CLI), and the blocking and the
async client in this process.
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest
import trio

import acp_lite
import acp_lite.aio
from acp_lite.cli import main as cli_main
from pytest_acp._fake_agent import FakeAgent, FakeAgentError

from .conftest import LEAN

SUITE = """
import json
import re

import pytest

import acp_lite
from acp_lite.errors import AgentExited, MethodNotFound, RequestError, Timeout


def session(fake, **options):
    return fake.connect(timeout=5, **options).new_session(cwd="/tmp")


@pytest.mark.parametrize("protocol", [1, 2])
def test_met(acp_fake_agent, protocol):
    acp_fake_agent.protocol = protocol
    acp_fake_agent.expect_prompt("fix the bug").plan("Read", ("Fix", "in_progress")).tool_call(
        "t1", "Edit main.py", kind="edit", output="patched"
    ).reply(thought="Looking", text="Done", stop_reason="end_turn")
    acp_fake_agent.expect_prompt(re.compile(r"^thanks")).text("You're ", "welcome")
    s = session(acp_fake_agent)
    turn = s.run("fix the bug")
    assert (turn.stop_reason, turn.text) == ("end_turn", "Done")
    assert s.model.tool_calls[0].status == "completed"
    assert [e.status for e in s.model.plans[0].entries] == ["pending", "in_progress"]
    assert s.run("thanks a lot").text == "You're welcome"
    assert s.client.protocol_version == protocol
    assert [p.text for p in acp_fake_agent.prompts] == ["fix the bug", "thanks a lot"]
    assert acp_fake_agent.problems() == []


def test_unordered(acp_fake_agent):
    acp_fake_agent.ordered = False
    acp_fake_agent.expect_prompt("one").reply(text="1")
    acp_fake_agent.expect_prompt("two").reply(text="2", stop_reason="refusal")
    s = session(acp_fake_agent)
    assert s.run("two").stop_reason == "refusal"
    assert s.run("one").text == "1"


def test_out_of_order(acp_fake_agent):
    acp_fake_agent.expect_prompt("one")
    acp_fake_agent.expect_prompt("two")
    s = session(acp_fake_agent)
    with pytest.raises(RequestError, match="the next expected prompt is 'one'"):
        s.run("two")
    s.run("one")


def test_unmet(acp_fake_agent):
    acp_fake_agent.expect_initialize()
    acp_fake_agent.expect_prompt("asked")
    acp_fake_agent.expect_prompt(re.compile("never"), label="the follow-up")
    session(acp_fake_agent).run("asked")


def test_never_started(acp_fake_agent):
    acp_fake_agent.expect_prompt("hello")


def test_unexpected_method(acp_fake_agent):
    client = acp_fake_agent.connect(timeout=5)
    with pytest.raises(MethodNotFound, match="unexpected request session/list"):
        client.list_sessions()


def test_allowed_method_and_defaults(acp_fake_agent):
    acp_fake_agent.allow("session/list")
    acp_fake_agent.expect_initialize(agent_info={"name": "fake-agent", "version": "9.9"})
    acp_fake_agent.expect_new_session(updates=[
        {"sessionUpdate": "session_info_update", "title": "Scripted"}])
    client = acp_fake_agent.connect(timeout=5)
    assert client.agent_info.name == "fake-agent"
    s = client.new_session(cwd="/tmp")
    assert [i.session_id for i in client.list_sessions()] == [s.id]
    assert s.model.title == "Scripted"
    with pytest.raises(RequestError, match="the fake agent expects no prompt"):
        s.run("anything goes? No: no prompt is expected")


def test_permission_flow(acp_fake_agent):
    allow = acp_fake_agent.expect_prompt("deploy").tool_call(
        "t1", "deploy.sh", kind="execute", status="pending"
    ).ask_permission("Run deploy.sh?", tool_call_id="t1", expect="allow_once")
    allow.then(text="Deployed")
    refuse = acp_fake_agent.expect_prompt("delete").ask_permission(
        "Delete it?", tool_call_id="t2", expect="reject_once"
    )
    refuse.then(text="Deleted").otherwise(text="Kept it")
    answers = iter(["allow", "reject"])
    s = session(acp_fake_agent, on_permission=lambda request, session: next(answers))
    turn = s.run("deploy")
    assert turn.text == "Deployed"
    assert [t.status for t in s.model.tool_calls] == ["completed"]
    turn = s.run("delete")
    assert (turn.text, turn.stop_reason) == ("Kept it", "end_turn")
    assert s.model.tool_calls[1].status == "failed"
    assert (allow.answer.option_id, allow.answer.kind) == ("allow", "allow_once")
    assert refuse.answer.kind == "reject_once"


def test_permission_answered_otherwise(acp_fake_agent):
    acp_fake_agent.expect_prompt("deploy").ask_permission(
        "Run deploy.sh?", expect="allow_once").then(text="Deployed")
    # The client rejects (its default policy here): the turn ends without running it.
    turn = session(acp_fake_agent).run("deploy")
    assert (turn.text, turn.stop_reason) == ("", "end_turn")


@pytest.mark.parametrize("protocol", [1, 2])
def test_failure(acp_fake_agent, protocol):
    acp_fake_agent.protocol = protocol
    acp_fake_agent.expect_prompt("go").text("trying").fail("quota exceeded", code=-32000)
    turn = session(acp_fake_agent).run("go")
    assert (turn.stop_reason, turn.text) == ("error", "trying")
    assert turn.error.message == "quota exceeded"


def test_refused_prompt(acp_fake_agent):
    acp_fake_agent.expect_prompt("go").refuse("not now", code=-32602)
    with pytest.raises(RequestError, match="not now"):
        session(acp_fake_agent).run("go")


def test_crash(acp_fake_agent):
    acp_fake_agent.expect_prompt("go").text("partial").crash(3, stderr="fatal: out of memory")
    s = session(acp_fake_agent)
    with pytest.raises(AgentExited):
        s.run("go")
    assert s.client.returncode == 3
    assert "fatal: out of memory" in s.client.stderr_tail()


def test_hang(acp_fake_agent):
    acp_fake_agent.expect_prompt("go").text("thinking").hang()
    s = session(acp_fake_agent)
    s.wait_inserted(s.submit("go"))  # its "running" came first
    with pytest.raises(Timeout, match="session state: running"):
        s.wait_idle(timeout=0.01)  # expected to expire: the agent hangs


def test_updates_before_the_prompt_response(acp_fake_agent):
    acp_fake_agent.expect_prompt("go").text("early").defer_response()
    s = session(acp_fake_agent)
    assert s.run("go").text == "early"
    received = [e.json() for e in s.client.transcript.entries() if e.direction == "recv"]
    chunk = next(i for i, m in enumerate(received) if "agent_message_chunk" in json.dumps(m))
    answer = next(i for i, m in enumerate(received) if m.get("result", {}).get("messageId"))
    assert chunk < answer


def test_each_connection_plays_the_whole_script(acp_fake_agent):
    acp_fake_agent.expect_prompt("a")
    session(acp_fake_agent).run("a")
    acp_fake_agent.connect(timeout=5)  # asks nothing


def test_check_inside_the_test(acp_fake_agent):
    from pytest_acp._fake_agent import FakeAgentError

    acp_fake_agent.expect_prompt("hi")
    with pytest.raises(FakeAgentError, match="never started"):
        acp_fake_agent.check()
    session(acp_fake_agent).run("hi")
    acp_fake_agent.check()
"""


def test_the_fixture_end_to_end(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_inner=SUITE)
    result = pytester.runpytest_inprocess(*LEAN, "-q", "-rf")
    out = result.stdout.str()
    # Every inner test passes its own assertions; these then fail (once, as tests:
    # not as errors at teardown) on the fake agent's problems.
    failing = {
        "test_out_of_order",
        "test_unmet",
        "test_never_started",
        "test_unexpected_method",
        "test_allowed_method_and_defaults",
        "test_permission_answered_otherwise",
        "test_each_connection_plays_the_whole_script",
    }
    result.assert_outcomes(passed=18 - len(failing), failed=len(failing), errors=0)
    headers = {name: re.compile(rf"^_+ {name} _+$", re.M) for name in failing}
    for name in failing:
        assert headers[name].search(out), out
    blocks = {
        # A block ends at the next section rule, "___" (the next failure) or "==="
        # (the short summary, whose lines are as wide as the terminal allows).
        name: re.split(r"^(?:_{3,}|={3,})", headers[name].split(out, 1)[1], flags=re.M)[0]
        for name in failing
    }
    assert (
        "unexpected prompt 'two': the next expected prompt is 'one'" in blocks["test_out_of_order"]
    )
    assert "not asked: 'two'" in blocks["test_out_of_order"]
    assert "not asked: 'asked'" not in blocks["test_unmet"]
    assert "in-process #1: not asked: the follow-up" in blocks["test_unmet"]
    assert "the fake agent was never started" in blocks["test_never_started"]
    assert "not met: 'hello' was never asked" in blocks["test_never_started"]
    assert "unexpected request session/list" in blocks["test_unexpected_method"]
    # Without an expectation every prompt is unexpected (and was rejected).
    defaults = blocks["test_allowed_method_and_defaults"]
    assert "unexpected prompt 'anything goes? No" in defaults
    assert "initialize" not in defaults and "session/list" not in defaults
    assert (
        "permission 'Run deploy.sh?' ('deploy' permission 1): expected allow_once, "
        "the client answered reject_once (option 'reject')"
    ) in blocks["test_permission_answered_otherwise"]
    connections = blocks["test_each_connection_plays_the_whole_script"]
    assert "in-process #2: not asked: 'a'" in connections
    assert "in-process #1" not in connections


def test_command_in_a_child_process_for_a_black_box_client(
    acp_fake_agent: FakeAgent, capsys: pytest.CaptureFixture[str]
) -> None:
    """The ``acp-lite`` CLI (a client that knows nothing of the fixture) runs the
    command; what the child saw comes back through the report file."""
    acp_fake_agent.expect_prompt("deploy").tool_call(
        "t1", "deploy.sh", kind="execute", status="pending"
    ).ask_permission("Run deploy.sh?", tool_call_id="t1", expect="allow_once").then(
        text="Deployed to staging"
    )
    command = shlex.join(acp_fake_agent.command)
    code = cli_main(["prompt", "--agent", command, "--permission", "allow", "deploy"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "Deployed to staging" in out
    (connection,) = acp_fake_agent.connections()
    assert re.fullmatch(r"pid \d+", connection)
    assert [(p.connection, p.text) for p in acp_fake_agent.prompts] == [(connection, "deploy")]
    assert [a.kind for a in acp_fake_agent.permission_answers] == ["allow_once"]
    assert acp_fake_agent.problems() == []
    argv = acp_fake_agent.command
    script = json.loads(Path(argv[argv.index("--script") + 1]).read_text(encoding="utf-8"))
    assert script["expect"] == "ordered"
    assert script["turns"][0]["prompt"] == "deploy"


def test_blocking_client_in_this_process(acp_fake_agent: FakeAgent) -> None:
    acp_fake_agent.expect_prompt("hello").reply(text="Hi there")
    acp_fake_agent.expect_prompt("bye")
    with acp_lite.connect_in_memory(acp_fake_agent.in_process_agent(), timeout=5) as client:
        session = client.new_session(cwd="/tmp")
        assert session.run("hello").text == "Hi there"
        with pytest.raises(FakeAgentError) as info:
            acp_fake_agent.check()
        assert info.value.problems == ["in-process #1: not asked: 'bye'"]
        assert session.run("bye").stop_reason == "end_turn"
    acp_fake_agent.check()


def test_async_client_in_this_process(acp_fake_agent: FakeAgent) -> None:
    acp_fake_agent.protocol = 1
    acp_fake_agent.expect_prompt("hi").reply(text="hello", stop_reason="max_tokens")

    async def main() -> tuple[str, str | None]:
        agent = acp_fake_agent.in_process_agent()
        async with acp_lite.aio.connect_in_memory(agent, timeout=5) as client:
            session = await client.new_session(cwd="/tmp")
            turn = await session.run("hi")
            return turn.text, turn.stop_reason

    assert trio.run(main) == ("hello", "max_tokens")
    assert [p.connection for p in acp_fake_agent.prompts] == ["in-process #1"]


def test_scripting_after_the_agent_started_fails_at_once(tmp_path: Path) -> None:
    """An agent plays the script it started with: a later expectation is an error
    where it is added, not a puzzling "not asked" at teardown."""
    fake = FakeAgent(tmp_path)
    try:
        with fake.connect(timeout=5) as client:
            message = r"scripted after the agent started \(in-process #1\): each connection"
            with pytest.raises(FakeAgentError, match=message):
                fake.expect_prompt("hi").reply(text="yo")
            with pytest.raises(acp_lite.errors.PromptRejected) as rejected:
                client.new_session(cwd=tmp_path).run("hi")
            tail = client.stderr_tail()
    finally:
        fake.close()
    assert "unexpected prompt 'hi': the fake agent expects no prompt" in str(rejected.value)
    assert fake.problems() == [
        "in-process #1: unexpected prompt 'hi': the fake agent expects no prompt"
    ]
    # A refused prompt ends its turn as scripted: the agent logs no crash.
    assert not [line for line in tail if "crashed" in line], tail
