"""A suite recorded once against real agents, replayed from its cassettes.

Recorded against the reference agent (v2, and v1 with ``--protocol 1``) and the
TypeScript-SDK agent of the interop suite (``tests/interop/ts_agent.mjs``); every
test replays from ``__cassettes__/test_recorded_suite/`` and compares its updates
with the snapshots recorded with it. In replay (``--acp-record-mode=none``, the
default) no agent process runs: starting one fails, and none is a child of this
process while a test runs. Record again (needs node) with::

    pytest tests/cassettes/test_recorded_suite.py --acp-record-mode=all --snapshot-update
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from procs import child_processes

REFERENCE = [sys.executable, "-m", "acp_lite.testing.agent"]
TS_AGENT = [
    shutil.which("node") or "node",
    str(Path(__file__).parents[1] / "interop" / "ts_agent.mjs"),
]

pytestmark = pytest.mark.acp_cassette


class AgentProcessStarted(AssertionError):
    """Replay started a process: it must not."""


@pytest.fixture(autouse=True)
def _no_agent_process(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> Iterator[None]:
    if (request.config.getoption("acp_record_mode", None) or "none") != "none":
        yield
        return

    def refuse(self: Any, args: Any, *more: Any, **options: Any) -> None:
        raise AgentProcessStarted(f"replay started a process: {args!r}")

    monkeypatch.setattr(subprocess.Popen, "__init__", refuse)
    request.getfixturevalue("acp_client")  # connected: a real agent would be running now
    assert child_processes() == []
    yield


def reference(*args: str) -> pytest.MarkDecorator:
    return pytest.mark.acp_agent([*REFERENCE, *args])


ts_agent = pytest.mark.acp_agent(TS_AGENT)


@reference()
def test_reference_echo(acp_session: Any, acp_snapshot: Any) -> None:
    turn = acp_session.run("Hello, cassette!")
    assert (turn.stop_reason, turn.text) == ("end_turn", "Hello, cassette!")
    assert turn.updates == acp_snapshot


@reference("--scenario", "updates_before_response")
def test_reference_updates_before_the_prompt_response(acp_session: Any, acp_snapshot: Any) -> None:
    turn = acp_session.run("Stream before answering")
    assert turn.stop_reason == "end_turn"
    assert turn.updates == acp_snapshot


@reference("--scenario", "tool_call_permission")
@pytest.mark.acp_permission("allow_once")
def test_reference_permission_allowed(acp_session: Any, acp_snapshot: Any) -> None:
    turn = acp_session.run("Write my notes to notes.txt")
    assert acp_session.model.tool_calls[0].status == "completed"
    assert turn.updates == acp_snapshot


@reference("--scenario", "elicitation")
def test_reference_elicitation_declined(acp_session: Any, acp_snapshot: Any) -> None:
    turn = acp_session.run("Ask me something")
    assert turn.updates == acp_snapshot


@reference("--scenario", "thinking")
def test_reference_two_turns(acp_session: Any, acp_snapshot: Any) -> None:
    first = acp_session.run("What is six times seven?")
    second = acp_session.run("And six times eight?")
    assert first.message_id != second.message_id
    assert first.updates == acp_snapshot(view="final")
    assert second.updates == acp_snapshot(view="final")


@reference("--protocol", "1")
def test_reference_v1_echo(acp_client: Any, acp_session: Any, acp_snapshot: Any) -> None:
    assert acp_client.protocol_version == 1
    turn = acp_session.run("Hello over v1")
    assert turn.text == "Hello over v1"
    assert turn.updates == acp_snapshot


@reference("--protocol", "1", "--scenario", "tool_call_permission")
@pytest.mark.acp_permission("allow_once")
def test_reference_v1_permission(acp_client: Any, acp_session: Any, acp_snapshot: Any) -> None:
    assert acp_client.protocol_version == 1
    turn = acp_session.run("Write my notes to notes.txt")
    assert acp_session.model.tool_calls[0].status == "completed"
    assert turn.updates == acp_snapshot


@ts_agent
def test_ts_agent_echo(acp_client: Any, acp_session: Any, acp_snapshot: Any) -> None:
    assert acp_client.agent_info.name != "acp-lite-reference-agent"
    turn = acp_session.run("hello")
    assert turn.text == "echo: hello"
    assert turn.updates == acp_snapshot


@ts_agent
def test_ts_agent_stream(acp_session: Any, acp_snapshot: Any) -> None:
    turn = acp_session.run("stream")
    assert turn.text == "one two three four five"
    assert turn.updates == acp_snapshot


@ts_agent
@pytest.mark.acp_permission("allow_once")
def test_ts_agent_permission_allowed(acp_session: Any, acp_snapshot: Any) -> None:
    turn = acp_session.run("permission")
    assert "permission granted" in turn.text
    assert turn.updates == acp_snapshot


@ts_agent
def test_ts_agent_permission_rejected(acp_session: Any, acp_snapshot: Any) -> None:
    turn = acp_session.run("permission")
    assert "permission rejected" in turn.text
    assert turn.updates == acp_snapshot
