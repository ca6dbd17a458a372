"""A fake agent whose errors carry its own words, as real agents' do (issue 24 item 14).

``wordy_error_agent.py MODE``:

* ``auth-message``: v1; ``session/new`` answers -32000 with the agent's own advice
  (auggie: "Please run `auggie login` ...") and no ``data``;
* ``details``: v1; ``session/prompt`` answers -32603 with ``data.details`` (what
  claude-code-acp 0.49 sends when its process died);
* ``idle-auth``: v2; the prompt is inserted, then the turn ends ``idle`` with
  ``stopReason: "error"`` and a -32000 error (claude-agent-acp 0.101 offline).
"""

import json
import sys

MODE = sys.argv[-1]
V2 = MODE == "idle-auth"
ADVICE = "Please run `auggie login` to sign in, then try again."
METHODS = [{"type": "agent", "methodId": "sso", "name": "Sign in"}]


def send(msg: dict) -> None:
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", **msg}) + "\n")
    sys.stdout.flush()


def update(sid: str, body: dict) -> None:
    send({"method": "session/update", "params": {"sessionId": sid, "update": body}})


for line in sys.stdin:
    msg = json.loads(line)
    method, rid = msg.get("method"), msg.get("id")
    if method == "initialize":
        if V2:
            result = {
                "protocolVersion": 2,
                "info": {"name": "wordy", "version": "1.0"},
                "capabilities": {},
                "authMethods": METHODS,
            }
        else:
            info = {"name": "wordy", "version": "1.0"}
            methods = [{"id": "sso", "name": "Sign in"}]
            result = {"protocolVersion": 1, "agentInfo": info, "authMethods": methods}
        send({"id": rid, "result": result})
    elif method == "session/new" and MODE == "auth-message":
        send({"id": rid, "error": {"code": -32000, "message": ADVICE}})
    elif method == "session/new":
        send({"id": rid, "result": {"sessionId": "s1"}})
    elif method == "session/prompt" and MODE == "details":
        data = {"details": "Claude Code process exited with code 1"}
        send({"id": rid, "error": {"code": -32603, "message": "Internal error", "data": data}})
    elif method == "session/prompt":
        sid = msg["params"]["sessionId"]
        update(sid, {"sessionUpdate": "state_update", "state": "running", "background": []})
        send({"id": rid, "result": {"messageId": "u1"}})
        update(sid, {"sessionUpdate": "user_message", "messageId": "u1", "content": []})
        error = {"code": -32000, "message": "Authentication required", "data": {"details": ADVICE}}
        idle = {"state": "idle", "background": [], "stopReason": "error", "error": error}
        update(sid, {"sessionUpdate": "state_update", **idle})
    elif rid is not None:
        send({"id": rid, "error": {"code": -32601, "message": "Method not found"}})
