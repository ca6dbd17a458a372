"""Running the client under test against the grading agent, one scenario at a time.

Each scenario gets a fresh working directory (the client's cwd, holding the file
the v1 ``fs`` scenario reads) and its own grading agent. The client is given the
agent's command line three ways: ``{agent}`` in its arguments (one argument, split
like a shell would), ``$ACP_AGENT`` (the same string) and ``$ACP_AGENT_ARGV`` (a
JSON array). It runs in its own process group, killed at the end whatever happened,
so neither it nor the agent it started outlives the run.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from acp_lite import _lazy_attrs as lazy_attrs
from acp_lite.testing.grade_scenarios import READ_FILE, READ_TEXT, WRITE_FILE

__all__ = ["LogLine", "ScenarioRun", "agent_argv", "run_scenario"]

_STDERR_TAIL = 20


@lazy_attrs.frozen
class LogLine:
    """One entry of the grading agent's log: a line either way, or an event."""

    index: int
    t: float
    direction: str | None  # "in" (the client wrote it), "out", or None (an event)
    text: str  # the raw line, or the event's name
    message: Any = None  # the line parsed: any JSON value (None: not JSON)
    valid_json: bool = False
    data: dict[str, Any] = {}  # an event's fields


@lazy_attrs.frozen
class ScenarioRun:
    """What one scenario showed: the log, the client's output and how it ended."""

    scenario: str
    log: tuple[LogLine, ...]
    stdout: str
    stderr_tail: tuple[str, ...]
    exit_code: int | None  # None: killed at the timeout
    written: str | None  # the v1 write target's content afterwards (None: absent)
    started: bool  # the client started (its command exists)
    error: str = ""


def agent_argv(scenario: str, log: str, protocol: int | None = None) -> list[str]:
    """The grading agent's command line for one scenario (``protocol``: the version
    it answers whatever the client asks; None: 1 when asked for 1, else 2)."""
    forced = [] if protocol is None else ["--grade-protocol", str(protocol)]
    return [
        sys.executable,
        "-m",
        "acp_lite.testing",
        "--grade",
        scenario,
        "--grade-log",
        log,
        *forced,
    ]


def _client_argv(command: Sequence[str], agent: str) -> list[str]:
    return [agent if part == "{agent}" else part.replace("{agent}", agent) for part in command]


def _read_log(path: Path) -> tuple[LogLine, ...]:
    out: list[LogLine] = []
    if not path.exists():
        return ()
    for i, raw in enumerate(path.read_text(encoding="utf-8").splitlines()):
        try:
            entry = json.loads(raw)
        except ValueError:
            continue
        if "event" in entry:
            data = {k: v for k, v in entry.items() if k not in ("t", "event")}
            out.append(LogLine(i, entry["t"], None, entry["event"], data=data))
            continue
        text = entry.get("line", "")
        try:
            message, valid = json.loads(text), True
        except ValueError:
            message, valid = None, False
        out.append(LogLine(i, entry["t"], entry.get("dir"), text, message, valid))
    return tuple(out)


def _interrupt_when_ready(proc: subprocess.Popen[bytes], log: Path, deadline: float) -> None:
    """``cancel``: interrupt the client (SIGINT, as Ctrl-C would) once the turn waits."""
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            if '"event": "ready_for_cancel"' in log.read_text(encoding="utf-8"):
                time.sleep(0.05)  # let the client take in what was sent before
                proc.send_signal(signal.SIGINT)
                return
        except OSError:
            pass
        time.sleep(0.02)


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)


def run_scenario(
    command: Sequence[str],
    scenario: str,
    *,
    timeout: float = 30.0,
    env: dict[str, str] | None = None,
    protocol: int | None = None,
) -> ScenarioRun:
    """Run the client once against the grading agent playing ``scenario``."""
    with tempfile.TemporaryDirectory(prefix=f"acp-grade-{scenario}-") as tmp:
        work = Path(tmp, "work")
        work.mkdir()
        (work / READ_FILE).write_text(READ_TEXT, encoding="utf-8")
        log = Path(tmp, "agent.log")
        argv = agent_argv(scenario, str(log), protocol)
        agent = shlex.join(argv)
        child_env = dict(os.environ if env is None else env)
        child_env.update(ACP_AGENT=agent, ACP_AGENT_ARGV=json.dumps(argv))
        deadline = time.monotonic() + timeout
        try:
            proc = subprocess.Popen(
                _client_argv(command, agent),
                cwd=work,
                env=child_env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
            )
        except OSError as exc:
            return ScenarioRun(scenario, (), "", (), None, None, False, f"cannot start: {exc}")
        watcher = None
        if scenario == "cancel":
            watcher = threading.Thread(
                target=_interrupt_when_ready, args=(proc, log, deadline), daemon=True
            )
            watcher.start()
        try:
            out, err = proc.communicate(timeout=max(0.1, deadline - time.monotonic()))
            code: int | None = proc.returncode
        except subprocess.TimeoutExpired:
            _kill_group(proc)
            out, err = proc.communicate()
            code = None
        finally:
            _kill_group(proc)  # the agent it started, and anything else of the group
        if watcher is not None:
            watcher.join(1.0)
        target = work / WRITE_FILE
        written = target.read_text(encoding="utf-8") if target.exists() else None
        tail = tuple(err.decode("utf-8", "replace").splitlines()[-_STDERR_TAIL:])
        return ScenarioRun(
            scenario,
            _read_log(log),
            out.decode("utf-8", "replace"),
            tail,
            code,
            written,
            True,
        )
