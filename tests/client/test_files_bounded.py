"""``LocalFiles`` reads in bounded blocks (issue 24, item 5).

A file with one huge line (no newline) used to be read whole before the limit
was checked: a 1 GB line peaked at 1.5 GB. Now a read costs at most a block
beyond the answer, whether the line is skipped (``line``), cut (``limit``) or
refused (over ``max_read_bytes``); the line semantics stay those of Python's
universal newlines, kept as they are.
"""

from __future__ import annotations

import io
import itertools
import tracemalloc
from pathlib import Path

import pytest

from acp_lite import files
from acp_lite.files import HandlerError, LocalFiles, Workspace

HUGE = 4 * 1024 * 1024  # characters on the one long line


@pytest.fixture
def huge(tmp_path: Path) -> Path:
    path = tmp_path / "huge.txt"
    with path.open("w") as f:
        for _ in range(HUGE // 65536):
            f.write("x" * 65536)
        f.write("\nlast\n")
    return path


def peak_of(call: object) -> int:
    tracemalloc.start()
    try:
        call()  # type: ignore[operator]
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_skipping_a_huge_line_costs_a_block(huge: Path) -> None:
    ws = Workspace("s1", str(huge.parent))
    got: list[str] = []
    peak = peak_of(lambda: got.append(LocalFiles().read_text_file(ws, str(huge), 2, None)))
    assert got == ["last\n"]
    assert peak < HUGE // 8, peak


def test_refusing_a_huge_line_costs_the_limit_and_a_block(huge: Path) -> None:
    ws = Workspace("s1", str(huge.parent))
    reader = LocalFiles(max_read_bytes=256 * 1024)

    def read() -> None:
        with pytest.raises(HandlerError, match="exceed 262144 characters"):
            reader.read_text_file(ws, str(huge), 1, 1)

    assert peak_of(read) < HUGE // 8


@pytest.mark.parametrize("block", [1, 2, 3, 5])
def test_pieces_keep_the_lines_of_universal_newlines(block: int) -> None:
    # Every text of up to 5 characters over these (a "\r\n" falls on each block
    # boundary somewhere), read as LocalFiles reads a file: the same lines as
    # Python's own line iteration.
    for n in range(6):
        for chars in itertools.product("a\r\né", repeat=n):
            text = "".join(chars)
            f = io.TextIOWrapper(io.BytesIO(text.encode()), encoding="utf-8", newline="")
            lines, current = [], ""
            for piece, ends in files._pieces(f, block):
                assert 0 < len(piece) <= block
                current += piece
                if ends:
                    lines.append(current)
                    current = ""
            lines += [current] if current else []
            assert lines == io.StringIO(text, newline="").readlines(), text


def test_line_and_limit_over_pieces(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(files, "READ_BLOCK", 2)
    path = tmp_path / "t.txt"
    path.write_bytes(b"one\r\ntwo\rthree\nfour")
    ws = Workspace("s1", str(tmp_path))
    read = LocalFiles().read_text_file
    lines = ["one\r\n", "two\r", "three\n", "four"]
    for line, limit in [(None, None), (0, None), (2, None), (2, 1), (1, 3), (3, 0), (5, None)]:
        first = max(line or 1, 1) - 1
        want = "".join(lines[first:] if limit is None else lines[first : first + limit])
        assert read(ws, str(path), line, limit) == want, (line, limit)
