"""A fake agent that only speaks a future ACP protocol version: answers initialize with 3."""

import json
import sys

for line in sys.stdin:
    msg = json.loads(line)
    if msg.get("method") == "initialize":
        info = {"name": "future", "version": "1"}
        result = {"protocolVersion": 3, "info": info, "capabilities": {}, "authMethods": []}
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}) + "\n")
        sys.stdout.flush()
