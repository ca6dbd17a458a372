"""normalize() reads a session's event log by runs (``EventLog.runs``: text chunk
runs kept compactly, updates kept as their lines) without an object per update;
the result must be exactly that of normalising the same payloads one by one."""

from __future__ import annotations

import copy
import json
import random
from typing import Any

import attrs
import pytest

import acp_lite
from acp_lite.model.events import LineRun, TextRun
from acp_lite.testing import InProcessAgent
from pytest_acp.normalize import normalize

TMP = "/tmp/acp-runs-test"


def _note(mid: str, text: str, tag: str = "agent_message_chunk") -> dict[str, Any]:
    return {"sessionUpdate": tag, "messageId": mid, "content": {"type": "text", "text": text}}


def _line(update: dict[str, Any]) -> str:
    params = {"sessionId": "{{session_id}}", "update": update}
    return json.dumps({"jsonrpc": "2.0", "method": "session/update", "params": params})


def _random_updates(rng: random.Random, n: int) -> list[dict[str, Any]]:
    """Runs of chunks of a few streams (some long enough to be kept compactly), with
    tool calls, usage, a path under TMP, escapes, a huge integer and deep nesting."""
    out: list[dict[str, Any]] = []
    while len(out) < n:
        kind = rng.random()
        if kind < 0.6:
            mid = rng.choice(["m1", "m2", "t1"])
            tag = "agent_thought_chunk" if mid == "t1" else "agent_message_chunk"
            for i in range(rng.choice([1, 2, 5, 12, 30])):
                text = rng.choice(["word ", f"{i} ", 'q"uote ', "é\n", f"{TMP}/f.py ", ""])
                out.append(_note(mid, text, tag))
        elif kind < 0.75:
            out.append(
                {
                    "sessionUpdate": "tool_call_update",
                    "toolCallId": f"call_{rng.randrange(3)}",
                    "status": "completed",
                    "updatedAt": "2026-01-01T00:00:00Z",
                    "locations": [{"path": f"{TMP}/x.py", "line": rng.randrange(9)}],
                }
            )
        elif kind < 0.85:
            out.append({"sessionUpdate": "usage_update", "used": 10**20, "size": 200000})
        elif kind < 0.9:
            deep: Any = "bottom"
            for _ in range(70):
                deep = [deep]
            out.append({**_note("m1", "deep"), "_meta": {"deep": deep}})
        else:
            out.append({**_note("m2", "meta"), "_meta": {"k": rng.randrange(3)}})
    return out


def _script(rng: random.Random) -> dict[str, Any]:
    steps: list[dict[str, Any]] = []
    for part in range(3):
        lines = "\n".join(_line(u) for u in _random_updates(rng, 80))
        steps.append({"type": "raw", "text": lines})
        if part == 1:
            steps.append({"type": "permission", "title": "go on?"})
    return {"name": "runs", "turns": [{"steps": steps}]}


class _Moved:
    """A turn's updates with its request records moved inside runs (a record
    arriving mid-run cuts the run there)."""

    def __init__(self, turn: Any, runs: list[Any]) -> None:
        self.turn = turn
        long = [r for r in runs if not hasattr(r, "update") and len(r) >= 3]
        self.requests = [
            attrs.evolve(record, event_index=run.index + 1 + i % (len(run) - 1))
            for i, (record, run) in enumerate(zip(turn.updates.requests * 3, long, strict=False))
        ]

    def runs(self) -> Any:
        return self.turn.updates.runs()

    def __iter__(self) -> Any:
        return iter(self.turn.updates)


def _one_by_one(turn: Any, requests: Any = None) -> list[Any]:
    """The turn's payloads (copies) and request records in stream order, as plain
    dicts: what normalize reads without runs."""
    events = list(turn.updates)
    requests = turn.updates.requests if requests is None else requests
    records = sorted(requests, key=lambda r: r.event_index)
    out: list[Any] = []
    for event in events:
        while records and records[0].event_index <= event.index:
            out.append(records.pop(0))
        if event.source == "session/update":
            out.append(copy.deepcopy(event.raw))
    return out + records


@pytest.mark.parametrize("seed", range(4))
def test_runs_give_what_one_by_one_gives(seed: int) -> None:
    agent = InProcessAgent(script=_script(random.Random(seed)))
    with acp_lite.connect_in_memory(
        agent, on_permission=lambda request, session: "allow"
    ) as client:
        session = client.new_session(cwd="/tmp")
        turn = session.run("go")
        _check(turn)


def _check(turn: Any) -> None:
    runs = list(turn.updates.runs())
    assert any(isinstance(r, TextRun) for r in runs) and any(isinstance(r, LineRun) for r in runs)
    assert turn.updates.requests, "the turn has a permission request mid-stream"
    options: list[dict[str, Any]] = [
        {},
        {"view": "raw"},
        {"view": "final"},
        {"text": False},
        {"tmp_path": TMP},
        {"normalizers": [lambda u: None]},
    ]
    moved = _Moved(turn, runs)
    assert len(moved.requests) >= 3
    fast = [normalize(turn.updates, **o) for o in options]
    fast_moved = normalize(moved)
    # Reading by runs caches nothing: the log still keeps lines, not dicts.
    assert [type(r) for r in turn.updates.runs()] == [type(r) for r in runs]
    assert fast_moved == normalize(_one_by_one(turn, moved.requests))
    slow = [normalize(_one_by_one(turn), **o) for o in options]
    for o, a, b in zip(options, fast, slow, strict=True):
        assert a == b, o
    assert any("<tmp>" in json.dumps(u) for u in fast[4])
    assert any("nested deeper" in json.dumps(u) for u in fast[0])
