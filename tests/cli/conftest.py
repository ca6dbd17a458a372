"""Helpers: run the ``acp-lite`` command in this process; environment for real ones.

``run_cli`` calls ``acp_lite.cli.main`` here (stdout/stderr captured, stdin not a
TTY): no interpreter start-up and no client import per test. The reference agent
(no ``--agent``, ``--scenario``, or its command line with ``--script-json``) runs
in this process too (``InProcessAgent``, the same scripts), unless
``agent_process=True``; any other ``--agent`` is the process its command line
names. Tests of what only a real process shows (a TTY, signals, a closed stdout)
run ``python -m acp_lite.cli`` themselves, with :func:`cli_env`.
"""

from __future__ import annotations

import functools
import io
import json
import logging
import os
import pty
import runpy
import subprocess
import sys
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

import acp_lite.sync as client_module
from acp_lite import connect_in_memory
from acp_lite.cli import REFERENCE_AGENT
from acp_lite.testing import InProcessAgent

AGENTS = Path(__file__).parent / "agents"

RunCli = Callable[..., subprocess.CompletedProcess[str]]


def pytest_plugin_registered(plugin: object, manager: pytest.PytestPluginManager) -> None:
    # The README's pytest block runs under pytester; pytest refuses `pytest_plugins`
    # in a conftest that is not top-level, so load it when this conftest registers.
    if not manager.has_plugin("pytester"):
        manager.import_plugin("pytester")


def cli_env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("NO_COLOR", None)
    env["PYTHONUNBUFFERED"] = "1"
    return env


def run_cli_on_tty(args: list[str], typed: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``python -m acp_lite.cli ARGS`` with a terminal as stdin and ``typed`` already
    waiting in its input buffer (the CLI reads it when it asks); stdout and stderr
    captured."""
    master, slave = pty.openpty()
    try:
        os.write(master, typed.encode())
        return subprocess.run(
            [sys.executable, "-m", "acp_lite.cli", *args],
            stdin=slave,
            capture_output=True,
            text=True,
            timeout=60,
            cwd=cwd,
            env=cli_env(),
        )
    finally:
        os.close(slave)
        os.close(master)


def fake_agent(name: str, *args: str) -> str:
    """An ``--agent`` command line running one of the fake agents in tests/cli/agents."""
    import shlex

    return shlex.join([sys.executable, str(AGENTS / name), *args])


@pytest.fixture
def run_cli(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> RunCli:
    """Run ``acp_lite.cli.main(ARGS)`` in this process, in a temporary directory.

    Returns a ``CompletedProcess`` (exit code, stdout, stderr); ``input=`` is the
    text on stdin (never a TTY), ``cwd=`` the working directory;
    ``agent_process=True`` starts even the reference agent as a process;
    ``tty=True`` makes stdin say it is a terminal (``input=`` is still what it reads);
    ``module="acp_lite"`` runs that module as ``__main__`` with ``ARGS`` as its
    arguments, as ``python -m acp_lite ARGS`` does (its exit code is the
    ``SystemExit`` it raises).

    stderr gets what the command's own process would print there besides its
    output: log records from WARNING up (``logging.lastResort``, with their
    tracebacks) and uncaught exceptions of threads. stdout and stderr are
    pytest's capture streams, strict UTF-8 like ``PYTHONIOENCODING=utf-8``.
    """
    from acp_lite.cli import main

    def run(
        *args: str,
        timeout: float = 60,
        input: str | None = None,
        cwd: Path | str | None = None,
        stdin: Any = None,
        agent_process: bool = False,
        tty: bool = False,
        module: str | None = None,
    ) -> subprocess.CompletedProcess[str]:
        with monkeypatch.context() as patch:
            patch.chdir(cwd if cwd is not None else tmp_path)
            patch.delenv("NO_COLOR", raising=False)
            stdin_type = _TtyInput if tty else io.StringIO
            patch.setattr(sys, "stdin", stdin_type(input or ""))
            if not agent_process:
                other = functools.partial(_reference_agent_in_memory, client_module.connect)
                patch.setattr(client_module, "connect", other)
            # What the process prints (pytest replaces these while a test runs):
            # thread exceptions to stderr, and still to pytest's own hook too.
            patch.setattr(threading, "excepthook", _also_to_stderr(threading.excepthook))
            last_resort = _StderrHandler()
            logging.getLogger().addHandler(last_resort)
            capsys.readouterr()
            try:
                if module is None:
                    code = main(list(args))
                else:
                    code = _run_module(module, list(args), patch)
            finally:
                logging.getLogger().removeHandler(last_resort)
            out, err = capsys.readouterr()
        return subprocess.CompletedProcess(["acp-lite", *args], code, out, err)

    return run


def _run_module(module: str, args: list[str], patch: pytest.MonkeyPatch) -> int:
    """``python -m MODULE ARGS`` in this process (``runpy`` is what ``-m`` runs)."""
    patch.setattr(sys, "argv", [module, *args])
    try:
        runpy.run_module(module, run_name="__main__", alter_sys=True)
    except SystemExit as exc:
        code = exc.code
        return code if isinstance(code, int) else 0 if code is None else 1
    return 0


class _TtyInput(io.StringIO):
    """Text on stdin that says it is a terminal (what the CLI checks before asking)."""

    def isatty(self) -> bool:
        return True


def _also_to_stderr(
    hook: Callable[[threading.ExceptHookArgs], object],
) -> Callable[[threading.ExceptHookArgs], None]:
    def excepthook(args: threading.ExceptHookArgs) -> None:
        threading.__excepthook__(args)  # "Exception in thread ...", the traceback
        hook(args)

    return excepthook


class _StderrHandler(logging.Handler):
    """Like ``logging.lastResort`` in a process that configures no logging (the CLI):
    records from WARNING up, with their tracebacks, to the current ``sys.stderr``."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)

    def emit(self, record: logging.LogRecord) -> None:
        sys.stderr.write(self.format(record) + "\n")


def _reference_agent_in_memory(
    connect: Callable[..., Any],
    command: Sequence[str],
    *,
    in_memory: Callable[..., Any] = connect_in_memory,
    **kwargs: Any,
) -> Any:
    """``connect(command, **kwargs)``, except that the reference agent's command (what
    the CLI runs without ``--agent``, with ``--scenario NAME`` or ``--script-json
    JSON``) is served by an :class:`InProcessAgent`, through ``in_memory``
    (``acp_lite.aio.connect_in_memory`` for ``acp_lite.aio.connect``)."""
    argv = list(command)
    protocol = 2
    if argv[-2:] == ["--protocol", "1"]:  # the same agent, speaking v1
        argv, protocol = argv[:-2], 1
    if argv[:3] == list(REFERENCE_AGENT) and len(argv) in (3, 5):
        if len(argv) == 3:
            return in_memory(InProcessAgent(protocol=protocol), **kwargs)
        if argv[3] == "--scenario":
            return in_memory(InProcessAgent(argv[4], protocol=protocol), **kwargs)
        if argv[3] == "--script-json":
            script = json.loads(argv[4])
            return in_memory(InProcessAgent(script=script, protocol=protocol), **kwargs)
    return connect(command, **kwargs)


def reference_agent_in_memory(patch: pytest.MonkeyPatch) -> None:
    """While ``patch`` holds: ``acp_lite.connect`` and ``acp_lite.aio.connect`` serve
    the reference agent's command lines in this process (any other command is the
    process it names)."""
    import acp_lite
    import acp_lite.aio as aio

    blocking = functools.partial(_reference_agent_in_memory, acp_lite.connect)
    patch.setattr(acp_lite, "connect", blocking)
    async_ = functools.partial(
        _reference_agent_in_memory, aio.connect, in_memory=aio.connect_in_memory
    )
    patch.setattr(aio, "connect", async_)


def assert_clean_error(
    proc: subprocess.CompletedProcess[str], code: int, fragment: str, *, only: bool = True
) -> None:
    """A failure reported as one clear line on stderr, no traceback.

    ``only``: nothing else on stderr but indented detail lines (the agent's stderr
    tail) -- true for failures before any session output."""
    assert proc.returncode == code, (proc.returncode, proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr, proc.stderr
    lines = proc.stderr.splitlines()
    errors = [line for line in lines if line.startswith("acp-lite: error: ")]
    assert len(errors) == 1, proc.stderr
    assert fragment in errors[0], proc.stderr
    if not only:
        return
    for line in lines:
        assert line.startswith(("acp-lite: error: ", "  ")) or not line.strip(), proc.stderr
