"""The tools, unchanged, on v1 agents written with the official SDKs (Python 0.12.1,
TypeScript 2.4.0's default v1 export): ``acp-lite info``, ``acp-lite prompt`` and a
pytest_acp suite with snapshots. (The README's blocking example is what
``test_sdk_v1_agents.py``'s ``agent`` fixture does: ``acp_lite.connect``, then
``new_session`` and ``run`` in every test.)"""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest
from test_sdk_v1_agents import agent_command

from acp_lite.cli import EXIT_OK, main

pytest_plugins = ["pytester"]

SDKS = ["python-sdk", "ts-sdk"]


@pytest.mark.parametrize("sdk", SDKS)
def test_cli_info_and_prompt(
    sdk: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    py_sdk_agent: list[str],
) -> None:
    command = shlex.join(agent_command(sdk, tmp_path, py_sdk_agent))
    monkeypatch.chdir(tmp_path)
    assert main(["info", "--agent", command, "--timeout", "60"]) == EXIT_OK
    info = capsys.readouterr().out
    assert "protocol:     1" in info
    assert {"python-sdk": "py-sdk-v1-agent", "ts-sdk": "ts-sdk-v1-agent"}[sdk] in info
    assert "demo-key (agent) Demo key" in info
    assert main(["prompt", "--agent", command, "--timeout", "60", "hello"]) == EXIT_OK
    assert capsys.readouterr().out == "echo: hello\n"


SUITE = """
def test_echo(acp_session, acp_snapshot, acp_client):
    assert acp_client.protocol_version == 1
    turn = acp_session.run("hello")
    assert turn.text == "echo: hello"
    # The turn's own stream: the SDK agents send session-level updates (their
    # commands) right after session/new, which may land before or inside the turn.
    assert [e for e in turn.updates if e.tag.endswith("_chunk")] == acp_snapshot
"""


#: The snapshot each SDK's agent gives (the Python SDK's chunks carry no messageId).
SNAPSHOTS = {
    sdk: '{"acp_snapshot": 1, "view": "merged"}\n{"sessionUpdate": "agent_message_chunk", '
    f'"content": {{"text": "echo: hello", "type": "text"}}{tail}}}\n'
    for sdk, tail in [("python-sdk", ""), ("ts-sdk", ', "messageId": "<message:1>"')]
}


@pytest.mark.parametrize("sdk", SDKS)
def test_pytest_acp_suite_with_snapshots(
    sdk: str,
    pytester: pytest.Pytester,
    tmp_path: Path,
    py_sdk_agent: list[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A suite with a snapshot, under strict conformance. The Python SDK's agent
    writes its snapshot with ``--snapshot-update``, then a second run with a fresh
    agent matches it: the snapshot is stable across runs. The TypeScript agent
    runs once, against the snapshot an earlier run wrote (``SNAPSHOTS``, with its
    normalised ``messageId``): the same proof, with one inner run fewer, where a
    start costs most (Node loading the SDK; the Python SDK's agents are forked by
    ``py_sdk_fork.py``)."""
    # Under pytest-xdist the inner run must not take itself for a worker (syrupy
    # would keep its report, which is checked here, to itself).
    for name in ("PYTEST_XDIST_WORKER", "PYTEST_XDIST_WORKER_COUNT", "PYTEST_XDIST_TESTRUNUID"):
        monkeypatch.delenv(name, raising=False)
    pytester.makepyfile(test_suite=SUITE)
    snapshot = pytester.path / "__snapshots__" / "test_suite" / "test_echo.acp.jsonl"
    args = [
        "-p",
        "no:randomly",
        "--acp-agent",
        shlex.join(agent_command(sdk, tmp_path, py_sdk_agent)),
    ]
    args += ["--acp-timeout", "60"]
    if sdk == "python-sdk":
        pytester.runpytest("--snapshot-update", *args).assert_outcomes(passed=1)
        assert snapshot.read_text() == SNAPSHOTS[sdk]
    else:
        snapshot.parent.mkdir(parents=True)
        snapshot.write_text(SNAPSHOTS[sdk])
    result = pytester.runpytest("--acp-conformance", "strict", *args)
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["1 snapshot passed.*"])
    assert [p for p in (pytester.path / "__snapshots__").rglob("*") if p.is_file()] == [snapshot]
    assert snapshot.read_text() == SNAPSHOTS[sdk]


def test_the_python_sdk_is_the_one_pinned() -> None:
    from importlib.metadata import version

    assert version("agent-client-protocol") == "0.12.1"
