"""A tiny raw-pipe client for driving the reference agent in tests (no acp_lite client).

:class:`InProcessPipes` drives an :class:`~acp_lite.testing.InProcessAgent` (no
interpreter start-up); :class:`AgentProcess` a real subprocess, for what only a
process shows (signals, exit of the process, its stderr).
"""

from __future__ import annotations

import json
import os
import subprocess
import threading
import time
from collections.abc import Callable
from typing import IO, Any

from acp_lite.testing import InProcessAgent

TIMEOUT = 5.0


class RawAgent:
    """The agent over two pipes; every stdout line is recorded in order."""

    def __init__(self, stdin: IO[bytes], stdout: IO[bytes]) -> None:
        self._stdin = stdin
        self._stdout = stdout
        self.lines: list[bytes] = []  # every stdout line, raw
        self.messages: list[Any] = []  # the JSON-decodable ones
        self.sent: dict[int, str] = {}  # our request ids -> methods
        # Both directions in the order this client saw them, as transcript records
        # ({"dir", "msg"|"raw"}) for pytest_acp.conformance.check_transcript.
        self.wire: list[dict[str, Any]] = []
        self._wire_lock = threading.Lock()
        # Messages are appended under this condition; waiters scan them by index
        # (a queue of "new" messages would also hand out ones from before ``since``).
        self._arrived = threading.Condition()
        self._eof = False
        self._next_id = 0
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    @property
    def stderr_lines(self) -> list[str]:
        raise NotImplementedError

    def poll(self) -> int | None:
        """The exit status, or ``None`` while the agent runs."""
        raise NotImplementedError

    def wait_exit(self, timeout: float = TIMEOUT) -> int:
        raise NotImplementedError

    def send_raw(self, data: bytes) -> None:
        """Write bytes to the agent's stdin as they are."""
        self._stdin.write(data)
        self._stdin.flush()

    def close_stdin(self) -> None:
        """End of input for the agent."""
        self._stdin.close()

    def _read(self) -> None:
        for line in self._stdout:
            self.lines.append(line)
            try:
                message = json.loads(line)
            except ValueError:
                with self._wire_lock:
                    self.wire.append({"dir": "recv", "raw": line.decode(errors="replace")})
                continue
            with self._wire_lock:
                self.wire.append({"dir": "recv", "msg": message})
            with self._arrived:
                self.messages.append(message)
                self._arrived.notify_all()
        with self._arrived:
            self._eof = True
            self._arrived.notify_all()

    def send(self, message: Any) -> None:
        with self._wire_lock:  # recorded before it is written: its answer comes after it
            self.wire.append({"dir": "send", "msg": message})
        self.send_raw(json.dumps(message).encode() + b"\n")

    def request(self, method: str, params: dict[str, Any] | None = None) -> int:
        self._next_id += 1
        self.sent[self._next_id] = method
        self.send({"jsonrpc": "2.0", "id": self._next_id, "method": method, "params": params or {}})
        return self._next_id

    def notify(self, method: str, params: dict[str, Any]) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def wait_for(
        self, predicate: Callable[[Any], bool], timeout: float = TIMEOUT, since: int = 0
    ) -> Any:
        """The first message (already received or future, from index ``since``) matching."""
        deadline = time.monotonic() + timeout
        index = since
        with self._arrived:
            while True:
                while index < len(self.messages):
                    message = self.messages[index]
                    index += 1
                    if predicate(message):
                        return message
                if self._eof:
                    raise AssertionError(f"agent exited; received: {self.messages[-10:]}")
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise AssertionError(f"timed out; received: {self.messages[-10:]}")
                self._arrived.wait(remaining)

    def response(self, request_id: int) -> dict[str, Any]:
        msg: dict[str, Any] = self.wait_for(
            lambda m: isinstance(m, dict) and m.get("id") == request_id and "method" not in m
        )
        return msg

    def call(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """Request and return the result (fails on an error response)."""
        reply = self.response(self.request(method, params))
        assert "result" in reply, reply
        result: dict[str, Any] = reply["result"]
        return result

    def agent_request(self, method: str) -> dict[str, Any]:
        msg: dict[str, Any] = self.wait_for(
            lambda m: isinstance(m, dict) and m.get("method") == method and "id" in m
        )
        return msg

    def updates(self, session_id: str | None = None) -> list[dict[str, Any]]:
        return [
            m["params"]["update"]
            for m in self.messages
            if isinstance(m, dict)
            and m.get("method") == "session/update"
            and (session_id is None or m["params"]["sessionId"] == session_id)
        ]

    def wait_idle(self, session_id: str, stop_reason: str | None = None) -> dict[str, Any]:
        def is_idle(m: Any) -> bool:
            if not (isinstance(m, dict) and m.get("method") == "session/update"):
                return False
            update = m["params"]["update"]
            return bool(
                m["params"]["sessionId"] == session_id
                and update.get("sessionUpdate") == "state_update"
                and update.get("state") == "idle"
                and "stopReason" in update
                and (stop_reason is None or update["stopReason"] == stop_reason)
            )

        msg: dict[str, Any] = self.wait_for(is_idle)
        return msg["params"]["update"]  # type: ignore[no-any-return]

    def start_session(self, cwd: str = "/tmp", **init: Any) -> str:
        self.call(
            "initialize",
            {"protocolVersion": 2, "info": {"name": "raw-test", "version": "0"}, **init},
        )
        session_id: str = self.call("session/new", {"cwd": cwd})["sessionId"]
        return session_id

    def prompt(self, session_id: str, text: str) -> int:
        prompt = [{"type": "text", "text": text}]
        return self.request("session/prompt", {"sessionId": session_id, "prompt": prompt})

    def wait_eof(self, timeout: float = TIMEOUT) -> None:
        """Until every stdout line the (exited) agent wrote has been read."""
        self._reader.join(timeout)
        assert not self._reader.is_alive(), "stdout never closed"

    def stderr_text(self) -> str:
        """Everything written to stderr so far."""
        return "".join(self.stderr_lines)

    def wait_stderr(self, text: str, timeout: float = TIMEOUT) -> None:
        deadline = time.monotonic() + timeout
        while text not in "".join(self.stderr_lines):
            if time.monotonic() > deadline:
                raise AssertionError(f"{text!r} not on stderr: {self.stderr_lines[-5:]}")
            time.sleep(0.005)

    def close(self) -> None:
        raise NotImplementedError


class InProcessPipes(RawAgent):
    """An :class:`InProcessAgent` (threads of this process) over its two pipes."""

    def __init__(self, agent: InProcessAgent) -> None:
        self.agent = agent
        write_fd, read_fd = agent.start()
        super().__init__(os.fdopen(write_fd, "wb"), os.fdopen(read_fd, "rb"))

    @property
    def stderr_lines(self) -> list[str]:
        return [line + "\n" for line in self.agent.stderr_tail()]

    def poll(self) -> int | None:
        return self.agent.returncode

    def wait_exit(self, timeout: float = TIMEOUT) -> int:
        code = self.agent.wait(timeout)
        assert code is not None, "the agent did not stop"
        return code

    def close(self) -> None:
        if not self._stdin.closed:
            self._stdin.close()
        self.agent.close()
        self._reader.join(TIMEOUT)
        self._stdout.close()
        assert self.agent.threads() == [], self.agent.threads()


class AgentProcess(RawAgent):
    """The agent as a subprocess."""

    def __init__(self, argv: list[str]) -> None:
        self.proc = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self._stderr: list[str] = []
        super().__init__(self.proc.stdin, self.proc.stdout)
        self._stderr_reader = threading.Thread(target=self._read_stderr, daemon=True)
        self._stderr_reader.start()

    @property
    def stderr_lines(self) -> list[str]:
        return self._stderr

    def _read_stderr(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self._stderr.append(line.decode(errors="replace"))

    def poll(self) -> int | None:
        return self.proc.poll()

    def wait_exit(self, timeout: float = TIMEOUT) -> int:
        return self.proc.wait(timeout=timeout)

    def stderr_text(self) -> str:
        """Everything written to stderr so far (waits for EOF if the agent exited)."""
        if self.proc.poll() is not None:
            self._stderr_reader.join(TIMEOUT)
        return "".join(self._stderr)

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        # The readers end at EOF; closing a pipe under a reading thread races.
        self._reader.join(TIMEOUT)
        self._stderr_reader.join(TIMEOUT)
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()


def drive_turn(agent: AgentProcess, session_id: str, text: str) -> int:
    """Prompt and run to idle, answering permission (first option) and
    elicitation (accept) requests; returns the prompt's request id."""
    answered: set[Any] = set()
    request_id = agent.prompt(session_id, text)

    def step(message: Any) -> bool:
        if not isinstance(message, dict):
            return False
        method = message.get("method")
        if "id" in message and message["id"] not in answered:
            if method == "session/request_permission":
                option = message["params"]["options"][0]["optionId"]
                outcome = {"outcome": "selected", "optionId": option}
                answered.add(message["id"])
                agent.send({"jsonrpc": "2.0", "id": message["id"], "result": {"outcome": outcome}})
            elif method == "elicitation/create":
                result = {"action": "accept", "content": {"name": "Ada"}}
                answered.add(message["id"])
                agent.send({"jsonrpc": "2.0", "id": message["id"], "result": result})
        if method != "session/update" or message["params"]["sessionId"] != session_id:
            return False
        update = message["params"]["update"]
        return bool(update.get("sessionUpdate") == "state_update" and "stopReason" in update)

    agent.wait_for(step)
    return request_id
