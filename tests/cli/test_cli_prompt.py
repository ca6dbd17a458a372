"""``acp-lite prompt`` against the reference agent: in this process (``run_cli``), or a
real subprocess where the process is the point (a TTY, SIGINT, a closed stdout)."""

from __future__ import annotations

import json
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from acp_lite.cli import EXIT_INTERRUPTED, EXIT_OK, EXIT_STOPPED, REFERENCE_AGENT

from .conftest import RunCli, cli_env


def test_echo_by_default(run_cli: RunCli) -> None:
    proc = run_cli("prompt", "hello", "world")
    assert proc.returncode == EXIT_OK, proc.stderr
    # stdout carries only the agent's text; status lines go to stderr. (Real
    # processes' streams: the Ctrl-C and closed-stdout tests, the README command.)
    assert "hello world" in proc.stdout
    assert "state:" not in proc.stdout
    assert "state: idle (end_turn)" in proc.stderr
    assert proc.stdout.endswith("\n")


def test_reply_prints_only_the_final_reply(run_cli: RunCli) -> None:
    proc = run_cli("prompt", "--reply", "--scenario", "streaming", "hi")
    assert proc.returncode == EXIT_OK, proc.stderr
    assert proc.stdout == "Streaming a reply in several small chunks.\n"
    assert "chunks." in proc.stderr and "state: idle (end_turn)" in proc.stderr


def test_prompt_from_stdin(run_cli: RunCli) -> None:
    proc = run_cli("prompt", "-", input="from stdin")
    assert proc.returncode == EXIT_OK, proc.stderr
    assert "from stdin" in proc.stdout


def test_json_prints_every_update_as_one_wire_dict(run_cli: RunCli) -> None:
    proc = run_cli("prompt", "--json", "hello json")
    assert proc.returncode == EXIT_OK, proc.stderr
    updates = [json.loads(line) for line in proc.stdout.splitlines()]
    assert updates, proc.stdout
    assert all(isinstance(u.get("sessionUpdate"), str) for u in updates)
    text = "".join(
        u["content"].get("text", "") for u in updates if u["sessionUpdate"] == "agent_message_chunk"
    )
    assert "hello json" in text
    states = [u for u in updates if u["sessionUpdate"] == "state_update"]
    assert states[-1]["state"] == "idle"
    assert states[-1].get("stopReason") == "end_turn"


def test_transcript_is_ndjson_of_the_wire(run_cli: RunCli, tmp_path: Path) -> None:
    path = tmp_path / "wire.ndjson"
    proc = run_cli("prompt", "--transcript", str(path), "hi there")
    assert proc.returncode == EXIT_OK, proc.stderr
    records = [json.loads(line) for line in path.read_text().splitlines()]
    assert records[0]["dir"] == "send"
    assert records[0]["msg"]["method"] == "initialize"
    assert records[0]["t"] == 0
    methods = [r["msg"].get("method") for r in records if r["dir"] == "send" and "msg" in r]
    assert methods[:3] == ["initialize", "session/new", "session/prompt"]
    assert any(r["dir"] == "recv" and r["msg"].get("method") == "session/update" for r in records)
    times = [r["t"] for r in records]
    assert times == sorted(times)


def test_session_cwd_defaults_to_current_directory(run_cli: RunCli, tmp_path: Path) -> None:
    path = tmp_path / "wire.ndjson"
    work = tmp_path / "work"
    work.mkdir()
    proc = run_cli("prompt", "--transcript", str(path), "hi", cwd=work)
    assert proc.returncode == EXIT_OK, proc.stderr
    new = _sent(path, "session/new")
    assert new["params"]["cwd"] == str(work.resolve())

    proc = run_cli("prompt", "--transcript", str(path), "--cwd", str(tmp_path), "hi", cwd=work)
    assert proc.returncode == EXIT_OK, proc.stderr
    assert _sent(path, "session/new")["params"]["cwd"] == str(tmp_path.resolve())


def _sent(path: Path, method: str) -> dict[str, Any]:
    for line in path.read_text().splitlines():
        record = json.loads(line)
        msg = record.get("msg")
        if record["dir"] == "send" and isinstance(msg, dict) and msg.get("method") == method:
            return msg
    raise AssertionError(f"{method} not sent")


def test_streaming_thoughts_plan(run_cli: RunCli) -> None:
    proc = run_cli("prompt", "--scenario", "thinking", "think")
    assert proc.returncode == EXIT_OK, proc.stderr
    assert "thinking: " in proc.stderr
    assert proc.stdout.strip()

    proc = run_cli("prompt", "--scenario", "plan", "plan it")
    assert proc.returncode == EXIT_OK, proc.stderr
    assert "plan:" in proc.stderr
    assert "[ ]" in proc.stderr or "[x]" in proc.stderr or "[~]" in proc.stderr


def test_tool_call_permission_reject_by_default_without_tty(run_cli: RunCli) -> None:
    proc = run_cli("prompt", "--scenario", "tool_call_permission", "go")
    assert "permission: " in proc.stderr
    assert "-> " in proc.stderr
    assert proc.returncode == EXIT_OK, proc.stderr
    assert _permission_line(proc.stderr) == (
        "permission: Allow writing notes.txt? -> Reject [reject_once]"
    )
    assert "tool: Write notes.txt -> failed" in proc.stderr
    assert proc.stdout == "Okay, I did not write the file.\n"
    # The decision is shown after the tool call it is about, in wire order.
    order = ["tool: Write notes.txt (edit) [pending]", "permission: ", "-> failed"]
    positions = [proc.stderr.index(text) for text in order]
    assert positions == sorted(positions), proc.stderr


def test_tool_call_permission_allow(run_cli: RunCli) -> None:
    proc = run_cli("prompt", "--permission", "allow", "--scenario", "tool_call_permission", "go")
    assert proc.returncode == EXIT_OK, proc.stderr
    assert _permission_line(proc.stderr).endswith("-> Allow once [allow_once]")
    # The tool call was shown with each status change.
    assert "tool: Write notes.txt (edit) [pending]\n" in proc.stderr
    assert "tool: Write notes.txt -> in_progress\n" in proc.stderr
    assert "tool: Write notes.txt -> completed\n" in proc.stderr
    assert proc.stdout == "Done: notes.txt is written.\n"


def test_a_v1_agents_updates_are_shown_like_v2_ones(run_cli: RunCli) -> None:
    """A v1 agent's ``tool_call`` and ``plan`` are shown as tool calls and plans,
    not dumped as unknown updates; ``--json`` keeps what the agent sent."""
    v1 = [*REFERENCE_AGENT, "--scenario", "tool_call_permission", "--protocol", "1"]
    proc = run_cli("prompt", "--permission", "allow", "--agent", shlex.join(v1), "go")
    assert proc.returncode == EXIT_OK, proc.stderr
    assert "[tool_call]" not in proc.stderr
    assert "tool: Write notes.txt (edit) [pending]\n" in proc.stderr
    assert "tool: Write notes.txt -> completed\n" in proc.stderr
    v1[4] = "plan"
    proc = run_cli("prompt", "--agent", shlex.join(v1), "plan it")
    assert "[plan]" not in proc.stderr and "plan:\n  [ ] Read the code\n" in proc.stderr
    proc = run_cli("prompt", "--json", "--agent", shlex.join(v1), "plan it")
    assert '"sessionUpdate": "plan"' in proc.stdout


def test_tool_call_permission_cancel(run_cli: RunCli) -> None:
    proc = run_cli("prompt", "--permission", "cancel", "--scenario", "tool_call_permission", "go")
    assert _permission_line(proc.stderr).endswith("-> cancelled"), proc.stderr
    assert "Done" not in proc.stdout


def _permission_line(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.startswith("permission: ")]
    assert len(lines) == 1, stderr
    return lines[0]


SCENARIO_ARGS = ("--scenario", "tool_call_permission", "go")


def test_permission_asked_interactively_on_a_tty(run_cli: RunCli) -> None:
    # An invalid answer is asked again; then option 3. In this process, stdin saying
    # it is a terminal (a real terminal's question and its Ctrl-C: tests/cli/test_cli_tty.py).
    proc = run_cli("prompt", *SCENARIO_ARGS, input="x\n3\n", tty=True)
    assert proc.returncode == 0, proc.stderr
    assert "permission requested: Allow writing notes.txt?" in proc.stderr
    assert "  1) Allow once [allow_once]\n" in proc.stderr
    assert "  3) Reject [reject_once]\n" in proc.stderr
    assert proc.stderr.count("choose 1-3 or c: ") == 2
    assert "permission: " not in proc.stderr  # no policy line: the user decided
    assert "-> failed" in proc.stderr
    assert proc.stdout == "Okay, I did not write the file.\n"


def test_failure_exits_non_zero_with_the_stop_reason(run_cli: RunCli) -> None:
    proc = run_cli("prompt", "--scenario", "failure", "fail please")
    assert proc.returncode == EXIT_STOPPED, (proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr
    assert "the turn ended with stop reason error" in proc.stderr


def test_ctrl_c_cancels_the_turn(tmp_path: Path) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "acp_lite.cli", "prompt", "--scenario", "slow_cancel", "go"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
        env=cli_env(),
    )
    try:
        assert proc.stderr is not None
        seen = ""
        while "[in_progress]" not in seen:  # the slow tool call is running
            line = proc.stderr.readline()
            assert line, seen
            seen += line
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == EXIT_INTERRUPTED, err
    assert "Traceback" not in err
    # session/cancel was sent and the agent confirmed it.
    assert "tool: Long computation -> cancelled" in err
    assert "state: idle (cancelled)" in err
    assert err.endswith("acp-lite: interrupted; the turn was cancelled\n")


def test_closed_stdout_stops_the_turn_quietly(tmp_path: Path) -> None:
    # `acp-lite prompt ... | head -n 1`: the reader goes away mid-turn.
    start = time.monotonic()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "acp_lite.cli",
            "prompt",
            "--json",
            "--scenario",
            "slow_cancel",
            "x",
        ],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
        env=cli_env(),
    )
    try:
        assert proc.stdout is not None
        assert json.loads(proc.stdout.readline())["sessionUpdate"]
        proc.stdout.close()
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    # The slow scenario takes ~30 s; it was cancelled instead of run to its end.
    assert time.monotonic() - start < 20
    assert "Traceback" not in err
    assert "BrokenPipeError" not in err
    assert proc.returncode == EXIT_STOPPED, err
    assert "the turn ended with stop reason cancelled" in err
