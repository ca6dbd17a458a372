"""Routing the agent's ``fs/*`` and ``terminal/*`` requests to the user's handlers.

Only what the user passed is served (``connect(files=..., terminals=...)``) and
advertised (:meth:`ClientRequests.capabilities`, the v1 ``clientCapabilities``);
without handlers these methods stay unhandled (answered -32601 by the core).

Each request names its session; the handlers get that session's
:class:`~acp_lite.files.Workspace`, made from the ``cwd`` and
``additionalDirectories`` the client sent when it opened the session (recorded
here from ``session/new``, ``session/fork`` and ``session/resume``). File
handlers run in a worker thread (they may block), terminal handlers on the trio
thread. Whatever a handler raises becomes an error answer
(:func:`acp_lite.files.error_answer`) and a ``callback_error`` entry in the
client event log; it never ends the connection.
"""

from __future__ import annotations

import functools
import logging
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import trio

from acp_lite.aio._terminals import TerminalCommand, TerminalHandler
from acp_lite.files import (
    INVALID_PARAMS,
    RESOURCE_NOT_FOUND,
    FileHandler,
    HandlerError,
    Workspace,
    error_answer,
)

if TYPE_CHECKING:
    from acp_lite.aio._link import Link
    from acp_lite.core import AgentRequest, PendingRequest

__all__ = ["FS_METHODS", "TERMINAL_METHODS", "ClientRequests"]

logger = logging.getLogger("acp_lite.connection")

READ, WRITE = "fs/read_text_file", "fs/write_text_file"
FS_METHODS = frozenset({READ, WRITE})
CREATE, OUTPUT, WAIT = "terminal/create", "terminal/output", "terminal/wait_for_exit"
KILL, RELEASE = "terminal/kill", "terminal/release"
TERMINAL_METHODS = frozenset({CREATE, OUTPUT, WAIT, KILL, RELEASE})

#: Requests that open a session, and so give it its directories.
_OPENING = frozenset({"session/new", "session/fork", "session/resume"})

Roots = tuple[str, tuple[str, ...]]


class ClientRequests:
    """Serves the file and terminal requests of one connection."""

    def __init__(self, files: Any = None, terminals: Any = None) -> None:
        self.files: FileHandler | None = files
        self.terminals: TerminalHandler | None = terminals
        self.readable = files is not None
        self.writable = files is not None and not getattr(files, "read_only", False)
        methods: set[str] = set()
        if self.readable:
            methods.add(READ)
        if self.writable:
            methods.add(WRITE)
        if terminals is not None:
            methods |= TERMINAL_METHODS
        #: The agent methods served (the rest stay -32601).
        self.methods = frozenset(methods)
        self._roots: dict[str, Roots] = {}
        # Our session-opening requests awaiting an answer: id -> (session id if
        # known, its directories).
        self._opening: dict[int, tuple[str | None, Roots]] = {}
        # The cancel scopes of the running terminal handlers' create() tasks.
        self._terminal_scopes: set[trio.CancelScope] = set()
        self._closed = False

    @classmethod
    def create(cls, files: Any, terminals: Any) -> ClientRequests | None:
        """The router for these handlers; ``None`` when neither is given."""
        if files is None and terminals is None:
            return None
        return cls(files, terminals)

    def capabilities(self) -> dict[str, Any]:
        """The v1 ``clientCapabilities`` members for what is served."""
        return {
            "fs": {"readTextFile": self.readable, "writeTextFile": self.writable},
            "terminal": self.terminals is not None,
        }

    # ------------------------------------------------------------------ sessions

    def sent(self, entry: PendingRequest, params: Any) -> None:
        """Note the directories of a session-opening request we sent."""
        if entry.method not in _OPENING or not isinstance(params, Mapping):
            return
        cwd = params.get("cwd")
        if not isinstance(cwd, str):
            return
        extra = params.get("additionalDirectories")
        dirs = tuple(os.path.abspath(d) for d in extra or () if isinstance(d, str))
        sid = params.get("sessionId") if entry.method == "session/resume" else None
        self._opening[entry.id] = (sid if isinstance(sid, str) else None, (_abs(cwd), dirs))

    def answered(self, entry: PendingRequest) -> None:
        """A response arrived: a session it opened gets the directories it was sent."""
        opening = self._opening.pop(entry.id, None)
        if opening is None or entry.error is not None:
            return
        sid, roots = opening
        if sid is None:
            result = entry.result
            sid = getattr(result, "session_id", None)
            if sid is None and isinstance(result, Mapping):
                sid = result.get("sessionId")
        if isinstance(sid, str):
            self._roots[sid] = roots

    def workspace(self, session_id: Any, session: Any) -> Workspace:
        """The workspace of the session a request names (-32002 if unknown)."""
        if not isinstance(session_id, str):
            raise HandlerError("sessionId must be a string", code=INVALID_PARAMS)
        roots = self._roots.get(session_id)
        if roots is None:
            roots = self._opening_roots(session_id)
        if roots is None:
            raise HandlerError(
                f"unknown session {session_id!r}",
                code=RESOURCE_NOT_FOUND,
                data={"sessionId": session_id},
            )
        cwd, dirs = roots
        return Workspace(session_id, cwd, dirs, session)

    def _opening_roots(self, session_id: str) -> Roots | None:
        # An agent may read files while it opens the session, before the client
        # knows the id: a resume names it; a lone session/new or fork is the one.
        pending = list(self._opening.values())
        for sid, roots in pending:
            if sid == session_id:
                return roots
        unnamed = [roots for sid, roots in pending if sid is None]
        return unnamed[0] if len(unnamed) == 1 else None

    # ------------------------------------------------------------------ serving

    async def handle(self, conn: Link, req: AgentRequest, scope: trio.CancelScope) -> None:
        """Answer ``req`` (a task of the connection's nursery, cancelled by ``scope``)."""
        params = req.params if isinstance(req.params, Mapping) else {}
        sid = params.get("sessionId")
        view = conn.view_of(sid) if isinstance(sid, str) else None
        with scope:
            try:
                workspace = self.workspace(sid, view)
                result = await self._serve(conn, req.method, params, workspace)
            except Exception as exc:
                code, message, data = error_answer(exc)
                if isinstance(exc, HandlerError | OSError):
                    logger.info("%s answered with an error: %s", req.method, message)
                else:
                    logger.exception("%s handler raised", req.method)
                conn.core.log_event(
                    "callback_error",
                    # Not a write's content: the log keeps its entries for a while.
                    data={k: v for k, v in params.items() if k != "content"},
                    error=exc,
                    session_id=sid if isinstance(sid, str) else None,
                    method=req.method,
                )
                conn.core.respond_error(req.id, code, message, data)
            else:
                if not conn.core.respond(req.id, result) and req.method == CREATE:
                    # Withdrawn while it started: the agent will never release it.
                    await self._release_quietly(conn, workspace, result["terminalId"])
            conn.flush()

    async def _serve(
        self, conn: Link, method: str, params: Mapping[str, Any], workspace: Workspace
    ) -> Any:
        if method == READ:
            assert self.files is not None
            read = functools.partial(
                self.files.read_text_file,
                workspace,
                _string(params, "path"),
                _count(params, "line"),
                _count(params, "limit"),
            )
            content = await trio.to_thread.run_sync(read, abandon_on_cancel=True)
            if not isinstance(content, str):
                raise TypeError(f"read_text_file returned {type(content).__name__}, not str")
            return {"content": content}
        if method == WRITE:
            assert self.files is not None
            write = functools.partial(
                self.files.write_text_file,
                workspace,
                _string(params, "path"),
                _string(params, "content", empty=True),
            )
            await trio.to_thread.run_sync(write, abandon_on_cancel=True)
            return {}
        terminals = self.terminals
        assert terminals is not None
        if method == CREATE:
            command = _command(params)
            terminal_id = await conn.nursery.start(self._run_terminal, conn, workspace, command)
            return {"terminalId": terminal_id}
        terminal_id = _string(params, "terminalId")
        if method == OUTPUT:
            return _wire(await terminals.output(workspace, terminal_id))
        if method == WAIT:
            return _wire(await terminals.wait_for_exit(workspace, terminal_id))
        if method == KILL:
            await terminals.kill(workspace, terminal_id)
        else:
            await terminals.release(workspace, terminal_id)
        return {}

    async def _run_terminal(
        self,
        conn: Link,
        workspace: Workspace,
        command: TerminalCommand,
        task_status: trio.TaskStatus[str] = trio.TASK_STATUS_IGNORED,
    ) -> None:
        # The handler's create() lives in the connection's nursery after it started
        # (cancelled when the client closes): its errors from then on are logged,
        # since raising would end the connection.
        started = _Started(task_status)
        assert self.terminals is not None
        scope = trio.CancelScope()
        self._terminal_scopes.add(scope)
        try:
            with scope:
                if self._closed:
                    raise HandlerError("the client is closing")
                await self.terminals.create(workspace, command, task_status=started)
        except Exception as exc:
            if not started.done:
                raise
            logger.exception("terminal handler raised after the terminal started")
            conn.core.log_event(
                "callback_error", error=exc, session_id=workspace.session_id, method=CREATE
            )
        finally:
            self._terminal_scopes.discard(scope)

    def close(self) -> None:
        """The connection ended (the agent went away, or the client closes): end
        every terminal (their ``create`` tasks are cancelled: the processes die)."""
        self._closed = True
        for scope in self._terminal_scopes:
            scope.cancel()

    async def _release_quietly(self, conn: Link, workspace: Workspace, tid: str) -> None:
        assert self.terminals is not None
        try:
            await self.terminals.release(workspace, tid)
        except Exception as exc:
            conn.core.log_event(
                "callback_error", error=exc, session_id=workspace.session_id, method=RELEASE
            )


class _Started(trio.TaskStatus[str]):
    """A ``task_status`` that remembers whether ``started`` was called."""

    def __init__(self, inner: trio.TaskStatus[str]) -> None:
        self._inner = inner
        self.done = False

    def started(self, value: str | None = None) -> None:
        if not isinstance(value, str) or not value:
            raise TypeError(f"a terminal id is a non-empty string, not {value!r}")
        self._inner.started(value)
        self.done = True


def _abs(path: str) -> str:
    return os.path.abspath(path)


def _wire(value: Any) -> Any:
    to_wire = getattr(value, "to_wire", None)
    if callable(to_wire):
        return to_wire()
    if isinstance(value, Mapping):
        return dict(value)
    raise TypeError(f"a terminal handler returned {type(value).__name__}")


def _invalid(message: str) -> HandlerError:
    return HandlerError(f"invalid params: {message}", code=INVALID_PARAMS)


def _string(params: Mapping[str, Any], key: str, *, empty: bool = False) -> str:
    value = params.get(key)
    if not isinstance(value, str) or (not value and not empty):
        raise _invalid(f"{key} must be a {'' if empty else 'non-empty '}string")
    return value


def _count(params: Mapping[str, Any], key: str) -> int | None:
    value = params.get(key)
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise _invalid(f"{key} must be a non-negative integer or null")
    return value


def _command(params: Mapping[str, Any]) -> TerminalCommand:
    args = params.get("args")
    if args is None:
        args = []
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise _invalid("args must be an array of strings")
    env = params.get("env")
    if env is None:
        env = []
    if not isinstance(env, list):
        raise _invalid("env must be an array of {name, value}")
    variables: dict[str, str] = {}
    for item in env:
        name = item.get("name") if isinstance(item, dict) else None
        value = item.get("value") if isinstance(item, dict) else None
        if not isinstance(name, str) or not name or "=" in name or not isinstance(value, str):
            raise _invalid(f"env item {item!r} is not a {{name, value}} pair of strings")
        variables[name] = value
    cwd = params.get("cwd")
    if cwd is not None and not isinstance(cwd, str):
        raise _invalid("cwd must be a string or null")
    command = _string(params, "command")
    if any("\x00" in s for s in (command, *args, *variables, *variables.values())):
        raise _invalid("command, args and env must not contain a NUL character")
    return TerminalCommand(command, tuple(args), variables, cwd, _count(params, "outputByteLimit"))
