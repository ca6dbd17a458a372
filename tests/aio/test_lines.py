"""The line reader: framing, oversize lines, end of stream."""

from __future__ import annotations

import pytest
import trio
import trio.testing

from acp_lite.aio._lines import LineReader, OversizeLine


def test_lines_split_across_chunks() -> None:
    r = LineReader(trio.testing.MemoryReceiveStream(), max_line_bytes=100)
    assert r.feed(b'{"a":') == []
    assert r.feed(b"1}\n{") == [b'{"a":1}']
    assert r.feed(b"}\n\n[]\n") == [b"{}", b"", b"[]"]


def test_oversize_line_is_skipped_to_its_newline_and_reported() -> None:
    r = LineReader(trio.testing.MemoryReceiveStream(), max_line_bytes=10)
    assert r.feed(b"ok\n" + b"x" * 8) == [b"ok"]
    assert r.feed(b"y" * 5) == []  # now 13 bytes without newline: skipping
    assert r.feed(b"z" * 100) == []
    out = r.feed(b"zz\nnext\n")
    assert out == [OversizeLine(8 + 5 + 100 + 2, b"x" * 8 + b"y" * 5), b"next"]


def test_oversize_line_within_one_chunk() -> None:
    r = LineReader(trio.testing.MemoryReceiveStream(), max_line_bytes=4)
    out = r.feed(b"12345678\nab\n")
    assert out == [OversizeLine(8, b"12345678"), b"ab"]


def test_long_line_spanning_many_chunks_under_limit() -> None:
    r = LineReader(trio.testing.MemoryReceiveStream(), max_line_bytes=1 << 20)
    for _ in range(100):
        assert r.feed(b"a" * 1000) == []
    assert r.feed(b"\n") == [b"a" * 100_000]


@pytest.mark.trio
async def test_receive_lines_until_eof_with_partial_last_line() -> None:
    send, recv = trio.testing.memory_stream_one_way_pair()
    r = LineReader(recv, max_line_bytes=100, receive_size=4)
    await send.send_all(b"one\ntwo\nthr")
    await send.aclose()
    got: list[bytes | OversizeLine] = []
    while (lines := await r.receive_lines()) is not None:
        got.extend(lines)
    assert got == [b"one", b"two", b"thr"]
