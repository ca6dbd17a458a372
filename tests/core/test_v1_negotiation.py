"""The v1 translator (sans-IO core, bytes only): protocol version negotiation at
initialize (auto, explicit 1 or 2) and the v1 agent's capabilities seen as v2."""

from __future__ import annotations

import json

import pytest

from acp_lite.core import ClientConnection
from acp_lite.errors import UnsupportedProtocolVersion
from acp_lite.protocol import InitializeResponse
from tests.core.v1_wire import V1_INIT, V2_INIT_PARAMS, result, sent


def test_auto_switches_to_v1_when_the_agent_answers_1() -> None:
    conn = ClientConnection()
    assert conn.protocol_version == 2
    entry = conn.initialize(V2_INIT_PARAMS)
    (req,) = [json.loads(x) for x in conn.data_to_send().splitlines()]
    assert req["params"] == V2_INIT_PARAMS  # auto offers v2 as given
    conn.receive_data(result(entry.id, V1_INIT))
    assert entry.error is None and conn.protocol_version == 1
    resp = entry.result
    assert isinstance(resp, InitializeResponse) and conn.initialize_response is resp
    assert conn.initialize_result == V1_INIT  # the raw v1 result
    assert resp.protocol_version == 1
    assert resp.info.name == "v1-agent"
    session = resp.capabilities.session
    assert session.prompt.image is not None and session.prompt.embedded_context is not None
    assert not session.prompt.audio  # false in v1: omitted in v2
    assert session.mcp.http is not None and session.mcp.stdio is not None
    assert session.extra["resume"] == {}  # loadSession
    assert resp.capabilities.extra["loadSession"] is True
    (method,) = resp.auth_methods
    assert method.method_id == "key" and method.type == "agent"


def test_auto_switches_to_v1_on_a_v1_shaped_answer_to_2() -> None:
    # Some agents echo protocolVersion 2 and answer with v1 field names.
    conn = ClientConnection()
    entry = conn.initialize(V2_INIT_PARAMS)
    conn.receive_data(result(entry.id, {**V1_INIT, "protocolVersion": 2}))
    assert entry.error is None and conn.protocol_version == 1
    assert entry.result.info.name == "v1-agent"


def test_a_1_in_the_v2_shape_is_refused() -> None:
    conn = ClientConnection()
    entry = conn.initialize(V2_INIT_PARAMS)
    odd = {"protocolVersion": 1, "info": {"name": "odd", "version": "1"}, "capabilities": {}}
    conn.receive_data(result(entry.id, odd))
    assert isinstance(entry.error, UnsupportedProtocolVersion) and entry.error.version == 1
    assert conn.protocol_version == 2


def test_a_bare_1_is_v1() -> None:
    conn = ClientConnection()
    entry = conn.initialize(V2_INIT_PARAMS)
    conn.receive_data(result(entry.id, {"protocolVersion": 1}))
    assert entry.error is None and conn.protocol_version == 1
    assert entry.result.info.name == "unknown"  # v1 agentInfo is optional


def test_auto_stays_v2_on_a_v2_answer() -> None:
    conn = ClientConnection()
    entry = conn.initialize(V2_INIT_PARAMS)
    v2 = {"protocolVersion": 2, "info": {"name": "v2", "version": "1"}, "capabilities": {}}
    conn.receive_data(result(entry.id, v2))
    assert entry.error is None and conn.protocol_version == 2


def test_explicit_1_sends_v1_initialize_params() -> None:
    conn = ClientConnection(protocol_version=1)
    assert conn.protocol_version == 1
    entry = conn.initialize(V2_INIT_PARAMS)
    (req,) = sent(conn)
    assert req["params"] == {
        "protocolVersion": 1,
        "clientInfo": {"name": "client", "version": "1"},
        "clientCapabilities": {
            "fs": {"readTextFile": False, "writeTextFile": False},
            "terminal": False,
            "auth": {"terminal": True},
        },
    }
    conn.receive_data(result(entry.id, V1_INIT))
    assert entry.error is None and isinstance(entry.result, InitializeResponse)


def test_explicit_1_refuses_a_v2_answer() -> None:
    conn = ClientConnection(protocol_version=1)
    entry = conn.initialize(V2_INIT_PARAMS)
    v2 = {"protocolVersion": 2, "info": {"name": "v2", "version": "1"}, "capabilities": {}}
    conn.receive_data(result(entry.id, v2))
    assert isinstance(entry.error, UnsupportedProtocolVersion)


def test_explicit_2_refuses_a_v1_answer() -> None:
    conn = ClientConnection(protocol_version=2)
    entry = conn.initialize(V2_INIT_PARAMS)
    conn.receive_data(result(entry.id, V1_INIT))
    assert isinstance(entry.error, UnsupportedProtocolVersion) and entry.error.version == 1
    assert conn.protocol_version == 2


def test_bad_protocol_version_argument() -> None:
    with pytest.raises(ValueError, match="protocol_version"):
        ClientConnection(protocol_version=3)
