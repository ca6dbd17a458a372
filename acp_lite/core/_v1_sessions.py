"""What the v1 dialect remembers of each session, and the translations that need it.

A v1 session's modes (a v2 select option ``mode``), its config options, its turn
in flight, and the synthetic message ids of chunks that carry none: plain state,
with the v1 update -> v2 update translation that reads and moves it
(:func:`translate_update`) and the v1 form of the v2 requests that depend on it
(:func:`request_form`). No core object is touched here
(:mod:`acp_lite.core.v1` applies what comes out).
"""

from __future__ import annotations

from typing import Any

import attrs

from acp_lite.core import v1_shapes as shapes
from acp_lite.core.records import PendingRequest
from acp_lite.errors import UnsupportedInV1

__all__ = [
    "NO_V1",
    "Turn",
    "V1Session",
    "pick",
    "request_form",
    "resume_method",
    "setup",
    "translate_update",
]

#: v2 client requests with no v1 method: refused before sending.
NO_V1 = frozenset(
    {
        "tool_call/cancel",
        "terminal/cancel",
        "session/fork",
        "session/archive",
        "session/unarchive",
        "session/set_title",
        "session/status",
        "auth/status",
        "providers/list",
        "providers/set",
        "providers/disable",
        "proxy/initialize",
        "mcp/message",
    }
)
#: v2 method -> v1 method where only the name differs.
_RENAMED = {"auth/login": "authenticate", "auth/logout": "logout"}
#: Chunk tag -> the kind used in synthetic message ids.
_CHUNK_KIND = {
    "user_message_chunk": "user",
    "agent_message_chunk": "agent",
    "agent_thought_chunk": "thought",
}


@attrs.define(slots=True, eq=False)
class Turn:
    """A v1 ``session/prompt`` in flight (v1: at most one per session)."""

    entry: PendingRequest
    blocks: list[Any]
    message_id: str
    #: The user message was synthesized (or echoed) and the prompt accepted: the
    #: turn's insertion.
    begun: bool = False
    #: The ``running`` state was synthesized (when the prompt was sent, or at the
    #: insertion if the session was replaying then).
    running: bool = False
    #: The agent echoes the prompt (user_message_chunk without messageId first):
    #: those chunks are the user message, none is synthesized.
    echoing: bool = False


@attrs.define(slots=True, eq=False)
class V1Session:
    """What the v1 dialect remembers of one session."""

    id: str
    #: The v1 ``SessionModeState`` (``None``: the agent has no modes, or a real
    #: ``mode`` config option replaces them).
    modes: dict[str, Any] | None = None
    #: The agent's config options, translated to v2 (without the mode option).
    options: list[Any] = attrs.Factory(list)
    turn: Turn | None = None
    #: History segment outside turns (for chunks without ``messageId``).
    segment: int = 0
    last_kind: str | None = None

    def config_options(self) -> list[Any]:
        """The v2 option list: the agent's own and the one standing for modes."""
        if self.modes is None:
            return list(self.options)
        return [*self.options, shapes.mode_option(self.modes)]

    def set_setup(self, result: dict[str, Any]) -> None:
        """Take the options and modes of a v1 session setup (or option update)."""
        options = result.get("configOptions")
        if isinstance(options, list):
            self.options = [shapes.config_option(o) for o in options]
        modes = result.get("modes")
        if isinstance(modes, dict) and not self._has_real_mode_option():
            self.modes = dict(modes)
        elif modes is not None or self._has_real_mode_option():
            self.modes = None

    def turn_ended(self) -> None:
        """The turn's response arrived: late chunks without ``messageId`` start new
        messages, never extend the turn's or a replayed one."""
        self.turn = None
        self.segment += 1
        self.last_kind = None

    def _has_real_mode_option(self) -> bool:
        return any(isinstance(o, dict) and o.get("configId") == "mode" for o in self.options)


def setup(result: dict[str, Any], sess: V1Session) -> dict[str, Any]:
    """v1 ``session/new`` or ``session/load`` result -> v2 (modes and models stay as
    extra fields)."""
    if "configOptions" not in result and sess.modes is None:
        return result
    return {**result, "configOptions": sess.config_options()}


def request_form(
    method: str, p: dict[str, Any], sess: V1Session | None
) -> tuple[str, dict[str, Any], Any]:
    """The v1 ``(method, params, detail)`` of v2 request ``method`` (``detail``: what
    its answer needs to be translated back). ``session/resume`` is the caller's, and
    so is refusing the methods v1 lacks (:data:`NO_V1`)."""
    if method == "initialize":
        return method, shapes.initialize_params(p), None
    if method in _RENAMED:
        return _RENAMED[method], p, None
    if method == "session/new":
        new = pick(p, "cwd", "additionalDirectories", "_meta")
        return method, new | {"mcpServers": p.get("mcpServers") or []}, None
    if method == "session/set_config_option":
        if p.get("configId") == "mode" and sess is not None and sess.modes is not None:
            wire = {"sessionId": p.get("sessionId"), "modeId": p.get("value")}
            if "_meta" in p:
                wire["_meta"] = p["_meta"]
            return "session/set_mode", wire, p.get("value")
        if p.get("type") == "id":
            # v1 SetSessionConfigOptionRequest: a value id is sent without "type".
            p = {k: v for k, v in p.items() if k != "type"}
    return method, p, None


def resume_method(caps: dict[str, Any], session_id: str, *, replay: bool) -> str:
    """The v1 method a v2 ``session/resume`` is sent as, by what the agent advertised
    (``agentCapabilities``); ``UnsupportedInV1`` if it has none that fits."""
    load = caps.get("loadSession") is True
    resume = isinstance(_dict(caps.get("sessionCapabilities")).get("resume"), dict)
    if load and (replay or not resume):
        return "session/load"
    if resume and not replay:
        return "session/resume"
    what = "with history replay " if replay and resume else ""
    raise UnsupportedInV1(
        f"this v1 agent cannot resume a session {what}(it advertised "
        f"loadSession={load}, sessionCapabilities.resume={resume})",
        method="session/resume",
        session_id=session_id,
    )


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def pick(p: dict[str, Any], *keys: str) -> dict[str, Any]:
    """The entries of ``p`` named ``keys`` (those present)."""
    return {k: p[k] for k in keys if k in p}


def translate_update(sess: V1Session, raw: dict[str, Any], replaying: bool) -> dict[str, Any]:
    """A v1 update of ``sess`` -> the v2 update (its modes and ids move along)."""
    tag = raw.get("sessionUpdate")
    kind = _CHUNK_KIND.get(tag) if isinstance(tag, str) else None
    last, sess.last_kind = sess.last_kind, (kind or "other")
    if kind is not None:
        if "messageId" in raw and raw["messageId"] is not None:
            return raw
        return {**raw, "messageId": _message_id(sess, kind, last, replaying)}
    if tag == "tool_call" or tag == "tool_call_update":
        out = shapes.tool_call(raw, create=tag == "tool_call")
        out["sessionUpdate"] = "tool_call_update"
        return out
    if tag == "plan":
        plan = {"type": "items", "planId": "v1-plan", "entries": raw.get("entries")}
        out = {k: v for k, v in raw.items() if k not in ("entries", "sessionUpdate")}
        return {**out, "sessionUpdate": "plan_update", "plan": plan}
    if tag == "available_commands_update":
        commands = raw.get("availableCommands")
        if isinstance(commands, list):
            commands = [shapes.command(c) for c in commands]
        return {**raw, "availableCommands": commands}
    if tag == "config_option_update":
        options = raw.get("configOptions")
        if not isinstance(options, list):
            return raw
        sess.set_setup({"configOptions": options})
        return {**raw, "configOptions": sess.config_options()}
    if tag == "current_mode_update" and sess.modes is not None:
        sess.modes["currentModeId"] = raw.get("currentModeId")
        out = {k: v for k, v in raw.items() if k not in ("currentModeId", "sessionUpdate")}
        out["sessionUpdate"] = "config_option_update"
        out["configOptions"] = sess.config_options()
        return out
    # session_info_update, usage_update, notice, compaction_update and
    # compaction_summary_chunk have the v2 shape; anything else is kept as
    # received (an UnrecognizedSessionUpdate).
    return raw


def _message_id(sess: V1Session, kind: str, last: str | None, replaying: bool) -> str:
    turn = sess.turn
    if turn is not None and not replaying:
        if turn.echoing:
            if kind == "user":
                return turn.message_id  # the agent's echo of the prompt
            turn.echoing = False
        return f"v1-{turn.entry.id}-{kind}"
    # Outside a turn (a history replay): a user message after anything else
    # starts a new segment, so each replayed exchange gets its own messages.
    if kind == "user" and last != "user":
        sess.segment += 1
    return f"v1-h{sess.segment}-{kind}"
