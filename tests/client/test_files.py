"""``acp_lite.files``: path confinement and ``LocalFiles`` without a connection, and
``files=`` / ``terminals=`` through the blocking client."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path
from typing import Any

import pytest

import acp_lite
from acp_lite.files import (
    FileHandler,
    HandlerError,
    LocalFiles,
    PathNotAllowed,
    Workspace,
    error_answer,
)
from tests.aio.fake_v1 import V1Agent

from .conftest import FAST


@pytest.fixture
def tree(tmp_path: Path) -> Workspace:
    work, extra, outside = tmp_path / "work", tmp_path / "extra", tmp_path / "outside"
    for d in (work, extra, outside):
        d.mkdir()
    (work / "a.txt").write_text("a\n")
    (extra / "e.txt").write_text("e\n")
    (outside / "o.txt").write_text("o\n")
    (work / "to-extra").symlink_to(extra)
    (work / "to-outside").symlink_to(outside)
    (work / "dangling").symlink_to(outside / "new.txt")
    return Workspace("s1", str(work), (str(extra),))


# ---------------------------------------------------------------------- Workspace.resolve


def test_resolve_allows_the_roots_and_what_is_inside_them(tree: Workspace) -> None:
    work, extra = tree.roots
    assert tree.resolve(work) == os.path.realpath(work)
    assert tree.resolve(f"{work}/a.txt") == os.path.realpath(f"{work}/a.txt")
    assert tree.resolve(f"{work}/not/yet/there.txt").endswith("/work/not/yet/there.txt")
    assert tree.resolve(f"{extra}/e.txt") == os.path.realpath(f"{extra}/e.txt")
    assert tree.resolve(f"{work}/to-extra/e.txt") == os.path.realpath(f"{extra}/e.txt")
    assert tree.resolve(f"{work}//a.txt") == os.path.realpath(f"{work}/a.txt")
    assert tree.resolve(f"{work}/./a.txt") == os.path.realpath(f"{work}/a.txt")


@pytest.mark.parametrize(
    ("path", "words"),
    [
        ("a.txt", "must be absolute"),
        ("./a.txt", "must be absolute"),
        ("{work}/../outside/o.txt", "must not contain '..'"),
        ("{work}/..", "must not contain '..'"),
        ("{work}/to-outside/o.txt", "leads through a symlink"),
        ("{work}/dangling", "leads through a symlink"),
        ("{work}-x/a.txt", "outside the session's directories"),
        ("/", "outside the session's directories"),
        ("{work}/a\x00.txt", "NUL"),
        ("", "non-empty string"),
    ],
    ids=[
        "relative",
        "dot-relative",
        "dot-dot",
        "dot-dot-end",
        "symlink-out",
        "dangling-symlink-out",
        "sibling-prefix",
        "root",
        "nul",
        "empty",
    ],
)
def test_resolve_refuses(tree: Workspace, path: str, words: str) -> None:
    path = path.format(work=tree.cwd)
    with pytest.raises(PathNotAllowed, match=words) as info:
        tree.resolve(path)
    assert info.value.code == -32602
    assert error_answer(info.value) == (-32602, info.value.message, {"path": path})


def test_resolve_refuses_what_is_not_a_string(tree: Workspace) -> None:
    with pytest.raises(PathNotAllowed, match="non-empty string"):
        tree.resolve(None)


# ---------------------------------------------------------------------- LocalFiles


def test_local_files_is_a_file_handler() -> None:
    assert isinstance(LocalFiles(), FileHandler)
    assert repr(LocalFiles(read_only=True, create_dirs=True)) == (
        "LocalFiles(read_only=True, create_dirs=True)"
    )


def test_read_refuses_what_is_not_a_utf8_regular_file(tree: Workspace) -> None:
    files = LocalFiles()
    work = Path(tree.cwd)
    (work / "bin").write_bytes(b"ok\n\xff\xfe\n")
    with pytest.raises(HandlerError, match="not UTF-8 text") as info:
        files.read_text_file(tree, str(work / "bin"))
    assert info.value.code == -32603
    with pytest.raises(HandlerError, match="not a regular file"):
        files.read_text_file(tree, str(work))
    os.mkfifo(work / "fifo")  # would block an open() without O_NONBLOCK
    with pytest.raises(HandlerError, match="not a regular file"):
        files.read_text_file(tree, str(work / "fifo"))
    with pytest.raises(FileNotFoundError) as missing:
        files.read_text_file(tree, str(work / "missing"))
    code, message, data = error_answer(missing.value)
    assert code == -32002 and "No such file" in message
    assert data == {"path": os.path.realpath(work / "missing")}


def test_read_bounds_the_answer(tree: Workspace) -> None:
    big = Path(tree.cwd) / "big.txt"
    big.write_text("0123456789\n" * 10)
    files = LocalFiles(max_read_bytes=50)
    with pytest.raises(HandlerError, match="exceed 50 characters; ask for fewer"):
        files.read_text_file(tree, str(big))
    assert files.read_text_file(tree, str(big), line=3, limit=4) == "0123456789\n" * 4


def test_write_replaces_keeping_the_mode_and_refuses_a_directory(tree: Workspace) -> None:
    files = LocalFiles()
    target = Path(tree.cwd) / "a.txt"
    target.chmod(0o640)
    files.write_text_file(tree, str(target), "new\n")
    assert target.read_text() == "new\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    # Through a symlink that stays inside: the real file is replaced, the link kept.
    files.write_text_file(tree, f"{tree.cwd}/to-extra/e.txt", "via link\n")
    assert Path(tree.additional_directories[0], "e.txt").read_text() == "via link\n"
    assert (Path(tree.cwd) / "to-extra").is_symlink()
    with pytest.raises(HandlerError, match="not a regular file"):
        files.write_text_file(tree, f"{tree.cwd}/to-extra", "x")
    assert sorted(os.listdir(tree.cwd)) == ["a.txt", "dangling", "to-extra", "to-outside"]


def test_read_only_local_files_refuse_writes(tree: Workspace) -> None:
    files = LocalFiles(read_only=True)
    with pytest.raises(HandlerError) as info:
        files.write_text_file(tree, f"{tree.cwd}/a.txt", "x")
    assert info.value.code == -32601
    assert Path(tree.cwd, "a.txt").read_text() == "a\n"


def test_error_answer_of_other_exceptions() -> None:
    assert error_answer(PermissionError(13, "Permission denied", "/x")) == (
        -32603,
        "Permission denied: /x",
        {"path": "/x"},
    )
    assert error_answer(OSError("no reason")) == (-32603, "no reason", None)
    assert error_answer(KeyError("k")) == (-32603, "client handler failed: KeyError: 'k'", None)
    assert error_answer(HandlerError("m", code=-32000, data=[1])) == (-32000, "m", [1])


# ---------------------------------------------------------------------- blocking client


def test_the_blocking_client_serves_files_and_terminals(tmp_path: Path) -> None:
    (tmp_path / "in.txt").write_text("one\ntwo\n")
    seen: dict[str, Any] = {}

    async def during_the_turn(agent: V1Agent, sid: str) -> None:
        path = str(tmp_path / "in.txt")
        seen["read"] = await agent.result(
            "fs/read_text_file", {"sessionId": sid, "path": path, "line": 2}
        )
        seen["write"] = await agent.result(
            "fs/write_text_file",
            {"sessionId": sid, "path": str(tmp_path / "out.txt"), "content": "done\n"},
        )
        seen["escape"] = await agent.error(
            "fs/read_text_file", {"sessionId": sid, "path": "/etc/passwd"}
        )
        created = await agent.result(
            "terminal/create",
            {"sessionId": sid, "command": sys.executable, "args": ["-c", "print('hi')"]},
        )
        tid = {"sessionId": sid, "terminalId": created["terminalId"]}
        seen["exit"] = await agent.result("terminal/wait_for_exit", tid)
        seen["output"] = await agent.result("terminal/output", tid)
        await agent.result("terminal/release", tid)

    agent = V1Agent(on_prompt=during_the_turn)
    with acp_lite.connect_in_memory(
        agent, limits=FAST, files=acp_lite.LocalFiles(), terminals=acp_lite.LocalTerminals()
    ) as client:
        assert client.protocol_version == 1
        session = client.new_session(cwd=tmp_path)
        turn = session.run("go")
        assert turn.stop_reason == "end_turn"
        assert [e.kind for e in client.events] == ["callback_error"]  # the escape
    assert seen["read"] == {"content": "two\n"}
    assert seen["write"] == {}
    assert (tmp_path / "out.txt").read_text() == "done\n"
    assert seen["escape"]["code"] == -32602
    assert seen["exit"] == {"exitCode": 0, "signal": None}
    assert seen["output"]["output"] == "hi\n"


def test_the_blocking_handler_gets_the_blocking_session(tmp_path: Path) -> None:
    got: list[Workspace] = []

    class Files:
        def read_text_file(
            self, workspace: Workspace, path: str, line: int | None, limit: int | None
        ) -> str:
            got.append(workspace)
            return "x"

        def write_text_file(self, workspace: Workspace, path: str, content: str) -> None:
            raise AssertionError("not called")

    async def read(agent: V1Agent, sid: str) -> None:
        await agent.result("fs/read_text_file", {"sessionId": sid, "path": "/x"})

    with acp_lite.connect_in_memory(V1Agent(on_prompt=read), limits=FAST, files=Files()) as client:
        session = client.new_session(cwd=tmp_path)
        session.run("go")
        assert got[0].session is session  # the blocking Session, as on_permission gets
