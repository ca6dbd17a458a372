"""Real-shaped v2 and v1 agent output, and seeded mutations of it (hostile-input fuzz)."""

from __future__ import annotations

import json
import random
from typing import Any

SID = "{{session_id}}"

# What agents really send: v2 (the reference agent's shapes) and v1 (no messageId,
# tool_call / plan / current_mode_update), as JSON values.
_UPDATES: list[dict[str, Any]] = [
    {"sessionUpdate": "state_update", "state": "running", "background": []},
    {
        "sessionUpdate": "agent_message_chunk",
        "messageId": "m1",
        "content": {"type": "text", "text": "hello"},
    },
    {
        "sessionUpdate": "agent_thought_chunk",
        "messageId": "t1",
        "content": {"type": "text", "text": "hmm"},
    },
    {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "c1",
        "title": "Write notes",
        "kind": "edit",
        "status": "in_progress",
        "content": [{"type": "content", "content": {"type": "text", "text": "x"}}],
    },
    {
        "sessionUpdate": "plan_update",
        "plan": {"planId": "p1", "entries": [{"content": "a", "status": "pending"}]},
    },
    {"sessionUpdate": "usage_update", "used": 10, "size": 100},
    {"sessionUpdate": "notice", "severity": "info", "message": "note"},
    {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "v1"}},
    {"sessionUpdate": "tool_call", "toolCallId": "c2", "title": "Read", "status": "pending"},
    {"sessionUpdate": "plan", "entries": [{"content": "b", "priority": "high", "status": "done"}]},
    {"sessionUpdate": "current_mode_update", "currentModeId": "fast"},
    {"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn", "background": []},
]

_ODD: list[Any] = [
    None,
    [],
    {},
    "\ud800",
    "\x1b]0;title\x07\x1b[2J",
    10**30,
    -1,
    True,
    1.5,
    "x" * 500,
    ["[" * 300 + "]" * 300],
    json.loads("[" * 600 + "]" * 600),  # decodes, but deeper than recursive code goes
    {"_meta": {"a": [1, {"b": None}]}},
]


def _mutate_value(value: Any, rng: random.Random, depth: int = 0) -> Any:
    if isinstance(value, dict) and value and depth < 4:
        out = dict(value)
        key = rng.choice(list(out))
        roll = rng.random()
        if roll < 0.2:
            del out[key]
        elif roll < 0.7:
            out[key] = _mutate_value(out[key], rng, depth + 1)
        else:
            out[key] = rng.choice(_ODD)
        return out
    if isinstance(value, list) and value and depth < 4:
        out_list = list(value)
        i = rng.randrange(len(out_list))
        out_list[i] = _mutate_value(out_list[i], rng, depth + 1)
        return out_list
    return rng.choice(_ODD)


def _envelope(update: Any) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {"sessionId": SID, "update": update},
    }


def mutated_lines(seed: int, count: int) -> list[str]:
    """``count`` wire lines: real shapes, most of them mutated, some broken as text."""
    rng = random.Random(seed)
    lines: list[str] = []
    for _ in range(count):
        update = rng.choice(_UPDATES)
        roll = rng.random()
        if roll < 0.15:
            line = json.dumps(_envelope(update))  # intact
        elif roll < 0.75:
            line = json.dumps(_envelope(_mutate_value(update, rng)))
        elif roll < 0.85:
            line = json.dumps(_mutate_value(_envelope(update), rng))  # the envelope itself
        elif roll < 0.9:
            line = json.dumps(_envelope(update))[: rng.randrange(1, 40)]  # cut short
        elif roll < 0.95:
            nest = rng.randrange(100, 3000)
            line = json.dumps(_envelope("@")).replace('"@"', "[" * nest + "]" * nest)
        else:
            line = rng.choice(['{"a": NaN}', "Infinity", "plain log line", "\x1b[31mred", "{}"])
        lines.append(line.replace("\n", " "))
    return lines
