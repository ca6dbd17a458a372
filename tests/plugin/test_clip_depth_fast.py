"""``clip_depth`` copies the common shallow update without its general walk: the copy
is equal, independent of the original (mutating it leaves the original alone), and
deeper or unusual values still take the general walk."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis_budget import examples

from pytest_acp._extract import TOO_DEEP, clip_depth

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3)
    ),
    max_leaves=12,
)


def _containers(value: Any) -> list[Any]:
    if isinstance(value, dict):
        return [value, *(c for v in value.values() for c in _containers(v))]
    if isinstance(value, list):
        return [value, *(c for v in value for c in _containers(v))]
    return []


@settings(max_examples=examples(2))
@given(value=json_values)
def test_a_copy_equal_and_independent(value: Any) -> None:
    before = copy.deepcopy(value)
    copied = clip_depth(value)
    assert copied == value
    ids = {id(c) for c in _containers(value)}
    assert not any(id(c) in ids for c in _containers(copied))
    assert value == before


def test_deep_and_unusual_values_take_the_general_walk() -> None:
    deep: Any = "x"
    for _ in range(70):
        deep = {"a": deep}
    clipped = clip_depth(deep)
    for _ in range(64):
        clipped = clipped["a"]
    assert clipped == TOO_DEEP
    assert clip_depth({"t": (1, 2)}) == {"t": [1, 2]}  # a tuple becomes a list
    assert clip_depth([[[[[[1]]]]]], limit=5) == [[[[[TOO_DEEP]]]]]
