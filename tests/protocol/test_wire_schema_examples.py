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


def _check(case: tuple[str, str, int, Any]) -> None:
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


# One test per shape, not one per example: pytest's own cost per test is more than
# an example's; every failing example is still named, with its assertion.
@pytest.mark.parametrize("mode", sorted({m for _, m, _, _ in EXAMPLES}))
def test_generated_examples_round_trip_and_validate(mode: str) -> None:
    failures = []
    for case in EXAMPLES:
        name, case_mode, variant, _ = case
        if case_mode != mode:
            continue
        try:
            _check(case)
        except AssertionError as failure:
            failures.append(f"{name}-{mode}-{variant}: {failure}")
    assert failures == []


def test_a_failing_example_is_named() -> None:
    """Guard: a broken example fails the check (the loop above reports it)."""
    with pytest.raises(AssertionError, match="invalid example"):
        _check(("ContentBlock", "full", 0, {"type": "text", "text": 5}))


def test_schema_validation_can_fail() -> None:
    """Guard: the validator rejects what the schema forbids."""
    assert schema_errors({"sessionUpdate": "agent_message_chunk"}, "SessionUpdate")
    assert schema_errors({"type": "text", "text": 5}, "ContentBlock")
    assert schema_errors({"jsonrpc": "1.0", "method": "x"}, None)
