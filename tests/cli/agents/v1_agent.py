"""A fake agent that only speaks ACP protocol version 1: a minimal v1 echo agent.

It answers ``initialize`` with version 1 in v1 fields, opens one session and
echoes each prompt as v1 ``agent_message_chunk`` updates without ``messageId``,
then answers the prompt with ``stopReason`` (v1: the response ends the turn).
"""

import json
import sys


def send(msg: dict) -> None:
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", **msg}) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    msg = json.loads(line)
    method, rid = msg.get("method"), msg.get("id")
    if method == "initialize":
        result = {"protocolVersion": 1, "agentCapabilities": {}, "authMethods": []}
        send({"id": rid, "result": result})
    elif method == "session/new":
        send({"id": rid, "result": {"sessionId": "v1-session"}})
    elif method == "session/prompt":
        sid = msg["params"]["sessionId"]
        for block in msg["params"]["prompt"]:
            update = {"sessionUpdate": "agent_message_chunk", "content": block}
            send({"method": "session/update", "params": {"sessionId": sid, "update": update}})
        send({"id": rid, "result": {"stopReason": "end_turn"}})
    elif rid is not None:
        send({"id": rid, "error": {"code": -32601, "message": "Method not found"}})
