"""The reference agent's end of its one client connection: what all its parts share.

:class:`Link` owns the state the reader thread, the session workers and the
background threads share (under one condition), and the sending: responses,
``session/update`` notifications, state snapshots and the agent's requests to the
client. The protocol side (:mod:`acp_lite.testing._agent`), the session methods
(:mod:`acp_lite.testing._sessions`) and the turns (:mod:`acp_lite.testing._turns`)
all stand on it, and it on none of them.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from typing import Any, TextIO

from acp_lite.testing._expect import EventSink, Expectations
from acp_lite.testing._state import NOT_REPLAYED, Session, TurnRun
from acp_lite.testing._wire import (
    AUTH_REQUIRED,
    INVALID_PARAMS,
    RESOURCE_NOT_FOUND,
    RpcError,
    Wire,
    cancelled_error,
    notification,
)
from acp_lite.testing.script import Script

__all__ = ["Link"]


class Link:
    """The connection's shared state and the sending; see the module docstring.

    ``wire`` may be replaced before the first message (``--protocol 1`` wraps it).
    ``thread_prefix`` starts the names of the threads :meth:`spawn` starts.
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
        self._next_request = 0
        self.replies: dict[int, dict[str, Any] | None] = {}
        #: Client requests answered so far by the reader (``Agent.receive``): what
        #: the ``ignore_cancel`` step waits on.
        self.answered = 0
        self.abandoned: set[int] = set()
        #: Set by :meth:`shutdown` (in-process use; a process just exits).
        self.stopped = threading.Event()
        self.thread_prefix = thread_prefix
        self._threads: list[threading.Thread] = []

    # -- logging and threads ------------------------------------------------

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

    # -- sending --------------------------------------------------------------

    def count_answered(self, count: int) -> None:
        """The reader has sent the answers to ``count`` more client requests."""
        with self.cond:
            self.answered += count
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
        if_cancelled: str | None = None,
    ) -> None:
        """Send a ``state_update`` snapshot (``state=None``: repeat the current one).

        ``if_cancelled``: the stop reason to report instead when the client's
        ``session/cancel`` has been read. It is decided, and the line written, under
        the lock the cancel handler takes, so once the agent has read a cancel
        (and answered a request sent after it) the work cannot end ``end_turn``
        (spec "Cancellation": the idle MUST carry ``cancelled``).

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
                if if_cancelled is not None and session.cancelling:
                    stop_reason = if_cancelled
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

    # -- the agent's requests to the client -----------------------------------

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

    # -- sessions ---------------------------------------------------------------

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
                if session.cancel_mark is None:
                    session.cancel_mark = self.answered
            self.cond.notify_all()
        for held in covered:
            self.reply_error(held.request_id, cancelled_error())

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
