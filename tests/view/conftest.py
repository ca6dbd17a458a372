"""Transcripts for the viewer's tests: the reference agent's, run in this process
(once per scenario and protocol), and NDJSON written line by line."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from acp_lite import connect_in_memory, permissions
from acp_lite.limits import Limits
from acp_lite.testing import InProcessAgent

FAST = Limits(default_timeout=5.0)

#: A session/update line's NDJSON record, from its update.
Update = Callable[..., dict[str, Any]]


def run_scenario(
    scenario: str, protocol: int = 2, *, text: str = "hello", policy: Any = None
) -> list[dict[str, Any]]:
    """The transcript records of one turn of the reference agent's ``scenario``."""
    agent = InProcessAgent(scenario, protocol=protocol)
    on_permission = policy or permissions.allow_once
    with connect_in_memory(agent, limits=FAST, on_permission=on_permission) as client:
        session = client.new_session(cwd="/tmp")
        session.run(text)
        entries = client.transcript.entries()
        return [e.to_record(entries[0].time) for e in entries]


_CACHE: dict[tuple[str, int, str], list[dict[str, Any]]] = {}


@pytest.fixture
def scenario_records() -> Callable[..., list[dict[str, Any]]]:
    """``(scenario, protocol=2, text="hello")`` -> the records (cached per process)."""

    def get(scenario: str, protocol: int = 2, text: str = "hello") -> list[dict[str, Any]]:
        key = (scenario, protocol, text)
        if key not in _CACHE:
            _CACHE[key] = run_scenario(scenario, protocol, text=text)
        return _CACHE[key]

    return get


def write_ndjson(path: Path, records: Sequence[dict[str, Any]]) -> Path:
    """Write ``records`` as a transcript file."""
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def update(t: float, payload: dict[str, Any], session: str = "s-1") -> dict[str, Any]:
    """A ``session/update`` notification's record."""
    params = {"sessionId": session, "update": payload}
    return {
        "dir": "recv",
        "t": t,
        "msg": {"jsonrpc": "2.0", "method": "session/update", "params": params},
    }


def request(t: float, direction: str, rid: Any, method: str, params: Any) -> dict[str, Any]:
    """A request's record."""
    msg = {"jsonrpc": "2.0", "id": rid, "method": method, "params": params}
    return {"dir": direction, "t": t, "msg": msg}


def response(
    t: float, direction: str, rid: Any, result: Any = None, error: Any = None
) -> dict[str, Any]:
    """A response's record (``error`` when given, else ``result``)."""
    msg: dict[str, Any] = {"jsonrpc": "2.0", "id": rid}
    if error is not None:
        msg["error"] = error
    else:
        msg["result"] = result
    return {"dir": direction, "t": t, "msg": msg}


def flood_file(path: Path, chunks: int) -> Path:
    """A v2 turn streaming ``chunks`` agent_message_chunk updates of one message,
    written directly (fast): what the reference agent's ``flood`` scenario sends."""
    head = [
        request(0.0, "send", 1, "initialize", {"protocolVersion": 2}),
        response(0.001, "recv", 1, {"protocolVersion": 2, "info": {"name": "flood-agent"}}),
        request(0.002, "send", 2, "session/new", {"cwd": "/tmp", "mcpServers": []}),
        response(0.003, "recv", 2, {"sessionId": "s-1"}),
        request(
            0.004,
            "send",
            3,
            "session/prompt",
            {"sessionId": "s-1", "prompt": [{"type": "text", "text": "go"}]},
        ),
        update(0.005, {"sessionUpdate": "state_update", "state": "running", "background": []}),
        response(0.005, "recv", 3, {"messageId": "user-1"}),
    ]
    chunk = (
        '{{"dir": "recv", "t": {t:.6f}, "msg": {{"jsonrpc": "2.0", "method": "session/update", '
        '"params": {{"sessionId": "s-1", "update": {{"sessionUpdate": "agent_message_chunk", '
        '"messageId": "agent-1", "content": {{"type": "text", "text": "word{i} "}}}}}}}}}}\n'
    )
    idle = update(
        9.0,
        {
            "sessionUpdate": "state_update",
            "state": "idle",
            "background": [],
            "stopReason": "end_turn",
        },
    )
    with open(path, "w", encoding="utf-8") as f:
        f.writelines(json.dumps(r) + "\n" for r in head)
        f.writelines(chunk.format(t=0.01 + i * 1e-5, i=i) for i in range(chunks))
        f.write(json.dumps(idle) + "\n")
    return path


FLOOD_CHUNKS = 200_000


@pytest.fixture(scope="session")
def flood_page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The page of a 200k-chunk transcript (rendered once per test process)."""
    from acp_lite.view import write_html

    root = tmp_path_factory.mktemp("flood")
    source = flood_file(root / "flood.ndjson", FLOOD_CHUNKS)
    return write_html(source, root / "flood.html")
