"""Expectations: the reference agent as a fake that checks the client driving it.

A script with ``expect = "ordered"`` (or ``"unordered"``) plays each of its turns
for the prompt that *matches* it (``prompt`` text, or ``prompt_pattern``), once,
instead of by prompt number. A prompt that matches no turn still owed, and a
request for a method the script does not allow, get a JSON-RPC error. Every such
decision is an *event* (a plain dict) handed to a sink: a callback in this
process, or a line of NDJSON in a report file (``--report``; each line also has the
``pid``), so whoever set the
expectations can tell what was met, what was not asked and what was unexpected.

Events (``event`` = ...):

* ``start``: the agent started (``pid``);
* ``request``: a request for an allowed method (``method``);
* ``prompt``: a prompt matched turn ``turn`` (0-based; ``text``, ``session_id``);
* ``unexpected``: ``method`` was not expected (``message`` says why; ``text``
  for a prompt);
* ``permission``: the client answered a permission request of turn ``turn``
  (``label``, ``title``, ``outcome``: ``selected`` / ``cancelled``, the chosen
  ``option_id`` and its ``kind``; or ``error`` / ``withdrawn``).
"""

from __future__ import annotations

import json
import os
import re
import threading
from collections.abc import Callable
from typing import IO, Any

from acp_lite.testing._wire import INVALID_PARAMS, METHOD_NOT_FOUND, RpcError
from acp_lite.testing.script import Reject, Script, Turn

__all__ = ["ALWAYS_ALLOWED", "EventSink", "Expectations", "ReportFile"]

EventSink = Callable[[dict[str, Any]], None]

#: Methods a fake agent always answers: the handshake, sessions, prompts (matched
#: against the turns) and ``session/close``. Others must be listed in the
#: script's ``allowed_methods``.
ALWAYS_ALLOWED = frozenset({"initialize", "session/new", "session/prompt", "session/close"})


class ReportFile:
    """An :data:`EventSink` appending one JSON line per event to a file.

    Each line is flushed at once: a crashing agent (an ``exit`` step) leaves
    every event it reported before.
    """

    def __init__(self, path: str) -> None:
        self._file: IO[str] = open(path, "a", encoding="utf-8")  # noqa: SIM115  # kept open
        self._lock = threading.Lock()
        self._pid = os.getpid()

    def __call__(self, event: dict[str, Any]) -> None:
        # Processes running the same command share the file: each line says whose.
        line = json.dumps({**event, "pid": self._pid}, separators=(",", ":"))
        with self._lock:
            self._file.write(line + "\n")
            self._file.flush()

    def close(self) -> None:
        """Close the file (a process exiting closes it too)."""
        with self._lock:
            self._file.close()


class Expectations:
    """Which turns are still owed, and the events of one agent."""

    def __init__(self, script: Script, sink: EventSink | None) -> None:
        self.ordered = script.expect == "ordered"
        self.turns = script.turns
        self.allowed = ALWAYS_ALLOWED | set(script.allowed_methods)
        if script.auth_required:
            self.allowed |= {"auth/login", "auth/logout"}
        self.used: set[int] = set()
        self._sink = sink
        self._lock = threading.Lock()
        self.record({"event": "start", "pid": os.getpid()})

    def record(self, event: dict[str, Any]) -> None:
        """Hand one event to the sink (if any)."""
        if self._sink is not None:
            self._sink(event)

    def check_method(self, method: str) -> None:
        """Record a request; raise the error that answers an unexpected one."""
        if method in self.allowed:
            self.record({"event": "request", "method": method})
            return
        message = f"unexpected request {method}: the fake agent has no expectation for it"
        self.record({"event": "unexpected", "method": method, "message": message})
        raise RpcError(METHOD_NOT_FOUND, message)

    def choose(self, text: str, session_id: str) -> tuple[int | None, Turn]:
        """The turn for a prompt with this text (and its index), or a turn that
        rejects it (index ``None``) when no turn still owed matches."""
        with self._lock:
            owed = [i for i in range(len(self.turns)) if i not in self.used]
            candidates = owed[:1] if self.ordered else owed
            for index in candidates:
                if _matches(self.turns[index], text):
                    self.used.add(index)
                    break
            else:
                index = None
        if index is not None:
            self.record({"event": "prompt", "turn": index, "text": text, "session_id": session_id})
            return index, self.turns[index]
        if not self.turns:
            why = "the fake agent expects no prompt"
        elif not owed:
            why = "every expected prompt was already asked"
        elif self.ordered:
            why = f"the next expected prompt is {_describe(self.turns[owed[0]])}"
        else:
            why = "expected: " + ", ".join(_describe(self.turns[i]) for i in owed)
        message = f"unexpected prompt {text!r}: {why}"
        self.record({"event": "unexpected", "method": "session/prompt", "message": message,
                     "text": text})  # fmt: skip
        return None, Turn(steps=[Reject(code=INVALID_PARAMS, message=message)])


def _matches(turn: Turn, text: str) -> bool:
    if turn.prompt is not None and text != turn.prompt:
        return False
    return turn.prompt_pattern is None or re.search(turn.prompt_pattern, text) is not None


def _describe(turn: Turn) -> str:
    if turn.label is not None:
        return turn.label
    if turn.prompt is not None:
        return repr(turn.prompt)
    if turn.prompt_pattern is not None:
        return f"a prompt matching {turn.prompt_pattern!r}"
    return "any prompt"
