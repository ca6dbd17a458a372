"""A run of a chunk stream's lines, applied in one step, gives what line by line gives.

The connection finds runs of the hot chunk stream's lines in a receive buffer
(``core/_receive.py``, ``protocol/chunk_lines.run_texts``) and applies each run
to its session's model at once (``SessionModel.feed_chunks``). The reference here
is the same connection with runs turned off: every line is then handled alone.
Both must end with the same transcript (its stored form too), event log (stored
form, then what it reads back), entities, violations and client event log, for any
mix of streams, escapes, near-miss lines, garbage, read sizes and retention bounds.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis_budget import examples

import acp_lite.core._receive as receive
from acp_lite.core import ClientConnection
from acp_lite.limits import Limits
from acp_lite.protocol.chunk_lines import ChunkLines, CompactLine, run_texts

from .test_connection import opened, update


def _shell(sid: str, mid: str, kind: str) -> tuple[bytes, bytes]:
    """The bytes before and after the text of a chunk line of this stream."""
    msg = {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {
            "sessionId": sid,
            "update": {
                "sessionUpdate": kind,
                "messageId": mid,
                "content": {"type": "text", "text": "\x00"},
            },
        },
    }
    prefix, suffix = json.dumps(msg, separators=(",", ":")).encode().split(b"\\u0000")
    return prefix, suffix


def _body(text: str, escaped: bool) -> bytes:
    token = json.dumps(text, ensure_ascii=escaped)  # ensure_ascii: every non-ASCII escaped
    return token[1:-1].encode("utf-8", "surrogatepass")


STREAMS = [
    ("s1", "m1", "agent_message_chunk"),
    ("s1", "t1", "agent_thought_chunk"),
    ("s1", "m2", "agent_message_chunk"),
    ("s2", "m1", "agent_message_chunk"),
    ("s9", "m1", "agent_message_chunk"),  # a session not open here
]

ANY_TEXT = st.text(st.characters(codec=None, exclude_categories=()), max_size=4) | st.sampled_from(
    ["", "x", '"', "\\", "\n", "\t", "\u00e9", "\U0001f600", "\ud800", "a" * 30]
)

# Bodies that make a line look like a stream's: not UTF-8, not a JSON string, or
# ending before the suffix (each must get what the full path gives), or an escape.
NEAR_MISSES = [b'"', b"\\", b"\xff", b"\t", b'\\"', b"\\q", b'x"}', b"\\u12"]

# The texts of a stream's lines: written as they are, or with every non-ASCII
# character escaped (quotes and newlines are escaped either way).
SOME_TEXT = st.text('ab \u00e9\U0001f600\n"', max_size=3)


@st.composite
def traffic(draw: Any) -> list[bytes]:
    lines: list[bytes] = []
    for _ in range(draw(st.integers(1, 4))):
        sid, mid, kind = draw(st.sampled_from(STREAMS))
        prefix, suffix = _shell(sid, mid, kind)
        escaped = draw(st.booleans())
        some = draw(st.lists(SOME_TEXT, min_size=1, max_size=6))
        for i in range(draw(st.integers(1, 80))):
            lines.append(prefix + _body(some[i % len(some)], escaped) + suffix)
        # Then something else now and then: a stream's run ends there.
        what = draw(st.integers(0, 6))
        if what == 0:
            lines.append(prefix + draw(st.sampled_from(NEAR_MISSES)) + suffix)
        elif what == 1:
            lines.append(prefix + suffix[1:])  # prefix and suffix overlap
        elif what == 2:
            lines.append(update(sid, {"sessionUpdate": "state_update", "state": "running"})[:-1])
        elif what == 3:
            lines.append(draw(st.sampled_from([b"not json", b"{", b"", b"\r", b"[]"])))
        elif what == 4:
            lines.append(prefix + _body(draw(ANY_TEXT), escaped) + suffix)
    return lines


def _feed(
    limits: Limits, data: bytes, reads: list[int], runs: bool, findings: bool = False
) -> ClientConnection:
    conn = ClientConnection(limits, locate_findings=findings)
    opened(conn, "s1")
    opened(conn, "s2")
    # s2's updates are a history replay (a resume not answered yet): marked replayed.
    conn.resume("s2", {"sessionId": "s2", "cwd": "/", "mcpServers": []}, replay=True)
    saved = receive.run_texts
    if not runs:
        receive.run_texts = lambda data, t: None
    try:
        at, k = 0, 0
        while at < len(data):  # the read sizes, over and over
            conn.receive_data(data[at : at + reads[k % len(reads)]])
            at += reads[k % len(reads)]
            k += 1
        conn.receive_data(b"")
    finally:
        receive.run_texts = saved
    return conn


def _stored(value: Any) -> Any:
    # A compact line by what it is (each connection learned its own: they are equal
    # when they stand for the same stream), the rest as is.
    return ("compact", value) if value.__class__ is CompactLine else value


def _state(conn: ClientConnection) -> Any:
    t = conn.transcript
    lines, shapes = t._cols[0], t._cols[1]
    out: list[Any] = [
        [_stored(x) for x in lines],
        [_stored(None if x.__class__ is bytes else shapes.at(i)) for i, x in enumerate(lines)],
        t.dropped,
        [(e.direction, e.line) for e in t.entries()],
    ]
    for sid in ("s1", "s2"):
        model = conn.sessions[sid].model
        log = model._log
        out.append(([_stored(x) for x in log._updates], list(log._raws), bytes(log._replayed)))
        out.append((log.dropped, len(log)))
        out.append(
            [(e.index, e.replayed, e.tag, e.raw, e.update, e.source) for e in log[log.dropped :]]
        )
        out.append(
            [
                (
                    e.kind,
                    e.id,
                    e.replayed,
                    e.first_event_index,
                    e.last_event_index,
                    e.text,
                    e.content,
                )
                for e in model.timeline
            ]
        )
        out.append(model.violations)
    out.append(conn.violations())  # located, with locate_findings
    if conn.findings is not None:  # where each event's line is (what locates findings)
        out.append({sid: list(a) for sid, a in conn.findings._entries.items()})
    out.append([(e.kind, e.session_id, e.method) for e in conn.log])
    out.append(conn.log_counts)
    return out


@settings(max_examples=examples(3))
@given(
    lines=traffic(),
    reads=st.lists(st.integers(1, 5000), min_size=1, max_size=4),
    limits=st.sampled_from(
        [
            Limits(),
            Limits(max_session_events=3),
            Limits(max_transcript_entries=5),
            Limits(max_message_blocks=2),
            Limits(max_message_blocks=7, max_session_entities=2),
            Limits(keep_raw_updates=False),
        ]
    ),
    findings=st.booleans(),
)
def test_runs_give_what_line_by_line_gives(
    lines: list[bytes], reads: list[int], limits: Limits, findings: bool
) -> None:
    data = b"".join(x + b"\n" for x in lines)
    assert _state(_feed(limits, data, reads, True, findings)) == _state(
        _feed(limits, data, reads, False, findings)
    )


def test_a_long_stream_is_applied_in_runs() -> None:
    """Guard against a test that cannot fail: runs are really taken (most lines of a
    long stream read in large buffers), and give what the agent sent."""
    prefix, suffix = _shell("s1", "m1", "agent_message_chunk")
    sent = [f"w{i} " for i in range(3000)]
    data = b"".join(prefix + x.encode() + suffix + b"\n" for x in sent)
    taken: list[int] = []

    def spy(data: bytes, t: CompactLine) -> tuple[list[str], list[tuple[int, bytes]], int] | None:
        run = run_texts(data, t)
        taken.append(0 if run is None else len(run[0]))
        return run

    conn = ClientConnection()
    opened(conn, "s1")
    saved, receive.run_texts = receive.run_texts, spy
    try:
        for at in range(0, len(data), 8192):
            conn.receive_data(data[at : at + 8192])
    finally:
        receive.run_texts = saved
    assert sum(taken) > 2800  # all but the first read's lines (~55)
    model = conn.sessions["s1"].model
    assert model.entity("agent_message", "m1").text == "".join(sent)
    assert len(model.events) == 3000 and model.events[-1].raw["content"]["text"] == sent[-1]
    assert [e.line for e in conn.transcript.entries()][-3000:] == [
        prefix + x.encode() + suffix for x in sent
    ]


@pytest.mark.parametrize(
    ("bodies", "texts", "escaped", "rest"),
    [
        ([b"a", b"b"], ["a", "b"], [], None),  # every line is of the stream
        ([b"a", b"b", None], ["a"], [], 1),  # up to the line after the last separator
        ([b"a\\n", b'\\"b'], ["a\n", '"b'], [0, 1], None),  # escapes, decoded
        ([b'a\\",\\"b', b"c\\n"], ['a","b', "c\n"], [0, 1], None),  # every body escaped
        ([b"\\u00e9\\n", b"x\\n"], ["\u00e9\n", "x\n"], [0, 1], None),  # \\u: not re-encoded
        ([b'a","b', b"c\\n"], None, [], None),  # quotes that would split the array
        ([b"a\xff", b"b"], None, [], None),  # not UTF-8: line by line
        ([b'a"', b"b"], None, [], None),  # a stray quote: line by line
        ([b"a", b"b\tc"], None, [], None),  # a control character: line by line
        ([b"a", b"\\q"], None, [], None),  # a bad escape: line by line
    ],
)
def test_run_texts(
    bodies: list[bytes | None], texts: list[str] | None, escaped: list[int], rest: int | None
) -> None:
    prefix, suffix = _shell("s1", "m1", "agent_message_chunk")
    cache = ChunkLines()
    cache.decode_line(prefix + b"learn" + suffix)
    (t,) = cache.kept
    other = update("s1", {"sessionUpdate": "state_update", "state": "idle"})[:-1]
    lines = [other if x is None else prefix + x + suffix for x in bodies]
    data = b"\n".join(lines)
    got = run_texts(data, t)
    if texts is None:
        assert got is None
        return
    assert got is not None and got[0] == texts
    assert got[1] == [(i, lines[i]) for i in escaped]
    if rest is None:
        assert got[2] == len(data) + 1
    else:
        assert data[got[2] :] == b"\n".join(lines[rest:])
    # A line too short to hold both its prefix and its suffix is never a run.
    assert run_texts(prefix + suffix[1:], t) is None
