"""The event log fed as the connection feeds it: ``raw`` is the received line (bytes).

Every update received, known or not, is appended to an ordered event log with
its raw payload. The log keeps only the line and decodes it again on read; what
is read back must equal what a dict-fed log holds, and the rules that look at the raw
payload (a malformed background list, a chunk without messageId) must still fire.
"""

from __future__ import annotations

import json
from typing import Any

from acp_lite.model import SessionModel
from acp_lite.protocol import Notification, UnrecognizedSessionUpdate, decode_line
from acp_lite.protocol.chunk_lines import ChunkLines

from .helpers import bg_tool, chunk, feed, idle, message, rules, state, tool


def line_of(update: dict[str, Any], sid: str = "s") -> bytes:
    msg = {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": sid}}
    msg["params"]["update"] = update  # type: ignore[index]
    return json.dumps(msg).encode() + b"\n"


def feed_lines(model: SessionModel, *updates: dict[str, Any], replayed: bool = False) -> None:
    """Decode each update's line and apply it with the line as ``raw``, as the connection
    does."""
    for d in updates:
        line = line_of(d)
        msg = decode_line(line)
        assert isinstance(msg, Notification)
        model.apply(
            msg.params.update, raw=line, session_id=msg.params.session_id, replayed=replayed
        )


UPDATES: list[dict[str, Any]] = [
    chunk("m", "hello "),
    chunk("t", "hm", kind="agent_thought"),
    chunk("m", "world", _meta={"chunk": 1}),
    tool("c1", status="in_progress", title="Run", zz_unknown={"kept": [1, None]}),
    state("running", background=[bg_tool("c1")]),
    {"sessionUpdate": "_vendor_progress", "pct": 50},
    {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "x"}},
    message("m", ["replaced"]),
    idle("end_turn", background="not a list"),
]  # fmt: skip


def test_line_fed_log_reads_back_like_a_dict_fed_log() -> None:
    by_line, by_dict = SessionModel("s"), SessionModel("s")
    feed_lines(by_line, *UPDATES)
    feed(by_dict, *UPDATES)
    assert len(by_line.events) == len(UPDATES)
    for got, want, sent in zip(by_line.events, by_dict.events, UPDATES, strict=True):
        assert got.raw == sent == want.raw
        assert got.update == want.update and got.tag == want.tag
    assert isinstance(by_line.events[5].update, UnrecognizedSessionUpdate)
    assert by_line.events[5].tag == "_vendor_progress"
    # The same picture and the same conformance observations either way.
    assert rules(by_line) == rules(by_dict) == ["chunk-without-message-id", "background-malformed"]
    assert by_line.entity("agent_message", "m").text == "replaced"
    assert by_line.background is None and by_line.state == "idle"
    assert [(e.kind, e.id) for e in by_line.timeline] == [(e.kind, e.id) for e in by_dict.timeline]


def test_apply_returns_the_update_it_was_given_and_the_log_agrees() -> None:
    m = SessionModel("s")
    line = line_of(chunk("m", "x"))
    msg = decode_line(line)
    assert isinstance(msg, Notification)
    ev = m.apply(msg.params.update, raw=line, replayed=True)
    assert ev.update is msg.params.update
    assert ev == m.events[0] and m.events[0].replayed and ev.raw == chunk("m", "x")
    assert m.events[0].update is m.events[0].update  # decoded once, then kept


def test_compact_fed_log_reads_back_like_a_dict_fed_log() -> None:
    """A chunk fed with its stream's compact line as ``raw`` (one by one, or a run
    with ``feed_chunks``) reads back as decoding its line gives it."""
    cache = ChunkLines()
    texts = ["T:first ", "a", 'b "quoted"', "", "\u00e9\n"]
    lines = [line_of(chunk("m", x))[:-1] for x in texts]
    for line in lines:
        cache.decode_line(line)
    (compact,) = cache.kept
    by_compact, by_dict = SessionModel("s"), SessionModel("s")
    hit = cache.decode(lines[1])
    assert hit is not None and hit[2] is compact
    by_compact.apply(hit[1], raw=compact, session_id=hit[0])
    assert by_compact.feed_chunks(compact, texts[2:])
    assert not SessionModel("other").feed_chunks(compact, texts[2:])  # another session's stream
    feed(by_dict, *(chunk("m", x) for x in texts[1:]))
    assert len(by_compact.events) == len(texts) - 1
    for got, want in zip(by_compact.events, by_dict.events, strict=True):
        assert got.tag == want.tag == "agent_message_chunk"
        assert got.raw == want.raw and list(got.raw) == list(want.raw)
        assert got.update == want.update
    assert by_compact.text() == by_dict.text() == "".join(texts[1:])
