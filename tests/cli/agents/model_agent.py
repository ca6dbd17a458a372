"""A real (tiny) ACP v1 agent that calls a model: the OpenAI Chat Completions API at
``$OPENAI_BASE_URL`` with ``$OPENAI_API_KEY``, streamed, via urllib (stdlib only).

Each prompt runs a loop: the model's text deltas become ``agent_message_chunk``
updates; a tool call becomes a ``tool_call`` update and a
``session/request_permission`` request, and its result (``ran NAME`` if allowed,
``denied`` if not) is sent back to the model, until the model answers with text
only. A model error ends the prompt with a JSON-RPC error carrying the model's
message. ``session/new`` fails unless HOME is a temporary home (``acp-lite-home-*``)
and the OpenAI variables are set: the profile's environment must reach the agent.
"""

import json
import os
import sys
import urllib.error
import urllib.request

_pending: list = []  # messages read while waiting for a response


def send(msg: dict) -> None:
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", **msg}) + "\n")
    sys.stdout.flush()


def update(sid: str, body: dict) -> None:
    send({"method": "session/update", "params": {"sessionId": sid, "update": body}})


def read() -> dict | None:
    if _pending:
        return _pending.pop(0)
    line = sys.stdin.readline()
    return json.loads(line) if line else None


def ask(rid: int, method: str, params: dict) -> dict:
    """Send a request to the client and wait for its answer (other messages kept)."""
    send({"id": rid, "method": method, "params": params})
    held = []
    while True:
        line = sys.stdin.readline()
        if not line:
            raise SystemExit(0)
        msg = json.loads(line)
        if msg.get("id") == rid and "method" not in msg:
            _pending.extend(held)
            return msg
        held.append(msg)


def stream_completion(messages: list) -> tuple[list, list]:
    """POST a streamed chat completion; return (text deltas, tool calls)."""
    body = {"model": os.environ.get("OPENAI_MODEL", "m"), "messages": messages, "stream": True}
    body["tools"] = [{"type": "function", "function": {"name": "run", "parameters": {}}}]
    request = urllib.request.Request(
        os.environ["OPENAI_BASE_URL"].rstrip("/") + "/chat/completions",
        data=json.dumps(body).encode(),
        headers={
            "content-type": "application/json",
            "authorization": "Bearer " + os.environ["OPENAI_API_KEY"],
        },
    )
    texts, calls = [], {}
    with urllib.request.urlopen(request, timeout=30) as response:
        for raw in response:
            line = raw.decode().strip()
            if not line.startswith("data:"):
                continue
            data = line[5:].strip()
            if data == "[DONE]":
                break
            for choice in json.loads(data).get("choices", []):
                delta = choice.get("delta") or {}
                if delta.get("content"):
                    texts.append(delta["content"])
                for call in delta.get("tool_calls") or []:
                    entry = calls.setdefault(call["index"], {"id": "", "name": "", "args": ""})
                    entry["id"] = call.get("id") or entry["id"]
                    function = call.get("function") or {}
                    entry["name"] += function.get("name") or ""
                    entry["args"] += function.get("arguments") or ""
    return texts, [calls[i] for i in sorted(calls)]


def run_prompt(rid: int, sid: str, text: str) -> None:
    messages = [{"role": "user", "content": text}]
    for _ in range(10):
        try:
            texts, calls = stream_completion(messages)
        except urllib.error.HTTPError as exc:
            detail = exc.read().decode("utf-8", "replace")
            send({"id": rid, "error": {"code": -32603, "message": f"model error: {detail}"}})
            return
        for piece in texts:
            update(
                sid,
                {
                    "sessionUpdate": "agent_message_chunk",
                    "content": {"type": "text", "text": piece},
                },
            )
        if not calls:
            send({"id": rid, "result": {"stopReason": "end_turn"}})
            return
        messages.append(
            {
                "role": "assistant",
                "content": "".join(texts) or None,
                "tool_calls": [
                    {
                        "id": c["id"],
                        "type": "function",
                        "function": {"name": c["name"], "arguments": c["args"]},
                    }
                    for c in calls
                ],
            }
        )
        for n, call in enumerate(calls):
            tool = {
                "toolCallId": call["id"],
                "title": f"{call['name']} {call['args']}",
                "kind": "execute",
            }
            update(sid, {"sessionUpdate": "tool_call", "status": "pending", **tool})
            options = [
                {"optionId": "allow", "name": "Allow", "kind": "allow_once"},
                {"optionId": "reject", "name": "Reject", "kind": "reject_once"},
            ]
            answer = ask(
                1000 + rid * 100 + n,
                "session/request_permission",
                {"sessionId": sid, "toolCall": tool, "options": options},
            )
            outcome = (answer.get("result") or {}).get("outcome") or {}
            allowed = outcome.get("outcome") == "selected" and outcome.get("optionId") == "allow"
            result = f"ran {call['name']}" if allowed else "denied"
            content = [{"type": "content", "content": {"type": "text", "text": result}}]
            status = "completed" if allowed else "failed"
            update(
                sid,
                {
                    "sessionUpdate": "tool_call_update",
                    "toolCallId": call["id"],
                    "status": status,
                    "content": content,
                },
            )
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": result})
    send({"id": rid, "result": {"stopReason": "max_turn_requests"}})


def main() -> None:
    while True:
        msg = read()
        if msg is None:
            return
        method, rid = msg.get("method"), msg.get("id")
        if method == "initialize":
            send(
                {
                    "id": rid,
                    "result": {"protocolVersion": 1, "agentCapabilities": {}, "authMethods": []},
                }
            )
        elif method == "session/new":
            home = os.environ.get("HOME", "")
            if not os.path.basename(home).startswith("acp-lite-home-") or not os.path.isdir(home):
                send(
                    {
                        "id": rid,
                        "error": {
                            "code": -32603,
                            "message": f"HOME is not a temporary home: {home!r}",
                        },
                    }
                )
            elif not os.environ.get("OPENAI_BASE_URL") or not os.environ.get("OPENAI_API_KEY"):
                send(
                    {
                        "id": rid,
                        "error": {
                            "code": -32603,
                            "message": "OPENAI_BASE_URL/OPENAI_API_KEY not set",
                        },
                    }
                )
            else:
                send({"id": rid, "result": {"sessionId": "model-session"}})
        elif method == "session/prompt":
            params = msg["params"]
            text = " ".join(b.get("text", "") for b in params["prompt"] if b.get("type") == "text")
            run_prompt(rid, params["sessionId"], text)
        elif rid is not None:
            send({"id": rid, "error": {"code": -32601, "message": "Method not found"}})


main()
