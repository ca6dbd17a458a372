"""The progress line of ``acp-lite prompt`` on a terminal: after a quiet interval,
``... waiting for the agent (12s)`` on stderr, erased as soon as output resumes;
never into a pipe, never with ``--json``, never in the middle of a line. The clock
and the interval are injected: no test waits for a second to pass."""

from __future__ import annotations

import io
import threading
from collections.abc import Iterator

import pytest

from acp_lite.cli import EXIT_TIMEOUT
from acp_lite.cli import ui as ui_module
from acp_lite.cli.ui import Ui, wants_progress

from .conftest import RunCli

ERASE = "\r\x1b[K"


class TtyStream(io.StringIO):
    def isatty(self) -> bool:
        return True


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


UIS: list[Ui] = []


@pytest.fixture(autouse=True)
def _stop_tickers() -> Iterator[None]:
    yield
    while UIS:  # no ticker thread outlives its test
        UIS.pop().stop_progress()


def terminal_ui(*, shared: bool = False) -> tuple[Ui, io.StringIO, io.StringIO, Clock]:
    out, err, clock = TtyStream(), TtyStream(), Clock()
    # A long interval: the ticker thread never ticks by itself; the test does.
    ui = Ui(out, err, json_mode=False, clock=clock, interval=1000.0)
    UIS.append(ui)
    ui.renderer.color = False
    ui.renderer.shared = shared
    return ui, out, err, clock


def test_a_quiet_interval_shows_the_line_and_output_erases_it() -> None:
    ui, _, err, clock = terminal_ui()
    ui.progress("waiting for the agent")
    ui.status("state: running")
    clock.now += 999.0  # less than the interval since the last output
    ui.tick()
    assert err.getvalue() == "state: running\n"
    clock.now += 2.0
    ui.tick()
    assert err.getvalue().endswith(f"{ERASE}... waiting for the agent (16m41s)")
    clock.now += 60.0
    ui.tick()  # drawn: updated every tick
    assert err.getvalue().endswith(f"{ERASE}... waiting for the agent (17m41s)")
    ui.status("state: idle (end_turn)")
    assert err.getvalue().endswith(f"(17m41s){ERASE}state: idle (end_turn)\n")
    ui.finish()
    assert err.getvalue().endswith("state: idle (end_turn)\n")  # nothing left drawn


def test_elapsed_seconds() -> None:
    ui, _, err, clock = terminal_ui()
    ui.interval = 1.0
    ui.progress("starting the agent")
    clock.now += 12.7
    ui.tick()
    assert err.getvalue() == f"{ERASE}... starting the agent (12s)"
    ui.stop_progress()
    assert err.getvalue().endswith(ERASE)
    clock.now += 5.0
    ui.tick()  # stopped: never drawn again
    assert err.getvalue().endswith(f"(12s){ERASE}")


def test_not_in_the_middle_of_the_answer_on_a_shared_terminal() -> None:
    ui, out, err, clock = terminal_ui(shared=True)
    ui.progress("waiting for the agent")
    ui.renderer.update(
        {
            "sessionUpdate": "agent_message_chunk",
            "messageId": "m1",
            "content": {"type": "text", "text": "half a line"},
        }
    )
    clock.now += 5000.0
    ui.tick()
    assert ERASE not in err.getvalue()
    assert out.getvalue() == "half a line"


def test_not_while_a_question_waits() -> None:
    ui, _, err, clock = terminal_ui()
    ui.progress("waiting for the agent")
    ui.renderer.question_open = True
    clock.now += 5000.0
    ui.tick()
    assert err.getvalue() == ""


def test_only_on_a_terminal_and_never_with_json() -> None:
    assert wants_progress(TtyStream(), json_mode=False)
    assert not wants_progress(TtyStream(), json_mode=True)
    assert not wants_progress(io.StringIO(), json_mode=False)
    piped = Ui(io.StringIO(), io.StringIO(), json_mode=False, clock=Clock(), interval=1000.0)
    piped.progress("waiting for the agent")
    piped.clock.now += 5000.0  # type: ignore[attr-defined]
    piped.tick()
    assert piped.err.getvalue() == ""


@pytest.fixture
def progress_on(monkeypatch: pytest.MonkeyPatch) -> None:
    """stderr counts as a terminal, and the interval is short (the hang below lasts
    the --timeout: many intervals)."""
    monkeypatch.setattr(ui_module, "wants_progress", lambda err, json_mode: not json_mode)
    monkeypatch.setattr(ui_module, "PROGRESS_INTERVAL", 0.02)


def test_a_hung_turn_shows_progress_then_the_error_on_a_clean_line(
    run_cli: RunCli, progress_on: None
) -> None:
    proc = run_cli("prompt", "--scenario", "hang", "--timeout", "0.5", "hi")
    assert proc.returncode == EXIT_TIMEOUT, proc.stderr
    assert "... waiting for the agent (0s)" in proc.stderr
    assert not [t for t in threading.enumerate() if t.name == "cli progress line"]
    # Erased before the error line is written.
    before, _, _ = proc.stderr.partition("acp-lite: error: ")
    assert before.endswith(ERASE), proc.stderr


def test_json_shows_no_progress(run_cli: RunCli, progress_on: None) -> None:
    proc = run_cli("prompt", "--json", "--scenario", "hang", "--timeout", "0.3", "hi")
    assert proc.returncode == EXIT_TIMEOUT, proc.stderr
    assert "waiting for the agent" not in proc.stderr
    assert ERASE not in proc.stderr
