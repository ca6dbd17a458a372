"""Faults: deliberately broken behaviours of the reference agent, at its wire.

A :class:`Fault` rewrites what the agent writes (:meth:`Fault.outgoing`) and what
it reads (:meth:`Fault.incoming`), one JSON-RPC message at a time, so a broken
agent is the correct one with one rule bent: a probe is shown to fail on the
agent that breaks its requirement (``acp-lite-agent --fault NAME``,
``InProcessAgent(faults=[NAME])``). Faults see the messages as the client does:
v1 shapes for ``--protocol 1``. Plain JSON dicts, like the rest of the agent.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from acp_lite.testing._wire import Wire, encode

__all__ = ["FAULTS", "Fault", "FaultState", "FaultWire", "error_response", "fault", "get"]


class FaultState:
    """What a fault may know and keep: the method of each request the client sent
    (by id), the agent's outgoing requests, free per-fault storage, and a way to
    send more lines."""

    def __init__(self, wire: FaultWire) -> None:
        self._wire = wire
        self.lock = threading.RLock()
        #: client request id -> method (every request read, before any fault)
        self.methods: dict[Any, str] = {}
        #: client request id -> params
        self.params: dict[Any, Any] = {}
        #: agent request id -> method (requests the agent sent its client)
        self.agent_methods: dict[Any, str] = {}
        #: free storage, one dict per fault name
        self.data: dict[str, dict[str, Any]] = {}

    def method_of(self, message: Any) -> str | None:
        """The method a response answers (the client's request), if known."""
        if isinstance(message, dict) and "method" not in message:
            return self.methods.get(message.get("id"))
        return None

    def store(self, name: str) -> dict[str, Any]:
        """The storage of fault ``name``."""
        return self.data.setdefault(name, {})

    def send(self, message: Any) -> None:
        """Write one more message (not passed through the faults)."""
        self._wire.inner.send(message)

    def write(self, data: bytes) -> None:
        """Write raw bytes (not passed through the faults)."""
        self._wire.inner.write(data)


class Fault:
    """One broken behaviour. Subclasses override either hook; the defaults pass
    every message on unchanged. Both return the messages to pass on instead (an
    empty list drops it; ``bytes`` items are written, or read, as raw lines)."""

    name: str = ""
    summary: str = ""

    def outgoing(self, state: FaultState, message: Any) -> list[Any]:
        """What to write instead of ``message`` (agent -> client)."""
        return [message]

    def incoming(self, state: FaultState, message: Any) -> list[Any]:
        """What the agent reads instead of ``message`` (client -> agent)."""
        return [message]


def error_response(message: Any, code: int, text: str, data: Any = None) -> dict[str, Any]:
    """The JSON-RPC error response to ``message`` (a request, or the response replaced)."""
    error: dict[str, Any] = {"code": code, "message": text}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": message.get("id"), "error": error}


FAULTS: dict[str, Fault] = {}
"""Every fault, by name."""


def fault(name: str, summary: str) -> Callable[[type[Fault]], type[Fault]]:
    """Register a :class:`Fault` subclass under ``name`` (one instance is kept)."""

    def register(cls: type[Fault]) -> type[Fault]:
        if name in FAULTS:
            raise ValueError(f"fault {name!r} is registered twice")
        cls.name = name
        cls.summary = summary
        FAULTS[name] = cls()
        return cls

    return register


def get(names: Iterable[str]) -> list[Fault]:
    """The faults named (``KeyError`` naming an unknown one)."""
    out = []
    for name in names:
        if name not in FAULTS:
            raise KeyError(name)
        out.append(FAULTS[name])
    return out


def _apply(hook: Callable[[FaultState, Any], list[Any]], state: FaultState, m: Any) -> list[Any]:
    # Raw bytes (a fault's garbage) pass the later faults untouched.
    return [m] if isinstance(m, bytes) else hook(state, m)


class FaultWire(Wire):
    """The agent's wire with faults applied both ways (see the module docstring).

    It wraps the wire that writes the bytes (``inner``); a v1 agent's translating
    wire wraps it in turn, so faults see what the client sees.
    """

    def __init__(self, inner: Wire, faults: Iterable[Fault]) -> None:
        super().__init__(None)  # type: ignore[arg-type]  # writes go through ``inner``
        self.inner = inner
        self.faults = list(faults)
        self.state = FaultState(self)

    def __getattr__(self, name: str) -> Any:
        # What a wrapped wire has beyond Wire's methods (the in-process pipe's flags).
        return getattr(self.__dict__["inner"], name)

    def _rewrite_out(self, message: Any) -> list[Any]:
        if isinstance(message, dict) and "method" in message and "id" in message:
            with self.state.lock:
                self.state.agent_methods[message["id"]] = message["method"]
        items = [message]
        for f in self.faults:
            items = [
                o
                for m in items
                for o in (f.outgoing(self.state, m) if not isinstance(m, bytes) else [m])
            ]
        return items

    def send(self, message: Any) -> None:
        if isinstance(message, list):
            out = [o for m in message for o in self._rewrite_out(m)]
            raw = [o for o in out if isinstance(o, bytes)]
            rest = [o for o in out if not isinstance(o, bytes)]
            if rest:
                self.inner.send(rest)
            for data in raw:
                self.inner.write(data)
            return
        for item in self._rewrite_out(message):
            if isinstance(item, bytes):
                self.inner.write(item)
            else:
                self.inner.send(item)

    def write(self, data: bytes) -> None:
        for line in data.splitlines(keepends=True):
            try:
                message = json.loads(line)
            except ValueError:
                self.inner.write(line)
                continue
            self.send(message)

    def exit(self, code: int) -> None:
        self.inner.exit(code)

    def incoming_lines(self, line: bytes) -> list[bytes]:
        """The lines the agent reads instead of ``line``."""
        try:
            message = json.loads(line)
        except ValueError:
            return [line]
        for m in message if isinstance(message, list) else [message]:
            if isinstance(m, dict) and isinstance(m.get("method"), str) and "id" in m:
                with self.state.lock:
                    self.state.methods[m["id"]] = m["method"]
                    self.state.params[m["id"]] = m.get("params")
        if message == []:
            return [line]  # an empty batch is the agent's to refuse (-32600), as sent
        if isinstance(message, list):
            # A batch stays one batch (its members rewritten one by one).
            members = [o for m in message for o in self._rewrite_in(m)]
            return [encode(members)] if members else []
        return [o if isinstance(o, bytes) else encode(o) for o in self._rewrite_in(message)]

    def _rewrite_in(self, message: Any) -> list[Any]:
        items = [message]
        for f in self.faults:
            items = [
                o
                for m in items
                for o in (f.incoming(self.state, m) if not isinstance(m, bytes) else [m])
            ]
        return items

    def filter_lines(self, lines: Iterable[bytes]) -> Iterator[bytes]:
        """``lines`` (the agent's stdin) as the faulty agent reads them."""
        for line in lines:
            if line.strip():
                yield from self.incoming_lines(line)
