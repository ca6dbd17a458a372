"""``acp-lite prompt`` on a real terminal (a pty the command has as its controlling
terminal, so Ctrl-C is a SIGINT from the line discipline, as for a user)."""

from __future__ import annotations

import json
import os
import pty
import select
import shlex
import signal
import sys
import time
from pathlib import Path

from acp_lite.cli import EXIT_INTERRUPTED

from .conftest import RunCli, cli_env


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
        # What follows the unanswered question starts on a line of its own.
        assert "choose 1-3 or c: ^C\r\n" in text, text
    finally:
        term.close()


#: A form with every field kind (spec "Elicitation": form schemas), some defaults.
FORM = {
    "type": "object",
    "title": "Project",
    "properties": {
        "name": {"type": "string", "title": "Name", "default": "demo"},
        "size": {"type": "integer", "title": "Size", "minimum": 1, "maximum": 10},
        "tests": {"type": "boolean", "title": "Run tests", "default": True},
        "colour": {
            "type": "string",
            "title": "Colour",
            "enum": ["red", "green"],
            "enumNames": ["Red", "Green"],
        },
        "tags": {
            "type": "array",
            "title": "Tags",
            "items": {"anyOf": [{"const": "a", "title": "Alpha"}, {"const": "b", "title": "Beta"}]},
        },
    },
    "required": ["name", "size"],
}


def test_elicitation_form_answered_on_a_tty(run_cli: RunCli) -> None:
    # In this process, stdin saying it is a terminal: the questions and answers are
    # the point here (a real terminal's: test_ctrl_c_in_a_form_cancels_the_turn).
    step = {"type": "elicit", "message": "Set up the project", "schema": FORM,
            "branches": {"accept": [{"type": "text", "text": "Thanks!"}]}}  # fmt: skip
    script = json.dumps({"turns": [{"steps": [step]}]})
    agent = shlex.join([sys.executable, "-m", "acp_lite.testing.agent", "--script-json", script])
    # Typed ahead, one line per question: answer the form; keep the name's default;
    # a size out of range twice, then 3; keep "y"; Green; both tags; review: edit;
    # a new name, keep the rest but say "n" to tests; review: send.
    typed = "\n\n0\n12\n3\n\n2\n1 2\ne\nproj\n\nn\n\n\ns\n"
    proc = run_cli("prompt", "--json", "--agent", agent, "go", input=typed, tty=True)
    assert proc.returncode == 0, proc.stderr
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    (asked,) = [line["elicitation"] for line in lines if "elicitation" in line]
    assert asked == {
        "message": "Set up the project",
        "mode": "form",
        "answer": "accept",
        "content": {
            "name": "proj",
            "size": 3,
            "tests": False,
            "colour": "green",
            "tags": ["a", "b"],
        },
    }
    err = proc.stderr
    # Who asks, with the decline and cancel controls before any field.
    assert "question from acp_lite reference agent: Set up the project\n" in err
    assert "a) answer the form  d) decline  c) cancel\nchoose a, d or c [a]: " in err
    # Each field with its kind and its default; a bad value says why it asks again.
    assert "Name [text, required] (default: demo): " in err
    assert "  must be at least 1; Size [integer, required]: " in err
    assert "  must be at most 10; Size [integer, required]: " in err
    assert "Run tests [boolean] (default: y): " in err
    assert "    1) Red\n    2) Green\n  Colour [choice]: " in err
    # The review shows the answers before they are sent; edited answers start there.
    assert "  review:\n    Name: demo\n    Size: 3\n    Run tests: y\n" in err
    assert "Colour [choice] (default: Green): " in err
    assert "Tags [several choices] (default: Alpha, Beta): " in err
    assert err.count("choose s, e, d or c [s]: ") == 2


def test_ctrl_c_in_a_form_cancels_the_turn(tmp_path: Path) -> None:
    term = Terminal("prompt", "--scenario", "elicitation", "hi", cwd=tmp_path)
    try:
        assert term.read_until(b"choose a, d or c [a]: ", 60), term.output
        os.write(term.fd, b"\n")
        assert term.read_until(b"Name [text, required]: ", 30), term.output
        os.write(term.fd, b"\x03")  # Ctrl-C
        assert term.wait(10) == EXIT_INTERRUPTED, term.output
        assert b"interrupted; the turn was cancelled" in term.output
        # What follows the question starts on a line of its own.
        assert b"Name [text, required]: ^C\r\n" in term.output, term.output
    finally:
        term.close()
