"""A sample test suite for an ACP agent, written with the pytest_acp plugin.

The plugin comes with acp-lite (``pip install "acp-lite[pytest]"``) and loads by
itself. These tests drive the reference agent that ships with acp_lite; run them
with::

    pytest examples/test_with_pytest_acp.py

To test your own agent, point the plugin at it (``--acp-agent "node agent.mjs"``,
``acp_agent`` in ``[tool.pytest.ini_options]``, or ``@pytest.mark.acp_agent``), and
record its snapshots once with ``pytest --snapshot-update``. The snapshots of this
file live in ``examples/__snapshots__/test_with_pytest_acp/``.
"""

from __future__ import annotations

import sys
from typing import Any

import pytest

REFERENCE_AGENT = [sys.executable, "-m", "acp_lite.testing.agent"]


def scenario(name: str) -> pytest.MarkDecorator:
    """Run the test against one of the reference agent's built-in scenarios."""
    return pytest.mark.acp_agent([*REFERENCE_AGENT, "--scenario", name])


def test_echo_turn(acp_session: Any, acp_snapshot: Any) -> None:
    # run() = prompt + wait for the work that followed *this* prompt's insertion.
    turn = acp_session.run("Hello, agent!")
    assert turn.stop_reason == "end_turn"
    assert turn.text == "Hello, agent!"
    # The whole update stream, ids replaced by <message:1> ..., chunks merged.
    assert turn.updates == acp_snapshot


@scenario("thinking")
def test_thinking_then_answering(acp_session: Any, acp_snapshot: Any) -> None:
    turn = acp_session.run("What is six times seven?")
    # The final view: each message, thought, tool call ... in its final state.
    assert turn.updates == acp_snapshot(view="final")


@scenario("tool_call_permission")
def test_tool_call_is_rejected_by_default(acp_session: Any, acp_snapshot: Any) -> None:
    # Permission requests are rejected unless a test says otherwise, so a test
    # never hangs on a question it did not expect.
    turn = acp_session.run("Write my notes to notes.txt")
    assert "did not write" in turn.text
    assert turn.updates == acp_snapshot


@scenario("tool_call_permission")
@pytest.mark.acp_permission("allow_once")
def test_tool_call_runs_when_allowed(acp_session: Any, acp_snapshot: Any) -> None:
    turn = acp_session.run("Write my notes to notes.txt")
    tool_call = acp_session.model.tool_calls[0]
    assert tool_call.status == "completed"
    assert turn.updates == acp_snapshot


@scenario("plan")
def test_plan_completes(acp_session: Any, acp_normalize: Any) -> None:
    # Without snapshots: the same normalisation, for plain asserts.
    acp_session.run("Fix the bug")
    (plan,) = [u for u in acp_normalize(acp_session, view="final") if "plan" in u]
    assert plan["plan"]["planId"] == "<plan:1>"
    assert {entry["status"] for entry in plan["plan"]["entries"]} == {"completed"}


@scenario("failure")
def test_failure_after_insertion_is_reported_on_the_turn(acp_session: Any) -> None:
    # v2: the prompt was inserted (it has a messageId); the failure arrives later,
    # as an idle with stopReason "error" - not as an exception.
    turn = acp_session.run("Call the model")
    assert turn.message_id
    assert turn.stop_reason == "error"
    assert turn.error.message == "Model provider unavailable"


@scenario("slow_cancel")
def test_cancel_is_confirmed(acp_session: Any) -> None:
    acp_session.prompt("Compute for a long time")
    acp_session.cancel(wait=True, timeout=10)
    assert acp_session.stop_reason == "cancelled"


@scenario("streaming")
def test_shape_of_a_streamed_reply(acp_session: Any, acp_snapshot: Any) -> None:
    # text=False compares only the shape: which updates, in which order.
    assert acp_session.run("Stream something").updates == acp_snapshot(text=False)


@scenario("broken_bad_stop_reason")
@pytest.mark.acp_waive("unknown-stop-reason", reason="a known bug of this agent")
def test_a_known_conformance_bug_can_be_waived(acp_session: Any) -> None:
    # Every test's traffic is checked for conformance (a warning by default,
    # a failure with --acp-conformance=strict); a waiver silences one rule here.
    assert acp_session.run("Hi").stop_reason == "finished"


def test_the_wire_transcript(acp_session: Any, acp_transcript: Any) -> None:
    acp_session.run("Hi")
    methods = [m["method"] for m in acp_transcript.messages("send") if "method" in m]
    assert methods == ["initialize", "session/new", "session/prompt"]
