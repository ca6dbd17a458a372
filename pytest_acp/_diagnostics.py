"""What a failing test's report shows: the wire transcript, trimmed, and the agent's
stderr tail; and saving transcripts as NDJSON (``--acp-transcripts``)."""

from __future__ import annotations

import functools
import os
import re
import sys
import types
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from acp_lite.transcript import dumps_record

if TYPE_CHECKING:
    from _pytest._code import ExceptionInfo

__all__ = [
    "fail_test",
    "hide_library_frames",
    "library_dirs",
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


@functools.cache
def library_dirs() -> tuple[str, ...]:
    """The directories of acp_lite, pytest_acp and the trio machinery under them:
    where the user's own frames end."""
    import outcome
    import trio

    return tuple(
        str(Path(str(module.__file__)).parent) + os.sep
        for module in (sys.modules["acp_lite"], sys.modules["pytest_acp"], trio, outcome)
    )


@functools.cache
def _runner_dirs() -> tuple[str, ...]:
    """pytest's and pluggy's directories (frames pytest itself leaves out)."""
    import _pytest
    import pluggy

    return tuple(str(Path(str(m.__file__)).parent) + os.sep for m in (_pytest, pluggy))


def hide_library_frames(excinfo: ExceptionInfo[BaseException]) -> None:
    """Drop acp_lite's and trio's frames from the traceback pytest shows for an
    acp_lite error (``AgentExited``, ``Timeout``, ``PromptInvalidParams`` ...): the
    user's call that raised it stays, and so do frames of the user's code that
    acp_lite called back. The exception itself is untouched (``--full-trace``
    shows every frame: the caller does not call this then)."""
    errors = sys.modules.get("acp_lite.errors")  # not loaded: no acp_lite error either
    if errors is None:
        return
    value = excinfo.value
    if isinstance(value, BaseExceptionGroup):
        # A trio test's failure (pytest-trio: a nursery's group). pytest prints a
        # group natively, from the exceptions' own tracebacks: the acp_lite errors
        # in it get the user's frames only (only for this report: the test is over).
        for leaf in _leaves(value):
            if isinstance(leaf, errors.AcpError):
                chain = _user_chain(leaf.__traceback__)
                if chain is not None:
                    leaf.__traceback__ = chain
        return
    if not isinstance(value, errors.AcpError):
        return
    chain = _user_chain(excinfo.tb)
    if chain is not None:
        # A new chain of the kept frames: pytest cuts the shown traceback at the
        # test's frame by following the raw entries' tb_next, so filtered entries
        # alone would come back. (Its Traceback type is taken from excinfo: it is
        # not public.)
        excinfo.traceback = type(excinfo.traceback)(chain)


def _leaves(group: BaseExceptionGroup[BaseException]) -> list[BaseException]:
    out: list[BaseException] = []
    for exc in group.exceptions:
        out.extend(_leaves(exc) if isinstance(exc, BaseExceptionGroup) else [exc])
    return out


def _user_chain(tb: types.TracebackType | None) -> types.TracebackType | None:
    """A new traceback of the frames of ``tb`` outside acp_lite, pytest_acp, trio and
    outcome; ``None`` when only pytest's own would be left (raised in a fixture of
    ours, say: pytest then shows its own frames)."""
    hidden = library_dirs()
    kept: list[types.TracebackType] = []
    while tb is not None:
        if not tb.tb_frame.f_code.co_filename.startswith(hidden):
            kept.append(tb)
        tb = tb.tb_next
    runner = _runner_dirs()
    if not any(not t.tb_frame.f_code.co_filename.startswith(runner) for t in kept):
        return None
    chain: types.TracebackType | None = None
    for t in reversed(kept):
        chain = types.TracebackType(chain, t.tb_frame, t.tb_lasti, t.tb_lineno)
    return chain


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
