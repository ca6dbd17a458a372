"""Compact lines (``protocol/chunk_lines.py``) decode exactly like the full path.

A line is learned, then lines with the same bytes around the text and any other
bytes in its place are decoded both ways: by its stream's compact line, and in full
(json + the structure functions). Results must be identical, errors included. Each
connection has its own compact lines: one never changes how another decodes.
"""

from __future__ import annotations

import json
import threading
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis_budget import examples
from test_fast_decode import same

from acp_lite.protocol import Notification, decode_line
from acp_lite.protocol.chunk_lines import PROBE, ChunkLines, CompactLine


def learned(line: bytes) -> ChunkLines:
    """A fresh cache that has seen ``line``."""
    cache = ChunkLines()
    cache.decode_line(line)
    return cache


def chunk_line(text: str, *, ascii_only: bool, spaced: bool, reverse: bool) -> bytes:
    content = {"type": "text", "text": text}
    update: dict[str, Any] = {
        "sessionUpdate": "agent_thought_chunk",
        "messageId": "m-\u00e9",
        "content": content,
    }
    params: dict[str, Any] = {"sessionId": "s1", "update": update}
    msg: dict[str, Any] = {"jsonrpc": "2.0", "method": "session/update", "params": params}
    if reverse:
        for d in (msg, params, update, content):
            items = list(d.items())
            d.clear()
            d.update(reversed(items))
    seps = (", ", ": ") if spaced else (",", ":")
    return json.dumps(msg, ensure_ascii=ascii_only, separators=seps).encode()


PIECES = [b"a", b'"', b"\\", b"\\u00e9", b"\\ud800", b"\x01", b"\xff", b"\t", b"\\n", b'",', b"}"]
bodies = st.one_of(
    st.text(max_size=12).map(lambda t: json.dumps(t)[1:-1].encode()),
    st.text(max_size=12).map(
        lambda t: json.dumps(t, ensure_ascii=False)[1:-1].encode("utf-8", "surrogatepass")
    ),
    st.binary(max_size=12),
    st.lists(st.sampled_from(PIECES), max_size=6).map(b"".join),
)


@settings(max_examples=examples(4))
@given(
    first=st.text(min_size=1, max_size=8),
    body=bodies,
    ascii_only=st.booleans(),
    spaced=st.booleans(),
    reverse=st.booleans(),
)
def test_compact_line_decodes_like_the_full_path(
    first: str, body: bytes, ascii_only: bool, spaced: bool, reverse: bool
) -> None:
    # "T:" keeps the learned text unlike every other string of the line (unambiguous).
    line0 = chunk_line("T:" + first, ascii_only=ascii_only, spaced=spaced, reverse=reverse)
    cache = learned(line0)
    assert len(cache.kept) == 1
    for t in cache.kept:
        line = t.prefix + body + t.suffix
        via_compact = cache.decode_line(line)
        expected = decode_line(line)  # no cache: in full
        same(via_compact, expected)
        if isinstance(expected, Notification):
            same(via_compact.raw_params, expected.raw_params)  # type: ignore[union-attr]
            hit = cache.decode(line)
            if hit is not None:
                sid, update, compact, verbatim = hit
                same((sid, update), (expected.params.session_id, expected.params.update))
                text = update.content.text
                same(compact.update(text), expected.params.update)
                same(compact.params(text), expected.raw_params)
                assert compact is t
                if verbatim:  # else the line holds escapes: line() is for verbatim texts
                    assert compact.line(text) == line


def test_a_learned_stream_is_decoded_by_its_compact_line() -> None:
    """Guard against a test that cannot fail: the compact path is really taken, for
    plain text and escapes, and only for lines of the learned stream."""
    cache = learned(chunk_line("hello", ascii_only=False, spaced=False, reverse=False))
    assert len(cache.kept) == 1
    t = cache.kept[0]
    for body, text in [(b"x", "x"), (b'a\\"b\\n\\u00e9', 'a"b\n\u00e9'), (b"", "")]:
        hit = cache.decode(t.prefix + body + t.suffix)
        assert hit is not None and hit[1].content.text == text and hit[2] is t
        assert hit[3] == (body == text.encode())
    for body in [b'a"b', b"\x01", b"\xff", b"\\x"]:
        assert cache.decode(t.prefix + body + t.suffix) is None
    other = chunk_line("hello", ascii_only=False, spaced=True, reverse=False)
    assert cache.decode(other) is None
    assert decode_line(t.prefix + b"x" + t.suffix) == cache.decode_line(t.prefix + b"x" + t.suffix)


def test_a_compact_line_rebuilds_its_lines() -> None:
    line = chunk_line("hello", ascii_only=False, spaced=True, reverse=True)
    (t,) = learned(line).kept
    assert t.line("hello") == line
    assert (t.session_id, t.message_id, t.tag) == ("s1", "m-\u00e9", "agent_thought_chunk")
    assert t.update_class.__name__ == "AgentThoughtChunk"
    assert t.start == len(t.prefix) and t.end == -len(t.suffix)
    assert t.sep == t.suffix + b"\n" + t.prefix
    full = decode_line(t.line(PROBE))
    assert isinstance(full, Notification)
    assert t.params(PROBE) == full.raw_params and list(t.params(PROBE)) == list(full.raw_params)
    assert t.update(PROBE) == full.params.update
    # Each call builds new objects: the kept params are never handed out.
    assert t.params("a") is not t.params("a")
    t.params("a")["update"]["content"]["text"] = "changed"
    assert t.params("b")["update"]["content"]["text"] == "b"
    # Equal when they stand for the same stream (as two connections learn it).
    (again,) = learned(t.line("other")).kept
    assert again == t and hash(again) == hash(t) and again is not t
    (other,) = learned(line.replace(b"m-\xc3\xa9", b"m-2")).kept
    assert other != t
    assert isinstance(t, CompactLine) and "agent_thought_chunk" in repr(t)


def test_ambiguous_text_is_not_learned() -> None:
    # The text equals the message id: which one varies cannot be told from one line.
    line = chunk_line("m-\u00e9", ascii_only=False, spaced=False, reverse=False)
    assert learned(line).kept == []
    # A non-chunk line teaches nothing either.
    assert learned(b'{"jsonrpc":"2.0","id":1,"result":{}}').kept == []


def test_interleaved_streams_both_keep_their_compact_line() -> None:
    def line(text: str, stream: int) -> bytes:  # two messages, lines of each alike
        one = chunk_line(text, ascii_only=False, spaced=False, reverse=False)
        return one if stream == 1 else one.replace("m-\u00e9".encode(), b"m-2")

    cache = learned(line("T:one", 1))
    cache.decode_line(line("T:two", 2))
    assert len(cache.kept) == 2
    for i in range(4):  # each hit moves its compact line to the front
        hit = cache.decode(line(f"x{i}", 1 + i % 2))
        assert hit is not None and hit[1].content.text == f"x{i}"
        assert hit[1].message_id == ("m-\u00e9" if i % 2 == 0 else "m-2")
        assert cache.kept[0] is hit[2] and len(cache.kept) == 2


def test_caches_in_two_threads_never_see_each_others_lines() -> None:
    """One cache per connection: two decoding at once in two threads, each its own
    streams, each learns only its own (nothing module-global is shared), and every
    line decodes as it does in full."""

    def stream(n: int, i: int) -> bytes:  # connection n's stream i
        one = chunk_line("T:x", ascii_only=False, spaced=False, reverse=False)
        return one.replace("m-\u00e9".encode(), f"m-{n}-{i}".encode())

    caches = [ChunkLines(), ChunkLines()]
    seen: list[set[str]] = [set(), set()]
    failures: list[object] = []
    start = threading.Barrier(2)

    def work(n: int) -> None:
        start.wait()
        for k in range(600):
            line = stream(n, k % 3)
            got = caches[n].decode_line(line)
            if got != decode_line(line):
                failures.append(got)
            seen[n].update(t.message_id for t in caches[n].kept)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []
    assert seen == [{"m-0-0", "m-0-1", "m-0-2"}, {"m-1-0", "m-1-1", "m-1-2"}]
    # Each really decoded by its compact lines (the check can fail).
    assert caches[0].decode(stream(0, 1)) is not None and caches[1].decode(stream(0, 1)) is None
