"""Whatever the agent prints, the plugin reports it as that test's finding and the
run goes on: no INTERNALERROR, no RecursionError or TypeError in place of a result."""

from __future__ import annotations

import json

import pytest

from .conftest import LEAN

DEEP = "[" * 1200 + "]" * 1200


def _update(update: object) -> dict[str, object]:
    return {
        "type": "raw",
        "text": json.dumps(
            {
                "jsonrpc": "2.0",
                "method": "session/update",
                "params": {"sessionId": "{{session_id}}", "update": update},
            }
        ),
    }


HOSTILE_STEPS = {
    "deep": [{"type": "raw", "text": DEEP}],
    "deep_update": [
        {
            "type": "raw",
            "text": '{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":'
            '"{{session_id}}","update":' + DEEP + "}}",
        }
    ],
    "surrogate": [{"type": "text", "text": "a\ud800b"}],
    "deep_meta": [
        _update(
            {
                "sessionUpdate": "agent_message_chunk",
                "messageId": "m9",
                "content": {"type": "text", "text": "x"},
                "_meta": {"deep": json.loads("[" * 600 + "]" * 600)},
            }
        )
    ],
    "tag_dict": [_update({"sessionUpdate": {}})],
    "tag_list": [_update({"sessionUpdate": []})],
    "tagless": [_update({"content": {"type": "text", "text": "x"}})],
    "stop_list": [_update({"sessionUpdate": "state_update", "state": "idle", "stopReason": []})],
    "state_dict": [_update({"sessionUpdate": "state_update", "state": {}})],
    "nan": [{"type": "raw", "text": '{"jsonrpc":"2.0","method":"x","params":{"a":NaN}}'}],
    "deep_id": [{"type": "raw", "text": '{"jsonrpc":"2.0","id":' + DEEP + ',"result":{}}'}],
}


def _script(steps: list[dict[str, object]]) -> dict[str, object]:
    return {"turns": [{"steps": steps, "stop_reason": "end_turn"}]}


CASE = """

@pytest.mark.acp_agent(in_process=functools.partial(InProcessAgent, script={script!r}))
def test_{name}(acp_session, acp_snapshot):
    turn = acp_session.run("go")
    normalize(turn.updates)  # tag-less and odd updates included
    normalize(turn.updates, view="final")
    assert turn.stop_reason == "end_turn"
"""

HEADER = """
import functools
import pytest
from acp_lite.testing import InProcessAgent
from pytest_acp import normalize
"""


def test_hostile_output_is_a_finding_not_a_crash(pytester: pytest.Pytester) -> None:
    # One inner run, one test per hostile case (each with its own agent, in this
    # process: what it prints is the point), and a test after them that must still run.
    cases = sorted(HOSTILE_STEPS)
    suite = HEADER + "".join(
        CASE.format(script=_script(HOSTILE_STEPS[name]), name=name) for name in cases
    )
    pytester.makepyfile(test_suite=suite + "\n\ndef test_after():\n    pass\n")
    transcripts = pytester.path / "transcripts"
    result = pytester.runpytest(
        *LEAN, "--acp-conformance=strict", f"--acp-transcripts={transcripts}", "-rA"
    )
    out = result.stdout.str() + result.stderr.str()
    assert "INTERNALERROR" not in out, out
    assert "RecursionError" not in out and "TypeError" not in out, out
    assert result.ret in (0, 1), out  # passed, or failed on a finding: never 2, 3, 4
    outcomes = result.parseoutcomes()
    assert outcomes.get("passed", 0) + outcomes.get("failed", 0) == len(cases) + 1, outcomes
    assert "PASSED test_suite.py::test_after" in out, out
    saved = list(transcripts.glob("*.ndjson"))
    assert len(saved) >= len(cases)
    for path in saved:
        for line in path.read_text(encoding="utf-8").splitlines():
            json.loads(line, parse_constant=_no_constant)


def _no_constant(name: str) -> object:
    raise AssertionError(f"{name} in a saved transcript: not JSON")
