"""acp_snapshot end to end: created, passing with other random ids and other chunk
boundaries, failing with a readable diff when the stream changes, unused snapshots
reported and deleted; and a pytest_acp_normalize hook."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .conftest import LEAN, PYTHONPATH

TEST_FILE = """
def test_turn(acp_session, acp_snapshot):
    turn = acp_session.run("hi")
    assert turn.updates == acp_snapshot(text=False)  # the shape only
    assert turn.updates == acp_snapshot  # merged (the default view)
    assert acp_session == acp_snapshot(view="final")
"""


def script(chunks: list[str]) -> str:
    tool = {"sessionUpdate": "tool_call_update", "toolCallId": "call-{{turn}}", "title": "Read",
            "status": "completed", "locations": [{"path": "{{cwd}}"}]}  # fmt: skip
    steps = [
        {"type": "update", "update": tool},
        {"type": "text", "chunks": chunks},
        {"type": "update", "update": {"sessionUpdate": "usage_update", "used": 7, "size": 99}},
    ]
    return json.dumps({"turns": [{"steps": steps}]})


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest(*LEAN, *args)


AGENTS = """
from random_ids_agent import RandomIdsAgent


def scripted():
    # The script as it is when the test starts (each run rewrites it).
    return RandomIdsAgent(script="script.json")
"""


def test_snapshot_lifecycle(pytester: pytest.Pytester) -> None:
    # The reference agent in this process, behind a proxy giving its ids new random
    # values on every run.
    pytester.makeini(f"[pytest]\n{PYTHONPATH}\nacp_agent = python:snapshot_agents:scripted\n")
    pytester.makepyfile(test_agent=TEST_FILE, snapshot_agents=AGENTS)
    pytester.syspathinsert()
    (pytester.path / "script.json").write_text(script(["Hello ", "world"]))

    created = run(pytester, "--snapshot-update")
    created.assert_outcomes(passed=1)
    created.stdout.fnmatch_lines(["*3 snapshots generated*"])
    folder = pytester.path / "__snapshots__" / "test_agent"
    files = sorted(p.name for p in folder.iterdir())
    assert files == ["test_turn.1.acp.jsonl", "test_turn.2.acp.jsonl", "test_turn.acp.jsonl"]
    merged = (folder / "test_turn.1.acp.jsonl").read_text().splitlines()
    assert json.loads(merged[0]) == {"acp_snapshot": 1, "view": "merged"}
    updates = [json.loads(line) for line in merged[1:]]
    assert [u["sessionUpdate"] for u in updates] == [
        "state_update",
        "user_message",
        "tool_call_update",
        "agent_message_chunk",  # "Hello " + "world": one merged line
        "usage_update",
        "state_update",
    ]
    assert updates[1]["messageId"] == "<message:1>" and updates[3]["messageId"] == "<message:2>"
    assert updates[2]["toolCallId"] == "<tool_call:1>"
    assert updates[3]["content"] == {"text": "Hello world", "type": "text"}
    assert updates[4]["used"] == "<tokens>"
    shape = (folder / "test_turn.acp.jsonl").read_text()
    assert '"text": "<text>"' in shape and "Hello" not in shape
    final = (folder / "test_turn.2.acp.jsonl").read_text().splitlines()
    assert json.loads(final[0])["view"] == "final"
    assert '"sessionUpdate": "agent_message"' in final[3]

    # Run again: the proxy agent gives every id a new random value; chunk boundaries
    # change too. Normalisation and the merged view make both invisible.
    (pytester.path / "script.json").write_text(script(["Hel", "lo w", "orld"]))
    again = run(pytester)
    again.assert_outcomes(passed=1)
    again.stdout.fnmatch_lines(["*3 snapshots passed*"])

    # The agent now says something else: the shape still matches, the text does not,
    # and the failure shows the changed line, old and new.
    (pytester.path / "script.json").write_text(script(["Goodbye ", "world"]))
    changed = run(pytester)
    changed.assert_outcomes(failed=1)
    changed.stdout.fnmatch_lines(
        [
            # The fixture's value above the code is short, not the stored snapshot.
            "acp_snapshot = <acp_snapshot view='merged'>",
            "*assert [[]+ received[]] == [[]- snapshot[]]*",
            '*- *"text": "Hello world"*',
            '*+ *"text": "Goodbye world"*',
        ]
    )
    assert "1 snapshot failed" in changed.stdout.str()
    assert "1 snapshot passed" in changed.stdout.str()

    # A test removed leaves unused files: reported (exit 1), then deleted by
    # --snapshot-update, as syrupy does.
    pytester.makepyfile(test_agent="def test_other():\n    pass\n")
    unused = run(pytester)
    unused.stdout.fnmatch_lines(["*3 snapshots unused*"])
    assert unused.ret == 1
    run(pytester, "--snapshot-update").stdout.fnmatch_lines(["*3 unused snapshots deleted*"])
    assert not folder.exists() or not any(folder.iterdir())


def test_normalize_hook_ini_view_and_stale_format(pytester: pytest.Pytester) -> None:
    agent = "python:acp_lite.testing:InProcessAgent"
    pytester.makeini(f"[pytest]\nacp_snapshot_view = raw\nacp_agent = {agent}\n")
    pytester.makeconftest(
        """
        def pytest_acp_normalize(update, view, config):
            assert view == "raw"
            if update["sessionUpdate"] == "state_update":
                return False  # drop them
            update.pop("background", None)
        """
    )
    pytester.makepyfile(
        test_hook="""
        def test_streaming(acp_session, acp_snapshot, acp_normalize):
            acp_session.run("hi there")
            updates = acp_normalize(acp_session, view="raw")
            assert [u["sessionUpdate"] for u in updates] == [
                "user_message", "agent_message_chunk", "agent_message_chunk"
            ]
            assert acp_session == acp_snapshot
        """
    )
    run(pytester, "--snapshot-update").assert_outcomes(passed=1)
    path = pytester.path / "__snapshots__" / "test_hook" / "test_streaming.acp.jsonl"
    lines = path.read_text().splitlines()
    assert json.loads(lines[0])["view"] == "raw" and len(lines) == 4  # echo: one chunk a word
    # A file written by another format version must be regenerated, not compared.
    path.write_text(path.read_text().replace('"acp_snapshot": 1', '"acp_snapshot": 0'))
    stale = run(pytester)
    stale.assert_outcomes(failed=1)
    stale.stdout.fnmatch_lines(["*This snapshot needs to be regenerated*"])
    run(pytester, "--snapshot-update").assert_outcomes(passed=1)
    assert Path(path).read_text().startswith('{"acp_snapshot": 1')
