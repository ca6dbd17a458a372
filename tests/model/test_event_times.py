"""The event log keeps times run-length encoded (one per run of updates applied
together): every kept event still reads the time it was logged with, through appends,
chunk runs and trims of a bounded log."""

from __future__ import annotations

import random
from itertools import pairwise
from typing import Any

import pytest

from acp_lite.model.events import EventLog
from acp_lite.protocol.chunk_lines import ChunkLines

LINE = (
    b'{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":'
    b'{"sessionUpdate":"agent_message_chunk","messageId":"m1",'
    b'"content":{"type":"text","text":"first"}}}}'
)


def _compact() -> Any:
    lines = ChunkLines()
    lines.decode_line(LINE)
    return lines.kept[0]


@pytest.mark.parametrize("max_events", [None, 1, 3, 7])
def test_each_event_reads_its_own_time(max_events: int | None) -> None:
    log = EventLog(max_events)
    compact = _compact()
    rng = random.Random(max_events)
    expected: list[float] = []
    t = 0.0
    for _ in range(200):
        if rng.random() < 0.5:
            t += 1.0  # a new time (else this update shares the previous one's)
        if rng.random() < 0.3:
            n = rng.randint(1, 9)
            log.extend_chunks(compact, [f"x{len(expected) + k}" for k in range(n)], t, False)
            expected += [t] * n
        else:
            log.append(compact.update("y"), compact, t, False)
            expected.append(t)
    assert len(log) == len(expected)
    kept = range(log.dropped, len(log))
    assert max_events is None or len(kept) >= max_events
    assert [log.time(i) for i in kept] == expected[log.dropped :]
    assert [e.time for e in log] == expected[log.dropped :]
    # One stored time per run of equal times, not one per update.
    kept_times = expected[log.dropped :]
    runs = 1 + sum(a != b for a, b in pairwise(kept_times))
    assert len(log._times) <= runs + 1
