"""pytest_acp serves the agent's files and terminals (v1 ``fs/*``, ``terminal/*``):
the ``acp_files`` / ``acp_terminals`` fixtures (``None`` by default, overridable),
``--acp-files`` / ``--acp-terminals`` and ``@pytest.mark.acp_serve`` (issue 24 item 16).
One pytester run, an in-process v1 agent (tests/aio/fake_v1.py) that calls the client
during its turn and reports what it got as its message."""

from __future__ import annotations

import pytest

from .conftest import LEAN

SUITE = """
import functools, json, sys

import pytest
from tests.aio.fake_v1 import V1Agent


async def work(agent, sid):
    cwd = next(m["params"]["cwd"] for m in agent.received if m.get("method") == "session/new")
    seen = {}
    for name, method, params in [
        ("read", "fs/read_text_file", {"path": cwd + "/in.txt"}),
        ("write", "fs/write_text_file", {"path": cwd + "/out.txt", "content": "done"}),
        ("escape", "fs/read_text_file", {"path": "/etc/passwd"}),
        ("term", "terminal/create", {"command": sys.executable, "args": ["-c", "print(7)"]}),
    ]:
        answer = await agent.call(method, {"sessionId": sid, **params}, valid=False)
        seen[name] = answer.get("result", {"code": answer.get("error", {}).get("code")})
        if name == "term" and "result" in answer:
            tid = {"sessionId": sid, "terminalId": answer["result"]["terminalId"]}
            await agent.result("terminal/wait_for_exit", tid)
            seen["output"] = (await agent.result("terminal/output", tid))["output"]
            await agent.result("terminal/release", tid)
    chunk = {"sessionUpdate": "agent_message_chunk",
             "content": {"type": "text", "text": json.dumps(seen)}}
    await agent.send({"method": "session/update",
                      "params": {"sessionId": sid, "update": chunk}})


pytestmark = pytest.mark.acp_agent(in_process=functools.partial(V1Agent, on_prompt=work))


def seen(session, tmp_path):
    (tmp_path / "in.txt").write_text("hello")
    return json.loads(session.run("go").text)


@pytest.mark.acp_serve(files=True, terminals=True)
def test_marker_serves_both(acp_session, tmp_path):
    got = seen(acp_session, tmp_path)
    assert got["read"] == {"content": "hello"}
    assert (tmp_path / "out.txt").read_text() == "done"
    assert got["escape"] == {"code": -32602}  # outside the session's cwd
    assert got["output"].strip() == "7"


def test_option_serves_files_only(acp_session, tmp_path, acp_files, acp_terminals):
    assert acp_files is not None and acp_terminals is None
    got = seen(acp_session, tmp_path)
    assert got["read"] == {"content": "hello"} and got["term"] == {"code": -32601}


@pytest.mark.acp_serve(files=False)
def test_marker_beats_the_option(acp_session, tmp_path, acp_files):
    assert acp_files is None
    assert seen(acp_session, tmp_path)["read"] == {"code": -32601}


class TestOverride:
    @pytest.fixture
    def acp_files(self):
        from acp_lite import LocalFiles

        class Files(LocalFiles):
            def read_text_file(self, *args):
                return "from the fixture"

        return Files()

    def test_an_overriding_fixture_serves(self, acp_session, tmp_path):
        assert seen(acp_session, tmp_path)["read"] == {"content": "from the fixture"}
"""


def test_files_and_terminals_are_served_by_fixture_option_and_marker(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(test_serve=SUITE)
    result = pytester.runpytest(*LEAN, "--acp-files", "-rf")
    result.assert_outcomes(passed=4)
