"""Launching the agent process and shutting it down without leaks.

Shutdown ladder: close stdin, wait, SIGTERM,
wait, SIGKILL, reap; then the same for anything the agent left running in its
process group. Every step is bounded, so the whole ladder is bounded by
``Limits.shutdown_timeout`` and always reaps the child (no zombie).
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import subprocess
from collections import deque
from collections.abc import Mapping, Sequence

import trio

from acp_lite.aio._pipe import lendable
from acp_lite.errors import AgentStartFailed
from acp_lite.limits import Limits

__all__ = ["AgentProcess", "build_env"]

logger = logging.getLogger("acp_lite.agent")


def build_env(env: Mapping[str, str] | None, inherit_env: bool) -> dict[str, str] | None:
    """The child environment: ``env`` merged onto ours, or replacing it."""
    if inherit_env:
        if not env:
            return None  # inherit unchanged
        merged = dict(os.environ)
        merged.update(env)
        return merged
    return dict(env or {})


class AgentProcess:
    """A running agent: its pipes, stderr ring buffer and shutdown ladder."""

    def __init__(self, process: trio.Process, argv: Sequence[str], limits: Limits) -> None:
        self.process = process
        self.argv = tuple(argv)
        self.limits = limits
        self._stderr: deque[str] = deque(maxlen=limits.stderr_lines)
        self.stderr_done = trio.Event()
        self._terminated = False  # the ladder sent SIGTERM
        assert process.stdin is not None and process.stdout is not None
        self.stdin: trio.abc.SendStream = process.stdin
        # Lendable to a blocking caller waiting for its response (acp_lite.aio._pipe).
        self.stdout: trio.abc.ReceiveStream = lendable(process.stdout)

    @classmethod
    async def start(
        cls,
        command: Sequence[str],
        *,
        cwd: str | os.PathLike[str] | None = None,
        env: Mapping[str, str] | None = None,
        inherit_env: bool = True,
        limits: Limits | None = None,
    ) -> AgentProcess:
        """Start ``command`` (an argv list, no shell) with piped stdio."""
        if isinstance(command, str | bytes):
            raise TypeError("command must be a list of arguments (no shell), not a string")
        argv = [os.fspath(a) for a in command]
        if not argv:
            raise ValueError("command is empty")
        limits = limits or Limits()
        try:
            process = await trio.lowlevel.open_process(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                cwd=cwd,
                env=build_env(env, inherit_env),
                # Own process group: the ladder signals the agent's children too
                # (e.g. `npx` -> node), and a Ctrl-C in our terminal does not race
                # our own orderly shutdown.
                start_new_session=True,
            )
        except OSError as exc:
            shown = repr(argv)
            if len(shown) > 300:  # e.g. an inline script: the error must stay readable
                shown = f"{shown[:300]}... ({len(argv)} arguments)"
            raise AgentStartFailed(f"cannot start agent {shown}: {exc}") from exc
        return cls(process, argv, limits)

    @property
    def pid(self) -> int:
        """The agent's process id."""
        return self.process.pid

    @property
    def returncode(self) -> int | None:
        """Exit status (negative: killed by that signal), ``None`` while running."""
        return self.process.returncode

    def stderr_tail(self) -> list[str]:
        """The last lines the agent wrote to stderr (bounded ring buffer)."""
        return list(self._stderr)

    async def read_stderr(self) -> None:
        """Copy stderr lines into the ring buffer and the ``acp_lite.agent`` logger."""
        stream = self.process.stderr
        assert stream is not None
        buf = b""
        cap = self.limits.max_stderr_line_bytes
        try:
            while True:
                try:
                    chunk = await stream.receive_some(65536)
                except (trio.BrokenResourceError, trio.ClosedResourceError):
                    break
                if not chunk:
                    break
                buf += chunk
                *lines, buf = buf.split(b"\n")
                for raw in lines:
                    self._add_stderr(raw[:cap])
                if len(buf) > cap:
                    self._add_stderr(buf[:cap])
                    buf = b""
            if buf:
                self._add_stderr(buf[:cap])
        finally:
            self.stderr_done.set()

    def _add_stderr(self, raw: bytes) -> None:
        text = raw.decode("utf-8", errors="replace").rstrip("\r")
        self._stderr.append(text)
        logger.debug("agent[%d] stderr: %s", self.process.pid, text)

    def kill_now(self) -> None:
        """Skip what is left of the graces: SIGKILL the agent's process group now
        (a second Ctrl-C during ``close()``). The shutdown ladder then ends at once."""
        self._terminated = True
        self._signal(signal.SIGKILL)

    def _signal(self, sig: int) -> None:
        if self.process.returncode is not None:
            return
        try:
            # The leader is not reaped yet, so its pid still names its group.
            os.killpg(self.process.pid, sig)
        except (ProcessLookupError, PermissionError, OSError):
            with contextlib.suppress(ProcessLookupError):
                self.process.send_signal(sig)

    def _group_alive(self) -> bool:
        pgid = self.process.pid
        try:
            os.killpg(pgid, 0)
        except OSError:
            return False
        # The group exists, but maybe only as zombies: orphans are reaped by init,
        # which may take its time (seconds in some containers). Where /proc exists,
        # count only members that still run.
        try:
            entries = os.listdir("/proc")
        except OSError:
            return True
        for entry in entries:
            if not entry.isdigit():
                continue
            try:
                with open(f"/proc/{entry}/stat", "rb") as f:
                    fields = f.read().rsplit(b")", 1)[1].split()
            except (OSError, IndexError):
                continue
            # Fields after the command name: state, ppid, pgrp, ...
            if len(fields) > 2 and fields[2] == str(pgid).encode() and fields[0] != b"Z":
                return True
        return False

    async def _stop_leftovers(self) -> None:
        """SIGTERM, then SIGKILL, what is left of the agent's process group.

        The agent runs in its own process group (``start_new_session``), so anything
        still in it after the agent was reaped is a child it left behind (for example
        a tool or a wrapper's node process, which may also hold our pipes open): it
        would outlive the client. A pid is not reused while a process group of that
        id exists (POSIX), so signalling the group of the reaped leader only reaches
        those leftovers. Bounded like the ladder; children that left the group
        (``setsid``) are out of reach.
        """
        limits = self.limits
        steps = [(signal.SIGKILL, limits.kill_grace)]
        if not self._terminated:  # the group had its SIGTERM already: keep the bound
            steps.insert(0, (signal.SIGTERM, limits.terminate_grace))
        for sig, grace in steps:
            if not self._group_alive():
                return
            logger.info("agent[%d] left processes behind: %s to its group", self.pid, sig.name)
            with contextlib.suppress(ProcessLookupError, PermissionError, OSError):
                os.killpg(self.process.pid, sig)
            with trio.move_on_after(grace):
                while self._group_alive():
                    await trio.sleep(0.02)

    async def aclose(self, close_grace: float | None = None) -> int | None:
        """Run the shutdown ladder; returns the exit status. Bounded; always reaps.

        ``close_grace`` (default ``Limits.close_grace``) is how long to wait after
        closing stdin: the connection passes what is left of it after draining its
        writer, so the whole close stays within ``Limits.shutdown_timeout``.
        """
        limits = self.limits
        grace = limits.close_grace if close_grace is None else max(0.0, close_grace)
        with trio.CancelScope(shield=True):
            with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError, OSError):
                await self.stdin.aclose()
            with trio.move_on_after(grace):
                await self.process.wait()
            if self.process.returncode is None:
                logger.info(
                    "agent (pid %d) still running %.1fs after its stdin closed: sending SIGTERM",
                    self.pid,
                    grace,
                )
                self._terminated = True
                self._signal(signal.SIGTERM)
                with trio.move_on_after(limits.terminate_grace):
                    await self.process.wait()
            if self.process.returncode is None:
                logger.warning(
                    "agent (pid %d) still running %.1fs after SIGTERM: sending SIGKILL",
                    self.pid,
                    limits.terminate_grace,
                )
                self._signal(signal.SIGKILL)
                with trio.move_on_after(limits.kill_grace):
                    await self.process.wait()
            if self.process.returncode is not None:
                await self._stop_leftovers()
            # Our read ends are closed even if a grandchild still holds the pipes,
            # so no reader of ours can hang on them.
            for stream in (self.stdout, self.process.stderr):
                if stream is not None:
                    await stream.aclose()
        return self.process.returncode
