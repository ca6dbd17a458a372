"""Output files are checked before the work starts: a path that cannot be written is
one usage error line, exit 2, before any agent starts (issue 25 item 1)."""

from __future__ import annotations

from pathlib import Path

import pytest

from acp_lite.cli import EXIT_USAGE

from .conftest import RunCli, assert_clean_error


@pytest.mark.parametrize(
    ("path", "why"),
    [
        ("missing/dir/t.ndjson", "no such directory"),
        (".", "it is a directory"),
        ("a-file/t.ndjson", "a-file is not a directory"),
    ],
)
def test_prompt_transcript_path_is_checked_before_the_turn(
    run_cli: RunCli, tmp_path: Path, path: str, why: str
) -> None:
    (tmp_path / "a-file").write_text("")
    proc = run_cli("prompt", "--transcript", path, "hi")
    assert_clean_error(proc, EXIT_USAGE, f"cannot write the transcript {path}: ")
    assert why in proc.stderr
    assert proc.stdout == ""  # no turn ran: nothing the agent said
    assert "state:" not in proc.stderr


def test_model_run_transcript_path_is_checked_before_the_model_starts(run_cli: RunCli) -> None:
    proc = run_cli("prompt", "--model-reply", "hello", "--transcript", "missing/t.ndjson", "hi")
    assert_clean_error(proc, EXIT_USAGE, "cannot write the transcript missing/t.ndjson")


def test_replay_report_path_is_checked_before_the_replay(run_cli: RunCli, tmp_path: Path) -> None:
    made = run_cli("prompt", "--transcript", "t.ndjson", "hi")
    assert made.returncode == 0, made.stderr
    cassette = run_cli("cassette", "from-transcript", "t.ndjson", "c.acp.jsonl")
    assert cassette.returncode == 0, cassette.stderr
    # No client: before the fix the replay ran, then warned it could not write.
    proc = run_cli("replay", "--report", "missing/report.txt", "c.acp.jsonl", input="")
    assert_clean_error(proc, EXIT_USAGE, "cannot write the report missing/report.txt")
    assert proc.stdout == ""


def test_cassette_outputs_may_create_directories(run_cli: RunCli, tmp_path: Path) -> None:
    made = run_cli("prompt", "--transcript", "t.ndjson", "hi")
    assert made.returncode == 0, made.stderr
    proc = run_cli("cassette", "from-transcript", "t.ndjson", "new/dir/c.acp.jsonl")
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "new/dir/c.acp.jsonl").is_file()
