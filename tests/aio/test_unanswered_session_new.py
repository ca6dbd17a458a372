"""A session/new the agent never answers must not make the client hold updates for
unknown sessions forever: once the request is given up (timeout), they go to the
client event log as they do without a pending session/new."""

from __future__ import annotations

import sys

import pytest
import trio

from acp_lite import aio
from acp_lite.errors import Timeout
from acp_lite.limits import Limits

# Answers initialize, never answers session/new, then (on a _poke notification)
# sends an update for a session id nobody opened.
AGENT = r"""
import json, sys
def send(msg):
    sys.stdout.write(json.dumps(msg) + "\n"); sys.stdout.flush()
for line in sys.stdin:
    msg = json.loads(line)
    if msg.get("method") == "initialize":
        send({"jsonrpc": "2.0", "id": msg["id"], "result": {
            "protocolVersion": 2, "info": {"name": "mute", "version": "0"},
            "capabilities": {}, "authMethods": []}})
    elif msg.get("method") == "_poke":
        send({"jsonrpc": "2.0", "method": "session/update", "params": {
            "sessionId": "stranger", "update": {
                "sessionUpdate": "state_update", "state": "idle", "background": []}}})
"""


@pytest.mark.trio
async def test_updates_are_not_held_after_an_unanswered_session_new_times_out() -> None:
    limits = Limits(default_timeout=5.0, close_grace=0.5, terminate_grace=0.5, kill_grace=1.0)
    async with aio.connect([sys.executable, "-c", AGENT], limits=limits) as client:
        with pytest.raises(Timeout, match="session/new"):
            await client.new_session(cwd="/tmp", timeout=0.3)
        await client.notify("_poke", {})
        with trio.fail_after(5):
            while not [e for e in client.events if e.kind == "unknown_session_update"]:
                await trio.sleep(0.01)
        (event,) = [e for e in client.events if e.kind == "unknown_session_update"]
        assert event.session_id == "stranger"
