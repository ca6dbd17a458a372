"""``LocalTerminals``' policy (issue 24): the allow-list of commands, the
environment given to them, the bounds on terminal count and total output, and a
``cwd`` that another process swaps for a symlink to outside while terminals start.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import trio

import acp_lite
from acp_lite import aio
from acp_lite.aio._terminals import DEFAULT_MAX_TERMINALS, _Budget, _Terminal
from acp_lite.files import Workspace

from .conftest import FAST
from .fake_v1 import V1Agent
from .test_terminals import CREATE, OUTPUT, RELEASE, WAIT, Terms

pytestmark = pytest.mark.trio


async def test_only_the_allowed_commands_run_and_they_get_no_loader_variables(
    tmp_path: Path,
) -> None:
    agent = V1Agent()
    terminals = acp_lite.LocalTerminals(commands=["/bin/pwd"])
    async with aio.connect_in_memory(agent, limits=FAST, terminals=terminals) as client:
        session = await client.new_session(cwd=tmp_path)
        t = Terms(agent, session.id)
        shell = {"sessionId": session.id, "command": "/bin/sh", "args": ["-c", "touch x"]}
        error = await agent.error(CREATE, shell)
        assert error["code"] == -32602, error
        assert error["message"] == "command '/bin/sh' is not allowed (allowed: /bin/pwd)"
        assert error["data"] == {"command": "/bin/sh"}
        # Exact names: a bare name is not the allowed path, nor the reverse.
        error = await agent.error(CREATE, {"sessionId": session.id, "command": "pwd"})
        assert error["code"] == -32602
        preload = [{"name": "LD_PRELOAD", "value": "/tmp/evil.so"}]
        params = {"sessionId": session.id, "command": "/bin/pwd", "env": preload}
        error = await agent.error(CREATE, params)
        assert error["code"] == -32602 and "may not set LD_PRELOAD" in error["message"]
        tid = await t.create(command="/bin/pwd")
        assert (await t.call(WAIT, tid))["exitCode"] == 0
        assert (await t.call(OUTPUT, tid))["output"] == f"{tmp_path}\n"
        assert not (tmp_path / "x").exists()
    with pytest.raises(TypeError):
        acp_lite.LocalTerminals(commands="git")
    with pytest.raises(ValueError):
        acp_lite.LocalTerminals(env="none")  # type: ignore[arg-type]


@pytest.mark.parametrize("policy", ["inherit", "minimal", "mapping"])
async def test_the_env_policy(policy: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ACP_CLIENT_SECRET", "s3cret")
    monkeypatch.setenv("LANG", "C.UTF-8")
    env: aio.EnvPolicy = {"ONLY": "this"} if policy == "mapping" else policy  # type: ignore[assignment]
    agent = V1Agent()
    terminals = acp_lite.LocalTerminals(env=env)
    async with aio.connect_in_memory(agent, limits=FAST, terminals=terminals) as client:
        session = await client.new_session(cwd=tmp_path)
        t = Terms(agent, session.id)
        tid = await t.create(command="/usr/bin/env", env=[{"name": "FROM_AGENT", "value": "1"}])
        await t.call(WAIT, tid)
        lines = (await t.call(OUTPUT, tid))["output"].splitlines()
    names = {line.split("=", 1)[0] for line in lines}
    assert "FROM_AGENT=1" in lines  # the agent's env on top, whatever the policy
    if policy == "inherit":
        assert "ACP_CLIENT_SECRET=s3cret" in lines
    elif policy == "minimal":
        assert names <= {*aio.MINIMAL_ENV, "FROM_AGENT"} and {"PATH", "LANG"} <= names
    else:
        assert sorted(lines) == ["FROM_AGENT=1", "ONLY=this"]


async def test_a_terminal_over_the_count_is_refused_until_one_is_released(
    tmp_path: Path,
) -> None:
    assert acp_lite.LocalTerminals().max_terminals == DEFAULT_MAX_TERMINALS == 300
    agent = V1Agent()
    terminals = acp_lite.LocalTerminals(max_terminals=2)
    async with aio.connect_in_memory(agent, limits=FAST, terminals=terminals) as client:
        session = await client.new_session(cwd=tmp_path)
        t = Terms(agent, session.id)
        first = await t.create(command="/bin/sleep", args=["10"])
        await t.create(command="/bin/pwd")  # exited, not released: still held
        params = {"sessionId": session.id, "command": "/bin/pwd"}
        error = await agent.error(CREATE, params)
        assert error == {
            "code": -32603,
            "message": "too many terminals: 2 are held, at most 2; release one first",
            "data": {"maxTerminals": 2},
        }
        assert await t.call(RELEASE, first) == {}
        await t.create(command="/bin/pwd")
        assert len(terminals.terminal_ids) == 2


async def test_the_total_output_is_bounded_across_terminals(tmp_path: Path) -> None:
    agent = V1Agent()
    terminals = acp_lite.LocalTerminals(max_total_output_bytes=1000)
    async with aio.connect_in_memory(agent, limits=FAST, terminals=terminals) as client:
        session = await client.new_session(cwd=tmp_path)
        t = Terms(agent, session.id)
        one = await t.create(command="/usr/bin/head", args=["-c", "800", "/dev/zero"])
        await t.call(WAIT, one)
        two = await t.create(command="/usr/bin/head", args=["-c", "800", "/dev/zero"])
        await t.call(WAIT, two)
        first, second = [await t.call(OUTPUT, tid) for tid in (one, two)]
        assert (len(first["output"]), first["truncated"]) == (800, False)
        assert (len(second["output"]), second["truncated"]) == (200, True)
        assert terminals.retained_output_bytes == 1000
        await t.call(RELEASE, one)  # its share comes back
        assert terminals.retained_output_bytes == 200


async def test_the_budget_without_a_process() -> None:
    budget = _Budget(10)
    one, two = _Terminal("1", "s", 8, budget), _Terminal("2", "s", 8, budget)
    one.append(b"abcdefgh")
    two.append(b"12345")  # 2 bytes left: the newest kept
    assert two.snapshot().output == "45" and two.truncated
    one.append(b"ij")  # the grower pays: its own oldest bytes go
    assert one.snapshot().output == "cdefghij" and budget.used == 10
    one.forget_output()
    two.append(b"678")
    assert two.snapshot().output == "45678" and budget.used == 5


async def test_a_cwd_swapped_for_a_symlink_after_the_check_never_leads_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The worst moment of the race, made certain: ws/d is checked, then (before the
    # process starts) moved away and replaced by a symlink to outside.
    ws, outside = tmp_path / "ws", tmp_path / "outside"
    (ws / "d").mkdir(parents=True)
    outside.mkdir()
    real_open_process = trio.lowlevel.open_process

    async def swap_then_open(*args: Any, **kwargs: Any) -> trio.Process:
        (ws / "d").rename(ws / "moved")
        (ws / "d").symlink_to(outside)
        return await real_open_process(*args, **kwargs)

    monkeypatch.setattr(trio.lowlevel, "open_process", swap_then_open)
    workspace = Workspace("s1", str(ws))
    terminals = acp_lite.LocalTerminals()
    command = aio.TerminalCommand("/bin/pwd", ("-P",), cwd=str(ws / "d"))
    async with trio.open_nursery() as nursery:
        tid = await nursery.start(terminals.create, workspace, command)
        await terminals.wait_for_exit(workspace, tid)
        # The directory checked, where it is now: never the symlink's target.
        assert (await terminals.output(workspace, tid)).output == f"{ws / 'moved'}\n"
        await terminals.release(workspace, tid)
