"""Streamed chunk lines kept compactly (a compact line and the text) read back exactly.

The core keeps a verbatim chunk line as its stream's compact line and the chunk's
text, and the event log keeps the compact line and the text too; what is read back must be
exactly what the agent sent: every transcript line, the saved NDJSON, each event's
``raw`` and ``update`` (as decoding the line in full gives them).
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis_budget import examples

from acp_lite.core import ClientConnection
from acp_lite.limits import Limits
from acp_lite.protocol import Notification, decode_line
from acp_lite.transcript import Transcript

from .test_connection import opened


def chunk_line(text: str, mid: str, *, ascii_only: bool, kind: str = "agent_message") -> bytes:
    msg = {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {
            "sessionId": "s1",
            "update": {
                "sessionUpdate": f"{kind}_chunk",
                "messageId": mid,
                "content": {"type": "text", "text": text},
            },
        },
    }
    return json.dumps(msg, ensure_ascii=ascii_only).encode("utf-8", "surrogatepass")


odd_texts = st.text(st.characters(codec=None, exclude_categories=()), max_size=6) | st.sampled_from(
    ["", '"', "\\", "\n", "\u00e9", "\U0001f600", "\ud800", "x" * 40, "s1"]
)


def _opening() -> list[bytes]:
    twin = ClientConnection()  # the opening traffic of every example, every line kept
    opened(twin)
    return [e.line for e in twin.transcript.entries()]


OPENING = _opening()


@settings(max_examples=examples(3))
@given(
    texts=st.lists(odd_texts, min_size=1, max_size=40),
    ascii_only=st.booleans(),
    split=st.integers(1, 400),
    cap=st.none() | st.integers(0, 5),
)
def test_compact_lines_read_back_exactly(
    texts: list[str], ascii_only: bool, split: int, cap: int | None, tmp_path_factory: Any
) -> None:
    opening = OPENING
    conn = ClientConnection(Limits(max_transcript_entries=cap))
    opened(conn)
    lines = [
        chunk_line(t, "m" if i > 2 else "t", ascii_only=ascii_only, kind="agent_message")
        for i, t in enumerate(["T:first", *texts])
    ]
    data = b"".join(x + b"\n" for x in lines)
    for i in range(0, len(data), split):  # any read sizes
        conn.receive_data(data[i : i + split])
    t = conn.transcript
    everything = opening + lines
    assert t.dropped + len(t) == len(everything)
    want = everything if cap is None else everything[max(0, len(everything) - cap) :]
    got = [e.line for e in t.entries()]
    assert got == want
    assert [t[i].line for i in range(-len(want), 0)] == want
    assert [t[i].time for i in range(len(t))] == [e.time for e in t.entries()]
    # One file, written over by each example (a directory per example costs more
    # than the rest of the example).
    path = tmp_path_factory.getbasetemp() / "compact-lines.ndjson"
    t.save(path)
    assert [json.loads(e.line) for e in Transcript.load(path)] == [json.loads(x) for x in want]
    # The event log: raw and update as the full decoder gives them, in either read order
    # (a lone surrogate written raw is not UTF-8: that line is garbage, kept as bytes).
    events = conn.sessions["s1"].model.events
    valid = [(x, m) for x in lines if isinstance(m := decode_line(x), Notification)]
    for k, (ev, (sent, full)) in enumerate(zip(events, valid, strict=True)):
        expected = json.loads(sent)["params"]["update"]
        if k % 2:
            assert ev.update == full.params.update  # type: ignore[union-attr]
            assert ev.raw == expected and list(ev.raw) == list(expected)
        else:
            assert ev.raw == expected and list(ev.raw) == list(expected)
            assert ev.update == full.params.update  # type: ignore[union-attr]
        assert ev.tag == "agent_message_chunk"
    model = conn.sessions["s1"].model
    sent_m = [x for i, x in enumerate(["T:first", *texts]) if i > 2 and (ascii_only or _utf8(x))]
    if sent_m:
        assert model.entity("agent_message", "m").text == "".join(sent_m)


def _utf8(text: str) -> bool:
    try:
        text.encode()
    except UnicodeEncodeError:
        return False
    return True


def test_verbatim_chunk_lines_are_kept_compactly() -> None:
    """Guard against a test that cannot fail: the compact form is really used (a text
    and a compact line in place of the bytes; with escapes, the text and how the stream
    escapes), and a line whose escapes no encoder writes is kept as bytes."""
    conn = ClientConnection()
    opened(conn)
    # The first teaches the compact line; the next 8 of the stream stay bytes (a
    # short stream does not pay for its compact line), the rest are compact.
    texts = ["T:a", *"12345678", "b\u00e9", 'c"d', "e", "/x", "\u00e9\n"]
    lines = [chunk_line(x, "m-kept", ascii_only=False) for x in texts]  # a new stream
    # An escape no JSON encoder writes ("\/"): no escaping rebuilds it, kept as bytes.
    lines[12] = lines[12].replace(b'"/x"', b'"\\/x"')
    # Python's default escaping (\u00e9) in a stream learned with raw UTF-8: rebuilt.
    lines[13] = chunk_line(texts[13], "m-kept", ascii_only=True)
    conn.receive_data(b"".join(x + b"\n" for x in lines))
    items = conn.transcript._cols[0][-len(lines) :]
    assert items == [*lines[:9], "b\u00e9", 'c"d', "e", lines[12], "\u00e9\n"]
    columns = conn.transcript._cols
    at, first = columns[1].at, len(columns[0]) - len(lines)
    shapes = [None if x.__class__ is bytes else at(first + i) for i, x in enumerate(items)]
    # One shape for the verbatim and the raw-UTF-8-escaped lines (one transcript run),
    # another for \u escapes, none for the line kept as bytes.
    assert [getattr(s, "ascii", None) for s in shapes[9:]] == [False, False, False, None, True]
    assert shapes[9] is shapes[10] is shapes[11]
    assert [e.line for e in conn.transcript.entries()[-len(lines) :]] == lines
    log = conn.sessions["s1"].model._log
    assert log._raws[-3] == "e" and log._updates[-3].__class__.__name__ == "CompactLine"
    assert log._raws[5] == lines[5]  # still the line


def test_a_bounded_transcript_trims_its_columns_and_keeps_the_newest() -> None:
    """Past twice the bound plus a block the columns are cut (in place of a deque):
    the newest lines, their times (kept once per batch) and the count stay right."""
    t = Transcript(max_entries=7)
    sent: list[bytes] = []
    for i in range(1500):
        if i % 3:
            t.record("send", b"%d" % i)
            sent.append(b"%d" % i)
        else:
            batch = [b"a%d" % i, b"b%d" % i]
            t.record_many("recv", batch)
            sent += batch
    assert len(t._cols[0]) < len(sent)  # it really trimmed
    assert [e.line for e in t.entries()] == sent[-7:] == [t[i].line for i in range(7)]
    times = [e.time for e in t.entries()]
    assert times == [t[i].time for i in range(7)] == sorted(times)
    assert t.dropped == len(sent) - 7 and len(t) == 7


def test_compact_updates_held_for_a_session_being_created_read_back() -> None:
    """Updates that arrive before ``session/new`` answers are held, then applied (or
    logged for an unknown session) from their compact form."""
    conn = ClientConnection()
    entry = conn.send_request("session/new", {"cwd": "/", "mcpServers": []})
    conn.data_to_send()
    lines = [chunk_line(f"T:{i}", "m-early", ascii_only=True) for i in range(20)]
    stray = [
        chunk_line(f"T:{i}", "m-early", ascii_only=True).replace(b'"s1"', b'"s9"')
        for i in range(20)
    ]
    conn.receive_data(b"".join(x + b"\n" for x in lines + stray))
    answer = {"jsonrpc": "2.0", "id": entry.id, "result": {"sessionId": "s1"}}
    conn.receive_data(json.dumps(answer).encode() + b"\n")
    events = conn.sessions["s1"].model.events
    assert [e.raw for e in events] == [json.loads(x)["params"]["update"] for x in lines]
    assert conn.sessions["s1"].model.entity("agent_message", "m-early").text == "".join(
        f"T:{i}" for i in range(20)
    )
    logged = [e.data for e in conn.log if e.kind == "unknown_session_update"]
    assert logged == [json.loads(x)["params"]["update"] for x in stray]
    assert [e.line for e in conn.transcript.entries()[1:-1]] == lines + stray
