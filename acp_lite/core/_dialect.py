"""The protocol version spoken on the wire, as one interface under the core.

The core keeps the v2 model whatever the agent speaks; a :class:`Dialect` turns
wire lines into v2-shaped messages and v2 requests into wire requests, and says
what the responses mean. :class:`V2Dialect` is the pass-through case;
:class:`~acp_lite.core.v1.V1Dialect` translates ACP v1. A dialect acts on the
core only through the parts' public operations (apply, hold early, complete).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from acp_lite.core._router import SessionRouter
from acp_lite.core.records import PendingRequest, Refusal, SessionState
from acp_lite.core.rpc import ResponseReceived, RpcEngine
from acp_lite.protocol import Message
from acp_lite.protocol.chunk_lines import ChunkLines

__all__ = ["Dialect", "RouteUpdate", "V2Dialect"]

#: ``(session id, typed update, line, message, compact line)``: route one update.
RouteUpdate = Callable[..., None]


class Dialect(Protocol):
    """What the core asks of the protocol version spoken on the wire."""

    #: The version on the wire (``ClientConnection.protocol_version``).
    version: int
    #: Whether a raw ``session/resume`` gets :meth:`ClientConnection.resume`'s
    #: bookkeeping (v1 picks its wire method when sending instead).
    resume_bookkeeping: bool
    #: The connection's own cache of its chunk streams' lines, the hot path's
    #: (``ChunkLines.decode``; ``None``: every line is decoded by :meth:`decode`,
    #: and there are no runs of chunk lines).
    chunk_lines: ChunkLines | None

    @property
    def route_update(self) -> RouteUpdate:
        """Route a ``session/update`` to its session: ``(sid, update, line, msg,
        compact=None)``, as :meth:`SessionRouter.route`."""
        ...

    def decode(self, line: bytes) -> Message | list[Message]:
        """One wire line -> the v2 message (or batch) it stands for."""
        ...

    def send_request(self, method: str, params: Any, session_id: str | None) -> PendingRequest:
        """Queue the wire form of v2 request ``method``; the entry keeps the v2 name."""
        ...

    def check_prompt(self, session_id: str) -> None:
        """Raise if a prompt cannot be sent on the session now (nothing sent)."""
        ...

    def prompt_sent(self, entry: PendingRequest, blocks: Any) -> None:
        """A ``session/prompt`` was queued (``entry``) with ``blocks``."""
        ...

    def check_resume(self, session_id: str, *, replay: bool) -> None:
        """Raise if the agent cannot resume a session this way (nothing sent)."""
        ...

    def apply_held(self, state: SessionState, update: Any, raw: Any) -> None:
        """Apply an update held until its session opened (``SessionRouter.hold``)."""
        ...

    def refuse_permission(self, session_id: object, params: object) -> Refusal | None:
        """How to answer a ``session/request_permission`` without calling the
        handlers (``None``: they decide it)."""
        ...

    def on_response(self, ev: ResponseReceived) -> bool:
        """Handle a response the dialect's way; ``False``: the core handles it
        (with :meth:`translate_result`)."""
        ...

    def translate_result(self, entry: PendingRequest, result: Any) -> Any:
        """A wire success result -> the v2 result of ``entry.method``."""
        ...


class V2Dialect:
    """ACP v2 on the wire: nothing to translate; lines are decoded with
    ``chunk_lines``, the connection's own cache of its chunk streams."""

    version = 2
    resume_bookkeeping = True

    def __init__(self, router: SessionRouter, rpc: RpcEngine, chunk_lines: ChunkLines) -> None:
        self.chunk_lines: ChunkLines | None = chunk_lines
        # The cache's and the router's own methods: no extra step per line or
        # update on the hot path.
        self.decode: Callable[[bytes], Message | list[Message]] = chunk_lines.decode_line
        self.route_update: RouteUpdate = router.route
        self.apply_held = router.apply
        self._rpc = rpc

    def send_request(self, method: str, params: Any, session_id: str | None) -> PendingRequest:
        """Queue the request as it is."""
        return self._rpc.request(method, params, session_id=session_id)

    def check_prompt(self, session_id: str) -> None:
        """v2 takes any number of prompts."""

    def prompt_sent(self, entry: PendingRequest, blocks: Any) -> None:
        """Nothing to remember."""

    def check_resume(self, session_id: str, *, replay: bool) -> None:
        """The agent answers whether it can."""

    def refuse_permission(self, session_id: object, params: object) -> Refusal | None:
        """v2 permission requests all go to the handlers (background work and
        child sessions may ask outside any turn)."""
        return None

    def on_response(self, ev: ResponseReceived) -> bool:
        """Every response takes the core's path."""
        return False

    def translate_result(self, entry: PendingRequest, result: Any) -> Any:
        """Already v2."""
        return result
