"""Hostile output read by a borrower (``acp_lite.aio._pipe``) is handled as the trio
reader handles it: nothing lost, nothing changed, no hang.

The agent answers ``_t/garbage`` after writing lines that are not JSON, JSON nested
far too deep, a lone surrogate escape, bytes that are not UTF-8, an unknown
notification, a response to no request and a message without ``jsonrpc``. The same
session is run with borrowing on and off: the transcript, the model and the
violations must be the same.
"""

from __future__ import annotations

import sys
from typing import Any

import pytest

import acp_lite
from acp_lite.aio.outside import OutsideReading
from acp_lite.sync import _direct

from .conftest import FAST, wait_for
from .test_borrowed_pipe import default_sigint

__all__ = ["default_sigint"]  # a fixture used here

AGENT = r"""
import json, sys
out = sys.stdout.buffer

def send(obj):
    out.write(json.dumps(obj).encode() + b"\n")
    out.flush()

def update(text):
    send({"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s1",
          "update": {"sessionUpdate": "agent_message_chunk", "messageId": "m1",
                     "content": {"type": "text", "text": text}}}})

for line in sys.stdin:
    msg = json.loads(line)
    method, rid = msg.get("method"), msg.get("id")
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": rid, "result": {"protocolVersion": 2,
              "capabilities": {}, "info": {"name": "t", "version": "1"}}})
    elif method == "session/new":
        send({"jsonrpc": "2.0", "id": rid, "result": {"sessionId": "s1"}})
    elif method == "_t/garbage":
        update("a")
        out.write(b"this is not json\n")
        out.write(b"[" * 200000 + b"]" * 200000 + b"\n")
        out.write(b'{"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId":'
                  b' "s1", "update": {"sessionUpdate": "agent_message_chunk", "messageId":'
                  b' "m1", "content": {"type": "text", "text": "lone \\ud800 here"}}}}\n')
        out.write(b"\xff\xfe not utf-8 \x80\n")
        send({"jsonrpc": "2.0", "method": "_t/unknown", "params": {"x": 1}})
        send({"jsonrpc": "2.0", "id": 999999, "result": {}})
        send({"id": 5, "method": "session/update"})
        update("b")
        send({"jsonrpc": "2.0", "id": rid, "result": {"ok": True}})
        update("c")
"""


def _session(borrow: bool, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, ...]:
    monkeypatch.setattr(_direct, "_BORROW", borrow)
    fed: list[bytes] = []
    receive = OutsideReading.receive

    def spy(self: OutsideReading, data: bytes, driver: Any) -> None:
        fed.append(data)
        receive(self, data, driver)

    monkeypatch.setattr(OutsideReading, "receive", spy)
    argv = [sys.executable, "-c", AGENT]
    with acp_lite.connect(argv, limits=FAST, conformance=True) as client:
        session = client.new_session(cwd="/tmp")
        fed.clear()
        for _ in range(3):
            assert client.request("_t/garbage")["ok"] is True
        assert client.request("_t/garbage")["ok"] is True  # and it goes on working
        # The last "c" follows the last response: wait until it is applied.
        assert wait_for(lambda: session.text().count("c") == 4, 20)
        # Each direction in order (how sent and received lines interleave depends on
        # timing: the update after a response may be read before the next request).
        lines = {
            d: [e.line for e in client.transcript if e.direction == d] for d in ("send", "recv")
        }
        rules = sorted(v.rule for v in client.violations())
        raws = [e.raw for e in session.updates]
        text = session.text()
    monkeypatch.undo()
    return fed, lines, rules, raws, text


def test_hostile_lines_read_by_a_borrower_are_kept_as_the_trio_reader_keeps_them(
    monkeypatch: pytest.MonkeyPatch, default_sigint: None
) -> None:
    fed, *borrowed = _session(True, monkeypatch)
    assert any(b"[[[[" in data for data in fed)  # the borrower read the garbage
    assert any(b"\xff\xfe" in data for data in fed)
    plain_fed, *plain = _session(False, monkeypatch)
    assert plain_fed == []
    lines, _rules, _raws, text = borrowed
    assert borrowed == plain  # transcript, violations, updates, text: the same
    assert text.count("a") == text.count("b") == text.count("c") == 4
    assert sum(line == b"this is not json" for line in lines["recv"]) == 4
    assert any(line.startswith(b"[" * 1000) for line in lines["recv"])
