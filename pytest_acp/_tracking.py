"""Which ACP clients a test used, and where its traffic starts in their transcripts.

Kept in the test item's stash (no module globals: safe under xdist and with
several pytest sessions in one process, as in pytester runs).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs
import pytest

from acp_lite.transcript import dumps_record
from pytest_acp._diagnostics import save_transcript, transcript_file
from pytest_acp._safejson import NOT_JSON, loads

# The conformance checks (and the session model under them) load when a test's
# traffic is checked: the plugin is imported by every pytest run, ACP or not.
if TYPE_CHECKING:
    from acp_lite.jsontypes import JsonValue
    from acp_lite.transcript import TranscriptEntry
    from pytest_acp._incremental import IncrementalCheck
    from pytest_acp.conformance import Violation

__all__ = [
    "TRACKED",
    "VIOLATIONS",
    "TestTranscript",
    "Tracked",
    "save_transcripts",
    "track",
    "tracked_violations",
    "traffic_of",
]


@attrs.define
class Tracked:
    """A client used by a test and where the test's traffic starts in its transcript."""

    client: Any
    start: int  # absolute index (entries dropped by a retention bound included)
    #: The connection-rule state of a shared client's traffic (None: a fresh
    #: client, checked from its transcript at once).
    check: IncrementalCheck | None = None


TRACKED = pytest.StashKey[list[Tracked]]()
VIOLATIONS = pytest.StashKey["list[Violation]"]()


def _absolute_len(client: Any) -> int:
    transcript = client.transcript
    return len(transcript) + int(getattr(transcript, "dropped", 0))


def track(node: pytest.Item, client: Any, *, fresh: bool = False, check: Any = None) -> None:
    """Record that the test ``node`` uses ``client``. A ``fresh`` client's traffic is
    all the test's (handshake included); a shared one's starts now."""
    start = 0 if fresh else _absolute_len(client)
    node.stash.setdefault(TRACKED, []).append(Tracked(client, start, check))


def tracked_violations(
    tracked: Tracked, *, ended: bool = False, agent_exited: bool = False
) -> list[Violation]:
    """The conformance violations of the test's traffic with ``tracked.client``, located
    in its retained transcript: the connection rules over the wire lines (each line
    read once per connection), the session model's rules from the client's live
    models. ``ended``/``agent_exited``: see ``ConnectionChecker.finish``."""
    from pytest_acp._incremental import IncrementalCheck, live_violations, shifted

    check = tracked.check if tracked.check is not None else IncrementalCheck()
    dropped = check.feed_from(tracked.client.transcript)
    connection = check.violations(start=tracked.start, ended=ended, agent_exited=agent_exited)
    return shifted(live_violations(tracked.client, connection, start=tracked.start), dropped)


def traffic_of(tracked: Tracked) -> tuple[list[Any], int]:
    """All retained entries of the client, and the index where the test's traffic starts."""
    transcript = tracked.client.transcript
    entries = list(transcript.entries() if hasattr(transcript, "entries") else transcript)
    dropped = int(getattr(transcript, "dropped", 0))
    return entries, max(0, tracked.start - dropped)


class TestTranscript:
    """The wire transcript of the current test so far (the ``acp_transcript`` fixture):
    every line sent and received by the test's ACP clients, in time order."""

    __test__ = False  # not a test class, despite the name

    def __init__(self, node: pytest.Item) -> None:
        self._node = node

    def entries(self) -> list[TranscriptEntry]:
        """``TranscriptEntry`` objects (``direction``, ``time``, ``line``)."""
        out: list[TranscriptEntry] = []
        for tracked in self._node.stash.get(TRACKED, []):
            entries, start = traffic_of(tracked)
            out.extend(entries[start:])
        out.sort(key=lambda e: e.time)
        return out

    def messages(self, direction: str | None = None) -> list[JsonValue]:
        """Decoded JSON values (a non-JSON line is kept as its text)."""
        out: list[JsonValue] = []
        for e in self.entries():
            if direction is None or e.direction == direction:
                value = loads(e.line)
                out.append(e.line.decode("utf-8", "replace") if value is NOT_JSON else value)
        return out

    def violations(self) -> list[Violation]:
        """Conformance violations in the test's traffic so far (waivers not applied)."""
        found: list[Violation] = []
        for tracked in self._node.stash.get(TRACKED, []):
            found.extend(tracked_violations(tracked))
        return found

    def to_ndjson(self) -> str:
        """NDJSON records (docs/architecture.md "Transcript")."""
        entries = self.entries()
        t0 = entries[0].time if entries else 0.0
        lines = []
        for e in entries:
            lines.append(dumps_record(e.to_record(t0)) + "\n")
        return "".join(lines)

    def __len__(self) -> int:
        return len(self.entries())

    def __iter__(self) -> Iterator[Any]:
        return iter(self.entries())

    def __getitem__(self, index: int) -> Any:
        return self.entries()[index]

    def __repr__(self) -> str:
        return f"<TestTranscript {len(self)} entries>"


def save_transcripts(item: pytest.Item, tracked: list[Tracked]) -> None:
    """Save each client's traffic of ``item`` as NDJSON (``--acp-transcripts DIR``)."""
    value = item.config.getoption("acp_transcripts", None) or item.config.getini("acp_transcripts")
    if not value or not tracked:
        return
    directory = Path(value)
    if not directory.is_absolute():
        directory = Path(item.config.invocation_params.dir) / directory
    for n, t in enumerate(tracked):
        entries, start = traffic_of(t)
        save_transcript(transcript_file(directory, item.nodeid, n), entries[start:])
