"""The protocol side of the reference agent: methods, sessions, replies.

Each ``session/*`` method follows its schema description (quoted in the
docstrings); ``session/list``, ``delete`` and ``resume`` are in
:mod:`acp_lite.testing._sessions`, turns run in :mod:`acp_lite.testing._turns`
and ``expect`` scripts are matched in :mod:`acp_lite.testing._expect`.
"""

from __future__ import annotations

import functools
import json
import sys
import threading
from collections.abc import Callable
from typing import Any, BinaryIO, TextIO

from acp_lite.testing import __version__
from acp_lite.testing._expect import EventSink, Expectations
from acp_lite.testing._sessions import delete_session, list_sessions, resume_session
from acp_lite.testing._state import (
    NOT_REPLAYED,
    BackgroundItem,
    HeldPrompt,
    Session,
    TurnRun,
    now_rfc3339,
)
from acp_lite.testing._turns import TurnRunner
from acp_lite.testing._wire import (
    AUTH_REQUIRED,
    DEFERRED,
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    RESOURCE_NOT_FOUND,
    UNSUPPORTED_VERSION,
    RpcError,
    Wire,
    absolute_path,
    cancelled_error,
    list_param,
    notification,
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
    """The protocol side: sessions, methods, replies. Turns run in ``TurnRunner``."""

    def __init__(
        self,
        script: Script,
        wire: Wire,
        *,
        log: TextIO | None = None,
        events: EventSink | None = None,
    ) -> None:
        self.script = script
        #: With the script's ``expect``: the turns still owed and the event sink.
        self.expectations = Expectations(script, events) if script.expect else None
        self.wire = wire
        self._log = log if log is not None else sys.stderr
        # One condition guards all state shared between the reader thread, the
        # session workers and background threads; waits use it too.
        self.cond = threading.Condition(threading.RLock())
        self.sessions: dict[str, Session] = {}
        self.client_capabilities: dict[str, Any] = {}
        self.logged_in = not script.auth_required
        self.ignore_sigterm = script.ignore_sigterm
        self._next_session = 0
        self._next_request = 0
        self.replies: dict[int, dict[str, Any] | None] = {}
        self.abandoned: set[int] = set()
        self.runner = TurnRunner(self)
        #: Set by :meth:`shutdown` (in-process use; a process just exits).
        self.stopped = threading.Event()
        self._threads: list[threading.Thread] = []
        for raw in script.sessions:
            self._preload(raw)
        self.handlers: dict[str, Callable[[Any, dict[str, Any]], Any]] = {
            "initialize": self.initialize,
            "auth/login": self.login,
            "auth/logout": self.logout,
            "session/new": self.new_session,
            "session/list": functools.partial(list_sessions, self),
            "session/delete": functools.partial(delete_session, self),
            "session/resume": functools.partial(resume_session, self),
            "session/close": self.close_session,
            "session/set_config_option": self.set_config_option,
            "session/prompt": self.prompt,
            "tool_call/cancel": self.cancel_tool_call,
            "terminal/cancel": self.cancel_terminal,
        }

    # -- plumbing ---------------------------------------------------------

    def log(self, text: str) -> None:
        """A line of free-form logging on stderr."""
        self._log.write(f"[agent] {text}\n")
        self._log.flush()

    def stderr(self, text: str) -> None:
        """A raw line on stderr (the ``stderr`` step)."""
        self._log.write(text + "\n")
        self._log.flush()

    def spawn(self, target: Callable[[], None], name: str) -> threading.Thread:
        """Start a daemon thread for the agent's work (kept for :meth:`threads`)."""
        thread = threading.Thread(target=target, name=self.thread_prefix + name, daemon=True)
        with self.cond:
            self._threads = [t for t in self._threads if t.is_alive()]
            self._threads.append(thread)
        thread.start()
        return thread

    #: Prefix of the names of the threads :meth:`spawn` starts.
    thread_prefix = ""

    def threads(self) -> list[threading.Thread]:
        """The agent's worker threads still alive."""
        with self.cond:
            return [t for t in self._threads if t.is_alive()]

    def shutdown(self) -> None:
        """Stop all work promptly: what the process's exit does for a real agent.

        Held prompts are dropped, running turns see a cancel, sessions close and
        background work stops, so every worker thread ends soon after.
        """
        with self.cond:
            self.stopped.set()
            for session in self.sessions.values():
                session.held.clear()
                if session.turn is not None:
                    session.cancelling = True
                session.open = False
                for item in session.background.values():
                    item.stop.set()
            self.cond.notify_all()

    def reply(self, request_id: Any, result: dict[str, Any]) -> None:
        """Send a success response."""
        self.wire.send({"jsonrpc": "2.0", "id": request_id, "result": result})

    def reply_error(self, request_id: Any, error: dict[str, Any]) -> None:
        """Send an error response."""
        self.wire.send({"jsonrpc": "2.0", "id": request_id, "error": error})

    def emit(self, session: Session, update: dict[str, Any], session_id: str | None = None) -> None:
        """Send one ``session/update``; conversation entities are kept for replay."""
        if session_id is None and update.get("sessionUpdate") not in NOT_REPLAYED:
            session.history.append(update)
        params = {"sessionId": session_id or session.id, "update": update}
        self.wire.send(notification("session/update", params))

    def report_state(
        self,
        session: Session,
        state: str | None = None,
        *,
        stop_reason: str | None = None,
        error: dict[str, Any] | None = None,
    ) -> None:
        """Send a ``state_update`` snapshot (``state=None``: repeat the current one).

        Spec "Background work": an agent that reports background work MUST include
        ``background`` on every state_update, so this agent always includes it
        (``[]`` = nothing running). Reading the state and writing the snapshot
        happen under one lock so a background thread's repeated snapshot can
        never overtake the idle that a turn reports.
        """
        with session.state_lock:
            if state is not None:
                session.state = state
            with self.cond:
                background = [item.wire() for item in session.background.values()]
            update: dict[str, Any] = {
                "sessionUpdate": "state_update",
                "state": session.state,
                "background": background,
            }
            if stop_reason is not None:
                update["stopReason"] = stop_reason
            if error is not None:
                update["error"] = error
            self.emit(session, update)

    def request(self, method: str, params: dict[str, Any], run: TurnRun) -> dict[str, Any] | None:
        """Send a request to the client and wait for its reply.

        Returns the reply message, or None when the session was cancelled first:
        then the request is withdrawn with ``$/cancel_request`` (spec
        "Cancellation": stop waiting, treat it as not approved, and cancel it so
        the client can dismiss the prompt).
        """
        session = run.session
        with self.cond:
            self._next_request += 1
            request_id = self._next_request
            self.replies[request_id] = None
        self.wire.send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        with self.cond:
            self.cond.wait_for(lambda: self.replies[request_id] is not None or session.cancelling)
            reply = self.replies.pop(request_id)
            if reply is None:
                self.abandoned.add(request_id)
        if reply is None:
            self.wire.send(notification("$/cancel_request", {"requestId": request_id}))
        return reply

    def session_for(self, params: dict[str, Any]) -> Session:
        """The open session named by ``params.sessionId`` or a -32002 error."""
        session_id = params.get("sessionId")
        if not isinstance(session_id, str):
            raise RpcError(INVALID_PARAMS, "sessionId must be a string")
        session = self.sessions.get(session_id)
        if session is None or not session.open:
            raise RpcError(RESOURCE_NOT_FOUND, "Session not found", {"sessionId": session_id})
        return session

    def require_login(self) -> None:
        """Raise the -32000 error unless logged in (or no login is required)."""
        if not self.logged_in:
            raise RpcError(AUTH_REQUIRED, "Authentication required: call auth/login first")

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
        self.sessions[session.id] = session
        return session

    # -- reading ------------------------------------------------------------

    def serve(self, stdin: BinaryIO) -> None:
        """Read messages until stdin closes."""
        for line in stdin:
            if line.strip():
                self.receive(line)

    def receive(self, line: bytes) -> None:
        """Handle one line: a message or a batch (JSON-RPC 2.0 section 6)."""
        try:
            message = json.loads(line)
        except ValueError:
            self.reply_error(None, {"code": PARSE_ERROR, "message": "Parse error"})
            return
        if isinstance(message, list):
            if not message:
                self.reply_error(None, {"code": INVALID_REQUEST, "message": "Empty batch"})
                return
            # Answers that are ready now go back as one batch; deferred ones
            # (prompt, close) follow on their own when they are ready.
            replies = [r for r in map(self.dispatch, message) if r is not None]
            if replies:
                self.wire.send(replies)
            return
        reply = self.dispatch(message)
        if reply is not None:
            self.wire.send(reply)

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
            self.on_reply(message)
            return None
        method = message["method"]
        params = message.get("params", {})
        if "id" not in message:
            self.on_notification(method, params)
            return None
        request_id = message["id"]
        if self.expectations is not None:
            try:
                self.expectations.check_method(method)
            except RpcError as exc:
                return {"jsonrpc": "2.0", "id": request_id, "error": exc.to_error()}
        if method in self.script.unresponsive:
            self.log(f"not answering {method} (id {request_id}): scripted as unresponsive")
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
            self.log(f"internal error in {method}: {exc!r}")
            error = {"code": INTERNAL_ERROR, "message": f"Internal error: {exc}"}
            return {"jsonrpc": "2.0", "id": request_id, "error": error}
        if result is DEFERRED:
            return None
        return {"jsonrpc": "2.0", "id": request_id, "result": result}

    def on_reply(self, message: dict[str, Any]) -> None:
        """A response to one of our requests (permission, elicitation)."""
        request_id = message.get("id")
        with self.cond:
            if request_id in self.replies:
                self.replies[request_id] = message
                self.cond.notify_all()
                return
            if request_id in self.abandoned:
                self.abandoned.discard(request_id)  # a late answer to a withdrawn request
                return
        self.log(f"ignoring a response for unknown request id {request_id!r}")

    def on_notification(self, method: Any, params: Any) -> None:
        """``session/cancel``, ``$/cancel_request`` and extension notifications."""
        if not isinstance(params, dict):
            self.log(f"ignoring {method}: params must be an object")
        elif method == "session/cancel":
            session = self.sessions.get(str(params.get("sessionId")))
            if session is not None and session.open:
                self.cancel(session)
        elif method == "$/cancel_request":
            self.cancel_request(params.get("requestId"))
        else:
            self.log(f"notification {method}: {json.dumps(params)[:200]}")

    # -- cancellation ---------------------------------------------------------

    def cancel(self, session: Session) -> None:
        """``session/cancel``: covers active foreground work and held prompts.

        Spec "Cancellation": prompts received before the cancel and not yet
        inserted are answered with -32800; foreground work stops and ends with
        idle ``cancelled``. Background work keeps running.
        """
        with self.cond:
            covered = list(session.held)
            session.held.clear()
            if session.turn is not None:
                session.cancelling = True
            self.cond.notify_all()
        for held in covered:
            self.reply_error(held.request_id, cancelled_error())

    def cancel_request(self, request_id: Any) -> None:
        """``$/cancel_request`` from the client: withdraw a prompt not yet inserted.

        A held prompt is answered -32800 at once. A prompt whose turn already
        started but is not inserted yet (steps before ``insert``) is withdrawn
        when the turn reaches insertion: its work then ends ``cancelled``.
        An inserted prompt keeps its successful response (spec "2. Prompt
        accepted": once inserted it MUST NOT get an error).
        """
        with self.cond:
            for session in self.sessions.values():
                held = next((h for h in session.held if h.request_id == request_id), None)
                if held is not None:
                    session.held.remove(held)
                    break
                run = session.turn
                if run is not None and run.request_id == request_id and not run.inserted:
                    run.withdrawn = True
                    self.cond.notify_all()
                    return
            else:
                return  # unknown, already inserted or already answered: nothing to do
        self.reply_error(request_id, cancelled_error())

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
        self.client_capabilities = capabilities if isinstance(capabilities, dict) else {}
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
        self.logged_in = True
        return {}

    def logout(self, _id: Any, _params: dict[str, Any]) -> dict[str, Any]:
        """``auth/logout``."""
        self.logged_in = not self.script.auth_required
        return {}

    # -- methods: sessions ----------------------------------------------------

    def new_session(self, _id: Any, params: dict[str, Any]) -> dict[str, Any]:
        """``session/new``."""
        self.require_login()
        cwd = absolute_path(params.get("cwd"), "cwd")
        extra = [
            absolute_path(p, "additionalDirectories")
            for p in list_param(params, "additionalDirectories")
        ]
        with self.cond:
            self._next_session += 1
            while f"sess-{self._next_session}" in self.sessions:
                self._next_session += 1
            session = Session(
                id=f"sess-{self._next_session}", cwd=cwd, additional_directories=extra
            )
            self.sessions[session.id] = session
        # Spec "Initial state and synchronization": updates may precede the response.
        for update in self.script.session_updates:
            self.emit(session, update)
        return {"sessionId": session.id, "configOptions": session.config_options()}

    def close_session(self, request_id: Any, params: dict[str, Any]) -> Any:
        """``session/close``: cancel, finish, stop background work, then answer.

        Runs on its own thread because it waits for the turn to end, and the
        reader must keep going meanwhile.
        """
        session = self.sessions.get(str(params.get("sessionId")))
        if session is None or not session.open:
            return {}  # closing an unknown/inactive session SHOULD succeed (schema)

        def close() -> None:
            self.close_now(session)
            self.reply(request_id, {})

        self.spawn(close, f"close-{session.id}")
        return DEFERRED

    def close_now(self, session: Session) -> None:
        """Close ``session`` (on a worker thread): cancel, wait, stop background work."""
        self.cancel(session)
        with self.cond:
            self.cond.wait_for(lambda: session.turn is None and not session.held)
            items = list(session.background.values())
        for item in items:
            item.stop.set()
        with self.cond:
            # Each item is finalised and unlisted before the close response
            # ("finalised before removed"); after it the session is silent.
            self.cond.wait_for(lambda: not session.background, timeout=5)
            session.open = False
            self.cond.notify_all()

    def set_config_option(self, _id: Any, params: dict[str, Any]) -> dict[str, Any]:
        """``session/set_config_option``; unknown ids or bad values -> -32602."""
        session = self.session_for(params)
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
        session = self.session_for(params)
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
        with self.cond:
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
                    session.worker = self.spawn(lambda: self.runner.work(session), session.id)
            self.cond.notify_all()
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
        session = self.session_for(params)
        with self.cond:
            item: BackgroundItem | None = session.background.get(str(item_id))
        if item is None or item.kind != kind or not item.cancellable or item.stop.is_set():
            raise RpcError(INVALID_PARAMS, f"{kind} {item_id!r} is not cancellable")
        self.reply(request_id, {})
        item.stop.set()  # its thread now sends the final update and a new snapshot
        return DEFERRED
