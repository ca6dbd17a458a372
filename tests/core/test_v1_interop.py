"""v1 translator bugs found by the interop tests against the official SDKs
(``tests/interop/test_sdk_v1_agents.py``), each replayed here with the exact wire
lines the SDK agent wrote, bytes only."""

from __future__ import annotations

from acp_lite.core import ClientConnection
from acp_lite.errors import ProtocolError
from tests.core.test_v1 import V2_INIT_PARAMS, chunk, prompt, result, update, v1_conn


def test_second_turn_has_no_background_violation() -> None:
    """Every synthesized state carries ``background: []``: the first idle reported an
    (empty) background list, so a later ``running`` without one broke the spec's MUST
    ("include background on every state_update") and the model flagged every turn
    after the first with ``background-omitted``."""
    conn = v1_conn()
    for text in ("one", "two", "three"):
        entry, _, _ = prompt(conn, text)
        conn.receive_data(update("s1", chunk(text)) + result(entry.id, {"stopReason": "end_turn"}))
    model = conn.sessions["s1"].model
    assert model.completions == 3
    states = [e.raw for e in model.events if e.tag == "state_update"]
    assert [s["state"] for s in states] == ["running", "idle"] * 3
    assert all(s["background"] == [] for s in states)
    assert model.violations == []


def test_a_bare_echoed_2_is_v1() -> None:
    """The Python SDK's example echo agent answers ``InitializeResponse(
    protocol_version=protocol_version)``, which the SDK writes as exactly this line
    when asked for 2: no ``info`` (required in v2), nothing but the version. Only
    v1 can read it (v1 requires nothing else), so it is v1, as a bare 1 is."""
    conn = ClientConnection()
    entry = conn.initialize(V2_INIT_PARAMS)
    conn.data_to_send()
    conn.receive_data(b'{"jsonrpc":"2.0","id":%d,"result":{"protocolVersion":2}}\n' % entry.id)
    assert entry.error is None and conn.protocol_version == 1
    assert entry.result.info.name == "unknown"  # v1 agentInfo is optional


def test_a_2_with_v2_capabilities_but_no_info_stays_an_error() -> None:
    """A v2-shaped answer that lacks ``info`` is a broken v2 agent, not a v1 one."""
    conn = ClientConnection()
    entry = conn.initialize(V2_INIT_PARAMS)
    conn.data_to_send()
    conn.receive_data(result(entry.id, {"protocolVersion": 2, "capabilities": {}}))
    assert isinstance(entry.error, ProtocolError) and "info" in str(entry.error)
    assert conn.protocol_version == 2
