"""python -m pytest_acp check: foreign formats and bad lines are named with their line;
``rules`` lists every rule; a saved crash says the agent exited; no pytest needed."""

from __future__ import annotations

import json
import re
import runpy
import sys
from pathlib import Path

import pytest
from _pytest.assertion.rewrite import AssertionRewritingHook

import acp_lite
from acp_lite import connect_in_memory
from acp_lite.errors import AgentExited
from acp_lite.testing import InProcessAgent
from pytest_acp.__main__ import main

from .test_cli_check import OPEN, update, write


def test_a_foreign_format_is_named_not_checked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    foreign = [{"dir": "client->agent", "message": {"jsonrpc": "2.0", "id": 1}}]
    assert main(["check", write(tmp_path / "foreign.ndjson", foreign)]) == 2
    err = capsys.readouterr().err
    assert "line 1: not a transcript record of this format: 'dir' is 'client->agent'" in err


def test_a_bad_line_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "bad.ndjson"
    path.write_text(json.dumps(OPEN[0]) + "\n" + "{not json\n")
    assert main(["check", str(path)]) == 2
    assert "line 2: not JSON:" in capsys.readouterr().err


def test_rules_lists_every_rule(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rules"]) == 0
    out = capsys.readouterr().out
    for rule in ("work-not-ended", "v1-cancel-not-cancelled", "chunk-without-message-id"):
        assert rule in out


def test_a_saved_crash_records_the_exit(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    agent = InProcessAgent("crash")
    with connect_in_memory(agent) as client:
        session = client.new_session(cwd="/tmp")
        with pytest.raises(AgentExited):  # the agent exits mid-turn
            session.run("hi", timeout=10)
        # The agent in this process reports its exit status, as a process would.
        assert client.transcript.exited and client.transcript.agent_exit == 3
        client.transcript.save(tmp_path / "crash.ndjson")
    last = json.loads((tmp_path / "crash.ndjson").read_text().splitlines()[-1])
    assert (last["dir"], last["returncode"]) == ("exit", 3)
    assert main(["check", str(tmp_path / "crash.ndjson")]) == 0  # not work-not-ended
    assert "no conformance violation" in capsys.readouterr().out
    # The record also reads back.
    from acp_lite.transcript import Transcript

    loaded = Transcript.load(tmp_path / "crash.ndjson")
    assert loaded.exited and len(loaded) == len(client.transcript)
    # And without it, the same traffic is work that never ended.
    running = write(tmp_path / "running.ndjson", [*OPEN, update("running")])
    assert main(["check", running]) == 1


def test_check_runs_without_pytest(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # In this process, with pytest and syrupy unimportable and pytest_acp's modules
    # dropped, so that the command imports them again from scratch (monkeypatch puts
    # this process's modules back). acp_lite's modules stay loaded: none of them
    # imports pytest or syrupy (checked below from their source).
    path = write(tmp_path / "clean.ndjson", OPEN)
    for name in list(sys.modules):
        if name.split(".")[0] in ("pytest_acp", "syrupy"):
            monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "pytest", None)
    monkeypatch.setitem(sys.modules, "syrupy", None)
    # Nor pytest's assertion rewriting of the plugin's modules, whose loader runpy
    # cannot use.
    finders = [f for f in sys.meta_path if not isinstance(f, AssertionRewritingHook)]
    monkeypatch.setattr(sys, "meta_path", finders)
    monkeypatch.setattr(sys, "argv", ["pytest_acp", "check", path])
    try:
        runpy.run_module("pytest_acp", run_name="__main__")
        code: object = 0
    except SystemExit as exc:
        code = exc.code
    assert code in (0, None)
    assert "no conformance violation" in capsys.readouterr().out
    imports = re.compile(r"^\s*(from|import) (pytest|_pytest|syrupy)\b", re.M)
    sources = Path(acp_lite.__file__).parent.rglob("*.py")
    assert not [p for p in sources if imports.search(p.read_text(encoding="utf-8"))]


def test_a_process_exit_status_is_recorded() -> None:
    import acp_lite

    agent = [sys.executable, "-m", "acp_lite.testing.agent", "--scenario", "crash"]
    with acp_lite.connect(agent, timeout=30) as client:
        with pytest.raises(AgentExited):
            client.new_session(cwd="/tmp").run("hi")
        assert client.transcript.agent_exit == 3
        assert json.loads(client.transcript.to_ndjson().splitlines()[-1]) == {
            "dir": "exit",
            "t": pytest.approx(json.loads(client.transcript.to_ndjson().splitlines()[-1])["t"]),
            "returncode": 3,
        }


def test_a_cassette_is_checked_connection_by_connection(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A cassette: the transcript NDJSON after a header line, one per connection.
    header = {"acpCassette": 1, "protocolVersion": 2, "agent": "ref"}
    garbage = {"dir": "recv", "t": 0.2, "raw": "oops"}
    path = write(tmp_path / "c.acp.jsonl", [header, *OPEN, header, *OPEN, garbage])
    assert main(["check", path]) == 1
    out = capsys.readouterr().out
    assert f"{path} (connection 1): no conformance violation in 2 lines\n" in out
    assert f"{path} (connection 2): 1 violation(s)\n" in out
    assert "stdout-not-jsonrpc (transcript line 2)" in out
