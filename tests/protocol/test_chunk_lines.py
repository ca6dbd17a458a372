"""Chunk-line templates (``protocol/_chunk_lines.py``) decode exactly like the full path.

A line is learned, then lines with the same bytes around the text and any other
bytes in its place are decoded both ways: with the template, and with no template
(json + the structure functions). Results must be identical, errors included.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis_budget import examples
from test_fast_decode import same

from acp_lite.protocol import Notification, decode_line, jsonrpc
from acp_lite.protocol._chunk_lines import ChunkLines


@contextmanager
def no_templates() -> Iterator[None]:
    saved, jsonrpc._CHUNK_LINES.templates = jsonrpc._CHUNK_LINES.templates, []
    tried, jsonrpc._CHUNK_LINES._tried = jsonrpc._CHUNK_LINES._tried, []
    try:
        yield
    finally:
        jsonrpc._CHUNK_LINES.templates, jsonrpc._CHUNK_LINES._tried = saved, tried


def full(line: bytes) -> Any:
    with no_templates():
        out = decode_line(line)
        jsonrpc._CHUNK_LINES.templates.clear()
    return out


def learned(line: bytes) -> ChunkLines:
    """A fresh template cache that has seen ``line``."""
    cache = ChunkLines()
    jsonrpc._CHUNK_LINES, saved = cache, jsonrpc._CHUNK_LINES
    try:
        decode_line(line)
    finally:
        jsonrpc._CHUNK_LINES = saved
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
def test_template_decodes_like_the_full_path(
    first: str, body: bytes, ascii_only: bool, spaced: bool, reverse: bool
) -> None:
    # "T:" keeps the learned text unlike every other string of the line (unambiguous).
    line0 = chunk_line("T:" + first, ascii_only=ascii_only, spaced=spaced, reverse=reverse)
    cache = learned(line0)
    assert len(cache.templates) == 1
    saved, jsonrpc._CHUNK_LINES = jsonrpc._CHUNK_LINES, cache
    try:
        for t in cache.templates:
            line = t.prefix + body + t.suffix
            via_template = decode_line(line)
            expected = full(line)
            same(via_template, expected)
            if isinstance(expected, Notification):
                same(via_template.raw_params, expected.raw_params)  # type: ignore[union-attr]
                hit = jsonrpc.decode_chunk_line(line)
                if hit is not None:
                    same(hit[:2], (expected.params.session_id, expected.params.update))
    finally:
        jsonrpc._CHUNK_LINES = saved


def test_a_learned_stream_is_decoded_by_its_template() -> None:
    """Guard against a test that cannot fail: the template path is really taken, for
    plain text and escapes, and only for lines of the learned stream."""
    cache = learned(chunk_line("hello", ascii_only=False, spaced=False, reverse=False))
    assert len(cache.templates) == 1
    t = cache.templates[0]
    for body, text in [(b"x", "x"), (b'a\\"b\\n\\u00e9', 'a"b\n\u00e9'), (b"", "")]:
        hit = cache.decode(t.prefix + body + t.suffix)
        assert hit is not None and hit[1].content.text == text and hit[2] is t
    for body in [b'a"b', b"\x01", b"\xff", b"\\x"]:
        assert cache.decode(t.prefix + body + t.suffix) is None
    other = chunk_line("hello", ascii_only=False, spaced=True, reverse=False)
    assert cache.decode(other) is None


def test_ambiguous_text_is_not_learned() -> None:
    # The text equals the message id: which one varies cannot be told from one line.
    line = chunk_line("m-\u00e9", ascii_only=False, spaced=False, reverse=False)
    assert learned(line).templates == []
    # A non-chunk line teaches nothing either.
    assert learned(b'{"jsonrpc":"2.0","id":1,"result":{}}').templates == []


def test_interleaved_streams_both_keep_their_template() -> None:
    def line(text: str, stream: int) -> bytes:  # two messages, lines of each alike
        one = chunk_line(text, ascii_only=False, spaced=False, reverse=False)
        return one if stream == 1 else one.replace("m-\u00e9".encode(), b"m-2")

    cache = learned(line("T:one", 1))
    saved, jsonrpc._CHUNK_LINES = jsonrpc._CHUNK_LINES, cache
    try:
        decode_line(line("T:two", 2))
        assert len(cache.templates) == 2
        for i in range(4):  # each hit moves its template to the front
            hit = cache.decode(line(f"x{i}", 1 + i % 2))
            assert hit is not None and hit[1].content.text == f"x{i}"
            assert hit[1].message_id == ("m-\u00e9" if i % 2 == 0 else "m-2")
            assert cache.templates[0] is hit[2] and len(cache.templates) == 2
    finally:
        jsonrpc._CHUNK_LINES = saved


def test_threads_sharing_the_templates_never_lose_a_line() -> None:
    """Every connection (one trio thread per blocking client) shares the templates;
    concurrent reordering must not make a line fail."""
    import threading

    lines = [  # ten streams (message ids): more than the templates kept, so they churn
        chunk_line("T:x", ascii_only=False, spaced=False, reverse=False).replace(
            "m-\u00e9".encode(), f"m-{i}".encode()
        )
        for i in range(10)
    ]
    failures: list[object] = []

    def work(offset: int) -> None:
        for k in range(600):
            got = decode_line(lines[(k + offset) % len(lines)])
            if not isinstance(got, Notification):
                failures.append(got)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []
