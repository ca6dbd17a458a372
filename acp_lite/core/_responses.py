"""What a response does: typed results, and their side effects on the models.

Part of :class:`~acp_lite.core.ClientConnection`, split out to keep the connection
module short: each function takes the connection as ``conn``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from acp_lite.core.events import ResponseArrived, SessionOpened
from acp_lite.core.records import PendingRequest
from acp_lite.core.rpc import ResponseReceived
from acp_lite.core.v1_shapes import initialize_response as v1_initialize_response
from acp_lite.core.v1_shapes import is_v1_initialize
from acp_lite.errors import AcpError, ProtocolError, UnsupportedProtocolVersion, request_error_from
from acp_lite.protocol import METHODS, UNSET, converter

if TYPE_CHECKING:
    from acp_lite.core.connection import ClientConnection

__all__ = ["CREATING", "PROTOCOL_VERSION", "on_response"]

PROTOCOL_VERSION = 2
"""The ACP protocol version this client speaks."""

_PROMPT = "session/prompt"
#: Responses that create a session on this connection (with its sessionId).
_OPENING = frozenset({"session/new", "session/fork"})
#: Requests whose session may send updates before the response names it.
CREATING = frozenset({"session/new", "session/fork", "session/resume"})


def on_response(conn: ClientConnection, ev: ResponseReceived) -> None:
    """Complete ``ev``'s pending request (typed result or error) and apply its effects."""
    entry = ev.pending
    method = entry.method
    if conn._v1 is not None and conn._v1.on_response(ev):  # v1 hook: prompts
        return
    entry.done = True
    if ev.error is not None:
        err = ev.error
        data = err.data
        entry.error = request_error_from(
            err.code,
            err.message,
            None if data is UNSET else data,
            method=method,
            session_id=entry.session_id,
            stderr_tail=conn.stderr_tail(),
        )
        conn.name_auth_methods(entry.error)
    else:
        result = ev.result
        if method == "initialize" and isinstance(result, dict):
            conn.initialize_result = result
        elif conn._v1 is not None:  # v1 hook: the v2 form of a v1 result
            result = conn._v1.translate_result(entry, result)
        entry.result, entry.error = _structure(conn, method, entry, result)
    _apply_response(conn, entry, ev)
    conn._events.append(ResponseArrived(entry))


def _structure(
    conn: ClientConnection, method: str, entry: PendingRequest, result: Any
) -> tuple[Any, AcpError | None]:
    if method == "initialize":
        version = result.get("protocolVersion") if isinstance(result, dict) else None
        # --- v1 hook: a v1 answer (by number or by shape) switches to v1, unless
        # the caller asked for 2; asked for 1, a v2 answer is refused.
        if conn._requested_version != 2 and is_v1_initialize(result):
            if conn._v1 is None:
                from acp_lite.core.connection import v1_translator

                conn._v1 = v1_translator(conn)
            result = v1_initialize_response(result)
            version = PROTOCOL_VERSION
        elif conn._requested_version == 1 and isinstance(result, dict):
            return None, UnsupportedProtocolVersion(
                f"the agent answered protocol version {version!r} in the v2 shape; "
                "the connection was asked to speak 1",
                version=version,
                stderr_tail=conn.stderr_tail(),
            )
        # --- end of v1 hook
        if isinstance(result, dict) and version != PROTOCOL_VERSION:
            return None, UnsupportedProtocolVersion(
                f"the agent answered protocol version {version!r}; acp_lite speaks "
                f"{PROTOCOL_VERSION}",
                version=version,
                stderr_tail=conn.stderr_tail(),
            )
    spec = METHODS.get(method)
    cls = spec.result if spec is not None else None
    if cls is None:
        return result, None  # an extension method: the raw JSON value
    try:
        return converter.structure(result, cls), None
    except Exception as exc:
        return None, ProtocolError(
            f"invalid {method} result: {exc}",
            method=method,
            session_id=entry.session_id,
            stderr_tail=conn.stderr_tail(),
        )


def _apply_response(conn: ClientConnection, entry: PendingRequest, ev: ResponseReceived) -> None:
    # The side effects of a response on the models (and the connection).
    method = entry.method
    result = entry.result
    if method == _PROMPT:
        state = conn.sessions.get(entry.session_id or "")
        if state is not None:
            if ev.error is not None:
                state.model.prompt_rejected(entry.id, ev.error)
            else:
                # A success response, even one whose result does not structure
                # (the caller gets a ProtocolError): the prompt was inserted.
                mid = getattr(result, "message_id", None)
                if result is None and isinstance(ev.result, dict):
                    mid = ev.result.get("messageId")
                state.model.prompt_accepted(entry.id, mid)
            conn._touch(state)
    elif method in CREATING:
        conn._creating.discard(entry.id)
        if method in _OPENING and entry.error is None:
            _session_opened(conn, entry)
        elif method == "session/resume":
            _session_resumed(conn, entry)
        if not conn._creating and conn._early:
            conn._flush_early()
    elif method == "initialize" and entry.error is None:
        conn.initialize_response = result
    elif method == "session/set_config_option" and entry.error is None:
        # The agent MUST answer with the complete list (schema
        # SetSessionConfigOptionResponse): it replaces the model's.
        state = conn.sessions.get(entry.session_id or "")
        options = getattr(result, "config_options", None)
        if state is not None and isinstance(options, list):
            state.model.config_options_replaced(options)
            conn._touch(state)
    elif method == "session/close" and entry.error is None:
        state = conn.sessions.get(entry.session_id or "")
        if state is not None:
            state.model.finish()
            conn._touch(state)


def _session_opened(conn: ClientConnection, entry: PendingRequest) -> None:
    result = entry.result
    sid = getattr(result, "session_id", None)
    if not isinstance(sid, str):  # pragma: no cover - the typed class requires it
        entry.error = ProtocolError(f"{entry.method} result has no sessionId")
        entry.result = None
        return
    if sid in conn.sessions:
        entry.error = ProtocolError(
            f"{entry.method} answered session id {sid!r}, which is already open on "
            "this connection; the first session is kept",
            method=entry.method,
            session_id=sid,
            stderr_tail=conn.stderr_tail(),
        )
        entry.result = None
        return
    state = conn._new_state(sid)
    state.model.setup_response(result)
    conn.sessions[sid] = state
    findings = conn.findings
    now = findings.at if findings is not None else None
    for update, raw, at in conn._early.pop(sid, ()):
        if findings is not None:
            findings.at = at  # each update is located at its own line
        if conn._v1 is not None:  # v1 hook: translated now the session is known
            conn._v1.apply_update(state, raw)
        else:
            conn._apply(state, update, raw)
    if findings is not None:
        findings.at = now
    conn._touch(state)
    conn._events.append(SessionOpened(state))


def _session_resumed(conn: ClientConnection, entry: PendingRequest) -> None:
    sid = entry.session_id or ""
    state = conn.sessions.get(sid)
    if state is None:
        return
    state.replaying = False
    if entry.error is not None:
        state.model.resume_failed()
        if state.resume_pending:
            del conn.sessions[sid]
        conn._touch(state)
        return
    state.resume_pending = False
    state.model.setup_response(entry.result, resumed=True)
    conn._touch(state)
