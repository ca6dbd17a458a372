"""A tiny trio-native fake agent for the typed-method tests (no subprocess).

It reads request lines from its end of an in-memory stream pair, records every
message it receives (``received``) and answers from canned results, or with the
error code set in ``errors[method]``.
"""

from __future__ import annotations

import contextlib
import json
from typing import Any

import trio
import trio.testing

FULL_CAPABILITIES: dict[str, Any] = {
    "session": {
        "delete": {},
        "fork": {},
        "archive": {},
        "title": {},
        "status": {},
        "additionalDirectories": {},
        "systemPrompt": {},
        "mcp": {"acp": {}},
    },
    "auth": {"status": {}},
    "providers": {},
}
AUTH_METHODS: list[dict[str, Any]] = [
    {"type": "agent", "methodId": "agent-login", "name": "Agent login"}
]

SESSION_ID = "sess-1"

#: Canned results by method (session/list is paged, see FakeAgent._result).
RESULTS: dict[str, Any] = {
    "auth/login": {},
    "auth/logout": {},
    "auth/status": {"state": "authenticated", "accounts": [{"label": "me", "active": True}]},
    "session/delete": {},
    "providers/list": {
        "providers": [{"providerId": "main", "supported": ["openai"], "required": True}]
    },
    "providers/set": {},
    "providers/disable": {},
    "session/set_config_option": {
        "configOptions": [
            {
                "configId": "mode",
                "name": "Mode",
                "type": "select",
                "currentValue": "fast",
                "options": [{"value": "fast", "name": "Fast"}],
            }
        ]
    },
    "tool_call/cancel": {},
    "terminal/cancel": {},
    "session/close": {},
    "session/fork": {"sessionId": "sess-fork"},
    "session/archive": {},
    "session/unarchive": {},
    "session/set_title": {"title": "Normalised title"},
    "session/status": {"status": "open"},
    "_acme/echo": {"echo": True},
}

PAGES: dict[str | None, dict[str, Any]] = {
    None: {"sessions": [{"sessionId": "a", "cwd": "/w"}], "nextCursor": "c1"},
    "c1": {"sessions": [{"sessionId": "b", "cwd": "/w", "title": "B"}]},
}


class FakeAgent:
    """Answers ``initialize`` with ``capabilities`` / ``auth_methods``, then canned results."""

    def __init__(
        self,
        *,
        capabilities: dict[str, Any] | None = None,
        auth_methods: list[dict[str, Any]] | None = None,
        cancellable: bool = True,
    ) -> None:
        self.capabilities = FULL_CAPABILITIES if capabilities is None else capabilities
        self.auth_methods = AUTH_METHODS if auth_methods is None else auth_methods
        self.cancellable = cancellable
        self.received: list[dict[str, Any]] = []
        self.errors: dict[str, int] = {}
        self.results: dict[str, Any] = dict(RESULTS)
        self.pages: dict[str | None, dict[str, Any]] = dict(PAGES)

    def sent_methods(self) -> list[str]:
        """Methods of the messages received after ``initialize``."""
        return [m["method"] for m in self.received if "method" in m][1:]

    def last(self, method: str) -> dict[str, Any]:
        """The last message received for ``method``."""
        return [m for m in self.received if m.get("method") == method][-1]

    async def run(self, stream: trio.abc.Stream) -> None:
        buffer = b""
        while True:
            try:
                data = await stream.receive_some()
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                return
            if not data:
                return
            buffer += data
            while b"\n" in buffer:
                line, buffer = buffer.split(b"\n", 1)
                if line.strip():
                    await self._handle(stream, json.loads(line))

    async def _send(self, stream: trio.abc.Stream, msg: dict[str, Any]) -> None:
        with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError):
            await stream.send_all(json.dumps({"jsonrpc": "2.0", **msg}).encode() + b"\n")

    async def _handle(self, stream: trio.abc.Stream, msg: dict[str, Any]) -> None:
        self.received.append(msg)
        method = msg.get("method")
        if "id" not in msg or method is None:
            return  # a notification (session/cancel, mcp/message ...)
        rid = msg["id"]
        if method in self.errors:
            code = self.errors[method]
            error = {"code": code, "message": f"{method} failed"}
            await self._send(stream, {"id": rid, "error": error})
            return
        if method == "initialize":
            result: Any = {
                "protocolVersion": 2,
                "info": {"name": "fake", "version": "0"},
                "capabilities": self.capabilities,
                "authMethods": self.auth_methods,
            }
        elif method == "session/new":
            if self.cancellable:
                # Before the response: the connection applies them once it names the
                # session (spec: updates may precede the session/new response).
                for update in (
                    {
                        "sessionUpdate": "tool_call_update",
                        "toolCallId": "call-1",
                        "capabilities": {"cancel": {}},
                    },
                    {
                        "sessionUpdate": "terminal_update",
                        "terminalId": "term-1",
                        "capabilities": {"cancel": {}},
                    },
                ):
                    params = {"sessionId": SESSION_ID, "update": update}
                    await self._send(stream, {"method": "session/update", "params": params})
            result = {"sessionId": SESSION_ID}
        elif method == "auth/status":
            # The unstable change notification, sent first so the test can find it.
            update = {"state": "authenticated"}
            await self._send(stream, {"method": "auth/status_update", "params": update})
            result = self.results[method]
        elif method == "session/list":
            result = self.pages[msg.get("params", {}).get("cursor")]
        else:
            result = self.results.get(method, {})
        await self._send(stream, {"id": rid, "result": result})


def stream_pair() -> tuple[trio.abc.Stream, trio.abc.Stream]:
    """(client end, agent end) of an in-memory bidirectional byte stream."""
    client_end, agent_end = trio.testing.memory_stream_pair()
    return client_end, agent_end
