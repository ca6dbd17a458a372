"""``acp-lite prompt`` on a real terminal (a pty the command has as its controlling
terminal, so Ctrl-C is a SIGINT from the line discipline, as for a user)."""

from __future__ import annotations

import os
import pty
import select
import signal
import sys
import time
from pathlib import Path

from acp_lite.cli import EXIT_INTERRUPTED

from .conftest import cli_env


class Terminal:
    """The command under a pty: read its output, type into it."""

    def __init__(self, *args: str, cwd: Path) -> None:
        env = cli_env()
        pid, fd = pty.fork()
        if pid == 0:  # the child: the command, with the pty as its terminal
            os.chdir(cwd)
            os.execve(sys.executable, [sys.executable, "-m", "acp_lite.cli", *args], env)
        self.pid, self.fd, self.output = pid, fd, b""
        self.status: int | None = None

    def read_until(self, text: bytes, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while text not in self.output and time.monotonic() < deadline:
            ready, _, _ = select.select([self.fd], [], [], 0.05)
            if ready:
                try:
                    self.output += os.read(self.fd, 65536)
                except OSError:  # the command exited and closed the terminal
                    break
        return text in self.output

    def wait(self, timeout: float) -> int | None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.status = os.waitstatus_to_exitcode(status)
                return self.status
            self.read_until(b"\0never", 0.05)
        return None

    def close(self) -> None:
        if self.status is None:
            os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)
        os.close(self.fd)


def test_ctrl_c_at_the_permission_prompt_cancels_the_turn(tmp_path: Path) -> None:
    term = Terminal("prompt", "--scenario", "tool_call_permission", "go", cwd=tmp_path)
    try:
        assert term.read_until(b"choose 1-3 or c: ", 60), term.output
        os.write(term.fd, b"x\n")  # an invalid choice says why it asks again
        assert term.read_until(b"not a choice: 'x'; choose 1-3 or c: ", 30), term.output
        os.write(term.fd, b"\x03")  # Ctrl-C
        # Within a second on a quiet machine; a loaded one gets ten times that.
        assert term.wait(10) == EXIT_INTERRUPTED, term.output
        text = term.output.decode(errors="replace")
        assert "interrupted; the turn was cancelled" in text
        assert "-> cancelled" in text  # the tool call the question was about
    finally:
        term.close()
