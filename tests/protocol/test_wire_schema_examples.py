"""Round trip + schema validation of examples generated from the schema, for every
definition, every variant and three shapes (all fields / required only / nulls)."""

from __future__ import annotations

from typing import Any

import pytest
from protocol_examples import (
    added_tags,
    generated_examples,
    schema,
    schema_errors,
    unrecognized_parts,
)

from acp_lite.protocol import DEFINITIONS, UNIONS, converter

EXAMPLES = list(generated_examples(list(DEFINITIONS)))


def test_every_definition_has_examples() -> None:
    assert {name for name, *_ in EXAMPLES} == set(DEFINITIONS)
    assert len(EXAMPLES) > 500


def _is_custom_variant(name: str, variant: int) -> bool:
    d = schema()["$defs"][name]
    alts = d.get("anyOf") or d.get("oneOf")
    return bool(alts) and str(alts[variant].get("title")).lower() == "other"


# One parameter, not four: each parameter is a fixture pytest sets up per test, which
# costs more than the test itself here.
@pytest.mark.parametrize("case", EXAMPLES, ids=[f"{n}-{m}-{v}" for n, m, v, _ in EXAMPLES])
def test_generated_example_round_trips_and_validates(case: tuple[str, str, int, Any]) -> None:
    name, _mode, variant, example = case
    assert schema_errors(example, name) == [], "the example builder made an invalid example"
    obj = converter.structure(example, DEFINITIONS[name])
    back = converter.unstructure(obj)
    if back != example:
        # A tagged-variant class structured outside its union re-emits its implied tag.
        assert added_tags(example, back)
        # (When back == example it was validated above: validation is the slow part.)
        assert schema_errors(back, name) == []
    if not _is_custom_variant(name, variant):
        assert unrecognized_parts(obj) == []
    elif DEFINITIONS[name] in UNIONS:
        # A custom variant of a tagged union: kept whole, with its tag exposed.
        assert type(obj).__name__.startswith("Unrecognized")
        assert obj.raw == example and "_custom_field" in obj.raw


def test_schema_validation_can_fail() -> None:
    """Guard: the validator rejects what the schema forbids."""
    assert schema_errors({"sessionUpdate": "agent_message_chunk"}, "SessionUpdate")
    assert schema_errors({"type": "text", "text": 5}, "ContentBlock")
    assert schema_errors({"jsonrpc": "1.0", "method": "x"}, None)
