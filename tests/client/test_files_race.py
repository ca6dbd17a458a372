"""Confinement under a race: another process swaps ``ws/d`` between a directory and
a symlink to outside while ``LocalFiles`` reads and writes through it (issue 24:
54 of 3,000 reads returned the outside file, a write landed outside). Also what
confinement does not cover: a hard link (``docs/v1.md``)."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from acp_lite.files import HandlerError, LocalFiles, PathNotAllowed, Workspace

# ws/d: a directory, then (moved to ws/d.real) a symlink to OUTSIDE, then back.
_SWAP = """
import os, sys
d, real, outside = sys.argv[1:]

def held():  # each state lasts a few system calls
    for _ in range(4):
        os.stat(d)

print("ready", flush=True)
while True:
    os.rename(d, real)
    os.symlink(outside, d)
    held()
    os.unlink(d)
    os.rename(real, d)
    held()
"""


@contextlib.contextmanager
def swapping(directory: Path, outside: Path) -> Iterator[None]:
    """While inside: ``directory`` is, by turns, itself and a symlink to ``outside``
    (its content then at ``directory.real``). Afterwards it is a directory again."""
    real = directory.with_name(directory.name + ".real")
    args = [sys.executable, "-c", _SWAP, str(directory), str(real), str(outside)]
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline() == "ready\n"
        yield
    finally:
        proc.kill()
        proc.wait(timeout=10)
        if proc.stdout is not None:
            proc.stdout.close()
        # Killed anywhere in its cycle: put the directory back.
        if directory.is_symlink():
            directory.unlink()
        if real.exists():
            real.rename(directory)


#: How long each loop races (the test stays well under 2 s), and at most.
RACE = 0.3
HARD = 10.0


def _racing(start: float, seen_both: object) -> bool:
    elapsed = time.monotonic() - start
    return elapsed < RACE or (not seen_both and elapsed < HARD)


def tmp_files(*roots: Path) -> list[str]:
    return [
        name for root in roots for _, _, names in os.walk(root) for name in names if ".tmp" in name
    ]


def test_a_directory_swapped_for_a_symlink_never_leads_out(tmp_path: Path) -> None:
    ws, outside = tmp_path / "ws", tmp_path / "outside"
    (ws / "d").mkdir(parents=True)
    outside.mkdir()
    (ws / "d" / "f").write_text("inside")
    (outside / "f").write_text("outside")
    workspace = Workspace("s1", str(ws))
    files = LocalFiles()
    read, refused, written, wrote = [], 0, 0, 0
    with swapping(ws / "d", outside):
        # RACE seconds each, longer (up to HARD) until the race was seen both ways: on
        # a loaded machine every attempt of a short window can land on the symlink.
        start = time.monotonic()
        while _racing(start, refused and read):
            try:
                read.append(files.read_text_file(workspace, str(ws / "d" / "f")))
            except (PathNotAllowed, HandlerError, OSError):
                refused += 1
        start = time.monotonic()
        while _racing(start, refused and wrote):
            try:
                files.write_text_file(workspace, str(ws / "d" / f"w{written}"), "x")
                wrote += 1
            except (PathNotAllowed, HandlerError, OSError):
                refused += 1
            written += 1
    assert refused and (read or wrote), (len(read), wrote, refused)  # the race did run
    assert set(read) <= {"inside"}, f"{read.count('outside')} of {len(read)} reads lead out"
    assert sorted(os.listdir(outside)) == ["f"]
    assert tmp_files(ws, outside) == []


def test_a_hard_link_to_an_outside_file_is_read_but_never_written_through(
    tmp_path: Path,
) -> None:
    # Confinement is by path: a hard link is the outside file under an inside
    # name (the agent, or whoever made it, could read that file anyway). A write
    # replaces the name with a new file, so the outside one is left unchanged.
    ws, outside = tmp_path / "ws", tmp_path / "outside"
    ws.mkdir()
    outside.mkdir()
    (outside / "secret").write_text("secret")
    os.link(outside / "secret", ws / "link")
    workspace = Workspace("s1", str(ws))
    files = LocalFiles()
    assert files.read_text_file(workspace, str(ws / "link")) == "secret"
    files.write_text_file(workspace, str(ws / "link"), "new")
    assert (outside / "secret").read_text() == "secret"
    assert (ws / "link").read_text() == "new"


def test_the_walk_follows_no_symlink_and_open_directory_is_confined(tmp_path: Path) -> None:
    from acp_lite.files import _open_directory, _open_regular

    ws, outside = tmp_path / "ws", tmp_path / "outside"
    (ws / "d").mkdir(parents=True)
    outside.mkdir()
    (outside / "f").write_text("outside")
    (ws / "link").symlink_to(outside)
    (ws / "file").write_text("x")
    # As if ws/link had been a directory when checked: the walk refuses the symlink.
    with pytest.raises(PathNotAllowed, match="changed while it was opened"):
        _open_directory(str(ws / "link"), "p")
    with pytest.raises(PathNotAllowed, match="changed while it was opened"):
        _open_regular(str(ws / "link" / "f"), "p")
    workspace = Workspace("s1", str(ws))
    fd = workspace.open_directory(str(ws / "d"))
    try:
        assert os.path.samestat(os.fstat(fd), os.stat(ws / "d"))
    finally:
        os.close(fd)
    with pytest.raises(PathNotAllowed, match="leads through a symlink"):
        workspace.open_directory(str(ws / "link"))
    with pytest.raises(HandlerError, match="not a directory") as not_dir:
        workspace.open_directory(str(ws / "file"))
    assert not_dir.value.code == -32002


def test_a_file_where_a_directory_should_be_and_a_long_name(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    workspace = Workspace("s1", str(tmp_path))
    files = LocalFiles(create_dirs=True)
    with pytest.raises(HandlerError, match=r"the directory of .* does not exist") as missing:
        files.write_text_file(workspace, str(tmp_path / "file" / "new"), "y")
    assert missing.value.code == -32002
    with pytest.raises(NotADirectoryError):
        files.read_text_file(workspace, str(tmp_path / "file" / "new"))
    long = "é" * 127  # 254 bytes: the temporary name must still fit
    files.write_text_file(workspace, str(tmp_path / long), "z")
    assert (tmp_path / long).read_text() == "z"
    assert sorted(os.listdir(tmp_path)) == sorted(["file", long])
