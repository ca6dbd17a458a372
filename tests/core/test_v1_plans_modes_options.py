"""The v1 translator (sans-IO core, bytes only): plans, modes as a synthesized
config option (set_mode), config options and the other v1 session updates."""

from __future__ import annotations

from acp_lite.core import ClientConnection
from acp_lite.protocol import NewSessionResponse, SetSessionConfigOptionResponse
from tests.core.v1_wire import (
    MODES,
    V1_INIT,
    V2_INIT_PARAMS,
    result,
    sent,
    sources,
    update,
    v1_conn,
)


def test_plan_becomes_one_plan_entity() -> None:
    conn = v1_conn()
    entries = [{"content": "step 1", "priority": "high", "status": "pending"}]
    conn.receive_data(update("s1", {"sessionUpdate": "plan", "entries": entries}))
    done = [{**entries[0], "status": "completed"}]
    conn.receive_data(update("s1", {"sessionUpdate": "plan", "entries": done}))
    model = conn.sessions["s1"].model
    (plan,) = model.plans
    assert plan.id == "v1-plan" and [e.status for e in plan.entries] == ["completed"]
    assert sources(conn) == [("plan_update", "v1:session/update")] * 2


def test_modes_become_a_mode_option_and_set_mode() -> None:
    real = {
        "id": "model",
        "name": "Model",
        "type": "select",
        "currentValue": "m1",
        "options": [{"value": "m1", "name": "M1"}, {"value": "m2", "name": "M2"}],
    }
    conn = v1_conn(modes=MODES, configOptions=[real])
    model = conn.sessions["s1"].model
    by_id = {o.config_id: o for o in model.config_options}
    mode = by_id["mode"]
    assert mode.type == "select" and mode.current_value == "ask"
    assert [o.value for o in mode.options] == ["ask", "code"]
    assert mode.meta["acp_lite/v1"]["synthesized"] is True
    assert by_id["model"].current_value == "m1"
    # Setting the mode option sends session/set_mode and applies its answer.
    entry = conn.send_request(
        "session/set_config_option",
        {"sessionId": "s1", "configId": "mode", "type": "id", "value": "code"},
        session_id="s1",
    )
    (req,) = sent(conn)
    assert req["method"] == "session/set_mode"
    assert req["params"] == {"sessionId": "s1", "modeId": "code"}
    conn.receive_data(result(entry.id, {}))
    assert isinstance(entry.result, SetSessionConfigOptionResponse)
    by_id = {o.config_id: o for o in model.config_options}
    assert by_id["mode"].current_value == "code" and "model" in by_id
    # The agent switches modes on its own.
    conn.receive_data(
        update("s1", {"sessionUpdate": "current_mode_update", "currentModeId": "ask"})
    )
    assert {o.config_id: o for o in model.config_options}["mode"].current_value == "ask"
    assert model.events[-1].tag == "config_option_update"
    assert model.events[-1].raw["sessionUpdate"] == "current_mode_update"
    # Another option: v1 session/set_config_option (a value id has no "type" in v1).
    entry = conn.send_request(
        "session/set_config_option",
        {"sessionId": "s1", "configId": "model", "type": "id", "value": "m2"},
        session_id="s1",
    )
    (req,) = sent(conn)
    assert req["method"] == "session/set_config_option"
    assert req["params"] == {"sessionId": "s1", "configId": "model", "value": "m2"}
    conn.receive_data(result(entry.id, {"configOptions": [{**real, "currentValue": "m2"}]}))
    by_id = {o.config_id: o for o in model.config_options}
    assert by_id["model"].current_value == "m2" and by_id["mode"].current_value == "ask"


def test_session_new_result_is_a_v2_response_with_extras() -> None:
    conn = ClientConnection()
    init = conn.initialize(V2_INIT_PARAMS)
    conn.receive_data(result(init.id, V1_INIT))
    conn.data_to_send()
    entry = conn.send_request("session/new", {"cwd": "/w"})
    (req,) = sent(conn)
    assert req["params"] == {"cwd": "/w", "mcpServers": []}
    models = {"currentModelId": "a", "availableModels": []}
    conn.receive_data(result(entry.id, {"sessionId": "s9", "modes": MODES, "models": models}))
    assert isinstance(entry.result, NewSessionResponse)
    assert entry.result.extra["models"] == models and entry.result.extra["modes"] == MODES
    assert [o.config_id for o in entry.result.config_options] == ["mode"]


def test_config_option_update_and_other_updates() -> None:
    conn = v1_conn(modes=MODES)
    opt = {
        "id": "effort",
        "name": "Effort",
        "type": "boolean",
        "currentValue": True,
    }
    conn.receive_data(
        update("s1", {"sessionUpdate": "config_option_update", "configOptions": [opt]})
    )
    model = conn.sessions["s1"].model
    assert [o.config_id for o in model.config_options] == ["effort", "mode"]
    cmds = [{"name": "web", "description": "Search the web", "input": None}]
    conn.receive_data(
        update("s1", {"sessionUpdate": "available_commands_update", "availableCommands": cmds})
    )
    (cmd,) = model.available_commands
    assert cmd.name == "web" and cmd.type == "command"
    conn.receive_data(update("s1", {"sessionUpdate": "session_info_update", "title": "T"}))
    conn.receive_data(update("s1", {"sessionUpdate": "usage_update", "used": 5, "size": 100}))
    conn.receive_data(update("s1", {"sessionUpdate": "future_thing", "x": 1}))
    # A v2-only tag from a v1 agent does not drive the v2 model.
    conn.receive_data(update("s1", {"sessionUpdate": "state_update", "state": "running"}))
    assert model.state == "idle"
    assert type(model.events[-1].update).__name__ == "UnrecognizedSessionUpdate"
    assert model.title == "T" and model.usage is not None and model.usage.used == 5
    last = model.events[-2]
    assert type(last.update).__name__ == "UnrecognizedSessionUpdate"
    assert last.raw == {"sessionUpdate": "future_thing", "x": 1}
    assert model.violations == []
