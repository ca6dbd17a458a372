"""``terminal/*`` over the wire, with a fake v1 agent and ``LocalTerminals``.

The processes are tiny real ``sys.executable -c ...`` children (what only a process
shows: exit codes, signals, a process group, a kill); the retention rules of the
output are also tested without a process, and the request routing with a
process-free handler on trio's MockClock.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
import trio

import acp_lite
from acp_lite import aio
from acp_lite.aio._terminals import _incomplete_tail, _Terminal
from acp_lite.files import HandlerError, Workspace

from .conftest import FAST
from .fake_v1 import V1Agent

pytestmark = pytest.mark.trio

PY = sys.executable
CREATE, OUTPUT, WAIT = "terminal/create", "terminal/output", "terminal/wait_for_exit"
KILL, RELEASE = "terminal/kill", "terminal/release"


def py(code: str, *args: str) -> dict[str, Any]:
    """``terminal/create`` params running ``python -c code args``."""
    return {"command": PY, "args": ["-c", code, *args]}


def gone(pid: int) -> bool:
    """Whether ``pid`` no longer runs (absent, or a zombie nobody reaped yet)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


async def wait_gone(pid: int) -> bool:
    with trio.move_on_after(5):
        while not gone(pid):
            await trio.sleep(0.01)
    return gone(pid)


class Terms:
    """The fake agent's terminal calls for one session."""

    def __init__(self, agent: V1Agent, session_id: str) -> None:
        self.agent = agent
        self.sid = session_id

    async def create(self, **params: Any) -> str:
        result = await self.agent.result(CREATE, {"sessionId": self.sid, **params})
        terminal_id: str = result["terminalId"]
        return terminal_id

    async def call(self, method: str, terminal_id: str) -> Any:
        return await self.agent.result(method, {"sessionId": self.sid, "terminalId": terminal_id})

    async def error(self, method: str, terminal_id: str) -> dict[str, Any]:
        params = {"sessionId": self.sid, "terminalId": terminal_id}
        return await self.agent.error(method, params)


# ---------------------------------------------------------------------- real processes


async def test_run_wait_output_exit_code_env_cwd_and_no_shell(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    agent = V1Agent()
    terminals = acp_lite.LocalTerminals()
    async with aio.connect_in_memory(agent, limits=FAST, terminals=terminals) as client:
        session = await client.new_session(cwd=tmp_path)
        t = Terms(agent, session.id)
        code = (
            "import os, sys; print(os.getcwd()); print(os.environ['ACP_T'], 'PATH' in os.environ);"
            "print(sys.argv[1:]); sys.stderr.write('to stderr\\n'); sys.exit(3)"
        )
        env = [{"name": "ACP_T", "value": "from the agent"}]
        tid = await t.create(**py(code, "$HOME; ls *", "a b"), env=env)
        assert await t.call(WAIT, tid) == {"exitCode": 3, "signal": None}
        output = await t.call(OUTPUT, tid)
        assert output == {
            "output": f"{tmp_path}\nfrom the agent True\n['$HOME; ls *', 'a b']\nto stderr\n",
            "truncated": False,
            "exitStatus": {"exitCode": 3, "signal": None},
        }
        # cwd: inside the session (confined like file paths).
        sub = await t.create(**py("import os; print(os.getcwd())"), cwd=str(tmp_path / "sub"))
        await t.call(WAIT, sub)
        assert (await t.call(OUTPUT, sub))["output"] == f"{tmp_path / 'sub'}\n"
        # No shell: a command line is not split, so it is not found.
        error = await agent.error(CREATE, {"sessionId": session.id, "command": "echo hi && ls"})
        assert error["code"] == -32002 and "echo hi && ls" in error["message"]
        for tid_ in (tid, sub):
            assert await t.call(RELEASE, tid_) == {}
        assert terminals.terminal_ids == []


@pytest.mark.parametrize(
    ("cwd", "code"),
    [("relative", -32602), ("outside", -32602), ("dot-dot", -32602), ("missing", -32002)],
)
async def test_a_cwd_outside_the_session_is_refused(cwd: str, code: int, tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    path = {
        "relative": "sub",
        "outside": str(tmp_path),
        "dot-dot": str(work / ".."),
        "missing": str(work / "missing"),
    }[cwd]
    agent = V1Agent()
    terminals = acp_lite.LocalTerminals()
    async with aio.connect_in_memory(agent, limits=FAST, terminals=terminals) as client:
        session = await client.new_session(cwd=work)
        params = {"sessionId": session.id, "cwd": path, **py("print('ran')")}
        error = await agent.error(CREATE, params)
        assert error["code"] == code, error
        assert terminals.terminal_ids == []


async def test_output_is_truncated_from_the_beginning_at_a_character_boundary(
    tmp_path: Path,
) -> None:
    agent = V1Agent()
    async with aio.connect_in_memory(
        agent, limits=FAST, terminals=acp_lite.LocalTerminals()
    ) as client:
        session = await client.new_session(cwd=tmp_path)
        t = Terms(agent, session.id)
        code = "import sys; sys.stdout.write('x' * 100 + 'é' * 50 + 'end'); sys.stdout.flush()"
        tid = await t.create(**py(code), outputByteLimit=10)
        await t.call(WAIT, tid)
        output = await t.call(OUTPUT, tid)
        # 10 bytes from the end would start inside an 'é' (2 bytes): cut after it.
        assert output["output"] == "ééé" + "end"
        assert output["truncated"] is True
        assert len(output["output"].encode()) <= 10


async def test_kill_keeps_the_output_and_release_forgets_the_terminal(tmp_path: Path) -> None:
    agent = V1Agent()
    terminals = acp_lite.LocalTerminals()
    async with aio.connect_in_memory(agent, limits=FAST, terminals=terminals) as client:
        session = await client.new_session(cwd=tmp_path)
        t = Terms(agent, session.id)
        sleeper = "import os, time; print(os.getpid(), flush=True); time.sleep(60)"
        tid = await t.create(**py(sleeper))
        with trio.fail_after(5):
            while not (await t.call(OUTPUT, tid))["output"]:
                await trio.sleep(0.01)
        running = await t.call(OUTPUT, tid)
        assert "exitStatus" not in running and running["truncated"] is False
        pid = int(running["output"])
        assert await t.call(KILL, tid) == {}
        assert await t.call(WAIT, tid) == {"exitCode": None, "signal": "SIGKILL"}
        after = await t.call(OUTPUT, tid)
        assert after["output"] == f"{pid}\n"
        assert after["exitStatus"] == {"exitCode": None, "signal": "SIGKILL"}
        assert await wait_gone(pid)
        # release of a running command kills it, and the id is forgotten.
        tid2 = await t.create(**py(sleeper))
        with trio.fail_after(5):
            while not (await t.call(OUTPUT, tid2))["output"]:
                await trio.sleep(0.01)
        pid2 = int((await t.call(OUTPUT, tid2))["output"])
        assert await t.call(RELEASE, tid2) == {}
        assert await wait_gone(pid2)
        for method in (OUTPUT, WAIT, KILL, RELEASE):
            error = await t.error(method, tid2)
            assert error["code"] == -32002 and "unknown terminal" in error["message"], method
        # A terminal is its session's: another session does not see it.
        other = Terms(agent, (await client.new_session(cwd=tmp_path)).id)
        assert (await other.error(OUTPUT, tid))["code"] == -32002
        assert terminals.terminal_ids == [tid]


async def test_closing_the_client_kills_every_terminal_and_its_children(tmp_path: Path) -> None:
    agent = V1Agent()
    code = (
        "import os, subprocess, sys, time;"
        "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)']);"
        "print(os.getpid(), child.pid, flush=True); time.sleep(60)"
    )
    async with aio.connect_in_memory(
        agent, limits=FAST, terminals=acp_lite.LocalTerminals()
    ) as client:
        session = await client.new_session(cwd=tmp_path)
        t = Terms(agent, session.id)
        tids = [await t.create(**py(code)) for _ in range(2)]
        pids: list[int] = []
        for tid in tids:
            with trio.fail_after(5):
                while not (await t.call(OUTPUT, tid))["output"]:
                    await trio.sleep(0.01)
            pids += [int(p) for p in (await t.call(OUTPUT, tid))["output"].split()]
        assert not any(gone(pid) for pid in pids)
    # Leaving the block closed the client: the commands and what they started died.
    for pid in pids:
        assert await wait_gone(pid), pid


async def test_an_agent_that_goes_away_leaves_no_terminal_running(tmp_path: Path) -> None:
    agent = V1Agent()
    terminals = acp_lite.LocalTerminals()
    async with aio.connect_in_memory(agent, limits=FAST, terminals=terminals) as client:
        session = await client.new_session(cwd=tmp_path)
        t = Terms(agent, session.id)
        tid = await t.create(
            **py("import os, time; print(os.getpid(), flush=True); time.sleep(60)")
        )
        with trio.fail_after(5):
            while not (await t.call(OUTPUT, tid))["output"]:
                await trio.sleep(0.01)
        pid = int((await t.call(OUTPUT, tid))["output"])
        assert agent.stream is not None
        await agent.stream.aclose()  # the agent is gone; nobody will release it
        with trio.fail_after(5):
            while not client.closed:
                await trio.sleep(0.01)
        assert await wait_gone(pid)  # before the client is closed
        assert terminals.terminal_ids == []


# ---------------------------------------------------------------------- output retention


async def test_retention_cuts_at_character_boundaries_without_a_process() -> None:
    term = _Terminal("t", "s", limit=5)
    term.append("aé".encode())  # 3 bytes
    assert term.snapshot().output == "aé" and not term.truncated
    term.append("€".encode())  # 3 more: 6 > 5, dropping 'a' leaves 'é€' (5 bytes)
    assert term.snapshot().output == "é€" and term.truncated
    term.append(b"\xe2\x82")  # an incomplete '€': not shown while the command runs
    snap = term.snapshot()
    assert snap.output == "€" and snap.truncated
    term.append(b"\xac")  # '€€' is 6 bytes: the first one goes, whole
    assert term.snapshot().output == "€" and bytes(term.buffer) == "€".encode()
    assert [_incomplete_tail(b) for b in (b"", b"a", b"\xc3", b"\xe2\x82", b"\xe2\x82\xac")] == [
        0,
        0,
        1,
        2,
        0,
    ]


async def test_invalid_utf8_is_replaced_and_still_within_the_limit() -> None:
    term = _Terminal("t", "s", limit=4)
    term.append(b"ab\xff\xfe")  # two invalid bytes would become 6 bytes of U+FFFD
    from acp_lite.aio._terminals import TerminalExitStatus

    term.exit_status = TerminalExitStatus(exit_code=0)
    out = term.snapshot()
    assert len(out.output.encode()) <= 4 and out.truncated
    assert out.output == "\ufffd"


async def test_a_zero_limit_keeps_nothing() -> None:
    term = _Terminal("t", "s", limit=0)
    term.append(b"hello")
    assert term.snapshot().output == "" and term.snapshot().truncated


# ---------------------------------------------------------------------- custom handlers


class FakeTerminals:
    """A process-free terminal handler: each command 'runs' for ``seconds``."""

    def __init__(self, seconds: float = 3600) -> None:
        self.seconds = seconds
        self.done: dict[str, trio.Event] = {}
        self.calls: list[tuple[str, str]] = []
        self.fail_after_start = False

    async def create(
        self,
        workspace: Workspace,
        command: acp_lite.TerminalCommand,
        *,
        task_status: trio.TaskStatus[str] = trio.TASK_STATUS_IGNORED,
    ) -> None:
        if command.command == "refuse":
            raise HandlerError("no such tool", code=-32002)
        tid = f"fake-{len(self.done) + 1}"
        self.done[tid] = trio.Event()
        self.calls.append(("create", command.command))
        task_status.started(tid)
        if self.fail_after_start:
            raise RuntimeError("the background part broke")
        with trio.move_on_after(self.seconds):
            await self.done[tid].wait()
        self.done[tid].set()

    async def output(self, workspace: Workspace, terminal_id: str) -> acp_lite.TerminalOutput:
        if terminal_id == "boom":
            raise ValueError("broken output")
        status = (
            acp_lite.TerminalExitStatus(exit_code=0) if self.done[terminal_id].is_set() else None
        )
        return acp_lite.TerminalOutput("out", False, status)

    async def wait_for_exit(
        self, workspace: Workspace, terminal_id: str
    ) -> acp_lite.TerminalExitStatus:
        await self.done[terminal_id].wait()
        return acp_lite.TerminalExitStatus(exit_code=0)

    async def kill(self, workspace: Workspace, terminal_id: str) -> None:
        self.calls.append(("kill", terminal_id))
        self.done[terminal_id].set()

    async def release(self, workspace: Workspace, terminal_id: str) -> None:
        self.calls.append(("release", terminal_id))


async def test_a_custom_handler_on_the_mock_clock(autojump_clock: Any) -> None:
    agent = V1Agent()
    handler = FakeTerminals(seconds=3600)
    assert isinstance(handler, acp_lite.TerminalHandler)
    async with aio.connect_in_memory(agent, limits=FAST, terminals=handler) as client:
        session = await client.new_session(cwd="/")
        t = Terms(agent, session.id)
        tid = await t.create(command="build", args=["--all"], outputByteLimit=100)
        start = trio.current_time()
        assert await t.call(WAIT, tid) == {"exitCode": 0, "signal": None}
        assert trio.current_time() - start >= 3600  # an hour, on the mock clock
        tid2 = await t.create(command="serve")
        assert await t.call(OUTPUT, tid2) == {"output": "out", "truncated": False}
        await t.call(KILL, tid2)
        assert await t.call(WAIT, tid2) == {"exitCode": 0, "signal": None}
        await t.call(RELEASE, tid2)
        assert handler.calls == [
            ("create", "build"),
            ("create", "serve"),
            ("kill", tid2),
            ("release", tid2),
        ]
        assert not client.closed


async def test_terminal_handler_errors_are_answers_and_never_end_the_connection(
    autojump_clock: Any,
) -> None:
    agent = V1Agent()
    handler = FakeTerminals()
    async with aio.connect_in_memory(agent, limits=FAST, terminals=handler) as client:
        session = await client.new_session(cwd="/")
        t = Terms(agent, session.id)
        refused = await agent.error(CREATE, {"sessionId": session.id, "command": "refuse"})
        assert refused == {"code": -32002, "message": "no such tool"}
        broken = await t.error(OUTPUT, "boom")
        assert broken["code"] == -32603 and "ValueError: broken output" in broken["message"]
        handler.fail_after_start = True  # raises after started(): answered, then logged
        tid = await t.create(command="x")
        await trio.sleep(1)
        errors = [(e.method, type(e.error).__name__) for e in client.events]
        assert errors == [
            ("terminal/create", "HandlerError"),
            ("terminal/output", "ValueError"),
            ("terminal/create", "RuntimeError"),
        ]
        assert (await t.call(OUTPUT, tid))["output"] == "out"
        bad = [
            {"sessionId": session.id},
            {"sessionId": session.id, "command": "x", "args": "-a"},
            {"sessionId": session.id, "command": "x", "env": [{"name": "A"}]},
            {"sessionId": session.id, "command": "x", "env": [{"name": "A=B", "value": ""}]},
            {"sessionId": session.id, "command": "x", "outputByteLimit": -1},
            {"sessionId": session.id, "command": "x\x00y"},
        ]
        for params in bad:
            error = await agent.error(CREATE, params, valid=False)
            assert error["code"] == -32602, params
        assert not client.closed


async def test_the_agent_withdrawing_wait_for_exit_gets_minus_32800(autojump_clock: Any) -> None:
    agent = V1Agent()
    async with aio.connect_in_memory(agent, limits=FAST, terminals=FakeTerminals()) as client:
        session = await client.new_session(cwd="/")
        t = Terms(agent, session.id)
        tid = await t.create(command="x")
        answer: list[Any] = []
        async with trio.open_nursery() as nursery:

            async def wait() -> None:
                params = {"sessionId": session.id, "terminalId": tid}
                answer.append(await agent.call(WAIT, params))

            nursery.start_soon(wait)
            await trio.sleep(10)
            assert not answer  # still waiting: the fake command runs for an hour
            withdraw = {"requestId": agent.last_request_id}
            await agent.send({"method": "$/cancel_request", "params": withdraw})
        assert answer[0]["error"]["code"] == -32800
        assert not client.closed
