"""The reference agent speaking ACP v1 (``acp-lite-agent --protocol 1``).

The agent itself stays a v2 agent; this module translates at its wire, both ways,
where v1 can express the same thing (v1 schema: ``tests/data/schema/v1/``):

* in: ``initialize`` (v1 fields) -> v2; ``authenticate`` -> ``auth/login``;
  ``session/load`` -> ``session/resume`` with a replay from the start;
  ``session/set_mode`` -> ``session/set_config_option`` of the ``mode`` option;
* out: the ``initialize`` answer -> ``agentInfo`` / ``agentCapabilities``
  (``loadSession``), auth methods keyed ``id``; v1's blocking ``session/prompt``:
  the v2 answer (insertion) is held and sent, with the ``stopReason``, once the
  idle ending its work arrives; ``state_update`` is not sent; chunks lose their
  ``messageId``; live user-message echoes are not sent (v1 agents do not echo),
  replayed ones become ``user_message_chunk``; a tool call's first update is a v1
  ``tool_call``, later ones ``tool_call_update``; ``plan_update`` -> ``plan``;
  a permission request's ``subject.toolCall`` -> ``toolCall``. Updates v1 has no
  form for (terminals, subagents, session messages ...) are left out, with a
  line on stderr.

Plain JSON dicts, like the rest of the reference agent.
"""

from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Iterable
from typing import Any

from acp_lite.testing._wire import Wire

__all__ = ["V1Wire", "incoming_line", "serve_v1"]

_CHUNK_TAGS = {"agent_message_chunk", "agent_thought_chunk"}
_WHOLE = {"agent_message": "agent_message_chunk", "agent_thought": "agent_thought_chunk"}
_KEPT = {
    "available_commands_update",
    "config_option_update",
    "session_info_update",
    "usage_update",
    "notice",
    "compaction_update",
    "compaction_summary_chunk",
}


#: Updates a v1 client gets only with a session capability (the v1 schema's MUSTs).
_GATED = {
    "notice": "notices",
    "compaction_update": "compaction",
    "compaction_summary_chunk": "compaction",
}


class V1Wire(Wire):
    """The agent's wire, translating what it writes to v1 (see the module docstring)."""

    def __init__(self, inner: Wire, log: Any = None) -> None:
        # Writes go through ``inner`` (its lock, its exit behaviour).
        super().__init__(None)  # type: ignore[arg-type]  # never writes itself
        self._inner = inner
        self._log = log
        self._lock2 = threading.Lock()
        self.methods: dict[Any, str] = {}  # our client's request id -> v1 method
        self.client_session: dict[str, Any] = {}  # the client's v1 session capabilities
        self._held: dict[str, deque[Any]] = {}  # sid -> prompt ids answered, not ended
        self._sent: dict[str, deque[Any]] = {}  # sid -> prompt ids not answered yet
        self._early: dict[str, deque[str]] = {}  # sid -> stop reasons before the answer
        self._prompt_sid: dict[Any, str] = {}
        self._load_sid: dict[Any, str] = {}
        self.replaying: set[str] = set()
        self._tools: dict[str, set[str]] = {}  # sid -> tool call ids announced

    # The agent calls these.
    def send(self, message: Any) -> None:
        out = (
            [m for m in map(self._to_v1, message) if m is not None]
            if isinstance(message, list)
            else self._to_v1(message)
        )
        if out:
            self._inner.send(out)

    def write(self, data: bytes) -> None:
        self._inner.write(data)

    def exit(self, code: int) -> None:
        self._inner.exit(code)

    # -- incoming ----------------------------------------------------------------------

    def incoming(self, message: Any) -> Any:
        """A v1 message from the client, as the v2 agent must see it."""
        if not isinstance(message, dict) or not isinstance(message.get("method"), str):
            return message
        method, params = message["method"], message.get("params")
        params = params if isinstance(params, dict) else {}
        rid = message.get("id")
        if "id" in message:
            self.methods[rid] = method
        if method == "initialize":
            caps = params.get("clientCapabilities")
            caps = caps if isinstance(caps, dict) else {}
            v2caps = {k: v for k, v in caps.items() if k in ("elicitation", "_meta")}
            session_caps = caps.get("session")
            # v1 schema Notice / CompactionUpdate: sent only to a client advertising
            # session.notices / session.compaction (kept here: the wire gates them).
            self.client_session = session_caps if isinstance(session_caps, dict) else {}
            params = {"protocolVersion": 2, "capabilities": v2caps}
            if isinstance(message["params"].get("clientInfo"), dict):
                params["info"] = message["params"]["clientInfo"]
        elif method == "authenticate":
            method = "auth/login"
        elif method == "session/load":
            method = "session/resume"
            params = {**params, "replayFrom": {"type": "start"}}
            self.replaying.add(str(params.get("sessionId")))
            self._load_sid[rid] = str(params.get("sessionId"))
        elif method == "session/set_mode":
            method = "session/set_config_option"
            params = {"sessionId": params.get("sessionId"), "configId": "mode",
                      "type": "id", "value": params.get("modeId")}  # fmt: skip
        elif method == "session/prompt" and "id" in message:
            sid = str(params.get("sessionId"))
            with self._lock2:
                self._sent.setdefault(sid, deque()).append(rid)
                self._prompt_sid[rid] = sid
        return {**message, "method": method, "params": params}

    # -- outgoing ----------------------------------------------------------------------

    def _to_v1(self, message: Any) -> Any:
        if not isinstance(message, dict):
            return message
        if message.get("method") == "session/update":
            return self._update(message)
        if message.get("method") == "session/request_permission":
            params = dict(message.get("params") or {})
            subject = params.pop("subject", None)
            if isinstance(subject, dict) and isinstance(subject.get("toolCall"), dict):
                params["toolCall"] = subject["toolCall"]
            return {**message, "params": params}
        if "method" in message or ("result" not in message and "error" not in message):
            return message
        rid = message.get("id")
        method = self.methods.pop(rid, None)
        if method == "session/prompt":
            return self._prompt_answered(rid, message)
        if method == "session/load":
            self.replaying.discard(self._load_sid.pop(rid, ""))
            return {**message, "result": {}} if "result" in message else message
        if method == "initialize" and isinstance(message.get("result"), dict):
            return {**message, "result": _initialize_result(message["result"])}
        if method in ("authenticate", "session/set_mode") and "result" in message:
            return {**message, "result": {}}
        return message

    def _prompt_answered(self, rid: Any, message: dict[str, Any]) -> Any:
        with self._lock2:
            sid = self._prompt_sid.pop(rid, "")
            sent = self._sent.get(sid)
            if sent and rid in sent:
                sent.remove(rid)
            if "error" in message:
                return message  # not inserted: v1 answers the error at once
            early = self._early.get(sid)
            if early:
                return {"jsonrpc": "2.0", "id": rid, "result": {"stopReason": early.popleft()}}
            self._held.setdefault(sid, deque()).append(rid)
            return None  # answered when its work ends

    def _work_ended(self, sid: str, reason: str, failure: Any = None) -> Any:
        with self._lock2:
            held = self._held.get(sid)
            if held:
                rid = held.popleft()
                if reason == "error":  # v1 has no such stop reason: the prompt fails
                    error = failure if isinstance(failure, dict) else {}
                    error = {"code": -32603, "message": "the turn failed", **error}
                    return {"jsonrpc": "2.0", "id": rid, "error": error}
                return {"jsonrpc": "2.0", "id": rid, "result": {"stopReason": reason}}
            if self._sent.get(sid):  # the idle came before the insertion answer
                self._early.setdefault(sid, deque()).append(reason)
            return None

    def _update(self, message: dict[str, Any]) -> Any:
        params = dict(message.get("params") or {})
        sid = str(params.get("sessionId"))
        update = dict(params.get("update") or {})
        tag = update.get("sessionUpdate")
        replayed = sid in self.replaying
        out: dict[str, Any] | None = None
        if tag == "state_update":
            reason = update.get("stopReason")
            if update.get("state") == "idle" and isinstance(reason, str) and not replayed:
                return self._work_ended(sid, reason, update.get("error"))
            return None
        if tag in _CHUNK_TAGS:
            update.pop("messageId", None)
            out = update
        elif tag in _WHOLE:
            update.pop("messageId", None)
            out = {**update, "sessionUpdate": _WHOLE[tag]}
        elif tag in ("user_message", "user_message_chunk"):
            if not replayed:
                return None  # v1 agents do not echo the prompt
            content = update.get("content")
            block = content[0] if isinstance(content, list) and content else content
            out = {"sessionUpdate": "user_message_chunk", "content": block}
        elif tag == "tool_call_update":
            seen = self._tools.setdefault(sid, set())
            tool_id = str(update.get("toolCallId"))
            if tool_id not in seen:
                seen.add(tool_id)
                out = {"title": "tool", **update, "sessionUpdate": "tool_call"}
            else:
                out = update
        elif tag == "plan_update":
            plan = update.get("plan")
            entries = plan.get("entries") if isinstance(plan, dict) else update.get("entries")
            out = {"sessionUpdate": "plan", "entries": entries or []}
        elif tag == "plan_removed":
            out = {"sessionUpdate": "plan", "entries": []}
        elif tag in _GATED and self.client_session.get(_GATED[tag]) is None:
            if self._log is not None:
                self._log(f"v1: not sending {tag}: the client did not advertise "
                          f"session.{_GATED[tag]}")  # fmt: skip
            return None
        elif tag in _KEPT or (isinstance(tag, str) and tag.startswith("_")):
            out = update
        if out is None:
            if self._log is not None:
                self._log(f"v1: {tag} has no v1 form; not sent")
            return None
        params["update"] = out
        return {**message, "params": params}


def _initialize_result(result: dict[str, Any]) -> dict[str, Any]:
    caps = result.get("capabilities") or {}
    session = caps.get("session") or {} if isinstance(caps, dict) else {}
    prompt = session.get("prompt") or {} if isinstance(session, dict) else {}
    methods = []
    for method in result.get("authMethods") or []:
        if isinstance(method, dict):
            v1 = {k: v for k, v in method.items() if k != "methodId"}
            methods.append({"id": method.get("methodId"), **v1})
    return {
        "protocolVersion": 1,
        "agentInfo": result.get("info"),
        "agentCapabilities": {
            "loadSession": True,
            "promptCapabilities": {
                "image": "image" in prompt,
                "audio": "audio" in prompt,
                "embeddedContext": "embeddedContext" in prompt,
            },
            "mcpCapabilities": {"http": False, "sse": False},
        },
        "authMethods": methods,
    }


def incoming_line(wire: V1Wire, line: bytes) -> bytes:
    """A line from a v1 client as the v2 agent must read it (a line that is not JSON
    is passed on: the agent answers the parse error)."""
    try:
        message = json.loads(line)
    except ValueError:
        return line
    if isinstance(message, list):
        translated: Any = [wire.incoming(m) for m in message]
    else:
        translated = wire.incoming(message)
    return json.dumps(translated).encode() + b"\n"


def serve_v1(agent: Any, stdin: Iterable[bytes]) -> None:
    """Read v1 lines until stdin closes, handing them to the v2 ``agent`` translated
    (its ``link.wire`` must be a :class:`V1Wire`)."""
    for line in stdin:
        if line.strip():
            agent.receive(incoming_line(agent.link.wire, line))
