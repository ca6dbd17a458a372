"""A pytest_acp suite with snapshots, unchanged, against v1 agents: the reference
agent in v1 (``protocol=1``, in this process: the v1 wire is what matters here, not
the process; the official SDKs' v1 agents, as processes:
``tests/interop/test_sdk_v1_tools.py``); the ``--acp-protocol`` and ``--acp-login``
options."""

from __future__ import annotations

from pathlib import Path

import pytest

from .conftest import LEAN

ROOT = Path(__file__).resolve().parents[2]
#: The inner runs' agents, in their process (``--acp-agent python:inner_agents:NAME``).
AGENTS = """
import functools
from acp_lite.testing import InProcessAgent

v1 = functools.partial(InProcessAgent, protocol=1)
auth_required = functools.partial(InProcessAgent, scenario="auth_required")
"""
REFERENCE_V1 = "python:inner_agents:v1"


@pytest.fixture(autouse=True)
def _inner_agents(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(inner_agents=AGENTS)
    pytester.syspathinsert()


SUITE = """
from typing import Any


def test_echo(acp_session: Any, acp_snapshot: Any, acp_client: Any) -> None:
    assert acp_client.protocol_version == 1
    turn = acp_session.run("hello there")
    assert turn.stop_reason == "end_turn"
    assert "hello there" in turn.text
    assert turn.updates == acp_snapshot
"""


def run_suite(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    pytester.makepyfile(test_suite=SUITE)
    first = pytester.runpytest(*LEAN, "-p", "no:randomly", "--snapshot-update", *args)
    first.assert_outcomes(passed=1)
    # Unchanged, against the recorded snapshot, in strict conformance.
    return pytester.runpytest(*LEAN, "-p", "no:randomly", "--acp-conformance", "strict", *args)


def test_the_reference_agent_in_v1(pytester: pytest.Pytester) -> None:
    result = run_suite(pytester, "--acp-agent", REFERENCE_V1)
    result.assert_outcomes(passed=1)
    (snapshot,) = [p for p in (pytester.path / "__snapshots__").rglob("*") if p.is_file()]
    text = snapshot.read_text()
    # What the agent sent (its v1 chunks), not what the translator synthesized
    # (the states, the user message).
    assert "hello there" in text and "agent_message_chunk" in text
    assert "state_update" not in text and "user_message" not in text


def test_insisting_on_v2_names_the_mismatch(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_suite=SUITE)
    result = pytester.runpytest(*LEAN, "--acp-agent", REFERENCE_V1, "--acp-protocol", "2")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*could not start the agent*protocol version*"])


def test_acp_login_logs_in_before_the_test(pytester: pytest.Pytester) -> None:
    # The agent requires a login: none fails the test's set-up, naming the method to
    # log in with; the marker's logs in.
    pytester.makepyfile(
        "import pytest\n"
        "def test_without(acp_session):\n"
        "    pass\n"
        "@pytest.mark.acp_login('token')\n"
        "def test_logged_in(acp_session):\n"
        "    assert acp_session.run('hi').stop_reason == 'end_turn'\n"
    )
    agent = "python:inner_agents:auth_required"
    result = pytester.runpytest(*LEAN, "--acp-agent", agent)
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(["*Authentication required*log in with 'token'*"])
    # --acp-login: the option's method is the one tried (the marker's beats it).
    wrong = pytester.runpytest(*LEAN, "--acp-agent", agent, "--acp-login", "nope")
    wrong.assert_outcomes(passed=1, errors=1)
    wrong.stdout.fnmatch_lines(["*could not log in to the agent*'nope' (--acp-login)*"])


def test_the_source_names_match_the_translator() -> None:
    from acp_lite.core.v1 import SOURCE_SYNTHESIZED, SOURCE_TRANSLATED
    from pytest_acp._extract import STREAMED as _STREAMED

    assert SOURCE_TRANSLATED in _STREAMED and SOURCE_SYNTHESIZED not in _STREAMED
