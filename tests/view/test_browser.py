"""The page in a real browser: headless Chromium runs its script and draws it.

Chromium must be installed (``.ci/run`` installs the Debian package when it is
missing): without it these tests fail, so a CI without a browser does not pass
them unseen. ``ACP_LITE_NO_BROWSER=1`` skips them (a machine that cannot have one).
Three launches in all, each with its own profile directory and a 60 s timeout (a
hang guard, not a timing assertion).
"""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from acp_lite.view import read_timelines, write_html
from acp_lite.view.items import Permission

from .conftest import write_ndjson

Records = Callable[..., list[dict[str, Any]]]
TIMEOUT = 60


def chromium() -> str:
    if os.environ.get("ACP_LITE_NO_BROWSER") == "1":
        pytest.skip("ACP_LITE_NO_BROWSER=1")
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        pytest.fail(
            "chromium is not installed (apt-get install chromium; .ci/run does it); "
            "set ACP_LITE_NO_BROWSER=1 to skip the browser tests"
        )
    return found


def run_chromium(
    tmp_path: Path, page: Path, *args: str, fragment: str = ""
) -> subprocess.CompletedProcess[str]:
    profile = tmp_path / "profile"
    profile.mkdir(exist_ok=True)
    argv = [
        chromium(),
        "--headless",
        "--disable-gpu",
        "--no-sandbox",
        "--no-first-run",
        f"--user-data-dir={profile}",
        *args,
        page.resolve().as_uri() + fragment,
    ]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=TIMEOUT, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return done


@pytest.fixture
def turn_page(tmp_path: Path, scenario_records: Records) -> Path:
    """A turn with a tool call, its permission request and a message."""
    source = write_ndjson(tmp_path / "turn.ndjson", scenario_records("tool_call_permission"))
    return write_html(source, tmp_path / "turn.html")


def test_the_script_runs_and_the_items_are_rendered(tmp_path: Path, turn_page: Path) -> None:
    (timeline,) = read_timelines(tmp_path / "turn.ndjson")
    asked = next(n for n, i in enumerate(timeline.items) if isinstance(i, Permission))
    target = f"i-0-{asked}"
    dom = run_chromium(tmp_path, turn_page, "--dump-dom", fragment=f"#{target}").stdout
    # Written by the page's script: the count of items, on the body and in the header.
    assert 'data-ready="12"' in dom, dom[:500]
    assert "12 of 12 items shown" in dom
    assert "Write notes.txt" in dom and "pending → in_progress → completed" in dom
    assert "Allow writing notes.txt?" in dom and "Allow once [allow_once]" in dom
    assert "Done: notes.txt is written." in dom
    # The item the URL names is marked, its wire lines open; the others stay closed.
    item = dom.split(f'id="{target}"', 1)[1].split('<li class="item', 1)[0]
    before = dom.split(f'id="{target}"', 1)[0]
    assert '<details class="wire" open="">' in item
    assert 'class="item k-permission target"' in before[-200:]
    assert "open=" not in before.split("<main>", 1)[1]


def png_rows(data: bytes) -> tuple[int, int, list[bytes]]:
    """Width, height and the (filtered) scanlines of a non-interlaced 8-bit PNG."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, header = 8, [], b""
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + length]
        if kind == b"IHDR":
            header = body
        elif kind == b"IDAT":
            idat.append(body)
        pos += 12 + length
    width, height, depth, color = struct.unpack(">IIBB", header[:10])
    assert depth == 8 and color in (2, 6), (depth, color)
    stride = 1 + width * (4 if color == 6 else 3)
    raw = zlib.decompress(b"".join(idat))
    assert len(raw) == stride * height
    return width, height, [raw[i : i + stride] for i in range(0, len(raw), stride)]


def test_a_screenshot_is_not_blank(tmp_path: Path, turn_page: Path) -> None:
    shot = tmp_path / "shot.png"
    run_chromium(tmp_path, turn_page, f"--screenshot={shot}", "--window-size=1200,2000")
    width, height, rows = png_rows(shot.read_bytes())
    assert (width, height) == (1200, 2000)
    # A blank page filters to a handful of identical rows; drawn text gives many.
    assert len(set(rows)) > 200, len(set(rows))


def test_a_200k_chunk_page_loads(tmp_path: Path, flood_page: Path) -> None:
    dom = run_chromium(tmp_path, flood_page, "--dump-dom").stdout
    assert "data-ready=" in dom and "items shown" in dom


def test_a_missing_browser_fails_unless_told_to_skip(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no chromium on it
    monkeypatch.delenv("ACP_LITE_NO_BROWSER", raising=False)
    with pytest.raises(pytest.fail.Exception, match="chromium is not installed"):
        chromium()
    monkeypatch.setenv("ACP_LITE_NO_BROWSER", "1")
    with pytest.raises(pytest.skip.Exception):
        chromium()
