"""A text chunk skips the redaction walk: what it gets is exactly what the walk gives
(``tmp`` paths in any of its strings; other shapes, unknown fields and timestamps
still take the walk)."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis_budget import examples

from pytest_acp._redact_values import redact_payload, redact_walk
from pytest_acp.normalize import REDACTIONS

TMP = ["/tmp/pytest-1/t0", "/tmp/x"]
strings = st.sampled_from(["", "x", "/tmp/x/a", "see /tmp/pytest-1/t0/f and /tmp/x", "text"])
keys = st.sampled_from(["sessionUpdate", "messageId", "content", "type", "text", "updatedAt"])
values = st.none() | st.integers() | strings
chunk = st.fixed_dictionaries(
    {
        "sessionUpdate": st.sampled_from(["agent_message_chunk", "agent_thought_chunk"]),
        "messageId": strings,
        "content": st.fixed_dictionaries({"type": strings, "text": strings})
        | st.dictionaries(keys, values, max_size=3),
    }
) | st.dictionaries(keys, values | st.dictionaries(keys, values, max_size=2), max_size=4)


@settings(max_examples=examples(3))
@given(payload=chunk, tmp=st.sampled_from([[], TMP]))
def test_the_chunk_fast_path_gives_what_the_walk_gives(payload: Any, tmp: list[str]) -> None:
    fast = copy.deepcopy(payload)
    redact_payload(fast, REDACTIONS, tmp)
    walked = redact_walk(copy.deepcopy(payload), REDACTIONS, tmp)
    assert fast == walked
    assert list(fast) == list(walked)
