"""What ``acp-lite`` says about a bad command line and where it points: the usage of
the command given, a short line for an unknown scenario, the scenario list
(``acp-lite scenarios``), help that describes the command it is on, and Ctrl-C's
line saying what it interrupted."""

from __future__ import annotations

import io
import re
from pathlib import Path
from types import SimpleNamespace

import pytest

from acp_lite.cli import EXIT_CODES, EXIT_OK, EXIT_USAGE, main
from acp_lite.cli.prompt import _interrupted
from acp_lite.cli.ui import Ui
from acp_lite.testing import scenarios

from .conftest import RunCli

README = Path(__file__).parents[2] / "README.md"


def usage_error(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    with pytest.raises(SystemExit) as exc:
        main(list(args))
    assert exc.value.code == EXIT_USAGE
    return capsys.readouterr().err


def test_an_unknown_option_shows_the_commands_usage(capsys: pytest.CaptureFixture[str]) -> None:
    err = usage_error(capsys, "prompt", "--bogus", "hi")
    assert err.startswith("usage: acp-lite prompt ")
    assert err.endswith("acp-lite prompt: error: unrecognized arguments: --bogus\n")


def test_an_unknown_option_of_a_nested_command(capsys: pytest.CaptureFixture[str]) -> None:
    err = usage_error(capsys, "cassette", "from-transcript", "--bogus", "a", "b")
    assert err.startswith("usage: acp-lite cassette from-transcript ")
    assert "acp-lite cassette from-transcript: error: unrecognized arguments: --bogus" in err


def test_an_unknown_scenario_is_one_short_line(run_cli: RunCli) -> None:
    proc = run_cli("prompt", "--scenario", "nosuch", "hi")
    assert proc.returncode == EXIT_USAGE
    # Before any agent starts: no agent stderr, no list of 38 names.
    assert proc.stderr == (
        "acp-lite: error: unknown --scenario 'nosuch' (`acp-lite scenarios` lists them)\n"
    )


def test_an_unknown_scenario_suggests_close_names(run_cli: RunCli) -> None:
    proc = run_cli("info", "--scenario", "streamin")
    assert proc.returncode == EXIT_USAGE
    assert "did you mean streaming" in proc.stderr
    assert len(proc.stderr) < 200


def test_scenarios_lists_every_scenario(run_cli: RunCli) -> None:
    proc = run_cli("scenarios")
    assert proc.returncode == EXIT_OK, proc.stderr
    names = [line.split()[0] for line in proc.stdout.splitlines()]
    assert names == sorted(scenarios.SCENARIOS)
    assert re.search(r"^crash +fault +", proc.stdout, re.MULTILINE)


def test_the_scenario_list_is_found_from_acp_lite(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["prompt", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "`acp-lite scenarios` lists all of them" in text
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "scenarios" in capsys.readouterr().out


@pytest.mark.parametrize("command", ["info", "login"])
def test_help_of_commands_without_a_turn_names_no_turn(
    capsys: pytest.CaptureFixture[str], command: str
) -> None:
    with pytest.raises(SystemExit):
        main([command, "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "turn" not in text
    assert "default: 30 to start, 60 per request" in text


def test_readme_lists_every_exit_code() -> None:
    text = README.read_text()
    start = text.index("Exit codes: ")
    listed = text[start : text.index("Failures print", start)]
    for code in EXIT_CODES:
        assert f"`{code}`" in listed, code


def session_with(*submissions: SimpleNamespace) -> SimpleNamespace:
    return SimpleNamespace(model=SimpleNamespace(submissions=list(submissions)))


def test_ctrl_c_before_the_prompt_was_accepted_says_so() -> None:
    # The `hang` scenario: running, then the prompt is never answered.
    text = _interrupted(session_with(SimpleNamespace(status="pending", done=False)))
    assert "waiting for the agent to accept the prompt" in text
    assert "withdrawn" in text and "cancelled" not in text


def test_ctrl_c_names_an_unconfirmed_cancel() -> None:
    text = _interrupted(session_with(SimpleNamespace(status="inserted", done=False)))
    assert "session/cancel" in text and "did not confirm" in text
    done = _interrupted(session_with(SimpleNamespace(status="inserted", done=True)))
    assert done == "acp-lite: interrupted; the turn was cancelled"


class TtyErr(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_ctrl_c_line_starts_a_line_of_its_own_on_a_terminal() -> None:
    # `state: running` then ^C echoed by the terminal: the line erases it and ends.
    out, err = io.StringIO(), TtyErr()
    ui = Ui(out, err, json_mode=False)
    ui.status("state: running")
    ui.interrupted("acp-lite: interrupted before the prompt was sent")
    assert err.getvalue().endswith("\r\x1b[Kacp-lite: interrupted before the prompt was sent\n")
