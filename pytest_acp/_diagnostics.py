"""What a failing test's report shows: the wire transcript, trimmed, and the agent's
stderr tail; and saving transcripts as NDJSON (``--acp-transcripts``)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

from acp_lite.transcript import dumps_record

__all__ = [
    "fail_test",
    "render_stderr",
    "render_transcript",
    "save_transcript",
    "transcript_file",
]

HEAD_LINES = 8  # the handshake and session setup: how the test started
TAIL_LINES = 60  # what happened last: usually why it failed
MAX_LINE_CHARS = 300


def _clip(text: str, limit: int = MAX_LINE_CHARS) -> str:
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... (+{len(text) - limit} chars)"


def _line_text(line: bytes | str) -> str:
    return line.decode("utf-8", "replace") if isinstance(line, bytes) else line


def fail_test(message: str) -> NoReturn:
    """Fail the test with ``message`` alone, no traceback.

    This frame is deliberately not hidden: when every frame of a ``pytrace=False``
    failure is (``__tracebackhide__`` in the fixtures), pytest appends "All traceback
    entries are hidden. Pass `--full-trace` ..." to the one-line message."""
    import pytest  # not at module level: ``python -m pytest_acp check`` runs without it

    pytest.fail(message, pytrace=False)


def render_transcript(entries: Sequence[Any], *, start: int = 0) -> str:
    """Both directions, one line each (``-->`` sent, ``<--`` received), with the time
    since the first shown entry; long transcripts keep their head and tail and long
    lines are clipped, so a CI log stays readable."""
    shown = list(entries)
    if not shown:
        return "(no traffic)"
    t0 = shown[0].time
    out: list[str] = []

    def fmt(i: int, entry: Any) -> str:
        arrow = "-->" if entry.direction == "send" else "<--"
        return f"{start + i:5d} {entry.time - t0:8.3f}s {arrow} {_clip(_line_text(entry.line))}"

    if len(shown) <= HEAD_LINES + TAIL_LINES:
        out.extend(fmt(i, e) for i, e in enumerate(shown))
    else:
        out.extend(fmt(i, e) for i, e in enumerate(shown[:HEAD_LINES]))
        omitted = len(shown) - HEAD_LINES - TAIL_LINES
        out.append(f"      ... {omitted} lines omitted (use --acp-transcripts DIR for all) ...")
        tail_start = len(shown) - TAIL_LINES
        out.extend(fmt(tail_start + i, e) for i, e in enumerate(shown[tail_start:]))
    return "\n".join(out)


def render_stderr(lines: Sequence[str]) -> str:
    """The agent's stderr tail (already bounded by the client's limits)."""
    return "\n".join(_clip(line.rstrip("\n"), 1000) for line in lines) or "(empty)"


def transcript_file(directory: Path, nodeid: str, n: int) -> Path:
    """A file name for a test's ``n``-th connection, unique per test id (and thus per
    xdist worker: each test runs in one worker)."""
    name = re.sub(r"[^A-Za-z0-9_.\-\[\]]+", "_", nodeid).strip("_") or "test"
    if len(name) > 180:
        name = name[:180]
    suffix = "" if n == 0 else f".{n + 1}"
    return directory / f"{name}{suffix}.ndjson"


def save_transcript(path: Path, entries: Sequence[Any]) -> None:
    """NDJSON records as in docs/architecture.md "Transcript"; times are relative to
    the first saved entry."""
    path.parent.mkdir(parents=True, exist_ok=True)
    t0 = entries[0].time if entries else 0.0
    with path.open("w", encoding="utf-8") as f:
        for e in entries:
            # Strict, valid NDJSON whatever the line holds (acp_lite.transcript).
            f.write(dumps_record(e.to_record(t0)) + "\n")
