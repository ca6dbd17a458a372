"""Process launch and the shutdown ladder, with tiny inline Python children."""

from __future__ import annotations

import logging
import os
import sys
import time

import pytest
import trio

from acp_lite.aio._process import AgentProcess, build_env
from acp_lite.errors import AgentStartFailed
from acp_lite.limits import Limits

#: Graces a clean exit must beat stay long; the ones these tests wait out are short.
PATIENT = Limits(close_grace=5.0, terminate_grace=5.0, kill_grace=5.0)
SHORT = Limits(close_grace=0.05, terminate_grace=0.05, kill_grace=1.0)
#: The agent exits at end of input (a positive path): only the SIGTERM to what it
#: left behind may be waited out.
LEFTOVERS = Limits(close_grace=5.0, terminate_grace=0.05, kill_grace=5.0)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.mark.trio
async def test_exits_when_stdin_closes() -> None:
    p = await AgentProcess.start(
        [sys.executable, "-c", "import sys; sys.stdin.read()"], limits=PATIENT
    )
    t0 = time.monotonic()
    assert await p.aclose() == 0  # its own exit: not a SIGTERM (-15) after the grace
    # Well inside the 5 s close grace (a loose bound: a loaded machine stalls).
    assert time.monotonic() - t0 < PATIENT.close_grace / 2


@pytest.mark.trio
async def test_sigterm_when_stdin_close_is_ignored() -> None:
    code = "import time\nwhile True: time.sleep(0.05)"
    p = await AgentProcess.start([sys.executable, "-c", code], limits=SHORT)
    rc = await p.aclose()
    assert rc == -15


@pytest.mark.trio
async def test_agent_ignoring_sigterm_is_killed_within_the_bound_and_reaped() -> None:
    code = (
        "import signal, sys, time\n"
        "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
        "sys.stderr.write('ready\\n'); sys.stderr.flush()\n"
        "while True: time.sleep(0.05)"
    )
    p = await AgentProcess.start([sys.executable, "-c", code], limits=SHORT)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(p.read_stderr)
        while not p.stderr_tail():  # wait until the handler is installed
            await trio.sleep(0.01)
        t0 = time.monotonic()
        rc = await p.aclose()
        elapsed = time.monotonic() - t0
    assert rc == -9
    # Both graces were waited out (the agent ignores EOF and SIGTERM), then SIGKILL.
    assert SHORT.close_grace + SHORT.terminate_grace <= elapsed < SHORT.shutdown_timeout + 0.5
    assert not _alive(p.pid)  # reaped: no zombie left behind


@pytest.mark.trio
async def test_stderr_ring_buffer_keeps_the_tail_and_logs_every_line(
    caplog: pytest.LogCaptureFixture,
) -> None:
    code = "import sys\nfor i in range(50): print('line', i, file=sys.stderr)"
    limits = Limits(stderr_lines=5)
    p = await AgentProcess.start([sys.executable, "-c", code], limits=limits)
    with caplog.at_level(logging.DEBUG, logger="acp_lite.agent"):
        await p.read_stderr()
    assert p.stderr_tail() == [f"line {i}" for i in range(45, 50)]
    logged = [r.getMessage() for r in caplog.records if r.name == "acp_lite.agent"]
    assert logged == [f"agent[{p.pid}] stderr: line {i}" for i in range(50)]
    await p.aclose()


@pytest.mark.trio
async def test_cwd_and_env_merge_or_replace(tmp_path: os.PathLike[str]) -> None:
    code = "import os; print(os.getcwd(), os.environ.get('ACP_X'), 'PATH' in os.environ)"
    for inherit, expect_path in ((True, "True"), (False, "False")):
        p = await AgentProcess.start(
            [sys.executable, "-c", code],
            cwd=tmp_path,
            env={"ACP_X": "1"},
            inherit_env=inherit,
            limits=PATIENT,
        )
        out = b""
        while chunk := await p.stdout.receive_some(1000):  # a pipe may split the line
            out += chunk
        await p.aclose()
        assert out.decode().split() == [os.fspath(tmp_path), "1", expect_path]


@pytest.mark.trio
async def test_missing_command_is_agent_start_failed() -> None:
    with pytest.raises(AgentStartFailed, match="no-such-agent-xyz"):
        await AgentProcess.start(["no-such-agent-xyz"])


@pytest.mark.trio
async def test_start_failure_message_stays_readable() -> None:
    with pytest.raises(AgentStartFailed) as info:
        await AgentProcess.start(["no-such-agent-xyz", "x" * 100_000])
    assert "no-such-agent-xyz" in str(info.value) and len(str(info.value)) < 500


@pytest.mark.trio
async def test_string_command_is_refused() -> None:
    with pytest.raises(TypeError, match="no shell"):
        await AgentProcess.start("echo hi")


def test_build_env() -> None:
    assert build_env(None, True) is None
    assert build_env({"A": "b"}, False) == {"A": "b"}
    merged = build_env({"A": "b"}, True)
    assert merged is not None and merged["A"] == "b" and "PATH" in merged


def _running(pid: int) -> bool:
    """The process exists and is not a zombie (orphans are reaped by init, maybe late)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


@pytest.mark.trio
@pytest.mark.parametrize("ignore_sigterm", [False, True])
async def test_processes_the_agent_left_behind_are_stopped(ignore_sigterm: bool) -> None:
    # The agent exits cleanly on EOF but leaves a child running in its process group
    # (like a wrapper whose tool outlives it): close() must not leak it.
    grandchild = (
        "import signal, time\n"
        + ("signal.signal(signal.SIGTERM, signal.SIG_IGN)\n" if ignore_sigterm else "")
        + "print('ready', flush=True)\n"
        "time.sleep(60)"
    )
    code = (
        "import subprocess, sys\n"
        f"q = subprocess.Popen([sys.executable, '-c', {grandchild!r}], stdout=subprocess.PIPE)\n"
        "q.stdout.readline()\n"
        "print(q.pid, flush=True)\n"
        "sys.stdin.read()\n"
    )
    p = await AgentProcess.start([sys.executable, "-c", code], limits=LEFTOVERS)
    out = b""
    while not out.endswith(b"\n"):
        out += await p.stdout.receive_some(100)
    pid = int(out)
    assert _running(pid)
    t0 = time.monotonic()
    try:
        assert await p.aclose() == 0
        assert time.monotonic() - t0 < LEFTOVERS.terminate_grace + LEFTOVERS.kill_grace + 0.5
        assert not _running(pid)
    finally:
        if _running(pid):
            os.kill(pid, 9)
