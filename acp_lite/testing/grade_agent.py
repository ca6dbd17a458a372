"""The strict agent of ``acp-lite grade-client``: plays one scenario to a client.

``acp-lite-agent --grade SCENARIO --grade-log FILE`` runs it over stdio
(:func:`.grade_scenarios.main`). It speaks
v2, or v1 when the client's ``initialize`` asks for version 1, and writes every
line in both directions, byte for byte, to the log (NDJSON; one object per line):

* ``{"t": 0.01, "dir": "in", "line": "..."}``: a line the client wrote;
* ``{"t": 0.02, "dir": "out", "line": "..."}``: a line this agent wrote;
* ``{"t": 0.03, "event": "NAME", ...}``: a scenario's landmark (``ready_for_cancel``
  asks the grader to interrupt the client; ``eof`` is the end of the client's input).

It judges nothing: ``acp_lite.grading`` reads the log and the client's output. The
scenarios (a :class:`Play`) are in :mod:`.grade_scenarios`. The engine is plain blocking Python (a
reader thread and a queue) so the judge sees exactly what went over the wire.
"""

from __future__ import annotations

import json
import queue
import threading
import time
from collections.abc import Callable
from typing import IO, Any, Protocol

__all__ = ["WAIT", "GradeAgent", "Play"]

WAIT = 5.0
"""Seconds the agent waits for one answer of the client before it goes on."""


class Play(Protocol):
    """What a set of scenarios provides (:mod:`.grade_scenarios` is one)."""

    def initialize(self, agent: GradeAgent, params: dict[str, Any]) -> dict[str, Any]: ...
    def before_session(self, agent: GradeAgent) -> None: ...
    def new_session(self, agent: GradeAgent) -> dict[str, Any]: ...
    def turn(self, agent: GradeAgent, rid: Any) -> None: ...


class GradeAgent:
    """One connection: read the client's lines, answer, run the scenario's turn."""

    def __init__(
        self, scenario: str, play: Play, log: IO[str], stdin: IO[str], stdout: IO[str]
    ) -> None:
        self.scenario = scenario
        self.play = play
        self.log = log
        self.stdout = stdout
        self.start = time.monotonic()
        self.inbox: queue.Queue[str | None] = queue.Queue()
        self.version = 2
        #: The version to answer whatever the client asks (None: 1 if asked, else 2).
        self.forced_version: int | None = None
        self.client_capabilities: dict[str, Any] = {}
        self.session_id = "grade-1"
        self.next_id = 0
        self.turns = 0
        self.cancelled = False
        self.closed = False
        self.responses: dict[Any, dict[str, Any]] = {}
        self.unread: list[dict[str, Any]] = []
        threading.Thread(target=self._read, args=(stdin,), daemon=True).start()

    # -- the wire -----------------------------------------------------------------

    def _read(self, stdin: IO[str]) -> None:
        for line in stdin:
            self.inbox.put(line.rstrip("\n"))
        self.inbox.put(None)

    def record(self, **entry: Any) -> None:
        """Append one entry to the log, stamped with the seconds since start."""
        entry = {"t": round(time.monotonic() - self.start, 4), **entry}
        self.log.write(json.dumps(entry) + "\n")
        self.log.flush()

    def event(self, name: str, **data: Any) -> None:
        """Log a scenario landmark."""
        self.record(event=name, **data)

    def write_line(self, line: str) -> None:
        """Write one raw line to the client (logged first, so the log never lags)."""
        self.record(dir="out", line=line)
        try:
            self.stdout.write(line + "\n")
            self.stdout.flush()
        except (BrokenPipeError, ValueError):
            self.closed = True

    def send(self, message: Any) -> None:
        """Write one JSON message (or a batch array)."""
        self.write_line(json.dumps(message, separators=(",", ":")))

    def notify(self, method: str, params: dict[str, Any]) -> None:
        """Send a notification."""
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def update(self, update: dict[str, Any]) -> None:
        """Send one ``session/update`` for the session."""
        self.notify("session/update", {"sessionId": self.session_id, "update": update})

    def new_id(self) -> str:
        """A fresh id for a request of this agent."""
        self.next_id += 1
        return f"grade-{self.next_id}"

    def request_message(self, method: str, params: Any) -> tuple[str, dict[str, Any]]:
        """A request object with a fresh id (not sent)."""
        rid = self.new_id()
        return rid, {"jsonrpc": "2.0", "id": rid, "method": method, "params": params}

    def call(self, method: str, params: Any, timeout: float = WAIT) -> dict[str, Any] | None:
        """Send a request and wait for its response (None: no answer in time)."""
        rid, message = self.request_message(method, params)
        self.send(message)
        return self.wait_response(rid, timeout)

    def wait_response(self, rid: Any, timeout: float = WAIT) -> dict[str, Any] | None:
        """Serve the client until the response to ``rid`` arrives, or time runs out."""
        deadline = time.monotonic() + timeout
        while rid not in self.responses:
            if not self.pump(deadline):
                return None
        return self.responses.pop(rid)

    def wait_for(self, done: Callable[[], bool], timeout: float = WAIT) -> bool:
        """Serve the client until ``done()`` holds (False: time ran out or input ended)."""
        deadline = time.monotonic() + timeout
        while not done():
            if not self.pump(deadline):
                return False
        return True

    def pump(self, deadline: float) -> bool:
        """Handle one incoming line; False once the deadline passed or input ended."""
        try:
            line = self.inbox.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            return False
        if line is None:
            self.closed = True
            self.event("eof")
            self.inbox.put(None)  # stays at the end for every later pump
            return False
        self.record(dir="in", line=line)
        try:
            message = json.loads(line)
        except ValueError:
            self.send(
                {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}}
            )
            return True
        for item in message if isinstance(message, list) else [message]:
            if isinstance(item, dict):
                self.handle(item)
        return True

    # -- the client's messages ----------------------------------------------------

    def handle(self, message: dict[str, Any]) -> None:
        """Route one message of the client: a response, a notification or a request."""
        method = message.get("method")
        if method is None:
            if "id" in message:
                self.responses[message["id"]] = message
            return
        if "id" not in message:
            if method == "session/cancel":
                self.cancelled = True
                self.event("cancel")
            return
        rid = message["id"]
        raw = message.get("params")
        params: dict[str, Any] = raw if isinstance(raw, dict) else {}
        scenarios = self.play
        if method == "initialize":
            self.result(rid, scenarios.initialize(self, params))
        elif method == "session/new":
            scenarios.before_session(self)
            self.result(rid, scenarios.new_session(self))
        elif method == "session/prompt":
            self.turns += 1
            self.cancelled = False
            scenarios.turn(self, rid)
        elif method in ("session/close", "session/delete"):
            self.result(rid, {})
        else:
            self.error(rid, -32601, "Method not found")

    def result(self, rid: Any, result: Any) -> None:
        """Answer a request of the client."""
        self.send({"jsonrpc": "2.0", "id": rid, "result": result})

    def error(self, rid: Any, code: int, message: str) -> None:
        """Answer a request of the client with an error."""
        self.send({"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": message}})

    def serve(self) -> None:
        """Serve until the client closes its end."""
        while not self.closed:
            self.pump(time.monotonic() + 3600)
