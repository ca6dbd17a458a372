"""A connection's wire lines -> its timeline: typed items in the order they began.

Streams are folded as they are read (one pass, bounded memory per item): the
chunks of a message join one :class:`~acp_lite.view.items.Message` (by
``messageId`` in v2; consecutive chunks of one kind when there is none, as in
v1), a tool call's updates join its :class:`~acp_lite.view.items.ToolCall`, a
plan's revisions its :class:`~acp_lite.view.items.Plan`, a request its answer.
Both v2 (``state_update``, ``tool_call_update`` upserts, the prompt response's
``messageId``) and v1 (``tool_call``, ``plan``, the prompt response's
``stopReason``) are read; update kinds the viewer does not know are kept whole
as :class:`~acp_lite.view.items.Update`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from acp_lite.view.items import (
    AgentRequest,
    Call,
    Diff,
    ErrorItem,
    Item,
    Message,
    Permission,
    PermissionOption,
    Plan,
    PlanEntry,
    PromptAnswered,
    PromptSent,
    RawItem,
    StateChange,
    StatusChange,
    Thought,
    ToolCall,
    Update,
    ViewFinding,
)

if TYPE_CHECKING:
    from acp_lite.jsontypes import JsonObject, JsonValue
    from acp_lite.view.wire import Connection, WireLine

__all__ = ["Timeline", "build_timeline"]

#: Update kind -> the role of the message its chunks make.
_CHUNK_ROLES: dict[str, str] = {
    "agent_message_chunk": "agent",
    "agent_thought_chunk": "thought",
    "user_message_chunk": "user",
    "session_message_chunk": "session",
    "compaction_summary_chunk": "summary",
}
#: Whole-message updates (v2 upserts) -> role.
_WHOLE_ROLES: dict[str, str] = {
    "agent_message": "agent",
    "user_message": "user",
    "session_message": "session",
}
#: Stop reasons shown as an error too.
_FAILED_STOPS = frozenset({"error", "refusal"})
_SUMMARY_CHARS = 300


@dataclass(frozen=True, slots=True)
class Timeline:
    """One connection's items in order, with what the page's header shows: the
    protocol version negotiated, the agent's name, the number of wire lines, the
    time of the last one, and the findings no line of it carries."""

    connection: int
    items: tuple[Item, ...]
    lines: int
    duration: float
    protocol_version: int | None
    agent: str
    unplaced: tuple[ViewFinding, ...] = ()
    #: What the page calls this connection (a test's id, say); "" for "Connection N".
    label: str = ""


def _obj(value: JsonValue) -> JsonObject:
    return value if isinstance(value, dict) else {}


def _objs(value: JsonValue) -> list[JsonObject]:
    """The objects of a list (anything else in it, or a non-list, counts as none)."""
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def _str(value: JsonValue) -> str | None:
    return value if isinstance(value, str) else None


def _short(value: JsonValue, limit: int = _SUMMARY_CHARS) -> str:
    try:
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    except (ValueError, RecursionError):
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def block_text(block: JsonValue) -> str:
    """The text of a content block: its ``text``, else a placeholder naming its type
    (and its URI or name when it has one)."""
    b = _obj(block)
    kind = _str(b.get("type")) or "?"
    if kind == "text":
        return _str(b.get("text")) or ""
    if kind == "content":  # a tool call's content wraps a block
        return block_text(b.get("content"))
    resource = _obj(b.get("resource"))
    name = _str(b.get("uri")) or _str(resource.get("uri")) or _str(b.get("name")) or ""
    return f"[{kind}{': ' + name if name else ''}]"


def _blocks_text(content: JsonValue) -> str:
    if isinstance(content, list):
        return "".join(block_text(b) for b in content)
    return block_text(content)


class _Builder:
    def __init__(self, findings: Sequence[ViewFinding]) -> None:
        self.items: list[Item] = []
        self.by_line: dict[int, list[ViewFinding]] = {}
        for f in findings:
            self.by_line.setdefault(f.index, []).append(f)
        self.placed: set[int] = set()
        self.messages: dict[tuple[str | None, str, str], Message] = {}
        self.tools: dict[tuple[str | None, str], ToolCall] = {}
        self.plans: dict[tuple[str | None, str | None], Plan] = {}
        #: (direction of the request, id) -> (method, the item).
        self.pending: dict[tuple[str, str], tuple[str, Item]] = {}
        self.protocol_version: int | None = None
        self.agent = ""
        self.lines = 0
        self.last_time = 0.0
        self.line: WireLine | None = None

    # --- placing ---------------------------------------------------------------

    def attach(self, item: Item) -> Item:
        """Put the current line behind ``item`` (and its findings on it)."""
        line = self.line
        assert line is not None
        item.wire.add(line)
        if line.index in self.by_line and line.index not in self.placed:
            self.placed.add(line.index)
            item.findings.extend(self.by_line[line.index])
        return item

    def add(self, item: Item) -> Item:
        """Append a new item that begins at the current line."""
        if self.items:
            item.gap = max(0.0, item.time - self.items[-1].time)
        else:
            item.gap = item.time
        self.items.append(item)
        return self.attach(item)

    # --- lines -----------------------------------------------------------------

    def feed(self, line: WireLine) -> None:
        self.line = line
        self.last_time = max(self.last_time, line.time)
        if line.direction == "exit":
            self.add(RawItem(time=line.time, text=line.text()))
            return
        self.lines += 1
        value = line.message
        if line.raw is not None or not isinstance(value, dict | list):
            self.add(RawItem(time=line.time, text=line.text()))
            return
        for message in value if isinstance(value, list) else [value]:
            if not isinstance(message, dict):
                self.add(RawItem(time=line.time, text=_short(message)))
                continue
            self.message(line, message)

    def message(self, line: WireLine, msg: JsonObject) -> None:
        method = _str(msg.get("method"))
        params = _obj(msg.get("params"))
        session = _str(params.get("sessionId"))
        has_id = "id" in msg
        if method is not None and has_id:
            self.request(line, method, msg.get("id"), params, session)
        elif method is not None:
            if method == "session/update" and line.direction == "recv":
                self.update(line.time, session, _obj(params.get("update")))
            else:
                self.add(
                    Call(
                        time=line.time,
                        session_id=session,
                        method=method,
                        direction=line.direction,
                        notification=True,
                        summary=_short(params),
                    )
                )
        elif has_id and ("result" in msg or "error" in msg):
            self.response(line, msg)
        else:
            self.add(RawItem(time=line.time, text=_short(msg)))

    # --- requests and responses -------------------------------------------------

    def request(
        self, line: WireLine, method: str, rid: JsonValue, params: JsonObject, session: str | None
    ) -> None:
        t = line.time
        item: Item
        if method == "session/prompt" and line.direction == "send":
            item = PromptSent(
                time=t, session_id=session, request_id=rid, text=_blocks_text(params.get("prompt"))
            )
        elif method == "session/request_permission" and line.direction == "recv":
            subject = _obj(params.get("subject"))
            tool = _obj(subject.get("toolCall") or params.get("toolCall"))
            options = [
                PermissionOption(
                    _str(o.get("optionId")) or "",
                    _str(o.get("name")) or "",
                    _str(o.get("kind")) or "",
                )
                for o in _objs(params.get("options"))
            ]
            title = _str(params.get("title")) or _str(tool.get("title")) or ""
            item = Permission(
                time=t,
                session_id=session,
                request_id=rid,
                title=title,
                tool_call_id=_str(tool.get("toolCallId")),
                options=options,
            )
        elif line.direction == "recv":
            item = AgentRequest(
                time=t, session_id=session, method=method, request_id=rid, summary=_short(params)
            )
        else:
            item = Call(
                time=t,
                session_id=session,
                method=method,
                direction="send",
                request_id=rid,
                summary=_short(params),
            )
        self.add(item)
        self.pending[(line.direction, repr(rid))] = (method, item)

    def response(self, line: WireLine, msg: JsonObject) -> None:
        asker = "recv" if line.direction == "send" else "send"
        rid = msg.get("id")
        method, request = self.pending.pop((asker, repr(rid)), ("", None))
        t = line.time
        if "error" in msg:
            error = _obj(msg.get("error"))
            code = error.get("code")
            text = _str(error.get("message")) or _short(msg.get("error"))
            if request is not None:
                self.attach(request)
                _answer(request, f"error: {text}", t)
            self.add(
                ErrorItem(
                    time=t,
                    session_id=request.session_id if request else None,
                    source=f"{method or 'response'} (id {_short(rid, 40)})",
                    code=code if isinstance(code, int) and not isinstance(code, bool) else None,
                    message=text,
                )
            )
            return
        result = msg.get("result")
        if method == "session/prompt" and isinstance(request, PromptSent):
            r = _obj(result)
            stop = _str(r.get("stopReason"))
            self.add(
                PromptAnswered(
                    time=t,
                    session_id=request.session_id,
                    request_id=rid,
                    message_id=_str(r.get("messageId")),
                    stop_reason=stop,
                )
            )
            if stop in _FAILED_STOPS:
                self.add(
                    ErrorItem(time=t, session_id=request.session_id, source=f"stopReason {stop}")
                )
            return
        if method == "initialize":
            r = _obj(result)
            version = r.get("protocolVersion")
            if isinstance(version, int) and not isinstance(version, bool):
                self.protocol_version = version
            info = _obj(r.get("info") or r.get("agentInfo"))
            self.agent = _str(info.get("title")) or _str(info.get("name")) or ""
        if request is None:
            self.add(
                Call(time=t, method="(response)", direction=line.direction, summary=_short(msg))
            )
            return
        self.attach(request)
        if isinstance(request, Permission):
            outcome = _obj(_obj(result).get("outcome"))
            chosen = _str(outcome.get("optionId"))
            names = {o.option_id: o for o in request.options}
            if chosen is not None:
                o = names.get(chosen)
                answer = f"{o.name} [{o.option_kind}]" if o else chosen
            else:
                answer = _str(outcome.get("outcome")) or _short(result)
            _answer(request, answer, t)
        else:
            _answer(request, _short(result), t)

    # --- session updates --------------------------------------------------------

    def update(self, t: float, session: str | None, u: JsonObject) -> None:
        kind = _str(u.get("sessionUpdate")) or ""
        if kind in _CHUNK_ROLES:
            self.chunk(t, session, kind, u)
        elif kind in _WHOLE_ROLES:
            mid = _str(u.get("messageId"))
            item = self.new_message(t, session, kind, _WHOLE_ROLES[kind], mid)
            item.parts[:] = [_blocks_text(u.get("content"))]
            item.chunks += 1
            self.attach(item)
        elif kind in ("tool_call", "tool_call_update", "tool_call_content_chunk"):
            self.tool(t, session, kind, u)
        elif kind in ("plan", "plan_update", "plan_removed"):
            self.plan(t, session, kind, u)
        elif kind == "state_update":
            state = _str(u.get("state")) or ""
            stop = _str(u.get("stopReason"))
            background = u.get("background")
            self.add(
                StateChange(
                    time=t,
                    session_id=session,
                    state=state,
                    stop_reason=stop,
                    background=len(background) if isinstance(background, list) else 0,
                )
            )
            if stop in _FAILED_STOPS:
                error = _obj(u.get("error"))
                code = error.get("code")
                self.add(
                    ErrorItem(
                        time=t,
                        session_id=session,
                        source=f"stopReason {stop}",
                        code=code if isinstance(code, int) and not isinstance(code, bool) else None,
                        message=_str(error.get("message")) or "",
                    )
                )
        else:
            self.add(
                Update(
                    time=t,
                    session_id=session,
                    update_kind=kind or "(no sessionUpdate)",
                    summary=_update_summary(kind, u),
                    payload=u,
                )
            )

    def new_message(
        self, t: float, session: str | None, kind: str, role: str, mid: str | None
    ) -> Message:
        key = (session, role, mid or "")
        item = self.messages.get(key) if mid else None
        if item is None:
            cls = Thought if role == "thought" else Message
            item = cls(time=t, session_id=session, role=role, message_id=mid)
            self.add(item)
            if mid:
                self.messages[key] = item
        return item

    def chunk(self, t: float, session: str | None, kind: str, u: JsonObject) -> None:
        role = _CHUNK_ROLES[kind]
        mid = _str(u.get("messageId")) or _str(u.get("compactionId"))
        last = self.items[-1] if self.items else None
        if (
            mid is None
            and isinstance(last, Message)
            and last.role == role
            and last.message_id is None
            and last.session_id == session
        ):
            item: Message = last
        else:
            item = self.new_message(t, session, kind, role, mid)
        item.parts.append(block_text(u.get("content")))
        item.chunks += 1
        self.attach(item)

    def tool(self, t: float, session: str | None, kind: str, u: JsonObject) -> None:
        tid = _str(u.get("toolCallId")) or ""
        key = (session, tid)
        item = self.tools.get(key)
        if item is None or (kind == "tool_call" and item.status in ("completed", "failed")):
            item = ToolCall(time=t, session_id=session, tool_call_id=tid)
            self.tools[key] = item
            self.add(item)
        else:
            self.attach(item)
        item.updates += 1
        item.title = _str(u.get("title")) or item.title
        item.tool_kind = _str(u.get("kind")) or item.tool_kind
        if "rawInput" in u:
            item.raw_input = _short(u.get("rawInput"))
        if "rawOutput" in u:
            item.raw_output = _short(u.get("rawOutput"))
        status = _str(u.get("status"))
        if status is not None and status != item.status:
            item.changes.append(StatusChange(t, status))
        content = u.get("content")
        if kind == "tool_call_content_chunk":
            content = [content]
        elif isinstance(content, list):
            # An update's content replaces the tool call's content (not a chunk).
            item.content.clear()
        if isinstance(content, list):
            for c in _objs(content):
                if c.get("type") == "diff":
                    old = c.get("oldText")
                    item.diffs.append(
                        Diff(
                            _str(c.get("path")) or "",
                            old if isinstance(old, str) else None,
                            _str(c.get("newText")) or "",
                        )
                    )
                elif c.get("type") == "terminal":
                    item.content.append(f"[terminal {_str(c.get('terminalId')) or ''}]")
                else:
                    item.content.append(block_text(c))

    def plan(self, t: float, session: str | None, kind: str, u: JsonObject) -> None:
        body = _obj(u.get("plan")) if kind == "plan_update" else u
        pid = _str(body.get("planId")) or _str(u.get("planId"))
        key = (session, pid)
        item = self.plans.get(key)
        if item is None:
            item = Plan(time=t, session_id=session, plan_id=pid)
            self.plans[key] = item
            self.add(item)
        else:
            self.attach(item)
        if kind == "plan_removed":
            item.removed = True
            self.plans.pop(key, None)
            return
        item.revisions += 1
        item.entries = [
            PlanEntry(
                _str(e.get("content")) or "",
                _str(e.get("status")) or "",
                _str(e.get("priority")) or "",
            )
            for e in _objs(body.get("entries"))
        ]


def _answer(item: Item, answer: str, t: float) -> None:
    if isinstance(item, Permission):
        item.answer, item.answer_time = answer, t
    elif isinstance(item, AgentRequest | Call):
        item.answer = answer


def _update_summary(kind: str, u: JsonObject) -> str:
    if kind == "notice":
        parts = [_str(u.get(k)) or "" for k in ("severity", "title", "description")]
        return " — ".join(p for p in parts if p)
    if kind == "usage_update":
        cost = _obj(u.get("cost"))
        text = f"used {u.get('used')} of {u.get('size')}"
        if cost:
            text += f", cost {cost.get('amount')} {cost.get('currency')}"
        return text
    rest = {k: v for k, v in u.items() if k != "sessionUpdate"}
    return _short(rest)


def build_timeline(
    connection: Connection | Iterable[WireLine], findings: Sequence[ViewFinding] = ()
) -> Timeline:
    """Read a connection's wire lines (once) into its :class:`Timeline`; each finding
    is put on the item its line is behind (``unplaced`` when no line has its index)."""
    from acp_lite.view.wire import Connection

    number, agent, version = 0, "", None
    lines: Iterable[WireLine] = connection  # type: ignore[assignment]
    if isinstance(connection, Connection):
        number, agent, version = connection.number, connection.agent, connection.protocol_version
        lines = connection.lines
    mine = [f for f in findings if f.connection == number]
    builder = _Builder(mine)
    for line in lines:
        builder.feed(line)
    unplaced = tuple(f for f in mine if f.index not in builder.placed)
    return Timeline(
        connection=number,
        items=tuple(builder.items),
        lines=builder.lines,
        duration=builder.last_time,
        protocol_version=builder.protocol_version or version,
        agent=builder.agent or agent,
        unplaced=unplaced,
    )
