"""Trio-native fake agents for ``aio.connect_in_memory`` (run in the test's own loop).

They need no thread and no process, so a test on pytest-trio's ``autojump_clock``
can wait out long timeouts instantly.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import trio

NO_ANSWER: Any = object()
"""A handler's result: send no response (the request stays unanswered)."""

INITIALIZE_RESULT = {
    "protocolVersion": 2,
    "info": {"name": "fake-agent", "version": "0"},
    "capabilities": {},
}

Handler = Callable[["FakeAgent", dict[str, Any]], Any]


async def read_messages(stream: trio.abc.ReceiveStream) -> AsyncIterator[Any]:
    """JSON values, one per line, until the stream ends."""
    buffer = b""
    while True:
        try:
            data = await stream.receive_some()
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            return
        if not data:
            return
        *lines, buffer = (buffer + data).split(b"\n")
        for line in lines:
            if line.strip():
                yield json.loads(line)


class FakeAgent:
    """Answers ``initialize`` and ``session/new``, then whatever ``handlers`` say.

    ``handlers`` maps a method to ``fn(agent, message)`` (plain or async) returning
    the result, :data:`NO_ANSWER`, or raising to end the agent. Requests without a
    handler are left unanswered. Every message received is kept in ``received``.
    """

    def __init__(self, handlers: dict[str, Handler] | None = None) -> None:
        self.handlers: dict[str, Handler] = {
            "initialize": lambda _agent, _msg: INITIALIZE_RESULT,
            "session/new": lambda _agent, _msg: {"sessionId": "fake-1"},
            **(handlers or {}),
        }
        self.received: list[Any] = []
        self.stream: trio.abc.Stream | None = None
        self.ended = trio.Event()

    async def __call__(self, stream: trio.abc.Stream) -> None:
        self.stream = stream
        try:
            async for message in read_messages(stream):
                self.received.append(message)
                handler = self.handlers.get(message.get("method", ""))
                if handler is None:
                    continue
                result = handler(self, message)
                if inspect.isawaitable(result):
                    result = await result
                if result is not NO_ANSWER and "id" in message:
                    await self.send({"jsonrpc": "2.0", "id": message["id"], "result": result})
        finally:
            self.ended.set()

    async def send(self, message: Any) -> None:
        """Write one JSON line to the client."""
        assert self.stream is not None
        await self.stream.send_all(json.dumps(message).encode() + b"\n")

    async def update(self, session_id: str, update: dict[str, Any]) -> None:
        """Send one ``session/update``."""
        params = {"sessionId": session_id, "update": update}
        await self.send({"jsonrpc": "2.0", "method": "session/update", "params": params})

    def methods(self) -> list[str]:
        """The methods of the messages received, in order."""
        return [m.get("method", "") for m in self.received if isinstance(m, dict)]


def echo_prompt(agent: FakeAgent, message: dict[str, Any]) -> Awaitable[Any]:
    """A ``session/prompt`` handler: insert, echo the text, report idle ``end_turn``."""

    async def run() -> Any:
        sid = message["params"]["sessionId"]
        text = "".join(b.get("text", "") for b in message["params"]["prompt"])
        await agent.update(sid, {"sessionUpdate": "state_update", "state": "running"})
        await agent.send({"jsonrpc": "2.0", "id": message["id"], "result": {"messageId": "u1"}})
        user = {"type": "text", "text": text}
        await agent.update(
            sid, {"sessionUpdate": "user_message", "messageId": "u1", "content": [user]}
        )
        chunk = {"type": "text", "text": text}
        await agent.update(
            sid, {"sessionUpdate": "agent_message_chunk", "messageId": "a1", "content": chunk}
        )
        idle = {"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"}
        await agent.update(sid, idle)
        return NO_ANSWER

    return run()
