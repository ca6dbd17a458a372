"""``acp_lite.protocol.capabilities``: the gate of every client -> agent method."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from acp_lite.protocol import METHODS, UNSET, AgentCapabilities, converter
from acp_lite.protocol import capabilities as caps
from acp_lite.protocol._generated import (
    SubagentSessionCapabilities,
    TerminalCapabilities,
    ToolCallCapabilities,
)

SCHEMA = Path(__file__).resolve().parents[1] / "data" / "schema" / "v2" / "schema.unstable.json"

#: The expected table, written out by hand from the schema descriptions.
EXPECTED: dict[str, tuple[str, ...] | None] = {
    "initialize": None,
    "auth/login": ("authMethods",),
    "auth/logout": ("authMethods",),
    "auth/status": ("capabilities", "auth", "status"),
    "session/new": ("capabilities", "session"),
    "session/list": ("capabilities", "session"),
    "session/resume": ("capabilities", "session"),
    "session/close": ("capabilities", "session"),
    "session/prompt": ("capabilities", "session"),
    "session/cancel": ("capabilities", "session"),
    "session/set_config_option": ("capabilities", "session"),
    "session/delete": ("capabilities", "session", "delete"),
    "session/fork": ("capabilities", "session", "fork"),
    "session/archive": ("capabilities", "session", "archive"),
    "session/unarchive": ("capabilities", "session", "archive"),
    "session/set_title": ("capabilities", "session", "title"),
    "session/status": ("capabilities", "session", "status"),
    "tool_call/cancel": None,
    "terminal/cancel": None,
    "providers/list": ("capabilities", "providers"),
    "providers/set": ("capabilities", "providers"),
    "providers/disable": ("capabilities", "providers"),
    "mcp/message": ("capabilities", "session", "mcp", "acp"),
}


def _agent_caps(wire: dict[str, Any]) -> AgentCapabilities:
    return converter.structure(wire, AgentCapabilities)


def _nested(path: tuple[str, ...]) -> dict[str, Any]:
    """The smallest wire capabilities object that advertises ``path``."""
    out: dict[str, Any] = {}
    node = out
    for name in path[1:]:
        node[name] = {}
        node = node[name]
    return out


def _schema_client_methods() -> set[str]:
    """Methods of every definition the schema marks as sent by the client to the agent."""
    defs = json.loads(SCHEMA.read_text())["$defs"]
    return {
        d["x-method"]
        for name, d in defs.items()
        if d.get("x-side") == "agent"
        and "x-method" in d
        and (name.endswith("Request") or name.endswith("Notification"))
    }


@pytest.mark.parametrize("method", sorted(EXPECTED))
def test_required_capability(method: str) -> None:
    assert caps.required_capability(method) == EXPECTED[method]


@pytest.mark.parametrize("method", sorted(EXPECTED))
def test_supports_with_and_without_the_capability(method: str) -> None:
    path = EXPECTED[method]
    if path is None:
        assert caps.supports(UNSET, method)
        assert caps.supports(None, method)
        assert caps.supports(_agent_caps({}), method)
        return
    if path == caps.AUTH_METHODS:
        everything = _agent_caps({"session": {}, "auth": {"status": {}}, "providers": {}})
        assert not caps.supports(everything, method)
        assert not caps.supports(everything, method, auth_methods=[])
        method_entry = {"id": "agent", "name": "Agent login"}
        assert caps.supports(UNSET, method, auth_methods=[method_entry])
        return
    assert not caps.supports(UNSET, method)
    assert not caps.supports(None, method)
    assert not caps.supports(_agent_caps({}), method)
    wire = _nested(path)
    assert caps.supports(_agent_caps(wire), method)
    assert caps.supports(wire, method)  # the wire dict works too
    # Omitted and null are equivalent: unsupported.
    nulled = _nested(path)
    node = nulled
    for name in path[1:-1]:
        node = node[name]
    node[path[-1]] = None
    assert not caps.supports(_agent_caps(nulled), method)
    assert not caps.supports(nulled, method)
    if len(path) > 2:
        assert not caps.supports(_agent_caps(_nested(path[:-1])), method)


def test_malformed_capability_is_unsupported() -> None:
    # x-deserialize-default-on-error: a non-object reads as UNSET, so unsupported.
    typed = _agent_caps({"session": {"fork": True, "delete": "yes"}})
    assert caps.supports(typed, "session/new")
    assert not caps.supports(typed, "session/fork")
    assert not caps.supports(typed, "session/delete")
    assert not caps.supports({"session": {"fork": True}}, "session/fork")


def test_baseline_is_session_object_even_empty() -> None:
    typed = _agent_caps({"session": {}})
    baseline = [m for m, p in EXPECTED.items() if p == ("capabilities", "session")]
    assert {"session/new", "session/prompt", "session/cancel", "session/close"} <= set(baseline)
    assert all(caps.supports(typed, m) for m in baseline)
    assert not caps.supports(typed, "session/delete")


def test_unknown_and_extension_methods_have_no_gate() -> None:
    assert caps.required_capability("_acme/thing") is None
    assert caps.supports(UNSET, "_acme/thing")


def test_table_covers_every_client_to_agent_method_of_methods() -> None:
    to_agent = {m for m, spec in METHODS.items() if spec.direction in ("to_agent", "both")}
    missing = to_agent - set(caps.METHOD_CAPABILITIES)
    assert not missing, f"add these client -> agent methods to METHOD_CAPABILITIES: {missing}"


def test_table_covers_every_client_to_agent_method_of_the_schema() -> None:
    # METHODS lists mcp/message once (as to_client); the schema's x-side tells both.
    missing = _schema_client_methods() - set(caps.METHOD_CAPABILITIES)
    assert not missing, f"add these client -> agent methods to METHOD_CAPABILITIES: {missing}"


def test_table_is_exactly_the_expected_one() -> None:
    table = dict(caps.METHOD_CAPABILITIES)
    table.pop("$/cancel_request")  # protocol level, both directions: never gated
    assert table == EXPECTED


def test_capability_name() -> None:
    assert caps.capability_name(("capabilities", "session", "fork")) == (
        "capabilities.session.fork"
    )


ENTITY = {
    "tool_call/cancel": ("tool_call", ToolCallCapabilities),
    "terminal/cancel": ("terminal", TerminalCapabilities),
    "session/cancel": ("subagent", SubagentSessionCapabilities),
}


@pytest.mark.parametrize("method", sorted(ENTITY))
def test_entity_gates(method: str) -> None:
    kind, cls = ENTITY[method]
    assert caps.entity_capability(method) == (kind, ("capabilities", "cancel"))
    assert caps.entity_supports(converter.structure({"cancel": {}}, cls), method)
    assert caps.entity_supports({"cancel": {}}, method)
    assert not caps.entity_supports(converter.structure({}, cls), method)
    assert not caps.entity_supports(converter.structure({"cancel": None}, cls), method)
    assert not caps.entity_supports(converter.structure({"cancel": 1}, cls), method)
    assert not caps.entity_supports(UNSET, method)
    assert not caps.entity_supports(None, method)


def test_methods_without_entity_gate() -> None:
    assert caps.entity_capability("session/fork") is None
    assert caps.entity_supports(None, "session/fork")


PARAMS = {
    ("session/new", "additionalDirectories"): ("session", "additionalDirectories"),
    ("session/resume", "additionalDirectories"): ("session", "additionalDirectories"),
    ("session/fork", "additionalDirectories"): ("session", "additionalDirectories"),
    ("session/new", "systemPrompt"): ("session", "systemPrompt"),
    ("session/resume", "systemPrompt"): ("session", "systemPrompt"),
    ("session/fork", "systemPrompt"): ("session", "systemPrompt"),
    ("session/list", "archived"): ("session", "archive"),
}


@pytest.mark.parametrize(("method", "param"), sorted(PARAMS))
def test_param_gates(method: str, param: str) -> None:
    path = ("capabilities", *PARAMS[(method, param)])
    assert caps.param_capability(method, param) == path
    assert caps.supports_param(_agent_caps(_nested(path)), method, param)
    assert not caps.supports_param(_agent_caps({"session": {}}), method, param)
    assert not caps.supports_param(UNSET, method, param)


def test_params_without_gate() -> None:
    assert caps.param_capability("session/new", "cwd") is None
    assert caps.supports_param(UNSET, "session/new", "cwd")
