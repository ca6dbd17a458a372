"""The reader's batch hot path: ``LineFramer.plain``, ``Transcript.record_many``, and the
lazy event log read through a real connection.

Plain batches skip the per-line checks (empty lines, ``\\r``, oversize) and are recorded
with one transcript call; the event log then keeps only each received line. These tests
check that nothing is lost or reordered on the way and that what the log reads back is
what was on the wire.
"""

from __future__ import annotations

import json
from typing import Any

import attrs
import pytest
import trio
import trio.testing
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis_budget import examples

from acp_lite import aio
from acp_lite.core import LineFramer, OversizeLine
from acp_lite.hookspec import hookimpl
from acp_lite.protocol import SessionUpdate, converter
from acp_lite.transcript import Transcript

from .conftest import FAST, inproc, inproc_scripted

# ------------------------------------------------------------------ LineFramer.plain


def reader(max_line_bytes: int = 10) -> LineFramer:
    return LineFramer(max_line_bytes)


@pytest.mark.parametrize(
    ("chunk", "lines", "plain"),
    [
        (b"a\nb\n", [b"a", b"b"], True),
        (b"a\nb", [b"a"], True),
        (b"a\n\n", [b"a", b""], False),  # ends in an empty line
        (b"\na\n", [b"", b"a"], False),
        (b"a\n\nb\n", [b"a", b"", b"b"], False),
        (b"\n", [b""], False),
        (b"a\r\nb\n", [b"a\r", b"b"], False),
        (b"a\r\n", [b"a\r"], False),
        (b"\r\n", [b"\r"], False),
        (b"x" * 11 + b"\na\n", [OversizeLine(11, b"x" * 11), b"a"], False),
        (b"x" * 10 + b"\n", [b"x" * 10], True),  # at the limit: not oversize
        (b"partial", [], False),
    ],
)
def test_plain_flag(chunk: bytes, lines: list[Any], plain: bool) -> None:
    r = reader()
    assert r.feed(chunk) == lines
    assert r.plain is plain


def test_plain_flag_is_reset_on_every_feed() -> None:
    r = reader()
    r.feed(b"a\n")
    assert r.plain
    assert r.feed(b"b") == [] and not r.plain
    assert r.feed(b"\n\n") == [b"b", b""] and not r.plain
    assert r.feed(b"x" * 12) == [] and not r.plain  # now skipping an oversize line
    assert r.feed(b"yy\nc\n") == [OversizeLine(14, b"x" * 12), b"c"] and not r.plain
    assert r.feed(b"d\n") == [b"d"] and r.plain


def test_plain_is_false_for_the_partial_line_at_end_of_stream() -> None:
    r = reader()
    assert r.feed(b"a\nb") == [b"a"] and r.plain
    assert r.finish() == [b"b"] and not r.plain
    assert r.finish() == []


pieces = st.lists(
    st.sampled_from([b"a", b"bc", b"\n", b"\r", b"\r\n", b"\n\n", b"x" * 7, b"{}"]),
    max_size=12,
).map(b"".join)


@settings(max_examples=examples(3))
@given(chunks=st.lists(pieces, max_size=8))
def test_plain_batches_hold_only_plain_lines_and_nothing_is_lost(chunks: list[bytes]) -> None:
    limit = 8
    r = reader(limit)
    got: list[Any] = []
    for chunk in chunks:
        out = r.feed(chunk)
        if r.plain:
            assert out and all(
                type(line) is bytes and line and b"\r" not in line and len(line) <= limit
                for line in out
            ), out
        got += out
    data = b"".join(chunks)
    complete = data[: data.rfind(b"\n") + 1].split(b"\n")[:-1] if b"\n" in data else []
    want = [OversizeLine(len(x), x[:200]) if len(x) > limit else x for x in complete]
    # An oversize line is reported with its head as first seen (chunk-dependent): compare
    # sizes only for those.
    norm = [(x.size if isinstance(x, OversizeLine) else x) for x in got]
    assert norm == [(x.size if isinstance(x, OversizeLine) else x) for x in want]


# ------------------------------------------------------------------ Transcript.record_many


ops = st.lists(
    st.one_of(
        st.tuples(st.sampled_from(["send", "recv"]), st.binary(min_size=1, max_size=2)),
        st.tuples(
            st.sampled_from(["send", "recv"]),
            st.lists(st.binary(min_size=1, max_size=2), max_size=6),
        ),
    ),
    max_size=12,
)


@settings(max_examples=examples(3))
@given(cap=st.none() | st.integers(1, 6), steps=ops)
def test_record_many_keeps_order_and_counts_dropped(cap: int | None, steps: list[Any]) -> None:
    t = Transcript(cap)
    everything: list[tuple[str, bytes]] = []
    for direction, item in steps:
        if isinstance(item, list):
            t.record_many(direction, item)
            everything += [(direction, x) for x in item]
        else:
            t.record(direction, item)
            everything.append((direction, item))
        kept = everything if cap is None else everything[-cap:] if everything else []
        assert [(e.direction, e.line) for e in t.entries()] == kept
        assert t.dropped == len(everything) - len(kept)
    times = [e.time for e in t.entries()]
    assert times == sorted(times)


# ------------------------------------------------------------------ through a real connection
# The reference agent in this process, over two pipes: the same reader and batch sizes
# as with a subprocess.

CHUNK = (
    '{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"{{session_id}}",'
    '"update":{"sessionUpdate":"agent_message_chunk","messageId":"r-%d",'
    '"content":{"type":"text","text":"%s"}}}}'
)


def recv_updates(client: Any, sid: str) -> list[tuple[bytes, dict[str, Any]]]:
    """(line, update payload) of every session/update received for ``sid``, in order."""
    out = []
    for entry in client.transcript:
        if entry.direction != "recv":
            continue
        try:
            msg = json.loads(entry.line)
        except ValueError:
            continue
        if msg.get("method") == "session/update" and msg["params"].get("sessionId") == sid:
            out.append((entry.line, msg["params"]["update"]))
    return out


def assert_log_matches_wire(session: Any, client: Any) -> list[dict[str, Any]]:
    wire = recv_updates(client, session.id)
    events = list(session.updates)
    assert len(events) == len(wire) > 0
    for ev, (_, payload) in zip(events, wire, strict=True):
        assert ev.raw == payload
        assert ev.tag == payload["sessionUpdate"]
        assert ev.update == converter.structure(payload, SessionUpdate)  # type: ignore[arg-type]
        assert ev == session.updates[ev.index] and hash(ev) == hash(session.updates[ev.index])
    return [p for _, p in wire]


@pytest.mark.trio
async def test_streamed_chunks_read_back_as_sent() -> None:
    async with aio.connect_in_memory(inproc("streaming"), limits=FAST) as client:
        session = await client.new_session(cwd="/tmp")
        turn = await session.run("hi")
        # The hot path was taken: chunk entries hold only their tag and line until read.
        log: Any = session.model.events
        assert any(type(u) is str for u in log._updates)
        assert any(type(r) is bytes for r in log._raws)
        payloads = assert_log_matches_wire(session, client)
        chunks = [p for p in payloads if p["sessionUpdate"] == "agent_message_chunk"]
        assert len(chunks) > 3
        assert turn.text == "".join(p["content"]["text"] for p in chunks)


ODD_BATCH = "".join(
    [CHUNK % (1, "a") + "\n", "\n", CHUNK % (2, "b") + "\r\n", CHUNK % (3, "c") + "\n\n"]
    + [CHUNK % (4 + i, str(i)) + "\n" for i in range(20)]
)


@pytest.mark.trio
async def test_batches_with_empty_lines_and_crlf_lose_and_reorder_nothing() -> None:
    script = {
        "turns": [
            {
                "steps": [
                    {"type": "raw", "text": ODD_BATCH, "repeat": 30, "newline": False},
                    {"type": "flood", "count": 3000, "batch": 500},
                ]
            }
        ]
    }
    async with aio.connect_in_memory(inproc_scripted(script), limits=FAST) as client:
        session = await client.new_session(cwd="/tmp")
        await session.run("go")
        sid = session.id
        lines = [x for x in ODD_BATCH.replace("{{session_id}}", sid).split("\n") if x]
        received = [e.line for e in client.transcript if e.direction == "recv"]
        raw_part = [x for x in received if b'"r-' in x]
        assert raw_part == [x.encode() for x in lines] * 30  # every line, in order
        assert b"" not in received and b"\r" not in received
        payloads = assert_log_matches_wire(session, client)
        ours = [p for p in payloads if str(p.get("messageId")).startswith("r-")]
        texts = [p["content"]["text"] for p in ours]
        assert texts == (["a", "b", "c"] + [str(i) for i in range(20)]) * 30
        chunks = [p for p in payloads if p["sessionUpdate"] == "agent_message_chunk"]
        assert len(chunks) == len(ours) + 3000
        assert not [e for e in client.events if e.kind == "protocol_error"]


@pytest.mark.trio
async def test_hook_path_and_hot_path_log_the_same() -> None:
    seen: list[Any] = []

    class Plugin:
        @hookimpl
        def acp_session_update(self, session: Any, event: Any) -> None:
            seen.append((event, event.raw, event.tag))

    results = []
    for plugins in ([], [Plugin()]):
        async with aio.connect_in_memory(
            inproc("streaming"), limits=FAST, plugins=plugins
        ) as client:
            session = await client.new_session(cwd="/tmp")
            turn = await session.run("hi")
            payloads = assert_log_matches_wire(session, client)
            results.append((payloads, turn.text, session.model.state, len(session.updates)))
            if plugins:
                assert [ev for ev, _, _ in seen] == list(session.updates)
                assert [(raw, tag) for _, raw, tag in seen] == [
                    (p, p["sessionUpdate"]) for p in payloads
                ]
    assert results[0] == results[1]


@pytest.mark.trio
async def test_keep_raw_updates_false_still_reads_back() -> None:
    # A bounded transcript (here big enough for the test): lines may go, so the log
    # keeps typed updates rather than lines.
    limits = attrs.evolve(FAST, keep_raw_updates=False, max_transcript_entries=100_000)
    async with aio.connect_in_memory(inproc("streaming"), limits=limits) as client:
        session = await client.new_session(cwd="/tmp")
        turn = await session.run("hi")
        log: Any = session.model.events
        assert all(r is None for r in log._raws)  # nothing kept: re-encoded on read
        assert not any(type(u) is str for u in log._updates)
        payloads = assert_log_matches_wire(session, client)
        assert turn.text == "".join(
            p["content"]["text"] for p in payloads if p["sessionUpdate"] == "agent_message_chunk"
        )


@pytest.mark.trio
async def test_events_read_in_worker_threads_while_streaming_match_the_wire() -> None:
    """on_update callbacks run in worker threads and decode lazily while the reader
    keeps appending: what they read is still exactly what was received."""
    seen: list[tuple[int, str, dict[str, Any], Any]] = []
    script = {"turns": [{"steps": [{"type": "flood", "count": 2000, "batch": 200}]}]}
    async with aio.connect_in_memory(inproc_scripted(script), limits=FAST) as client:
        session = await client.new_session(cwd="/tmp")
        unsubscribe = session.on_update(
            lambda ev: seen.append((ev.index, ev.tag, ev.raw, ev.update))
        )
        await session.run("go")
        with trio.fail_after(10):  # callbacks run in worker threads: poll
            while len(seen) < len(session.updates):
                await trio.sleep(0.01)
        unsubscribe()
        wire = recv_updates(client, session.id)
        assert [i for i, _, _, _ in seen] == list(range(len(wire)))
        for (_, tag, raw, update), (_, payload) in zip(seen, wire, strict=True):
            assert raw == payload and tag == payload["sessionUpdate"]
            assert update == converter.structure(payload, SessionUpdate)  # type: ignore[arg-type]
