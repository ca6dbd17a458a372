"""A trio-native ACP v1 agent that calls the client (``fs/*``, ``terminal/*``).

Run it with ``aio.connect_in_memory(agent, ...)``; the test then drives it from
the same trio loop: ``await agent.call("fs/read_text_file", {...})`` sends the
request to the client and returns the client's whole response message. What the
client answers can be checked against the v1 schema with :func:`schema_errors`.
"""

from __future__ import annotations

import functools
import itertools
import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import jsonschema  # type: ignore[import-untyped]  # test-only dependency, no stubs
import trio

from .fakes import read_messages

V1_SCHEMA = Path(__file__).parent.parent / "data" / "schema" / "v1" / "schema.json"

#: v1 client method -> the result definition the client must answer with.
RESULTS = {
    "fs/read_text_file": "ReadTextFileResponse",
    "fs/write_text_file": "WriteTextFileResponse",
    "terminal/create": "CreateTerminalResponse",
    "terminal/output": "TerminalOutputResponse",
    "terminal/wait_for_exit": "WaitForTerminalExitResponse",
    "terminal/kill": "KillTerminalResponse",
    "terminal/release": "ReleaseTerminalResponse",
}
#: v1 client method -> its request params definition (what the fake sends).
PARAMS = {
    "fs/read_text_file": "ReadTextFileRequest",
    "fs/write_text_file": "WriteTextFileRequest",
    "terminal/create": "CreateTerminalRequest",
    "terminal/output": "TerminalOutputRequest",
    "terminal/wait_for_exit": "WaitForTerminalExitRequest",
    "terminal/kill": "KillTerminalRequest",
    "terminal/release": "ReleaseTerminalRequest",
}


@functools.cache
def _validator(definition: str) -> Any:
    defs = json.loads(V1_SCHEMA.read_text())["$defs"]
    return jsonschema.Draft202012Validator({"$ref": f"#/$defs/{definition}", "$defs": defs})


def schema_errors(definition: str, instance: Any) -> list[str]:
    """What is wrong with ``instance`` as the v1 schema's ``definition``."""
    return [e.message for e in _validator(definition).iter_errors(instance)]


class V1Agent:
    """Answers ``initialize`` (v1, ``loadSession``), ``session/new`` (ids ``v1-1``,
    ``v1-2``, ...) and ``session/load``; everything it receives is in ``received``.

    ``on_prompt(agent, session_id)`` (async) runs for each ``session/prompt``, which
    is then answered ``end_turn`` (what a blocking-client test needs: the agent
    calls the client during the turn).
    """

    def __init__(self, on_prompt: Callable[[V1Agent, str], Awaitable[None]] | None = None) -> None:
        self.on_prompt = on_prompt
        self.received: list[Any] = []
        self.initialize_params: dict[str, Any] | None = None
        self.stream: trio.abc.Stream | None = None
        self._sessions = itertools.count(1)
        self._ids = itertools.count(100)
        #: The id of the last request sent by :meth:`call`.
        self.last_request_id = 0
        self._waiting: dict[int, tuple[trio.Event, list[Any]]] = {}
        #: Requests received for ``session/new``, answered only once this is set.
        self.open_sessions = trio.Event()
        self.open_sessions.set()

    async def __call__(self, stream: trio.abc.Stream) -> None:
        self.stream = stream
        async with trio.open_nursery() as nursery:
            async for message in read_messages(stream):
                self.received.append(message)
                nursery.start_soon(self._handle, message)
            nursery.cancel_scope.cancel()

    async def _handle(self, message: dict[str, Any]) -> None:
        method, rid = message.get("method"), message.get("id")
        if method is None:
            waiter = self._waiting.pop(rid, None)
            if waiter is not None:
                waiter[1].append(message)
                waiter[0].set()
            return
        if method == "initialize":
            self.initialize_params = message["params"]
            result: Any = {"protocolVersion": 1, "agentCapabilities": {"loadSession": True}}
        elif method == "session/new":
            await self.open_sessions.wait()
            result = {"sessionId": f"v1-{next(self._sessions)}"}
        elif method == "session/load":
            result = {}
        elif method == "session/prompt" and self.on_prompt is not None:
            await self.on_prompt(self, message["params"]["sessionId"])
            result = {"stopReason": "end_turn"}
        elif rid is not None:
            await self.send({"id": rid, "error": {"code": -32601, "message": "not found"}})
            return
        else:
            return
        await self.send({"id": rid, "result": result})

    async def send(self, message: dict[str, Any]) -> None:
        """Write one JSON-RPC message (``jsonrpc`` added) to the client."""
        assert self.stream is not None
        await self.stream.send_all(json.dumps({"jsonrpc": "2.0", **message}).encode() + b"\n")

    async def call(
        self, method: str, params: dict[str, Any], *, valid: bool = True
    ) -> dict[str, Any]:
        """Send a request to the client; its response message (``result`` or ``error``).

        ``valid``: the params are checked against the v1 schema first (``False``
        for a test that sends bad ones on purpose).
        """
        if valid and method in PARAMS:
            assert schema_errors(PARAMS[method], params) == [], params
        rid = self.last_request_id = next(self._ids)
        done = trio.Event()
        box: list[Any] = []
        self._waiting[rid] = (done, box)
        await self.send({"id": rid, "method": method, "params": params})
        await done.wait()
        response: dict[str, Any] = box[0]
        if "result" in response and method in RESULTS:
            assert schema_errors(RESULTS[method], response["result"]) == [], response
        if "error" in response:
            assert schema_errors("Error", response["error"]) == [], response
        return response

    async def result(self, method: str, params: dict[str, Any]) -> Any:
        """:meth:`call`, asserting it succeeded; its result."""
        response = await self.call(method, params)
        assert "result" in response, response
        return response["result"]

    async def error(
        self, method: str, params: dict[str, Any], *, valid: bool = True
    ) -> dict[str, Any]:
        """:meth:`call`, asserting it failed; its error object."""
        response = await self.call(method, params, valid=valid)
        assert "error" in response, response
        return response["error"]  # type: ignore[no-any-return]
