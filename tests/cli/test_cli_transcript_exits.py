"""``prompt --transcript FILE`` is written on every way out: a start that timed out,
a wrong protocol version, an agent that exited while starting, Ctrl-C while
starting (issue 25 item 2). What a turn's own failures write was kept before."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

from acp_lite.cli import EXIT_AGENT_EXITED, EXIT_INTERRUPTED, EXIT_PROTOCOL, EXIT_TIMEOUT

from .conftest import RunCli, cli_env, fake_agent


def _records(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _methods(records: list[dict[str, object]], direction: str) -> list[object]:
    return [
        r["msg"].get("method") if isinstance(r["msg"], dict) else None
        for r in records
        if r["dir"] == direction
    ]


def test_a_start_that_times_out_writes_the_transcript(run_cli: RunCli, tmp_path: Path) -> None:
    proc = run_cli(
        "prompt",
        "--scenario",
        "unresponsive",
        "--timeout",
        "0.05",
        "--transcript",
        "t.ndjson",
        "hi",
    )
    assert proc.returncode == EXIT_TIMEOUT, proc.stderr
    assert _methods(_records(tmp_path / "t.ndjson"), "send")[0] == "initialize"


def test_a_wrong_protocol_version_writes_the_transcript(run_cli: RunCli, tmp_path: Path) -> None:
    proc = run_cli(
        "prompt", "--scenario", "wrong_protocol_version", "--transcript", "t.ndjson", "hi"
    )
    assert proc.returncode == EXIT_PROTOCOL, proc.stderr
    records = _records(tmp_path / "t.ndjson")
    assert _methods(records, "send") == ["initialize"]
    (answer,) = [r["msg"] for r in records if r["dir"] == "recv"]
    assert isinstance(answer, dict) and answer["result"]["protocolVersion"] == 1


def test_an_agent_exiting_at_start_writes_the_transcript(run_cli: RunCli, tmp_path: Path) -> None:
    agent = fake_agent("early_exit_agent.py")
    proc = run_cli("prompt", "--agent", agent, "--transcript", "t.ndjson", "hi")
    assert proc.returncode == EXIT_AGENT_EXITED, proc.stderr
    records = _records(tmp_path / "t.ndjson")
    assert _methods(records, "send") == ["initialize"]
    assert records[-1] == {"dir": "exit", "t": records[-1]["t"], "returncode": 3}


def test_ctrl_c_while_starting_writes_the_transcript(tmp_path: Path) -> None:
    marker = tmp_path / "read"
    argv = ["prompt", "--agent", fake_agent("mute_agent.py", str(marker))]
    proc = subprocess.Popen(
        [sys.executable, "-m", "acp_lite.cli", *argv, "--transcript", "t.ndjson", "hi"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
        env=cli_env(),
    )
    try:
        while not marker.exists():  # the agent read initialize and will not answer
            assert proc.poll() is None, proc.communicate()
            time.sleep(0.01)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == EXIT_INTERRUPTED, err
    assert "Traceback" not in err
    assert _methods(_records(tmp_path / "t.ndjson"), "send")[0] == "initialize"
