"""Each connection decodes chunk lines by compact lines of its own (issue 22).

The compact lines a connection learns from its agent's stream (``protocol/
chunk_lines.py``) are its own: nothing module-global changes at run time, so one
connection's fast path never depends on another's traffic, even in another thread.
"""

from __future__ import annotations

import threading

from acp_lite.core import ClientConnection
from acp_lite.protocol.chunk_lines import ChunkLines

from .test_connection import opened, update


def lines_of(conn: ClientConnection) -> ChunkLines:
    """The cache ``conn`` decodes with (its v2 dialect's)."""
    lines = conn.dialect.chunk_lines
    assert lines is not None
    return lines


def chunk(mid: str, text: str) -> bytes:
    content = {"type": "text", "text": text}
    return update("s1", {"sessionUpdate": "agent_message_chunk", "messageId": mid,
                         "content": content})  # fmt: skip


def test_two_connections_in_two_threads_keep_their_own_compact_lines() -> None:
    conns = [ClientConnection(), ClientConnection()]
    for conn in conns:
        opened(conn)
    texts = [f"w{i} " for i in range(400)]
    start = threading.Barrier(2)
    errors: list[BaseException] = []

    def stream(n: int) -> None:
        try:
            start.wait()
            for text in texts:  # a line per read: each decoded as it comes
                conns[n].receive_data(chunk(f"m{n}", text))
        except BaseException as exc:  # reported below, not lost in the thread
            errors.append(exc)

    threads = [threading.Thread(target=stream, args=(n,)) for n in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    kept = [lines_of(conn).kept for conn in conns]
    assert [[t.message_id for t in k] for k in kept] == [["m0"], ["m1"]]
    for n, conn in enumerate(conns):
        model = conn.sessions["s1"].model
        assert model.entity("agent_message", f"m{n}").text == "".join(texts)
        assert [e.raw["content"]["text"] for e in model.events] == texts
        assert [e.line for e in conn.transcript.entries()][-len(texts) :] == [
            chunk(f"m{n}", x)[:-1] for x in texts
        ]


def test_a_new_connection_starts_with_no_compact_line() -> None:
    """What one connection learned is not another's: a new one decodes its first line
    of the same stream in full, and learns the stream itself."""
    first = ClientConnection()
    opened(first)
    first.receive_data(chunk("m1", "a") + chunk("m1", "b"))
    first_lines = lines_of(first)
    assert len(first_lines.kept) == 1
    second = ClientConnection()
    opened(second)
    second_lines = lines_of(second)
    assert second_lines.kept == [] and second_lines is not first_lines
    second.receive_data(chunk("m1", "c"))
    assert second_lines.kept == first_lines.kept  # the same stream, learned again
    assert second_lines.kept[0] is not first_lines.kept[0]
    assert second.sessions["s1"].model.entity("agent_message", "m1").text == "c"
