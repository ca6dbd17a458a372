"""Hypothesis: random interleavings of chunks, upserts and nulls vs a dict reference model."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis_budget import examples

from acp_lite.model import SessionModel

from .helpers import feed, text

OMIT: Any = "<omit>"
MESSAGE_KINDS = ["agent_message", "agent_thought", "user_message", "session_message"]
IDS = ["a", "b", "c"]

texts = st.text(alphabet="xyz", max_size=3)
content_patch = st.one_of(st.just(OMIT), st.none(), st.lists(texts, max_size=3))
meta_patch = st.one_of(
    st.just(OMIT),
    st.none(),
    st.dictionaries(st.sampled_from(["k1", "k2", "k3"]), st.one_of(st.none(), st.integers(0, 3))),
)
string_patch = st.one_of(st.just(OMIT), st.none(), texts)
status_patch = st.one_of(st.just(OMIT), st.none(), st.sampled_from(["in_progress", "paused"]))

message_op = st.tuples(
    st.sampled_from(["chunk", "upsert"]),
    st.sampled_from(MESSAGE_KINDS),
    st.sampled_from(IDS),
    texts,
    content_patch,
    meta_patch,
)
tool_op = st.tuples(
    st.sampled_from(["tool_chunk", "tool_upsert"]),
    st.just("tool_call"),
    st.sampled_from(IDS),
    texts,
    content_patch,
    st.tuples(meta_patch, string_patch, status_patch),
)
ops = st.lists(st.one_of(message_op, tool_op), max_size=40)


def wire(op: tuple[Any, ...]) -> dict[str, Any]:
    verb, kind, ident, chunk_text, content, extra = op
    if verb == "chunk":
        return {"sessionUpdate": f"{kind}_chunk", "messageId": ident, "content": text(chunk_text)}
    if verb == "tool_chunk":
        item = {"type": "content", "content": text(chunk_text)}
        return {"sessionUpdate": "tool_call_content_chunk", "toolCallId": ident, "content": item}
    if verb == "upsert":
        d: dict[str, Any] = {"sessionUpdate": kind, "messageId": ident}
        meta = extra
        if content is not OMIT:
            d["content"] = None if content is None else [text(t) for t in content]
    else:
        d = {"sessionUpdate": "tool_call_update", "toolCallId": ident}
        meta, title, status = extra
        if content is not OMIT:
            d["content"] = (
                None
                if content is None
                else [{"type": "content", "content": text(t)} for t in content]
            )
        if title is not OMIT:
            d["title"] = title
        if status is not OMIT:
            d["status"] = status
    if meta is not OMIT:
        d["_meta"] = meta
    return d


def reference(op_list: list[tuple[Any, ...]]) -> tuple[list[tuple[str, str]], dict[Any, Any]]:
    """The spec's rules written as plainly as possible, on dicts."""
    order: list[tuple[str, str]] = []
    ents: dict[tuple[str, str], dict[str, Any]] = {}
    for verb, kind, ident, chunk_text, content, extra in op_list:
        key = (kind, ident)
        if key not in ents:
            order.append(key)
            ents[key] = {"content": [], "meta": None, "title": None, "status": "pending"}
        ent = ents[key]
        if verb in ("chunk", "tool_chunk"):
            ent["content"] = [*ent["content"], chunk_text]
            continue
        meta = extra if verb == "upsert" else extra[0]
        if content is not OMIT:
            ent["content"] = list(content or [])
        if meta is None:
            ent["meta"] = None
        elif meta is not OMIT:
            merged = dict(ent["meta"] or {})
            for k, v in meta.items():
                if v is None:
                    merged.pop(k, None)
                else:
                    merged[k] = v
            ent["meta"] = merged
        if verb == "tool_upsert":
            title, status = extra[1], extra[2]
            if title is not OMIT:
                ent["title"] = title
            if status is not OMIT:
                ent["status"] = "pending" if status is None else status
    return order, ents


def observed(m: SessionModel) -> tuple[list[tuple[str, str]], dict[Any, Any]]:
    order = [(e.kind, e.id) for e in m.timeline]
    ents = {}
    e: Any
    for e in m.timeline:
        if e.kind == "tool_call":
            content = [item.content.text for item in e.content]
            ents[(e.kind, e.id)] = {
                "content": content,
                "meta": e.meta,
                "title": e.title,
                "status": e.status,
            }
        else:
            content = [block.text for block in e.content]
            ents[(e.kind, e.id)] = {
                "content": content,
                "meta": e.meta,
                "title": None,
                "status": "pending",
            }
    return order, ents


@settings(max_examples=examples(3))
@given(ops)
def test_random_interleavings_match_the_reference_model(op_list: list[tuple[Any, ...]]) -> None:
    m = SessionModel("s")
    feed(m, *[wire(op) for op in op_list])
    assert observed(m) == reference(op_list)
    for e in m.timeline:
        if hasattr(e, "text"):
            assert e.text == "".join(observed(m)[1][(e.kind, e.id)]["content"])
    assert len(m.events) == len(op_list)
    assert list(m.violations) == []


@settings(max_examples=examples(1))
@given(ops, st.integers(0, 40))
def test_text_read_midway_does_not_change_the_result(
    op_list: list[tuple[Any, ...]], cut: int
) -> None:
    """The lazy text cache gives the same answer however often it is read."""
    m1, m2 = SessionModel("s"), SessionModel("s")
    for i, op in enumerate(op_list):
        feed(m1, wire(op))
        feed(m2, wire(op))
        if i % (cut + 1) == 0:
            [e.text for e in m1.timeline if hasattr(e, "text")]
    assert [getattr(e, "text", None) for e in m1.timeline] == [
        getattr(e, "text", None) for e in m2.timeline
    ]
