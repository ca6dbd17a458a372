"""Conformance of a shared agent's traffic, checked as it grows.

With ``--acp-scope=module|session`` one connection serves many tests, and each test's
check needs the state built by all earlier traffic. Replaying the whole transcript
for every test made a suite quadratic in its traffic. Here each line is fed once,
to a :class:`~pytest_acp.conformance.ConnectionChecker` that lives as long as the
connection; a test's report finishes a *copy* of it, so the original can keep
going. The session model's rules come from the client's live models
(:func:`live_violations`), not from a replay.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

import attrs

from pytest_acp._model_replay import drop_duplicates
from pytest_acp.conformance import RULES, ConnectionChecker, Violation

__all__ = ["IncrementalCheck", "live_violations", "shifted"]


class IncrementalCheck:
    """Connection-rule state of one connection; entry indices are absolute (counting
    entries the transcript's retention bound dropped)."""

    def __init__(self) -> None:
        self._checker = ConnectionChecker()
        self.fed = 0  # absolute index of the next entry to feed

    def feed(self, entries: Sequence[Any], first: int) -> None:
        """Feed the not yet seen ones of ``entries`` (``TranscriptEntry`` objects whose
        first has absolute index ``first``)."""
        skip = max(0, self.fed - first)
        for offset, entry in enumerate(entries[skip:]):
            self._checker.feed(entry.direction, entry.line, first + skip + offset, entry.time)
        self.fed = max(self.fed, first + len(entries))

    def feed_from(self, transcript: Any) -> int:
        """Feed what ``transcript`` (an ``acp_lite.transcript.Transcript``) recorded
        since the last call, reading only the new entries; returns how many entries
        its retention bound has dropped."""
        while True:
            dropped = int(transcript.dropped)
            first = max(self.fed, dropped)
            # As kept: a streamed chunk's line kept as its text is fed without being
            # rebuilt and decoded (ConnectionChecker.feed_chunk), the rest as lines.
            new = transcript.stored(first - dropped)
            # A bounded transcript that dropped entries meanwhile shifted its
            # positions: read again.
            if transcript.dropped == dropped:
                break
        checker = self._checker
        for offset, (direction, time, item, shape) in enumerate(new):
            if shape is None:
                checker.feed(direction, item, first + offset, time)
            else:
                stream = getattr(shape, "compact", shape)  # an EscapedLine's stream
                checker.feed_chunk(direction, stream.session_id, stream.tag, first + offset, time)
        self.fed = max(self.fed, first + len(new))
        return dropped

    def violations(
        self, *, start: int, ended: bool = False, agent_exited: bool = False
    ) -> list[Violation]:
        """Connection-rule violations located at or after absolute index ``start`` (or
        nowhere), as if the traffic stopped now; the state is left as it was."""
        # finish() records end-of-traffic findings: run it on a copy. finish() only
        # appends to `violations` (and sets its done flag) and reads the rest, so a
        # shallow copy with its own list is enough; a deep copy would cost O(every
        # session so far) per test. test_incremental.py checks that the state is
        # left intact (results equal check_transcript's at every split point).
        checker = copy.copy(self._checker)
        checker.violations = list(self._checker.violations)
        found = list(checker.finish(ended=ended, agent_exited=agent_exited))
        return [v for v in found if v.entry_index is None or v.entry_index >= start]


def live_violations(client: Any, connection: list[Violation], *, start: int) -> list[Violation]:
    """``connection`` (connection-rule findings, absolute indices) plus the session
    model's findings from ``client``'s live models (``client.violations()``, the
    client connected with ``conformance=True``), both at or after absolute index
    ``start``; a model finding that a connection rule reports at the same line is
    left out, so each finding is reported once."""
    model = [
        v
        for v in client.violations(since=start)
        if v.rule not in RULES and (v.entry_index is None or v.entry_index >= start)
    ]
    return drop_duplicates(connection + model)


def shifted(violations: list[Violation], dropped: int) -> list[Violation]:
    """Absolute entry indices to positions in the retained transcript (as the report's
    transcript section numbers them)."""
    if not dropped:
        return violations
    return [
        v if v.entry_index is None else attrs.evolve(v, entry_index=v.entry_index - dropped)
        for v in violations
    ]
