"""The protocol side of the reference agent: methods, sessions, replies.

Each ``session/*`` method follows its schema description (quoted in the
docstrings); ``session/list``, ``delete`` and ``resume`` are in
:mod:`acp_lite.testing._sessions`, turns run in :mod:`acp_lite.testing._turns`
and ``expect`` scripts are matched in :mod:`acp_lite.testing._expect`. The state
they all share and the sending are the :class:`~acp_lite.testing._link.Link`.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterable
from typing import Any, TextIO

from acp_lite.testing._expect import EventSink
from acp_lite.testing._link import Link
from acp_lite.testing._sessions import delete_session, list_sessions, resume_session
from acp_lite.testing._state import (
    BackgroundItem,
    HeldPrompt,
    Session,
    now_rfc3339,
)
from acp_lite.testing._turns import TurnRunner
from acp_lite.testing._version import __version__
from acp_lite.testing._wire import (
    DEFERRED,
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    UNSUPPORTED_VERSION,
    RpcError,
    Wire,
    absolute_path,
    cancelled_error,
    list_param,
)
from acp_lite.testing.script import Script

__all__ = ["PROTOCOL_VERSION", "Agent"]

PROTOCOL_VERSION = 2
AGENT_INFO = {"name": "acp-lite-reference-agent", "title": "acp_lite reference agent"}
AUTH_METHOD = {"type": "agent", "methodId": "token", "name": "Test token"}
# Baseline prompt content is text and resource_link; we also advertise
# embeddedContext, so "resource" blocks are accepted (spec: "1. User message").
ACCEPTED_CONTENT = frozenset({"text", "resource_link", "resource"})

#: Extension methods this agent implements: requests under its own namespace are
#: echoed back (``{"echo": params}``); other ``_`` methods are unknown (-32601).
OWN_EXTENSIONS = "_acp_lite/"


class Agent:
    """The protocol side: reads messages, answers the methods. What every part
    shares (sessions, the lock, the sending) is its :class:`Link`, ``link``; turns
    run in ``TurnRunner``. ``thread_prefix`` starts the names of its threads.
    """

    def __init__(
        self,
        script: Script,
        wire: Wire,
        *,
        log: TextIO | None = None,
        events: EventSink | None = None,
        thread_prefix: str = "",
    ) -> None:
        self.script = script
        self.link = Link(script, wire, log=log, events=events, thread_prefix=thread_prefix)
        self.runner = TurnRunner(self.link)
        self._next_session = 0
        for raw in script.sessions:
            self._preload(dict(raw))
        self.handlers: dict[str, Callable[[Any, dict[str, Any]], Any]] = {
            "initialize": self.initialize,
            "auth/login": self.login,
            "auth/logout": self.logout,
            "session/new": self.new_session,
            "session/list": functools.partial(list_sessions, self.link),
            "session/delete": functools.partial(delete_session, self.link),
            "session/resume": functools.partial(resume_session, self.link),
            "session/close": self.close_session,
            "session/set_config_option": self.set_config_option,
            "session/prompt": self.prompt,
            "tool_call/cancel": self.cancel_tool_call,
            "terminal/cancel": self.cancel_terminal,
        }

    def _preload(self, raw: dict[str, Any]) -> Session:
        history = list(raw.get("history", []))
        session = Session(
            id=str(raw["sessionId"]),
            cwd=str(raw.get("cwd", "/")),
            title=raw.get("title"),
            history=history,
            open=False,
        )
        session.user_messages = sum(
            1 for u in history if u.get("sessionUpdate") in ("user_message", "user_message_chunk")
        )
        session.prompts_seen = session.user_messages
        self.link.sessions[session.id] = session
        return session

    # -- reading ------------------------------------------------------------

    def serve(self, stdin: Iterable[bytes]) -> None:
        """Read messages until stdin closes."""
        for line in stdin:
            if line.strip():
                self.receive(line)

    def receive(self, line: bytes) -> None:
        """Handle one line: a message or a batch (JSON-RPC 2.0 section 6)."""
        try:
            message = json.loads(line)
        except ValueError:
            self.link.reply_error(None, {"code": PARSE_ERROR, "message": "Parse error"})
            return
        if isinstance(message, list):
            if not message:
                self.link.reply_error(None, {"code": INVALID_REQUEST, "message": "Empty batch"})
                return
            # Answers that are ready now go back as one batch; deferred ones
            # (prompt, close) follow on their own when they are ready.
            replies = [r for r in map(self.dispatch, message) if r is not None]
            if replies:
                self.link.wire.send(replies)
                self.link.count_answered(len(replies))
            return
        reply = self.dispatch(message)
        if reply is not None:
            self.link.wire.send(reply)
            self.link.count_answered(1)

    def dispatch(self, message: Any) -> dict[str, Any] | None:
        """Handle one message; returns the response to send now, if any."""
        is_reply = isinstance(message, dict) and ("result" in message or "error" in message)
        if (
            not isinstance(message, dict)
            or message.get("jsonrpc") != "2.0"
            or not (is_reply or isinstance(message.get("method"), str))
        ):
            request_id = message.get("id") if isinstance(message, dict) else None
            error = {"code": INVALID_REQUEST, "message": "Invalid Request"}
            return {"jsonrpc": "2.0", "id": request_id, "error": error}
        if "method" not in message:
            self.link.on_reply(message)
            return None
        method = message["method"]
        params = message.get("params", {})
        if "id" not in message:
            self.on_notification(method, params)
            return None
        request_id = message["id"]
        if self.link.expectations is not None:
            try:
                self.link.expectations.check_method(method)
            except RpcError as exc:
                return {"jsonrpc": "2.0", "id": request_id, "error": exc.to_error()}
        if method in self.script.unresponsive:
            self.link.log(f"not answering {method} (id {request_id}): scripted as unresponsive")
            return None
        try:
            if not isinstance(params, dict):
                raise RpcError(INVALID_PARAMS, "params must be an object")
            handler = self.handlers.get(method)
            if handler is not None:
                result = handler(request_id, params)
            elif method.startswith(OWN_EXTENSIONS):
                # The agent's own extension namespace (what the benchmarks and tests
                # call): echoed back. Any other unrecognised method, `_`-prefixed or
                # not, gets -32601 (docs-v2-draft/extensibility.mdx).
                result = {"echo": params}
            else:
                raise RpcError(METHOD_NOT_FOUND, f"Method not found: {method}")
        except RpcError as exc:
            return {"jsonrpc": "2.0", "id": request_id, "error": exc.to_error()}
        except Exception as exc:  # a bug here must not kill the agent
            self.link.log(f"internal error in {method}: {exc!r}")
            error = {"code": INTERNAL_ERROR, "message": f"Internal error: {exc}"}
            return {"jsonrpc": "2.0", "id": request_id, "error": error}
        if result is DEFERRED:
            return None
        return {"jsonrpc": "2.0", "id": request_id, "result": result}

    def on_notification(self, method: Any, params: Any) -> None:
        """``session/cancel``, ``$/cancel_request`` and extension notifications."""
        if not isinstance(params, dict):
            self.link.log(f"ignoring {method}: params must be an object")
        elif method == "session/cancel":
            session = self.link.sessions.get(str(params.get("sessionId")))
            if session is not None and session.open:
                self.link.cancel(session)
        elif method == "$/cancel_request":
            self.cancel_request(params.get("requestId"))
        else:
            self.link.log(f"notification {method}: {json.dumps(params)[:200]}")

    # -- cancellation ---------------------------------------------------------

    def cancel_request(self, request_id: Any) -> None:
        """``$/cancel_request`` from the client: withdraw a prompt not yet inserted.

        A held prompt is answered -32800 at once. A prompt whose turn already
        started but is not inserted yet (steps before ``insert``) is withdrawn
        when the turn reaches insertion: its work then ends ``cancelled``.
        An inserted prompt keeps its successful response (spec "2. Prompt
        accepted": once inserted it MUST NOT get an error).
        """
        with self.link.cond:
            for session in self.link.sessions.values():
                held = next((h for h in session.held if h.request_id == request_id), None)
                if held is not None:
                    session.held.remove(held)
                    break
                run = session.turn
                if run is not None and run.request_id == request_id and not run.inserted:
                    run.withdrawn = True
                    self.link.cond.notify_all()
                    return
            else:
                return  # unknown, already inserted or already answered: nothing to do
        self.link.reply_error(request_id, cancelled_error())

    # -- methods: initialization and auth -------------------------------------

    def initialize(self, _id: Any, params: dict[str, Any]) -> dict[str, Any]:
        """``initialize``: answer the highest version <= the client's (schema)."""
        requested = params.get("protocolVersion")
        if not isinstance(requested, int) or isinstance(requested, bool):
            raise RpcError(INVALID_PARAMS, "protocolVersion must be an integer")
        if self.script.protocol_version is not None:
            version = self.script.protocol_version  # a deliberately odd agent
        elif requested < PROTOCOL_VERSION:
            data = {"requested": requested, "supported": [PROTOCOL_VERSION]}
            raise RpcError(UNSUPPORTED_VERSION, "Unsupported protocol version", data)
        else:
            version = PROTOCOL_VERSION
        capabilities = params.get("capabilities")
        self.link.client_capabilities = capabilities if isinstance(capabilities, dict) else {}
        result = {
            "protocolVersion": version,
            "info": {**AGENT_INFO, "version": __version__},
            "capabilities": {
                "session": {
                    "prompt": {"embeddedContext": {}},
                    "delete": {},
                    "additionalDirectories": {},
                }
            },
            "authMethods": [AUTH_METHOD],
        }
        return {**result, **(self.script.initialize_result or {})}

    def login(self, _id: Any, params: dict[str, Any]) -> dict[str, Any]:
        """``auth/login`` with the advertised method."""
        if params.get("methodId") != AUTH_METHOD["methodId"]:
            raise RpcError(INVALID_PARAMS, f"Unknown auth method {params.get('methodId')!r}")
        self.link.logged_in = True
        return {}

    def logout(self, _id: Any, _params: dict[str, Any]) -> dict[str, Any]:
        """``auth/logout``."""
        self.link.logged_in = not self.script.auth_required
        return {}

    # -- methods: sessions ----------------------------------------------------

    def new_session(self, _id: Any, params: dict[str, Any]) -> dict[str, Any]:
        """``session/new``."""
        self.link.require_login()
        cwd = absolute_path(params.get("cwd"), "cwd")
        extra = [
            absolute_path(p, "additionalDirectories")
            for p in list_param(params, "additionalDirectories")
        ]
        with self.link.cond:
            self._next_session += 1
            while f"sess-{self._next_session}" in self.link.sessions:
                self._next_session += 1
            session = Session(
                id=f"sess-{self._next_session}", cwd=cwd, additional_directories=extra
            )
            self.link.sessions[session.id] = session
        # Spec "Initial state and synchronization": updates may precede the response.
        for update in self.script.session_updates:
            self.link.emit(session, dict(update))
        return {"sessionId": session.id, "configOptions": session.config_options()}

    def close_session(self, request_id: Any, params: dict[str, Any]) -> Any:
        """``session/close``: cancel, finish, stop background work, then answer.

        Runs on its own thread because it waits for the turn to end, and the
        reader must keep going meanwhile.
        """
        session = self.link.sessions.get(str(params.get("sessionId")))
        if session is None or not session.open:
            return {}  # closing an unknown/inactive session SHOULD succeed (schema)

        def close() -> None:
            self.link.close_now(session)
            self.link.reply(request_id, {})

        self.link.spawn(close, f"close-{session.id}")
        return DEFERRED

    def set_config_option(self, _id: Any, params: dict[str, Any]) -> dict[str, Any]:
        """``session/set_config_option``; unknown ids or bad values -> -32602."""
        session = self.link.session_for(params)
        config_id, kind, value = params.get("configId"), params.get("type"), params.get("value")
        if config_id == "mode" and kind == "id" and value in ("ask", "code"):
            session.config["mode"] = value
        elif config_id == "verbose" and kind == "boolean" and isinstance(value, bool):
            session.config["verbose"] = value
        else:
            raise RpcError(INVALID_PARAMS, f"Invalid config option {config_id!r}={value!r}")
        return {"configOptions": session.config_options()}

    # -- methods: prompts ------------------------------------------------------

    def prompt(self, request_id: Any, params: dict[str, Any]) -> Any:
        """``session/prompt``: hold it; the session's worker inserts it in order.

        Spec "Prompts during active work": never reject a prompt because work is
        active. With ``while_busy = "insert"`` it is inserted at once into the
        running work; otherwise it is held and starts the next turn.
        """
        session = self.link.session_for(params)
        prompt = params.get("prompt")
        if not isinstance(prompt, list) or not prompt:
            raise RpcError(INVALID_PARAMS, "prompt must be a non-empty array of content blocks")
        for block in prompt:
            kind = block.get("type") if isinstance(block, dict) else None
            if kind not in ACCEPTED_CONTENT:
                raise RpcError(INVALID_PARAMS, f"Unsupported content block type {kind!r}")
        if session.title is None:
            session.title = " ".join(
                str(b.get("text", "")) for b in prompt if b.get("type") == "text"
            )[:60]
        session.updated_at = now_rfc3339()
        with self.link.cond:
            if self.script.while_busy == "insert" and session.accepts_steering:
                # Inserted right here (the condition's lock is re-entrant), so the
                # worker can only pick it up once its user message is out.
                run = self.runner.new_run(session, request_id, prompt)
                self.runner.insert(run)
                session.steered.append(run)
            else:
                session.held.append(HeldPrompt(request_id, prompt))
                if session.worker is None:
                    # Started under the lock: it sees ``worker`` set before it runs.
                    session.worker = self.link.spawn(lambda: self.runner.work(session), session.id)
            self.link.cond.notify_all()
        return DEFERRED

    # -- methods: background work ---------------------------------------------

    def cancel_tool_call(self, request_id: Any, params: dict[str, Any]) -> Any:
        """``tool_call/cancel`` for a cancellable background tool call."""
        return self._cancel_item(request_id, params, "tool_call", params.get("toolCallId"))

    def cancel_terminal(self, request_id: Any, params: dict[str, Any]) -> Any:
        """``terminal/cancel`` for a cancellable background terminal."""
        return self._cancel_item(request_id, params, "terminal", params.get("terminalId"))

    def _cancel_item(self, request_id: Any, params: dict[str, Any], kind: str, item_id: Any) -> Any:
        # Schema CancelToolCallRequest / CancelTerminalRequest: respond once the
        # cancellation is accepted, then confirm it with the final update;
        # unknown, already final or not cancellable -> -32602.
        session = self.link.session_for(params)
        with self.link.cond:
            item: BackgroundItem | None = session.background.get(str(item_id))
        if item is None or item.kind != kind or not item.cancellable or item.stop.is_set():
            raise RpcError(INVALID_PARAMS, f"{kind} {item_id!r} is not cancellable")
        self.link.reply(request_id, {})
        item.stop.set()  # its thread now sends the final update and a new snapshot
        return DEFERRED
