"""Builders for wire dicts, decoded with the real codec (so tests stay honest against it)."""

from __future__ import annotations

from typing import Any

from acp_lite.model import SessionModel
from acp_lite.protocol import SessionUpdate, converter

_OMIT: Any = object()


def decode(d: dict[str, Any]) -> Any:
    """Structure one ``update`` dict exactly as the connection would."""
    return converter.structure(d, SessionUpdate)  # type: ignore[arg-type]


def feed(model: SessionModel, *updates: dict[str, Any], replayed: bool = False) -> None:
    """Apply wire dicts in order, keeping each raw payload."""
    for d in updates:
        model.apply(decode(d), raw=d, replayed=replayed)


def text(t: str) -> dict[str, Any]:
    return {"type": "text", "text": t}


def chunk(mid: str, t: str, kind: str = "agent_message", **extra: Any) -> dict[str, Any]:
    return {"sessionUpdate": f"{kind}_chunk", "messageId": mid, "content": text(t), **extra}


def message(
    mid: str, texts: Any = _OMIT, kind: str = "agent_message", **extra: Any
) -> dict[str, Any]:
    d: dict[str, Any] = {"sessionUpdate": kind, "messageId": mid, **extra}
    if texts is not _OMIT:
        d["content"] = None if texts is None else [text(t) for t in texts]
    return d


def state(name: str, **fields: Any) -> dict[str, Any]:
    return {"sessionUpdate": "state_update", "state": name, **fields}


def idle(stop: Any = _OMIT, **fields: Any) -> dict[str, Any]:
    d = state("idle", **fields)
    if stop is not _OMIT:
        d["stopReason"] = stop
    return d


def tool(tid: str, **fields: Any) -> dict[str, Any]:
    return {"sessionUpdate": "tool_call_update", "toolCallId": tid, **fields}


def terminal(tid: str, **fields: Any) -> dict[str, Any]:
    return {"sessionUpdate": "terminal_update", "terminalId": tid, **fields}


def bg_terminal(tid: str) -> dict[str, Any]:
    return {"type": "terminal", "terminalId": tid}


def bg_tool(tid: str) -> dict[str, Any]:
    return {"type": "tool_call", "toolCallId": tid}


def rules(model: SessionModel) -> list[str]:
    """The rule ids of the model's violations, in order."""
    return [v.rule for v in model.violations]
