"""The lazy event log and ``SessionModel.feed``.

The log keeps only the received line for updates with a string tag and decodes it
again on read (model/events.py); ``feed`` is ``apply`` without building the Event.
Whatever is passed as ``raw`` (the update dict, the whole line, nothing) and whichever
entry point is used, what the model shows must be the same.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis_budget import examples

from acp_lite.model import SessionModel
from acp_lite.model.events import Event
from acp_lite.protocol import UnrecognizedSessionUpdate

from .helpers import bg_tool, chunk, decode, idle, message, state, tool


def line_of(update: Any, sid: str = "s") -> bytes:
    msg = {"jsonrpc": "2.0", "method": "session/update"}
    msg["params"] = {"sessionId": sid, "update": update}  # type: ignore[assignment]
    return json.dumps(msg).encode()


UPDATES: list[dict[str, Any]] = [
    chunk("m", "hello "),
    chunk("t", "hm", kind="agent_thought"),
    chunk("u", "hi", kind="user_message"),
    chunk("m", "world", _meta={"n": 1}, zz={"kept": [1, None]}),
    tool("c1", status="in_progress", title="Run"),
    state("running", background=[bg_tool("c1")]),
    {"sessionUpdate": "_vendor_progress", "pct": 50},
    {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "x"}},
    {"sessionUpdate": 7, "content": {}},  # a non-string tag: kept as given, not lazily
    {"content": {"type": "text", "text": "no tag"}},
    tool("c1", status="completed"),
    message("m", ["replaced"]),
    idle("end_turn", background=[]),
]


def observe(m: SessionModel) -> Any:
    """Everything a user can read from a model (events included)."""
    return (
        [(e.index, e.tag, e.raw, e.update, e.replayed) for e in m.events],
        [(e.kind, e.id, e.first_event_index) for e in m.timeline],
        [(v.rule, v.event_index) for v in m.violations],
        m.text(),
        m.state,
        m.stop_reason,
        m.background,
        [e.index for e in m.notices],
    )


def test_raw_dict_line_and_none_read_back_the_same() -> None:
    by_dict, by_line, by_none = SessionModel("s"), SessionModel("s"), SessionModel("s")
    for d in UPDATES:
        u = decode(d)
        by_dict.apply(u, raw=d)
        by_line.apply(decode(d), raw=line_of(d))
        by_none.apply(decode(d))
    assert observe(by_line) == observe(by_dict)
    for got, sent in zip(by_line.events, UPDATES, strict=True):
        assert got.raw == sent
        assert by_line._log.kept_raw(got.index) == sent
    # Without a raw payload the log re-encodes the update: equal for known shapes.
    assert [e.update for e in by_none.events] == [e.update for e in by_dict.events]
    assert [e.tag for e in by_none.events] == [e.tag for e in by_dict.events]
    assert isinstance(by_line.events[6].update, UnrecognizedSessionUpdate)
    assert by_line.events[6].tag == "_vendor_progress"


def test_tag_is_read_without_decoding_and_update_is_decoded_once() -> None:
    m = SessionModel("s")
    d = chunk("m", "x")
    m.apply(decode(d), raw=line_of(d))
    ev = m.events[0]
    assert ev.tag == "agent_message_chunk"
    assert m._log._updates[0] == "agent_message_chunk"  # still only the tag: not decoded
    first = m.events[0].update
    assert m.events[0].update is first  # decoded once, then kept by the log
    assert m.events[0].raw is m.events[0].raw


def test_events_compare_and_hash_as_views_of_the_log() -> None:
    m = SessionModel("s")
    ds = [chunk("m", "a"), chunk("m", "a"), tool("c", status="pending")]
    returned = [m.apply(decode(d), raw=line_of(d)) for d in ds]
    views = list(m.events)
    # The Event apply returns equals the log's view of it, lazy or not, either order.
    assert returned == views and views == returned
    assert [hash(e) for e in returned] == [hash(e) for e in m.events]
    assert len({*returned, *m.events}) == 3
    # Same payload, different index: different events.
    assert m.events[0] != m.events[1]
    assert m.events[0] != "not an event" and m.events[0] != ds[0]
    # Equal across logs only if everything matches (time differs here).
    other = SessionModel("s")
    other.apply(decode(ds[0]), raw=ds[0])
    assert other.events[0] != m.events[0]
    # A built Event equals the view with the same fields, lazy or not.
    ev = m.events[2]
    built = Event(ev.index, ev.update, ev.replayed, ev.time)
    assert built == m.events[2] and m.events[2] == built and hash(built) == hash(ev)
    assert "tool_call_update" in repr(m.events[2])


def test_replayed_and_time_survive_the_lazy_path() -> None:
    m = SessionModel("s")
    d = chunk("m", "x")
    ev = m.apply(decode(d), raw=line_of(d), replayed=True)
    assert m.events[0].replayed and ev.replayed and ev.time == m.events[0].time


def test_wrong_session_line_is_logged_not_applied_either_way() -> None:
    a, b = SessionModel("s"), SessionModel("s")
    d = chunk("m", "x")
    a.apply(decode(d), raw=line_of(d, "other"), session_id="other")
    b.apply(decode(d), raw=d, session_id="other")
    assert observe(a) == observe(b)
    assert a.events[0].raw == d and a.text() == ""


# --------------------------------------------------------------- feed == apply

ids = st.sampled_from(["m1", "m2"])
texts = st.text(alphabet="ab \n", max_size=4)
update_dicts = st.one_of(
    st.builds(lambda i, t: chunk(i, t), ids, texts),
    st.builds(lambda i, t: chunk(i, t, kind="agent_thought"), ids, texts),
    st.builds(lambda i, t: chunk(i, t, kind="user_message"), ids, texts),
    st.builds(lambda i, t: chunk(i, t, _meta={"k": 1}), ids, texts),
    st.builds(lambda i, ts: message(i, ts), ids, st.lists(texts, max_size=2)),
    st.builds(
        lambda c, s: tool(c, status=s),
        st.sampled_from(["c1", "c2"]),
        st.sampled_from(["pending", "in_progress", "completed", "failed", "weird"]),
    ),
    st.builds(lambda: state("running")),
    st.builds(lambda bg: state("running", background=bg), st.sampled_from([[], [bg_tool("c1")]])),
    st.builds(lambda r: idle(r, background=[]), st.sampled_from(["end_turn", "cancelled"])),
    st.builds(lambda: idle("end_turn")),
    st.just({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "x"}}),
    st.just({"sessionUpdate": "_vendor", "x": 1}),
)
raw_kinds = st.sampled_from(["dict", "line", "none"])


@settings(max_examples=examples(1.5))
@given(
    steps=st.lists(
        st.tuples(update_dicts, raw_kinds, st.booleans(), st.sampled_from([None, "s", "x"])),
        max_size=12,
    )
)
def test_feed_has_the_same_effect_as_apply(steps: list[Any]) -> None:
    applied, fed = SessionModel("s"), SessionModel("s")
    for d, kind, replayed, sid in steps:
        raw: Any = {"dict": d, "line": line_of(d, sid or "s"), "none": None}[kind]
        ev = applied.apply(decode(d), raw=raw, session_id=sid, replayed=replayed)
        index = fed.feed(decode(d), raw, sid, replayed)
        assert index == ev.index == len(fed.events) - 1
        assert fed.events[index].replayed == ev.replayed == replayed
    assert observe(fed) == observe(applied)
    assert fed.finish() == applied.finish()
    assert observe(fed) == observe(applied)


def test_update_objects_without_a_string_tag_are_kept_as_given() -> None:
    """Only updates with a ``str`` tag are reduced to their line (423de58): an object the
    caller built some other way is kept, and reads back as itself."""

    class Odd:
        session_update = 7

    m = SessionModel("s")
    d = chunk("m", "x")
    odd, plain = Odd(), {"sessionUpdate": "agent_message_chunk"}
    m.apply(odd, raw=line_of(d))
    m.apply(plain, raw=line_of(d))
    assert m.events[0].update is odd and m.events[1].update is plain
    assert m.events[0].raw == d == m.events[1].raw
    assert m.events[0].tag == "7" and m.events[1].tag == ""
