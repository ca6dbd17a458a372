"""Unknown enum values (states, stop reasons, statuses, kinds, severities ...) are kept in
their typed field and re-emitted unchanged (nothing is lost).

Every property of every schema definition that refers to a string or integer enum
definition (``ToolKind``, ``ToolCallStatus``, ``PlanEntryStatus``, ``NoticeSeverity``,
``ErrorCode`` ...) is tried with a value the schema does not know, in the full example of
its definition; stop reasons and states (plain strings in the schema) are tried as
session updates.
"""

from __future__ import annotations

from typing import Any

import attrs
import pytest
from protocol_examples import def_example, schema, unrecognized_parts

from acp_lite.protocol import (
    DEFINITIONS,
    IdleStateUpdate,
    UnrecognizedStateUpdate,
    converter,
    decode_line,
    encode_message,
    structure_update,
    unstructure,
)


def _enum_definitions() -> dict[str, Any]:
    """Enum definition name -> an unknown value of its type."""
    out: dict[str, Any] = {}
    for name, d in schema()["$defs"].items():
        alts = d.get("anyOf") or d.get("oneOf")
        if not alts or "properties" in d:
            continue
        known = [a for a in alts if str(a.get("title")).lower() not in ("other", "unknown")]
        if known and all("const" in a for a in known) and len(known) < len(alts):
            out[name] = 987654 if isinstance(known[0]["const"], int) else "zz_future_value"
    return out


ENUMS = _enum_definitions()


def _enum_ref(p: dict[str, Any]) -> tuple[str, bool] | None:
    """(enum name, is_array) when property schema ``p`` refers to an enum definition."""
    if p.get("type") == "array" or (isinstance(p.get("type"), list) and "array" in p["type"]):
        inner = _enum_ref(p.get("items", {}))
        return None if inner is None or inner[1] else (inner[0], True)
    refs = [p, *p.get("allOf", []), *p.get("anyOf", [])]
    for r in refs:
        name = str(r.get("$ref", "")).rsplit("/", 1)[-1]
        if name in ENUMS:
            return name, False
    return None


CASES = [
    (definition, prop, enum, is_array)
    for definition in sorted(DEFINITIONS)
    for prop, p in schema()["$defs"][definition].get("properties", {}).items()
    if (found := _enum_ref(p)) is not None
    for enum, is_array in [found]
]


def test_enum_cases_were_found() -> None:
    found = {(d, p) for d, p, _, _ in CASES}
    assert {("ToolCallUpdate", "kind"), ("ToolCallUpdate", "status")} <= found
    assert {("PlanEntry", "status"), ("PlanEntry", "priority"), ("Notice", "severity")} <= found
    assert len(CASES) >= 15


@pytest.mark.parametrize(
    ("definition", "prop", "enum", "is_array"),
    CASES,
    ids=[f"{d}.{p}" for d, p, _, _ in CASES],
)
def test_unknown_enum_value_is_kept_in_its_field(
    definition: str, prop: str, enum: str, is_array: bool
) -> None:
    example = def_example(definition, "full")
    assert isinstance(example, dict) and prop in example
    value = ENUMS[enum]
    example[prop] = [value] if is_array else value
    obj = converter.structure(example, DEFINITIONS[definition])
    back = converter.unstructure(obj)
    assert {k: v for k, v in back.items() if k in example} == example
    # Kept typed: not moved to `extra` (default-on-error) and no Unrecognized* wrapper.
    assert unrecognized_parts(obj) == []
    fields = {f.name: getattr(obj, f.name) for f in attrs.fields(type(obj))}
    assert example[prop] in fields.values()


@pytest.mark.parametrize("reason", ["finished", "_vendor_reason"])
def test_unknown_stop_reason_is_kept(reason: str) -> None:
    wire = {"sessionUpdate": "state_update", "state": "idle", "stopReason": reason}
    obj = structure_update(wire)
    assert isinstance(obj, IdleStateUpdate) and obj.stop_reason == reason and obj.extra == {}
    assert unstructure(obj) == wire


@pytest.mark.parametrize("state", ["paused", "_compacting"])
def test_unknown_state_is_kept_with_its_background(state: str) -> None:
    wire = {
        "sessionUpdate": "state_update",
        "state": state,
        "background": [{"type": "terminal", "terminalId": "t"}, {"type": "_job", "n": 1}],
        "_meta": {"k": None},
        "zz": 1,
    }
    line = encode_message(decode_line(_line(wire)))  # type: ignore[arg-type]
    assert decode_line(line) == decode_line(_line(wire))
    obj = structure_update(wire)
    assert isinstance(obj, UnrecognizedStateUpdate) and obj.state == state
    assert obj.background is not None and [b.type for b in obj.background] == ["terminal", "_job"]
    assert unstructure(obj) == wire


def _line(update: dict[str, Any]) -> bytes:
    import json

    msg = {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s"}}
    msg["params"]["update"] = update  # type: ignore[index]
    return json.dumps(msg).encode()
