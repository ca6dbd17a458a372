"""Serving the agent's terminals: ``terminal/create``, ``output``, ``wait_for_exit``,
``kill`` and ``release`` (ACP v1; v2 removed them).

A terminal handler is any object with the async methods of :class:`TerminalHandler`;
they run on the connection's trio thread. :class:`LocalTerminals` runs each command
as a local process: without a shell, in its own process group, its output (stdout
and stderr together) kept up to a byte limit; optionally only the commands of an
allow-list, with a chosen environment; at most so many terminals, and so much
output in all. Every terminal is killed when it is released or the client closes.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import signal as signal_module
import subprocess
from collections.abc import Collection, Mapping
from typing import Literal, Protocol, TypeAlias, runtime_checkable

import attrs
import trio

from acp_lite import _lazy_attrs as lazy_attrs
from acp_lite.auth import unsafe_env_names
from acp_lite.files import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    RESOURCE_NOT_FOUND,
    HandlerError,
    Workspace,
)

__all__ = [
    "MINIMAL_ENV",
    "EnvPolicy",
    "LocalTerminals",
    "TerminalCommand",
    "TerminalExitStatus",
    "TerminalHandler",
    "TerminalOutput",
]

#: What ``LocalTerminals`` keeps of a terminal's output at most (bytes).
DEFAULT_MAX_OUTPUT = 1024 * 1024
#: How many terminals ``LocalTerminals`` holds at once (created, not released yet).
DEFAULT_MAX_TERMINALS = 300
#: What ``LocalTerminals`` keeps of all its terminals' output together (bytes).
DEFAULT_MAX_TOTAL_OUTPUT = 64 * 1024 * 1024
#: The variables ``env="minimal"`` passes on from the client's environment.
MINIMAL_ENV: tuple[str, ...] = (
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "LANG",
    "LANGUAGE",
    "LC_ALL",
    "LC_CTYPE",
    "TERM",
    "TMPDIR",
    "TZ",
)

#: ``LocalTerminals(env=...)``: ``"inherit"`` (the client's whole environment),
#: ``"minimal"`` (:data:`MINIMAL_ENV` of it) or exactly the mapping given; the
#: agent's ``env`` goes on top in each case.
EnvPolicy: TypeAlias = Literal["inherit", "minimal"] | Mapping[str, str]
#: After the command exited, how long its output may still take to arrive (a
#: process it started that is not in its group may hold the pipe open).
DRAIN_GRACE = 1.0
#: How long to wait for a killed process to be reaped.
REAP_TIMEOUT = 5.0

_READ_SIZE = 64 * 1024


@lazy_attrs.frozen
class TerminalCommand:
    """A ``terminal/create`` request: run ``command`` with ``args`` (no shell).

    ``env`` is applied on top of the client's environment; ``cwd`` is the
    directory the agent asked for (``None``: the session's ``cwd``);
    ``output_byte_limit`` how many bytes of output the agent wants kept.
    """

    command: str
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = attrs.field(factory=dict)
    cwd: str | None = None
    output_byte_limit: int | None = None


@lazy_attrs.frozen
class TerminalExitStatus:
    """How the command ended: its ``exit_code``, or the ``signal`` (e.g. ``"SIGKILL"``)."""

    exit_code: int | None = None
    signal: str | None = None

    def to_wire(self) -> dict[str, object]:
        """The schema v1 ``TerminalExitStatus`` / ``WaitForTerminalExitResponse``."""
        return {"exitCode": self.exit_code, "signal": self.signal}


@lazy_attrs.frozen
class TerminalOutput:
    """A terminal's output so far; ``exit_status`` once the command ended."""

    output: str
    truncated: bool = False
    exit_status: TerminalExitStatus | None = None

    def to_wire(self) -> dict[str, object]:
        """The schema v1 ``TerminalOutputResponse``."""
        out: dict[str, object] = {"output": self.output, "truncated": self.truncated}
        if self.exit_status is not None:
            out["exitStatus"] = self.exit_status.to_wire()
        return out


@runtime_checkable
class TerminalHandler(Protocol):
    """What ``terminals=`` takes; every method runs on the connection's trio thread.

    ``create`` is run like ``nursery.start``: it calls ``task_status.started(id)``
    with the new terminal's id once the command runs, and may keep running for
    as long as the terminal lives (to collect its output); it is cancelled when
    the client closes. The other methods name a terminal ``create`` made for the
    same session. Raise :class:`~acp_lite.files.HandlerError` to answer the agent
    with an error (e.g. -32002 for an unknown terminal id).
    """

    async def create(
        self,
        workspace: Workspace,
        command: TerminalCommand,
        *,
        task_status: trio.TaskStatus[str] = trio.TASK_STATUS_IGNORED,
    ) -> None:
        """Start ``command``; ``task_status.started(terminal_id)``."""
        ...

    async def output(self, workspace: Workspace, terminal_id: str) -> TerminalOutput:
        """The output so far, and the exit status once it exited."""
        ...

    async def wait_for_exit(self, workspace: Workspace, terminal_id: str) -> TerminalExitStatus:
        """Wait until the command exits."""
        ...

    async def kill(self, workspace: Workspace, terminal_id: str) -> None:
        """Kill the command; the terminal and its output stay."""
        ...

    async def release(self, workspace: Workspace, terminal_id: str) -> None:
        """Kill the command if it still runs and forget the terminal."""
        ...


class _Budget:
    """The output all terminals of one :class:`LocalTerminals` keep together."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.used = 0


class _Terminal:
    """One command of :class:`LocalTerminals`: its process and retained output."""

    def __init__(
        self, terminal_id: str, session_id: str, limit: int, budget: _Budget | None = None
    ) -> None:
        self.id = terminal_id
        self.session_id = session_id
        self.limit = limit
        self.budget = budget
        self.process: trio.Process | None = None
        self.buffer = bytearray()
        self.truncated = False
        self.eof = False
        self.eof_seen = trio.Event()
        self.exit_status: TerminalExitStatus | None = None
        self.exited = trio.Event()
        self.released = trio.Event()

    def append(self, data: bytes | bytearray) -> None:
        buf = self.buffer
        before = len(buf)
        buf += data
        keep = self.limit
        if self.budget is not None:
            # Over the total, the terminal that grows pays with its own oldest bytes.
            others = self.budget.used - before
            keep = min(keep, max(self.budget.limit - others, 0))
        excess = len(buf) - keep
        if excess > 0:
            # Schema v1 CreateTerminalRequest.outputByteLimit: truncate from the
            # beginning, at a character boundary (skip UTF-8 continuation bytes).
            while excess < len(buf) and buf[excess] & 0xC0 == 0x80:
                excess += 1
            del buf[:excess]
            self.truncated = True
        if self.budget is not None:
            self.budget.used += len(buf) - before

    def forget_output(self) -> None:
        """Give the retained output back to the budget (the terminal is gone)."""
        if self.budget is not None:
            self.budget.used -= len(self.buffer)
        self.buffer = bytearray()

    def snapshot(self) -> TerminalOutput:
        data = bytes(self.buffer)
        if self.exit_status is None:
            data = data[: len(data) - _incomplete_tail(data)]  # the rest is still coming
        text = data.decode("utf-8", errors="replace")
        truncated = self.truncated
        encoded = text.encode("utf-8")
        if len(encoded) > self.limit:  # replacement characters can grow the text
            cut = len(encoded) - self.limit
            while cut < len(encoded) and encoded[cut] & 0xC0 == 0x80:
                cut += 1
            text = encoded[cut:].decode("utf-8")
            truncated = True
        return TerminalOutput(text, truncated, self.exit_status)

    def signal_group(self) -> None:
        process = self.process
        if process is None:
            return
        # The leader not reaped yet, or its output pipe still open: the group is
        # alive, so its id cannot have been reused for another one.
        if process.returncode is None or not self.eof:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, signal_module.SIGKILL)


def _incomplete_tail(data: bytes) -> int:
    """How many bytes at the end of ``data`` start a UTF-8 character not complete yet."""
    for back in range(1, min(4, len(data)) + 1):
        byte = data[-back]
        if byte & 0xC0 == 0x80:
            continue  # a continuation byte: look further back for the lead byte
        if byte & 0x80 == 0:
            return 0
        need = 2 if byte & 0xE0 == 0xC0 else 3 if byte & 0xF0 == 0xE0 else 4
        return back if back < need else 0
    return 0


def _fd_path(fd: int) -> str | None:
    """The child's ``cwd`` for the directory open as ``fd`` (``None``: no way).

    On Linux, ``/proc/self/fd/N``: the child changes to it between fork and exec,
    when ``/proc/self`` is the child, which inherited ``fd``; the link names the
    directory opened, wherever its path leads by then. Elsewhere the caller
    passes the checked real path, which a directory swapped for a symlink in
    between can redirect (``preexec_fn=os.fchdir`` would be exact, but is unsafe
    with threads)."""
    proc = f"/proc/self/fd/{fd}"
    return proc if os.path.isdir(proc) else None


def _exit_status(returncode: int) -> TerminalExitStatus:
    if returncode >= 0:
        return TerminalExitStatus(exit_code=returncode)
    try:
        name = signal_module.Signals(-returncode).name
    except ValueError:
        name = str(-returncode)
    return TerminalExitStatus(signal=name)


class LocalTerminals:
    """Terminals as local processes (a :class:`TerminalHandler`).

    ``command`` and ``args`` are the argv (no shell: a command line in
    ``command`` is not split); the process runs in ``cwd`` (confined like file
    paths to the session's directories; default: the session's ``cwd``), stdin
    from ``/dev/null``, in a new process group. Output (stdout and stderr,
    merged) is kept up to the agent's ``outputByteLimit``, at most
    ``max_output_bytes``. ``kill`` sends SIGKILL to the group; ``release`` and
    closing the client do too. Use one instance per connection.

    ``commands``: the allow-list, ``None`` (the default) runs any command. A
    command must equal an entry as sent: ``"git"`` allows ``git`` found on
    ``PATH``, not ``/usr/bin/git``. An allowed shell or interpreter (``sh``,
    ``bash``, ``python``, ``node``, ``env``, ...) runs anything its arguments
    say. With a list, the agent may not set the variables of
    :func:`acp_lite.auth.unsafe_env_names` (``LD_PRELOAD``, ``PATH``, ...).
    Refusals are -32602.

    ``env``: the :data:`EnvPolicy`, ``"inherit"`` by default (the client's
    whole environment, secrets included; ``"minimal"`` passes on
    :data:`MINIMAL_ENV` only). The agent's ``env`` is applied on top.

    ``max_terminals``: terminals held at once (created, not released); one more
    is refused -32603. ``max_total_output_bytes``: the output all of them keep
    together; a terminal growing past it loses its own oldest output, as past
    its own limit (``truncated: true``).
    """

    def __init__(
        self,
        *,
        commands: Collection[str] | None = None,
        env: EnvPolicy = "inherit",
        max_output_bytes: int = DEFAULT_MAX_OUTPUT,
        max_terminals: int = DEFAULT_MAX_TERMINALS,
        max_total_output_bytes: int = DEFAULT_MAX_TOTAL_OUTPUT,
    ) -> None:
        if isinstance(commands, str):
            raise TypeError("commands= takes a collection of commands, not one string")
        if isinstance(env, str) and env not in ("inherit", "minimal"):
            raise ValueError(f"env= is 'inherit', 'minimal' or a mapping, not {env!r}")
        self.commands: frozenset[str] | None = None if commands is None else frozenset(commands)
        self.env: EnvPolicy = env if isinstance(env, str) else dict(env)
        self.max_output_bytes = max_output_bytes
        self.max_terminals = max_terminals
        self.max_total_output_bytes = max_total_output_bytes
        self._budget = _Budget(max_total_output_bytes)
        self._terminals: dict[str, _Terminal] = {}
        self._starting = 0
        self._ids = itertools.count(1)

    def __repr__(self) -> str:
        policy = "" if self.commands is None else f", commands={sorted(self.commands)!r}"
        policy += f", env={self.env!r}" if isinstance(self.env, str) else ", env={...}"
        return f"LocalTerminals(terminals={len(self._terminals)}{policy})"

    @property
    def retained_output_bytes(self) -> int:
        """The output all terminals keep now (bytes, at most ``max_total_output_bytes``)."""
        return self._budget.used

    def _environment(self, command: TerminalCommand) -> dict[str, str]:
        if self.env == "inherit":
            base = dict(os.environ)
        elif self.env == "minimal":
            base = {name: os.environ[name] for name in MINIMAL_ENV if name in os.environ}
        else:
            base = dict(self.env)
        return {**base, **command.env}

    def _check(self, command: TerminalCommand) -> None:
        """Refuse what the policy does not allow (before anything runs)."""
        held = len(self._terminals) + self._starting
        if held >= self.max_terminals:
            raise HandlerError(
                f"too many terminals: {held} are held, at most {self.max_terminals}; "
                "release one first",
                code=INTERNAL_ERROR,
                data={"maxTerminals": self.max_terminals},
            )
        if self.commands is None:
            return
        if command.command not in self.commands:
            allowed = ", ".join(sorted(self.commands)) or "none"
            raise HandlerError(
                f"command {command.command!r} is not allowed (allowed: {allowed})",
                code=INVALID_PARAMS,
                data={"command": command.command},
            )
        unsafe = unsafe_env_names(command.env)
        if unsafe:
            raise HandlerError(
                f"the agent may not set {', '.join(unsafe)} for a command (they change what runs)",
                code=INVALID_PARAMS,
                data={"env": unsafe},
            )

    @property
    def terminal_ids(self) -> list[str]:
        """The ids of the terminals not released yet."""
        return list(self._terminals)

    async def create(
        self,
        workspace: Workspace,
        command: TerminalCommand,
        *,
        task_status: trio.TaskStatus[str] = trio.TASK_STATUS_IGNORED,
    ) -> None:
        """Start the process; ``started(id)``; then collect its output until released."""
        self._check(command)
        wanted_cwd = workspace.cwd if command.cwd is None else command.cwd
        cwd_fd = workspace.open_directory(wanted_cwd)
        wanted = command.output_byte_limit
        limit = self.max_output_bytes if wanted is None else min(wanted, self.max_output_bytes)
        term = _Terminal(f"term-{next(self._ids)}", workspace.session_id, limit, self._budget)
        self._starting += 1  # counted while it starts: creates may overlap
        try:
            process = await trio.lowlevel.open_process(
                [command.command, *command.args],
                cwd=_fd_path(cwd_fd) or workspace.resolve_directory(wanted_cwd),
                env=self._environment(command),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        finally:
            self._starting -= 1
            os.close(cwd_fd)  # the child has its own copy (fork), now its cwd
        term.process = process
        self._terminals[term.id] = term
        try:
            task_status.started(term.id)
            await self._run(term, process)
            await term.released.wait()
        finally:
            self._terminals.pop(term.id, None)  # released, or the client is closing
            term.forget_output()
            with trio.CancelScope(shield=True):
                term.signal_group()
                with trio.move_on_after(REAP_TIMEOUT):
                    await process.wait()
                if process.stdout is not None:
                    await process.stdout.aclose()

    async def _run(self, term: _Terminal, process: trio.Process) -> None:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(self._read, term, process)
            await process.wait()
            # Stragglers of its group end with it (the pid was reaped just now).
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, signal_module.SIGKILL)
            with trio.move_on_after(DRAIN_GRACE):
                await term.eof_seen.wait()
            nursery.cancel_scope.cancel()
        returncode = process.returncode
        assert returncode is not None  # waited for above
        term.exit_status = _exit_status(returncode)
        term.exited.set()

    @staticmethod
    async def _read(term: _Terminal, process: trio.Process) -> None:
        stream = process.stdout
        assert stream is not None
        try:
            while True:
                data = await stream.receive_some(_READ_SIZE)
                if not data:
                    break
                term.append(data)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            pass
        finally:
            term.eof = True
            term.eof_seen.set()

    def _get(self, workspace: Workspace, terminal_id: str) -> _Terminal:
        term = self._terminals.get(terminal_id)
        if term is None or term.session_id != workspace.session_id:
            raise HandlerError(
                f"unknown terminal {terminal_id!r} in session {workspace.session_id!r}",
                code=RESOURCE_NOT_FOUND,
                data={"terminalId": terminal_id},
            )
        return term

    async def output(self, workspace: Workspace, terminal_id: str) -> TerminalOutput:
        """The output kept so far (at a character boundary), and the exit status."""
        return self._get(workspace, terminal_id).snapshot()

    async def wait_for_exit(self, workspace: Workspace, terminal_id: str) -> TerminalExitStatus:
        """Wait until the command exited (and its output arrived)."""
        term = self._get(workspace, terminal_id)
        await term.exited.wait()
        assert term.exit_status is not None
        return term.exit_status

    async def kill(self, workspace: Workspace, terminal_id: str) -> None:
        """SIGKILL the command's process group; the output stays readable."""
        self._get(workspace, terminal_id).signal_group()

    async def release(self, workspace: Workspace, terminal_id: str) -> None:
        """Kill the command if it still runs, and forget the terminal."""
        term = self._get(workspace, terminal_id)
        del self._terminals[terminal_id]
        term.signal_group()
        term.forget_output()  # its share now (what it prints while dying: when create ends)
        term.released.set()
