"""Clear one-line errors (no traceback) and distinct exit codes for each failure."""

from __future__ import annotations

import functools
import json
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
from procs import child_processes

import acp_lite.sync as client_module
from acp_lite.cli import (
    EXIT_AGENT_EXITED,
    EXIT_CODES,
    EXIT_PROTOCOL,
    EXIT_START_FAILED,
    EXIT_TIMEOUT,
    EXIT_USAGE,
    main,
)
from acp_lite.errors import AgentExited
from acp_lite.limits import Limits

from .conftest import RunCli, assert_clean_error, fake_agent


def test_command_not_found(run_cli: RunCli) -> None:
    proc = run_cli("prompt", "--agent", "no-such-agent-command-xyz --flag", "hi")
    assert_clean_error(
        proc, EXIT_START_FAILED, "agent command not found: no-such-agent-command-xyz"
    )


def test_command_not_found_for_info(run_cli: RunCli) -> None:
    proc = run_cli("info", "--agent", "no-such-agent-command-xyz")
    assert_clean_error(proc, EXIT_START_FAILED, "no-such-agent-command-xyz")


def test_agent_exits_before_initialize(run_cli: RunCli) -> None:
    proc = run_cli("prompt", "--agent", fake_agent("early_exit_agent.py"), "hi")
    assert_clean_error(proc, EXIT_AGENT_EXITED, "the agent exited with code 3 during initialize")
    # The agent's last stderr lines are shown below the error line.
    assert "  agent stderr: early_exit_agent: missing API key" in proc.stderr


def test_agent_crashes_mid_turn(run_cli: RunCli, tmp_path: Path) -> None:
    transcript = tmp_path / "wire.ndjson"
    # A real process: its exit code and stderr are what the error shows.
    proc = run_cli(
        "prompt", "--transcript", str(transcript), "--scenario", "crash", "hi", agent_process=True
    )
    assert_clean_error(proc, EXIT_AGENT_EXITED, "the agent exited with code 3", only=False)
    assert "  agent stderr: fatal: simulated crash in the reference agent" in proc.stderr
    # The transcript is written on failure too: that is when it is needed.
    records = [json.loads(line) for line in transcript.read_text().splitlines()]
    assert {"dir": "send", "method": "session/prompt"} in [
        {"dir": r["dir"], "method": r.get("msg", {}).get("method")} for r in records
    ]


def test_command_not_executable(run_cli: RunCli, tmp_path: Path) -> None:
    script = tmp_path / "agent.sh"
    script.write_text("#!/bin/sh\n")  # not chmod +x
    proc = run_cli("prompt", "--agent", str(script), "hi")
    assert_clean_error(proc, EXIT_START_FAILED, f"agent command is not executable: {script}")


def test_protocol_version_mismatch(run_cli: RunCli) -> None:
    proc = run_cli("prompt", "--agent", fake_agent("future_agent.py"), "hi")
    assert_clean_error(proc, EXIT_PROTOCOL, "protocol version 3; acp-lite speaks versions 2 and 1")


def test_a_v1_agent_is_translated(run_cli: RunCli) -> None:
    # Protocol 1 is no mismatch: the core translates (acp_lite/core/v1.py).
    proc = run_cli("prompt", "--agent", fake_agent("v1_agent.py"), "hello", "v1")
    assert proc.returncode == 0, proc.stderr
    assert "hello v1" in proc.stdout


def test_timeout_on_hanging_agent_kills_it(
    run_cli: RunCli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The agent ignores end of input: a short first grace gets to SIGTERM sooner
    # (the ladder is the point here, not the length of its default steps).
    connect = client_module.connect
    ladder = Limits(close_grace=0.2, terminate_grace=2.0, kill_grace=1.0)
    monkeypatch.setattr(client_module, "connect", functools.partial(connect, limits=ladder))
    agent = fake_agent("hang_agent.py", str(tmp_path / "agent.pid"))
    start = time.monotonic()
    proc = run_cli("prompt", "--timeout", "0.1", "--agent", agent, "hi")
    elapsed = time.monotonic() - start
    assert_clean_error(proc, EXIT_TIMEOUT, "timed out after 0.1s")
    # Bounded: timeout + the shutdown ladder, not the agent's hour-long sleep.
    assert elapsed < 20, elapsed
    # The agent process is gone: killed by the shutdown ladder and reaped (it is a
    # child of this process, which runs the command), not leaked, not a zombie.
    # (Its pid file may be missing: under load, SIGTERM can beat its start-up.)
    deadline = time.monotonic() + 5
    while _hang_agents() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _hang_agents(), "the agent process leaked"


def _hang_agents() -> list[str]:
    """This process's children (live or zombie) running hang_agent.py."""
    return [c for c in child_processes() if "hang_agent.py" in c]


# Usage errors need no agent: run main() in-process.


def _main(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_bad_agent_quoting_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _main(capsys, "prompt", "--agent", "python 'unclosed", "hi")
    assert code == EXIT_USAGE
    assert (
        err == 'acp-lite: error: cannot parse --agent "python \'unclosed": No closing quotation\n'
    )


def test_empty_prompt_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _main(capsys, "prompt", "   ")
    assert (code, err) == (EXIT_USAGE, "acp-lite: error: the prompt is empty\n")


def test_missing_cwd_is_a_usage_error(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _, err = _main(capsys, "prompt", "--cwd", str(tmp_path / "nope"), "hi")
    assert code == EXIT_USAGE
    assert err.startswith("acp-lite: error: --cwd ") and err.endswith(" is not a directory\n")


def test_unknown_scenario_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _main(capsys, "prompt", "--scenario", "no_such_scenario", "hi")
    assert code == EXIT_USAGE
    assert err.startswith("acp-lite: error: unknown --scenario 'no_such_scenario'")
    assert "`acp-lite scenarios` lists them" in err


def test_bad_timeout_is_an_argparse_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["prompt", "--timeout", "0", "hi"])
    assert exc.value.code == EXIT_USAGE
    assert "must be > 0" in capsys.readouterr().err


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0
    assert capsys.readouterr().out.startswith("acp-lite 0.")


def test_help_documents_exit_codes(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["prompt", "--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    for code, meaning in EXIT_CODES.items():
        assert f"\n  {code:<4} {meaning}\n" in out + "\n"


class _LaggingSession:
    """A session whose live update callback never fired before the agent exited."""

    def __init__(self) -> None:
        self.updates: list[SimpleNamespace] = []

    def on_update(self, callback: object) -> None:
        pass

    def cancel(self) -> None:
        pass

    def run(
        self, text: str, timeout: float, insert_timeout: float | None = None, **_: object
    ) -> None:
        chunk = {"sessionUpdate": "agent_message_chunk", "messageId": "agent-1",
                 "content": {"type": "text", "text": "About to crash..."}}  # fmt: skip
        self.updates = [SimpleNamespace(index=0, raw=chunk)]  # received during the turn
        raise AgentExited("the agent exited with code 3", returncode=3)


class _Client:
    def __enter__(self) -> _Client:
        return self

    def __exit__(self, *exc: object) -> None:
        pass

    def new_session(self, cwd: str) -> _LaggingSession:
        return _LaggingSession()


def test_output_received_before_a_crash_is_shown(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The live callback runs on another thread and may lag the turn's failure:
    # what the agent sent before exiting must still reach stdout.
    monkeypatch.setattr(client_module, "connect", lambda *a, **k: _Client())
    code, out, err = _main(capsys, "prompt", "hi")
    assert (code, out) == (EXIT_AGENT_EXITED, "About to crash...\n")
    assert err.endswith("acp-lite: error: the agent exited with code 3\n")
