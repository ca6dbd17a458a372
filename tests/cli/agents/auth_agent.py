"""A fake ACP v1 agent that needs a login, as most real agents do offline.

It advertises three auth methods: ``token`` (kind agent: ``authenticate`` logs in),
``tui`` (kind terminal: this program run with ``--login``, which prints a line and
exits 0, or 3 when ``AUTH_AGENT_FAIL`` is set) and ``key`` (kind env_var:
``AUTH_AGENT_KEY``). ``session/new`` answers -32000 with ``data.authMethods`` until
``authenticate`` succeeded or ``AUTH_AGENT_KEY`` is set.
"""

import json
import os
import sys

METHODS = [
    {"id": "token", "name": "Token"},
    {"id": "tui", "name": "Terminal login", "type": "terminal", "args": ["--login"]},
    {"id": "key", "name": "API key", "type": "env_var", "varName": "AUTH_AGENT_KEY"},
]

if "--login" in sys.argv:
    print("terminal login: done")
    sys.exit(3 if os.environ.get("AUTH_AGENT_FAIL") else 0)


def send(msg: dict) -> None:
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", **msg}) + "\n")
    sys.stdout.flush()


authed = bool(os.environ.get("AUTH_AGENT_KEY"))
for line in sys.stdin:
    msg = json.loads(line)
    method, rid = msg.get("method"), msg.get("id")
    if method == "initialize":
        info = {"name": "auth-agent", "version": "1.0"}
        result = {"protocolVersion": 1, "agentInfo": info, "authMethods": METHODS}
        send({"id": rid, "result": result})
    elif method == "authenticate":
        if msg["params"].get("methodId") == "token":
            authed = True
            send({"id": rid, "result": {}})
        else:
            send({"id": rid, "error": {"code": -32602, "message": "unknown method"}})
    elif method == "session/new" and not authed:
        error = {"code": -32000, "message": "Authentication required"}
        send({"id": rid, "error": {**error, "data": {"authMethods": METHODS}}})
    elif method == "session/new":
        send({"id": rid, "result": {"sessionId": "s1"}})
    elif method == "session/prompt":
        sid = msg["params"]["sessionId"]
        update = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "ok"}}
        send({"method": "session/update", "params": {"sessionId": sid, "update": update}})
        send({"id": rid, "result": {"stopReason": "end_turn"}})
    elif rid is not None:
        send({"id": rid, "error": {"code": -32601, "message": "Method not found"}})
