"""The probe's end of the wire: raw JSON-RPC lines, a numbered log, waits with timeouts.

A probe must be able to send what a well-behaved client never sends (a batch, a
second ``initialize``, garbage), so :class:`Peer` is a raw line driver, not the
typed client: it writes exactly the bytes it is given and logs every line both
ways, numbered, as the evidence of a result. A reader thread parses what the
agent writes; the agent's requests are answered by :attr:`Peer.answer` (the
default grants the first permission option and refuses the rest with -32601)
unless a probe answers them itself.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
import time
from collections.abc import Callable
from typing import Literal

from acp_lite import _lazy_attrs as lazy_attrs
from acp_lite.jsontypes import JsonObject, JsonValue

__all__ = ["Answer", "Line", "Peer", "PeerClosed", "ProbeTimeout"]

Direction = Literal["sent", "received"]


@lazy_attrs.frozen
class Line:
    """One line of the conversation: its number in the log, who wrote it, its text
    and, when it is JSON, the parsed message (``None`` for garbage)."""

    index: int
    direction: Direction
    text: str
    message: JsonValue | None

    @property
    def obj(self) -> JsonObject:
        """The message as an object (``{}`` when it is not one: a batch, garbage)."""
        return self.message if isinstance(self.message, dict) else {}

    @property
    def result(self) -> JsonObject | None:
        """A response's ``result`` object (``None``: none, or not an object)."""
        result = self.obj.get("result")
        return result if isinstance(result, dict) else None

    @property
    def error(self) -> JsonObject | None:
        """A response's ``error`` object (``None``: none, or not an object)."""
        error = self.obj.get("error")
        return error if isinstance(error, dict) else None

    @property
    def is_response(self) -> bool:
        """A response (``result`` or ``error``, no ``method``)."""
        m = self.obj
        return "method" not in m and ("result" in m or "error" in m)

    @property
    def method(self) -> str | None:
        """The method of a request or notification."""
        method = self.obj.get("method")
        return method if isinstance(method, str) else None

    def __str__(self) -> str:
        arrow = "->" if self.direction == "sent" else "<-"
        text = self.text if len(self.text) <= 400 else self.text[:400] + "..."
        return f"#{self.index} {arrow} {text}"


class ProbeTimeout(Exception):
    """Nothing matching arrived in time."""


class PeerClosed(Exception):
    """The agent closed its output (exited) while a probe waited."""


Answer = Callable[["Peer", Line], JsonValue | None]
"""Answers one agent request: a JSON-RPC response object to send (``None``: the
probe answers it itself)."""


def default_answer(peer: Peer, line: Line) -> JsonValue | None:
    """Grant the first permission option; refuse every other request (-32601), since
    the probe client advertises no capability (fs, terminal, elicitation)."""
    request = line.obj
    if request.get("method") == "session/request_permission":
        params = request.get("params")
        options = params.get("options") if isinstance(params, dict) else None
        if isinstance(options, list) and options and isinstance(options[0], dict):
            outcome: JsonObject = {"outcome": "selected", "optionId": options[0].get("optionId")}
            return {"jsonrpc": "2.0", "id": request.get("id"), "result": {"outcome": outcome}}
    error: JsonObject = {"code": -32601, "message": f"Method not found: {request.get('method')}"}
    return {"jsonrpc": "2.0", "id": request.get("id"), "error": error}


class Peer:
    """A raw JSON-RPC line peer over two file descriptors (the agent's stdin and
    stdout), with a numbered :attr:`log` of every line.

    ``stderr`` gives the agent's last stderr lines; ``close`` stops the agent.
    """

    def __init__(
        self,
        write_fd: int,
        read_fd: int,
        *,
        stderr: Callable[[], list[str]] = list,
        close: Callable[[], None] = lambda: None,
        name: str = "agent",
    ) -> None:
        self.name = name
        self._write_fd: int | None = write_fd
        self._read_fd = read_fd
        self._stderr = stderr
        self._stop = close
        self._cond = threading.Condition()
        self._next_id = 0
        #: Every line, both ways, in order (its index is :attr:`Line.index`).
        self.log: list[Line] = []
        #: Set once the agent closed its output.
        self.eof = False
        #: Answers the agent's requests (``None`` leaves them to the probe).
        self.answer: Answer | None = default_answer
        self._closed = False
        self._reader = threading.Thread(target=self._read, name=f"probe-{name}", daemon=True)
        self._reader.start()

    # -- sending ---------------------------------------------------------------------

    def send(self, message: JsonValue | bytes) -> Line:
        """Write one line: a message (encoded compactly) or raw bytes (a newline is
        added when missing). Returns its log line."""
        if isinstance(message, bytes):
            data = message if message.endswith(b"\n") else message + b"\n"
            try:
                parsed: JsonValue | None = json.loads(data)
            except ValueError:
                parsed = None
        else:
            data = json.dumps(message, separators=(",", ":"), ensure_ascii=False).encode() + b"\n"
            parsed = message
        with self._cond:
            line = Line(len(self.log), "sent", data.decode("utf-8", "replace").rstrip("\n"), parsed)
            self.log.append(line)
            fd = self._write_fd
        if fd is None:
            raise PeerClosed(f"{self.name}: the probe already closed the agent's input")
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
        except OSError as exc:  # EPIPE: the agent is gone
            raise PeerClosed(f"{self.name}: writing to the agent failed: {exc}") from None
        return line

    def new_id(self) -> int:
        """A request id not used before on this connection."""
        with self._cond:
            self._next_id += 1
            return self._next_id

    def request(self, method: str, params: JsonValue | None = None) -> int:
        """Send a request; returns its id."""
        request_id = self.new_id()
        message: JsonObject = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        return request_id

    def notify(self, method: str, params: JsonValue | None = None) -> Line:
        """Send a notification."""
        message: JsonObject = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        return self.send(message)

    def call(self, method: str, params: JsonValue | None = None, *, timeout: float) -> Line:
        """Send a request and wait for its response (a result or an error)."""
        request_id = self.request(method, params)
        return self.response(request_id, timeout=timeout, what=f"the response to {method}")

    # -- waiting ---------------------------------------------------------------------

    def response(self, request_id: JsonValue, *, timeout: float, what: str = "") -> Line:
        """The response with this id (waits for it)."""
        return self.wait(
            lambda line: line.is_response and line.obj.get("id") == request_id,
            timeout=timeout,
            what=what or f"the response to request {request_id!r}",
        )

    def wait(
        self,
        predicate: Callable[[Line], bool],
        *,
        timeout: float,
        since: int = 0,
        what: str = "a matching line",
    ) -> Line:
        """The first received line from log index ``since`` on that matches (waits for
        it): :class:`ProbeTimeout` after ``timeout`` s, :class:`PeerClosed` at end of
        the agent's output."""
        deadline = time.monotonic() + timeout
        position = since
        with self._cond:
            while True:
                while position < len(self.log):
                    line = self.log[position]
                    position += 1
                    if line.direction == "received" and predicate(line):
                        return line
                if self.eof:
                    raise PeerClosed(f"{self.name} closed its output before {what}")
                left = deadline - time.monotonic()
                if left <= 0:
                    raise ProbeTimeout(f"no {what} within {timeout:g} s")
                self._cond.wait(left)

    def received(self, since: int = 0) -> list[Line]:
        """The received lines from log index ``since`` on (no waiting)."""
        with self._cond:
            return [line for line in self.log[since:] if line.direction == "received"]

    def settle(self, seconds: float, since: int = 0) -> list[Line]:
        """Wait ``seconds`` (or until end of output), then the lines received since."""
        deadline = time.monotonic() + seconds
        with self._cond:
            while not self.eof:
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self._cond.wait(left)
        return self.received(since)

    @property
    def mark(self) -> int:
        """The log index the next line will have (a ``since`` for later waits)."""
        with self._cond:
            return len(self.log)

    def stderr_tail(self) -> list[str]:
        """The agent's last stderr lines."""
        return list(self._stderr())

    # -- lifecycle -------------------------------------------------------------------

    def close_input(self) -> None:
        """Close the agent's stdin (end of input)."""
        with self._cond:
            fd, self._write_fd = self._write_fd, None
        if fd is not None:
            with contextlib.suppress(OSError):
                os.close(fd)

    def close(self) -> None:
        """End the conversation and stop the agent (idempotent)."""
        if self._closed:
            return
        self._closed = True
        self.close_input()
        self._stop()
        self._reader.join(2.0)

    def _read(self) -> None:
        buffer = b""
        while True:
            try:
                data = os.read(self._read_fd, 65536)
            except OSError:
                data = b""
            if not data:
                break
            *lines, buffer = (buffer + data).split(b"\n")
            for raw in lines:
                if raw.strip():
                    self._received(raw)
        if buffer.strip():
            self._received(buffer)
        with contextlib.suppress(OSError):
            os.close(self._read_fd)
        with self._cond:
            self.eof = True
            self._cond.notify_all()

    def _received(self, raw: bytes) -> None:
        text = raw.decode("utf-8", "replace")
        try:
            message: JsonValue | None = json.loads(raw)
        except ValueError:
            message = None
        with self._cond:
            line = Line(len(self.log), "received", text, message)
            self.log.append(line)
            self._cond.notify_all()
        answer = self.answer
        if (
            answer is not None
            and isinstance(message, dict)
            and isinstance(message.get("method"), str)
            and "id" in message
        ):
            reply = answer(self, line)
            if reply is not None:
                with contextlib.suppress(PeerClosed):
                    self.send(reply)
