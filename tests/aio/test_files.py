"""``fs/read_text_file`` / ``fs/write_text_file`` over the wire, with a fake v1 agent.

Off by default (not advertised, answered -32601); ``files=`` turns them on and
advertises exactly what it serves. Paths are confined to the session's ``cwd``
and ``additional_directories``; every refusal is an error answer the v1 schema
accepts, and a handler's failure never ends the connection.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

import pytest
import trio

import acp_lite
from acp_lite import aio
from acp_lite.files import HandlerError, Workspace

from .conftest import FAST
from .fake_v1 import V1Agent, schema_errors

pytestmark = pytest.mark.trio

READ, WRITE = "fs/read_text_file", "fs/write_text_file"


def init_request(agent: V1Agent) -> dict[str, Any]:
    first = agent.received[0]
    assert first["method"] == "initialize"
    return first["params"]  # type: ignore[no-any-return]


# ---------------------------------------------------------------------- off by default


@pytest.mark.parametrize("version", ["auto", 1])
async def test_without_handlers_nothing_is_advertised_or_served(
    version: Any, tmp_path: Path
) -> None:
    (tmp_path / "a.txt").write_text("secret\n")
    agent = V1Agent()
    async with aio.connect_in_memory(agent, limits=FAST, protocol_version=version) as client:
        session = await client.new_session(cwd=tmp_path)
        for method, params in [
            (READ, {"path": str(tmp_path / "a.txt")}),
            (WRITE, {"path": str(tmp_path / "b.txt"), "content": "x"}),
            ("terminal/create", {"command": "true"}),
        ]:
            error = await agent.error(method, {"sessionId": session.id, **params})
            assert error["code"] == -32601, method
    params = init_request(agent)
    if version == 1:
        caps = params["clientCapabilities"]
        assert caps["fs"] == {"readTextFile": False, "writeTextFile": False}
        assert caps["terminal"] is False
        assert schema_errors("InitializeRequest", params) == []
    else:
        assert "clientCapabilities" not in params  # the v2 initialize is unchanged
    assert not (tmp_path / "b.txt").exists()


@pytest.mark.parametrize(
    ("kwargs", "fs", "terminal"),
    [
        ({"files": acp_lite.LocalFiles()}, (True, True), False),
        ({"files": acp_lite.LocalFiles(read_only=True)}, (True, False), False),
        ({"terminals": acp_lite.LocalTerminals()}, (False, False), True),
        (
            {"files": acp_lite.LocalFiles(), "terminals": acp_lite.LocalTerminals()},
            (True, True),
            True,
        ),
    ],
    ids=["files", "read-only", "terminals", "both"],
)
@pytest.mark.parametrize("version", ["auto", 1])
async def test_only_what_is_given_is_advertised(
    version: Any, kwargs: dict[str, Any], fs: tuple[bool, bool], terminal: bool
) -> None:
    agent = V1Agent()
    async with aio.connect_in_memory(agent, limits=FAST, protocol_version=version, **kwargs):
        pass
    params = init_request(agent)
    caps = params["clientCapabilities"]
    assert caps["fs"] == {"readTextFile": fs[0], "writeTextFile": fs[1]}
    assert caps["terminal"] is terminal
    if version == 1:
        assert params["protocolVersion"] == 1
        assert schema_errors("InitializeRequest", params) == []
    else:
        # The v2 initialize, plus the v1 member a v1 agent reads.
        assert params["protocolVersion"] == 2 and "capabilities" in params
        assert schema_errors("ClientCapabilities", caps) == []


async def test_protocol_version_2_never_advertises_v1_capabilities() -> None:
    from .fakes import FakeAgent

    fake = FakeAgent()
    files = acp_lite.LocalFiles()
    async with aio.connect_in_memory(fake, limits=FAST, protocol_version=2, files=files):
        pass
    assert "clientCapabilities" not in fake.received[0]["params"]


async def test_read_only_files_answer_writes_method_not_found(tmp_path: Path) -> None:
    agent = V1Agent()
    files = acp_lite.LocalFiles(read_only=True)
    async with aio.connect_in_memory(agent, limits=FAST, files=files) as client:
        session = await client.new_session(cwd=tmp_path)
        target = str(tmp_path / "a.txt")
        error = await agent.error(WRITE, {"sessionId": session.id, "path": target, "content": "x"})
        assert error["code"] == -32601
    assert not os.path.exists(target)


# ---------------------------------------------------------------------- reading, writing


async def test_read_whole_file_and_line_ranges(tmp_path: Path) -> None:
    path = tmp_path / "lines.txt"
    path.write_bytes(b"one\ntwo\r\nthree\nfour")
    agent = V1Agent()
    async with aio.connect_in_memory(agent, limits=FAST, files=acp_lite.LocalFiles()) as client:
        session = await client.new_session(cwd=tmp_path)

        async def read(**extra: Any) -> str:
            params = {"sessionId": session.id, "path": str(path), **extra}
            content: str = (await agent.result(READ, params))["content"]
            return content

        assert await read() == "one\ntwo\r\nthree\nfour"  # line endings kept as they are
        assert await read(line=2) == "two\r\nthree\nfour"
        assert await read(line=2, limit=2) == "two\r\nthree\n"
        assert await read(limit=1) == "one\n"
        assert await read(line=4, limit=10) == "four"
        assert await read(line=5) == ""  # past the end: nothing
        assert await read(limit=0) == ""
        assert await read(line=0, limit=1) == "one\n"  # 1-based; 0 reads as 1
        assert await read(line=None, limit=None) == "one\ntwo\r\nthree\nfour"


async def test_write_creates_and_replaces_then_reads_back(tmp_path: Path) -> None:
    agent = V1Agent()
    async with aio.connect_in_memory(agent, limits=FAST, files=acp_lite.LocalFiles()) as client:
        session = await client.new_session(cwd=tmp_path)
        target = str(tmp_path / "new.txt")
        params = {"sessionId": session.id, "path": target}
        assert await agent.result(WRITE, {**params, "content": "héllo\n"}) == {}
        assert Path(target).read_text(encoding="utf-8") == "héllo\n"
        assert await agent.result(WRITE, {**params, "content": ""}) == {}
        assert Path(target).read_text() == ""
        assert await agent.result(WRITE, {**params, "content": "a\r\nb"}) == {}
        assert (await agent.result(READ, params))["content"] == "a\r\nb"
        # No missing directory is created: a clear "not found" answer.
        deep = {"sessionId": session.id, "path": str(tmp_path / "no" / "dir.txt")}
        error = await agent.error(WRITE, {**deep, "content": "x"})
        assert error["code"] == -32002 and "does not exist" in error["message"]
    assert not (tmp_path / "no").exists()
    assert sorted(os.listdir(tmp_path)) == ["new.txt"]  # no temporary file left behind


async def test_create_dirs_creates_missing_directories_inside_the_session(
    tmp_path: Path,
) -> None:
    agent = V1Agent()
    files = acp_lite.LocalFiles(create_dirs=True)
    async with aio.connect_in_memory(agent, limits=FAST, files=files) as client:
        session = await client.new_session(cwd=tmp_path)
        target = tmp_path / "a" / "b" / "c.txt"
        await agent.result(WRITE, {"sessionId": session.id, "path": str(target), "content": "x"})
    assert target.read_text() == "x"


# ---------------------------------------------------------------------- confinement


def escape_cases(tmp: Path) -> dict[str, tuple[str, str]]:
    """case -> (path the agent asks for, words the error message must contain)."""
    work, outside = tmp / "work", tmp / "outside"
    return {
        "relative": ("notes.txt", "must be absolute"),
        "dot-dot": (str(work / ".." / "outside" / "secret.txt"), "must not contain '..'"),
        "dot-dot-inside": (str(work / "sub" / ".." / "notes.txt"), "must not contain '..'"),
        "outside": (str(outside / "secret.txt"), "outside the session's directories"),
        "sibling-prefix": (str(tmp / "work-other" / "x.txt"), "outside the session's"),
        "symlink-file": (str(work / "link.txt"), "leads through a symlink"),
        "symlink-dir": (str(work / "linkdir" / "secret.txt"), "leads through a symlink"),
        "empty": ("", "non-empty string"),
    }


def make_tree(tmp: Path) -> Path:
    work, outside = tmp / "work", tmp / "outside"
    (work / "sub").mkdir(parents=True)
    outside.mkdir()
    (tmp / "work-other").mkdir()
    (work / "notes.txt").write_text("inside\n")
    (outside / "secret.txt").write_text("SECRET\n")
    (work / "link.txt").symlink_to(outside / "secret.txt")
    (work / "linkdir").symlink_to(outside)
    return work


CASES = list(escape_cases(Path("/x")))


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("method", [READ, WRITE])
async def test_a_path_outside_the_session_is_refused(
    case: str, method: str, tmp_path: Path
) -> None:
    work = make_tree(tmp_path)
    path, words = escape_cases(tmp_path)[case]
    agent = V1Agent()
    async with aio.connect_in_memory(agent, limits=FAST, files=acp_lite.LocalFiles()) as client:
        session = await client.new_session(cwd=work)
        params: dict[str, Any] = {"sessionId": session.id, "path": path}
        if method == WRITE:
            params["content"] = "PWNED"
        error = await agent.error(method, params)
        assert error["code"] == -32602, error
        assert words in error["message"], error
        if path:  # an empty path is refused as invalid params before any resolving
            assert error["data"] == {"path": path}
        # Refusals are in the client event log, and the connection goes on.
        logged = [e for e in client.events if e.kind == "callback_error"]
        assert [(e.method, e.session_id) for e in logged] == [(method, session.id)]
        assert logged[0].data == {"sessionId": session.id, "path": path}  # no content kept
        ok = await agent.result(READ, {"sessionId": session.id, "path": str(work / "notes.txt")})
        assert ok == {"content": "inside\n"}
    assert (tmp_path / "outside" / "secret.txt").read_text() == "SECRET\n"
    assert not (tmp_path / "work-other" / "x.txt").exists()


async def test_additional_directories_and_a_symlink_into_them_are_allowed(
    tmp_path: Path,
) -> None:
    work = make_tree(tmp_path)
    outside = tmp_path / "outside"
    agent = V1Agent()
    async with aio.connect_in_memory(agent, limits=FAST, files=acp_lite.LocalFiles()) as client:
        session = await client.new_session(cwd=work, additional_directories=[outside])
        for path in (outside / "secret.txt", work / "link.txt", work / "linkdir" / "secret.txt"):
            result = await agent.result(READ, {"sessionId": session.id, "path": str(path)})
            assert result == {"content": "SECRET\n"}, path
        # Another session of the same connection has only its own cwd.
        other = await client.new_session(cwd=work)
        error = await agent.error(
            READ, {"sessionId": other.id, "path": str(outside / "secret.txt")}
        )
        assert error["code"] == -32602


async def test_a_session_resumed_with_another_cwd_uses_that_cwd(tmp_path: Path) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir()
    second.mkdir()
    (second / "s.txt").write_text("second\n")
    agent = V1Agent()
    async with aio.connect_in_memory(agent, limits=FAST, files=acp_lite.LocalFiles()) as client:
        session = await client.new_session(cwd=first)
        params = {"sessionId": session.id, "path": str(second / "s.txt")}
        assert (await agent.error(READ, params))["code"] == -32602
        await client.resume_session(session.id, cwd=second, replay=True)  # v1 session/load
        assert "session/load" in [m.get("method") for m in agent.received]
        assert await agent.result(READ, params) == {"content": "second\n"}


async def test_unknown_session_and_bad_params_are_error_answers(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a\n")
    path = str(tmp_path / "a.txt")
    agent = V1Agent()
    async with aio.connect_in_memory(agent, limits=FAST, files=acp_lite.LocalFiles()) as client:
        session = await client.new_session(cwd=tmp_path)
        error = await agent.error(READ, {"sessionId": "nope", "path": path})
        assert error["code"] == -32002 and "unknown session 'nope'" in error["message"]
        sid = session.id
        for bad in [
            {"sessionId": sid},
            {"sessionId": sid, "path": 7},
            {"sessionId": sid, "path": path, "line": -1},
            {"sessionId": sid, "path": path, "limit": "2"},
            {"sessionId": sid, "path": path, "line": True},
            {"path": path},
        ]:
            error = await agent.error(READ, bad, valid=False)
            assert error["code"] == -32602, bad
        error = await agent.error(WRITE, {"sessionId": sid, "path": path}, valid=False)
        assert error["code"] == -32602 and "content" in error["message"]
        missing = await agent.error(READ, {"sessionId": sid, "path": str(tmp_path / "none")})
        assert missing["code"] == -32002
        assert await agent.result(READ, {"sessionId": sid, "path": path}) == {"content": "a\n"}


async def test_a_request_while_the_session_is_being_opened_uses_its_cwd(tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").write_text("rules\n")
    agent = V1Agent()
    agent.open_sessions = trio.Event()  # session/new is answered when the test says so
    async with aio.connect_in_memory(agent, limits=FAST, files=acp_lite.LocalFiles()) as client:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(client.new_session, tmp_path)
            while "session/new" not in [m.get("method") for m in agent.received]:
                await trio.sleep(0.001)
            # The agent reads before answering session/new (it knows the id it will send).
            params = {"sessionId": "v1-1", "path": str(tmp_path / "AGENTS.md")}
            assert await agent.result(READ, params) == {"content": "rules\n"}
            outside = {"sessionId": "v1-1", "path": "/etc/passwd"}
            assert (await agent.error(READ, outside))["code"] == -32602
            agent.open_sessions.set()
        assert list(client.sessions) == ["v1-1"]


# ---------------------------------------------------------------------- custom handlers


class Recorder:
    """A custom file handler: records its calls and the thread it ran in."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, Workspace, tuple[Any, ...], str]] = []
        self.release = threading.Event()

    def read_text_file(
        self, workspace: Workspace, path: str, line: int | None, limit: int | None
    ) -> str:
        self.calls.append(("read", workspace, (path, line, limit), threading.current_thread().name))
        if path.endswith("/block"):
            assert self.release.wait(10)  # blocks a worker thread, never the trio thread
        if path.endswith("/boom"):
            raise RuntimeError("the handler is broken")
        if path.endswith("/refuse"):
            raise HandlerError("not today", code=-32000, data={"why": "test"})
        return f"read {path}"

    def write_text_file(self, workspace: Workspace, path: str, content: str) -> None:
        self.calls.append(("write", workspace, (path, content), threading.current_thread().name))
        self.release.set()


async def test_a_custom_handler_gets_the_workspace_in_a_worker_thread(tmp_path: Path) -> None:
    handler = Recorder()
    agent = V1Agent()
    async with aio.connect_in_memory(agent, limits=FAST, files=handler) as client:
        extra = tmp_path / "extra"
        session = await client.new_session(cwd=tmp_path, additional_directories=[extra])
        sid = session.id
        result = await agent.result(READ, {"sessionId": sid, "path": "/p", "line": 3, "limit": 2})
        assert result == {"content": "read /p"}
        async with trio.open_nursery() as nursery:
            blocked: list[Any] = []

            async def read_blocked() -> None:
                blocked.append(await agent.result(READ, {"sessionId": sid, "path": "/block"}))

            nursery.start_soon(read_blocked)
            while len(handler.calls) < 2:
                await trio.sleep(0.001)
            # The trio thread still serves the agent while a handler blocks.
            assert await agent.result(WRITE, {"sessionId": sid, "path": "/w", "content": "c"}) == {}
        assert blocked == [{"content": "read /block"}]
    kind, workspace, args, _thread = handler.calls[0]
    assert (kind, args) == ("read", ("/p", 3, 2))
    assert workspace.session_id == sid and workspace.session is session
    assert workspace.cwd == str(tmp_path)
    assert workspace.additional_directories == (str(extra),)
    assert all(t != threading.main_thread().name for *_, t in handler.calls)


async def test_a_handler_error_is_an_error_answer_and_a_logged_event(tmp_path: Path) -> None:
    agent = V1Agent()
    async with aio.connect_in_memory(agent, limits=FAST, files=Recorder()) as client:
        session = await client.new_session(cwd=tmp_path)
        error = await agent.error(READ, {"sessionId": session.id, "path": "/boom"})
        assert error["code"] == -32603
        assert error["message"] == "client handler failed: RuntimeError: the handler is broken"
        refused = await agent.error(READ, {"sessionId": session.id, "path": "/refuse"})
        assert refused == {"code": -32000, "message": "not today", "data": {"why": "test"}}
        logged = [e for e in client.events if e.kind == "callback_error"]
        assert [type(e.error).__name__ for e in logged] == ["RuntimeError", "HandlerError"]
        assert logged[0].method == READ and logged[0].session_id == session.id
        # The connection goes on.
        assert await agent.result(READ, {"sessionId": session.id, "path": "/x"}) == {
            "content": "read /x"
        }
        assert not client.closed


async def test_an_agent_withdrawing_a_blocked_read_gets_minus_32800(tmp_path: Path) -> None:
    handler = Recorder()
    agent = V1Agent()
    async with aio.connect_in_memory(agent, limits=FAST, files=handler) as client:
        session = await client.new_session(cwd=tmp_path)
        async with trio.open_nursery() as nursery:
            answer: list[Any] = []

            async def read() -> None:
                answer.append(await agent.call(READ, {"sessionId": session.id, "path": "/block"}))

            nursery.start_soon(read)
            while not handler.calls:
                await trio.sleep(0.001)
            withdraw = {"requestId": agent.last_request_id}
            await agent.send({"method": "$/cancel_request", "params": withdraw})
        assert answer[0]["error"]["code"] == -32800
        handler.release.set()
        assert [e.kind for e in client.events if e.kind == "agent_cancelled_request"]
        assert not client.closed
