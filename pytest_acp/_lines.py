"""Lines of a snapshot that are not updates, and the updates in transcript lines.

* request lines: the agent's requests to the client (:data:`REQUEST_METHODS`) with
  the answer given, ``{"request": method, "params": ..., "result": ...}``;
* a v1 turn's end: ``{"response": "session/prompt", "stopReason": ...}`` (with
  ``error`` / ``_meta`` when the agent's answer had them). A v2 turn's stop
  reason is in the ``idle`` ``state_update`` the agent streams; a v1 agent
  streams no states: its turn ends with the ``session/prompt`` response (v1
  schema ``PromptResponse.stopReason``). Without this line a v1 snapshot would
  not show how the turn ended, and an agent answering ``finished`` would pass.
  The same line comes from either source a snapshot reads: the model's events
  (the idle the v1 translator synthesized from that response, ``acp_lite.core.v1``),
  or transcript lines (the response itself, :class:`Wire`).

Pure Python over dicts, like :mod:`pytest_acp.normalize`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pytest_acp._safejson import key as json_key

__all__ = [
    "REQUEST_METHODS",
    "RESPONSE",
    "Wire",
    "from_idle",
    "from_response",
    "from_wire",
    "is_record",
    "record_line",
    "request_line",
]

#: The key naming the line's kind, where updates have ``sessionUpdate``.
RESPONSE = "response"
_PROMPT = "session/prompt"
_CANCELLED = -32800  # "Prompts that are never inserted": withdrawn by a cancel


def _line(stop: Any, error: Any = None, meta: Any = None) -> dict[str, Any]:
    line: dict[str, Any] = {RESPONSE: _PROMPT, "stopReason": stop}
    if isinstance(error, Mapping):
        line["error"] = {k: error[k] for k in ("code", "message") if k in error}
    if isinstance(meta, Mapping):
        line["_meta"] = dict(meta)
    return line


def from_idle(raw: Mapping[str, Any]) -> dict[str, Any] | None:
    """The line for a synthesized v1 ``state_update`` (``None`` unless it is the idle
    ending a turn: the idle after a ``session/load`` has no stop reason)."""
    if raw.get("sessionUpdate") != "state_update" or raw.get("state") != "idle":
        return None
    if "stopReason" not in raw and "error" not in raw:
        return None
    return _line(raw.get("stopReason"), raw.get("error"), raw.get("_meta"))


def from_response(message: Mapping[str, Any], begun: bool) -> dict[str, Any]:
    """The line for a v1 ``session/prompt`` response, as the v1 translator reads it:
    an error after updates (``begun``) ends the turn in ``error``; one before any is
    a rejection, ``cancelled`` when it is -32800."""
    error = message.get("error")
    if isinstance(error, Mapping):
        if not begun and error.get("code") == _CANCELLED:
            return _line("cancelled")
        return _line("error", error)
    result = message.get("result")
    result = result if isinstance(result, Mapping) else {}
    return _line(result.get("stopReason"), meta=result.get("_meta"))


def from_wire(message: Any) -> list[dict[str, Any]]:
    """Update payloads in one wire value from a transcript: a JSON-RPC message, a batch,
    or anything else an agent wrote (ignored: transcripts may hold garbage lines)."""
    if isinstance(message, list):
        return [p for m in message for p in from_wire(m)]
    if isinstance(message, Mapping) and message.get("method") == "session/update":
        params = message.get("params")
        update = params.get("update") if isinstance(params, Mapping) else None
        if isinstance(update, Mapping) and "sessionUpdate" in update:
            return [dict(update)]
    return []


#: Agent -> client requests kept as request lines (with the client's answer).
REQUEST_METHODS: frozenset[str] = frozenset({"session/request_permission", "elicitation/create"})


def request_line(method: str, params: Any) -> dict[str, Any]:
    """A request line without its answer (``sessionId`` dropped, as updates have none)."""
    kept = (
        {k: v for k, v in params.items() if k != "sessionId"} if isinstance(params, Mapping) else {}
    )
    return {"request": method, "params": kept}


def record_line(record: Any) -> dict[str, Any]:
    """The request line of a model record (``acp_lite.model.AgentRequestRecord``)."""
    line = request_line(record.method, record.raw)
    if record.status == "answered":
        line["result"] = record.result
    elif record.status == "failed":
        line["error"] = record.error
    else:
        line["status"] = record.status
    return line


def is_record(item: Any) -> bool:
    return (
        not isinstance(item, Mapping)
        and isinstance(getattr(item, "event_index", None), int)
        and isinstance(getattr(item, "method", None), str)
        and hasattr(item, "status")
    )


class Wire:
    """Request lines from transcript lines: a request received, then the answer
    the client sent for its id (or the agent's ``$/cancel_request``); and the
    lines ending v1 turns. ``requests=False``: no request lines."""

    def __init__(self, requests: bool = True) -> None:
        self.requests = requests
        self.open: dict[str, dict[str, Any]] = {}
        # Our session/prompt requests by id: [session id, updates seen since].
        self.prompts: dict[str, list[Any]] = {}
        self.initialize: str | None = None
        self.v1: bool | None = None  # None: the initialize answer was not seen

    def _response(self, message: Mapping[str, Any]) -> list[dict[str, Any]]:
        rid = json_key(message.get("id"))
        if rid == self.initialize:
            result = message.get("result")
            self.v1 = isinstance(result, Mapping) and result.get("protocolVersion") == 1
            return []
        prompt = self.prompts.pop(rid, None)
        if prompt is None:
            return []
        result = message.get("result")
        # Without the initialize answer: a v1 answer has a stopReason, a v2 one a messageId.
        v1 = self.v1
        if v1 is None and isinstance(result, Mapping):
            v1 = "stopReason" in result and "messageId" not in result
        return [from_response(message, bool(prompt[1]))] if v1 else []

    def recv(self, message: Any) -> list[dict[str, Any]]:
        if isinstance(message, list):
            return [p for m in message for p in self.recv(m)]
        if isinstance(message, Mapping):
            method = message.get("method")
            if method is None and "id" in message:
                return self._response(message)
            if method == "session/update":
                params = message.get("params")
                sid = params.get("sessionId") if isinstance(params, Mapping) else None
                for prompt in self.prompts.values():
                    prompt[1] = prompt[1] or prompt[0] == sid
            if not self.requests:
                return from_wire(message)
            if isinstance(method, str) and method in REQUEST_METHODS and "id" in message:
                line = request_line(method, message.get("params"))
                self.open[json_key(message.get("id"))] = line
                return [line]
            if method == "$/cancel_request":
                params = message.get("params")
                rid = params.get("requestId") if isinstance(params, Mapping) else None
                withdrawn = self.open.pop(json_key(rid), None)
                if withdrawn is not None:
                    withdrawn["status"] = "withdrawn"
        return from_wire(message)

    def send(self, message: Any) -> None:
        if isinstance(message, list):
            for m in message:
                self.send(m)
            return
        method = message.get("method") if isinstance(message, Mapping) else None
        if method in ("initialize", _PROMPT) and isinstance(message, Mapping) and "id" in message:
            rid = json_key(message["id"])
            if method == "initialize":
                self.initialize = rid
            else:
                params = message.get("params")
                self.prompts[rid] = [
                    params.get("sessionId") if isinstance(params, Mapping) else None,
                    False,
                ]
        if isinstance(message, Mapping) and "method" not in message and "id" in message:
            line = self.open.pop(json_key(message.get("id")), None)
            if line is not None:
                if "error" in message:
                    error = message.get("error")
                    keep = ("code", "message")
                    line["error"] = (
                        {k: error[k] for k in keep if k in error}
                        if isinstance(error, Mapping)
                        else error
                    )
                else:
                    line["result"] = message.get("result")

    def finish(self) -> None:
        for line in self.open.values():
            line["status"] = "pending"
        self.open.clear()
