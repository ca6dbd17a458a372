"""A fake agent that only speaks ACP protocol version 1: answers initialize with 1."""

import json
import sys

for line in sys.stdin:
    msg = json.loads(line)
    if msg.get("method") == "initialize":
        result = {"protocolVersion": 1, "agentCapabilities": {}, "authMethods": []}
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}) + "\n")
        sys.stdout.flush()
