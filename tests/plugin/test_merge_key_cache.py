"""The merged view's key-order cache gives what the plain sort gives: chunks that
differ in any field but their text stay apart, in any key order, and chunks equal in
all but text merge, whatever key order each was sent with."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis_budget import examples

from pytest_acp.normalize import normalize

extra = st.dictionaries(
    st.sampled_from(["a", "z", "status", "_meta", "annotations"]),
    st.none() | st.integers() | st.text(max_size=3) | st.lists(st.integers(), max_size=2),
    max_size=3,
)


def _chunk(mid: str, text: str, more: dict[str, Any], reverse: bool) -> dict[str, Any]:
    chunk = {"sessionUpdate": "agent_message_chunk", "messageId": mid, **more}
    chunk["content"] = {"type": "text", "text": text}
    return dict(reversed(chunk.items())) if reverse else chunk


def _plain_merge(chunks: list[dict[str, Any]]) -> list[str]:
    """The texts of the merged runs, by the definition: adjacent chunks whose
    fields other than the text are equal join."""
    texts: list[str] = []
    last: Any = None
    for c in chunks:
        rest = sorted((k, repr(v)) for k, v in c.items() if k != "content")
        if texts and rest == last:
            texts[-1] += c["content"]["text"]
        else:
            texts.append(c["content"]["text"])
        last = rest
    return texts


@settings(max_examples=examples(3))
@given(
    parts=st.lists(
        st.tuples(st.sampled_from(["m1", "m2"]), st.text(max_size=3), extra, st.booleans()),
        min_size=1,
        max_size=8,
    )
)
def test_merged_view_agrees_with_the_definition(parts: list[Any]) -> None:
    chunks = [_chunk(*p) for p in parts]
    merged = normalize(chunks, "merged", redact=False, placeholders=False)
    assert [u["content"]["text"] for u in merged] == _plain_merge(chunks)
