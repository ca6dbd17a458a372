"""Framing (the core's LineFramer): split lines, oversize lines, end of stream."""

from __future__ import annotations

from acp_lite.core import LineFramer, OversizeLine


def test_lines_split_across_chunks() -> None:
    r = LineFramer(100)
    assert r.feed(b'{"a":') == []
    assert r.feed(b"1}\n{") == [b'{"a":1}']
    assert r.feed(b"}\n\n[]\n") == [b"{}", b"", b"[]"]


def test_oversize_line_is_skipped_to_its_newline_and_reported() -> None:
    r = LineFramer(10)
    assert r.feed(b"ok\n" + b"x" * 8) == [b"ok"]
    assert r.feed(b"y" * 5) == []  # now 13 bytes without newline: skipping
    assert r.feed(b"z" * 100) == []
    out = r.feed(b"zz\nnext\n")
    assert out == [OversizeLine(8 + 5 + 100 + 2, b"x" * 8 + b"y" * 5), b"next"]


def test_oversize_line_within_one_chunk() -> None:
    r = LineFramer(4)
    out = r.feed(b"12345678\nab\n")
    assert out == [OversizeLine(8, b"12345678"), b"ab"]


def test_long_line_spanning_many_chunks_under_limit() -> None:
    r = LineFramer(1 << 20)
    for _ in range(100):
        assert r.feed(b"a" * 1000) == []
    assert r.feed(b"\n") == [b"a" * 100_000]


def test_end_of_stream_returns_the_partial_last_line() -> None:
    r = LineFramer(100)
    got: list[bytes | OversizeLine] = []
    for piece in (b"one\nt", b"wo\nthr"):
        got.extend(r.feed(piece))
    got.extend(r.finish())
    assert got == [b"one", b"two", b"thr"]
    assert r.finish() == []


def test_end_of_stream_inside_an_oversize_line_reports_it() -> None:
    r = LineFramer(4)
    assert r.feed(b"ok\n123456") == [b"ok"]
    assert r.finish() == [OversizeLine(6, b"123456")]
