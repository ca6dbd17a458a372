"""The connection pump: one reader task, one writer task, the RPC engine, routing.

Hot path (issue 4, "Performance"): one trio task reads lines, decodes them and
applies ``session/update`` notifications to the session model inline. No task or
thread hop per notification; waiters are woken once per batch of lines read.
"""

from __future__ import annotations

import contextlib
import logging
import math
import time
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

import pluggy
import trio

from acp_lite.aio._agent_requests import AgentRequest, AgentRequestsMixin
from acp_lite.aio._events import ConnectionEvent, ConnectionEventKind
from acp_lite.aio._lines import LineReader, OversizeLine
from acp_lite.aio._process import AgentProcess
from acp_lite.errors import (
    AcpError,
    AgentExited,
    ProtocolError,
    Timeout,
    TransportError,
    request_error_from,
)
from acp_lite.limits import Limits
from acp_lite.protocol import UNSET, Notification, decode_line
from acp_lite.protocol.jsonrpc import decode_update_line, loads_json
from acp_lite.rpc import (
    InvalidReceived,
    NotificationReceived,
    PeerCancelled,
    PendingRequest,
    RequestReceived,
    ResponseReceived,
    RpcEngine,
    UnhandledRequest,
    UnmatchedResponse,
)
from acp_lite.transcript import Transcript

if TYPE_CHECKING:
    from acp_lite.aio._session import AsyncSession

__all__ = ["Connection"]

logger = logging.getLogger("acp_lite.connection")

_UPDATE = "session/update"
_PERMISSION = "session/request_permission"
_ELICITATION = "elicitation/create"
_SESSION_CREATING = frozenset({"session/new", "session/resume"})


class _Waiter:
    """Where the reader hands a response to the task awaiting it."""

    __slots__ = ("error", "event", "failed", "result")

    def __init__(self) -> None:
        self.event = trio.Event()
        self.result: Any = None
        self.error: AcpError | None = None
        self.failed = False  # the connection failed before a response came


class Connection(AgentRequestsMixin):
    """JSON-RPC over a pair of byte streams, for one :class:`AsyncClient`."""

    def __init__(
        self,
        send_stream: trio.abc.SendStream,
        receive_stream: trio.abc.ReceiveStream,
        *,
        limits: Limits,
        process: AgentProcess | None = None,
        plugin_manager: pluggy.PluginManager,
        on_permission: Callable[[Any, Any], Any] | None = None,
        on_elicitation: Callable[[Any, Any], Any] | None = None,
        session_view: Callable[[AsyncSession], Any] | None = None,
    ) -> None:
        self.limits = limits
        self.process = process
        self._send_stream = send_stream
        self._receive_stream = receive_stream
        self.engine = RpcEngine(max_pending=limits.max_pending_requests)
        self.transcript = Transcript(limits.max_transcript_entries)
        self.events: deque[ConnectionEvent] = deque(maxlen=limits.max_events)
        self.sessions: dict[str, AsyncSession] = {}
        self.pm = plugin_manager
        self.on_permission = on_permission
        self.on_elicitation = on_elicitation
        self.session_view = session_view
        #: Object passed as ``client`` to hooks (the facade may substitute its own).
        self.hook_client: Any = None
        self.failure: AcpError | None = None
        self.closed = trio.Event()
        self._closing = False
        self._reader_done = trio.Event()
        self._writer_done = trio.Event()
        self._send_tx, self._send_rx = trio.open_memory_channel[bytes](math.inf)
        self._dirty: list[AsyncSession] = []
        # Updates kept until their session is known: (update, raw dict or line).
        self._early: dict[str, list[tuple[Any, Any]]] = {}
        # Ids of session/new and session/resume requests still awaiting an answer.
        self._creating: set[Any] = set()
        self._agent_requests: dict[Any, AgentRequest] = {}
        self._nursery: trio.Nursery | None = None
        self._keep_raw = limits.keep_raw_updates
        hook = self.pm.hook
        self._update_hook = (
            hook.acp_session_update if hook.acp_session_update.get_hookimpls() else None
        )

    # ------------------------------------------------------------------ lifecycle

    def start(self, nursery: trio.Nursery) -> None:
        """Start the reader, writer (and process watcher) tasks in ``nursery``."""
        self._nursery = nursery
        nursery.start_soon(self._read_loop)
        nursery.start_soon(self._write_loop)
        if self.process is not None:
            nursery.start_soon(self.process.read_stderr)
            nursery.start_soon(self._watch_process)

    async def aclose(self) -> None:
        """Close the connection; with a process, run its bounded shutdown ladder."""
        if self._closing:
            await self.closed.wait()
            return
        self._closing = True
        with trio.CancelScope(shield=True):
            for req in self._agent_requests.values():
                req.scope.cancel()
            # Let what is already queued (e.g. a session/cancel) reach the agent
            # before its stdin closes; bounded, since the agent may not be reading.
            self._send_tx.close()
            with trio.move_on_after(self.limits.close_grace):
                await self._writer_done.wait()
            if self.process is not None:
                await self.process.aclose()
            else:
                with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError):
                    await self._send_stream.aclose()
                with trio.move_on_after(self.limits.exit_status_wait):
                    await self._reader_done.wait()
            self._fail(TransportError("the connection was closed by the client"))

    def stderr_tail(self) -> list[str]:
        """The agent's last stderr lines (empty without a process)."""
        return self.process.stderr_tail() if self.process is not None else []

    def check(self, *, method: str | None = None, session_id: str | None = None) -> None:
        """Raise the connection's failure, if it failed or was closed."""
        if self.failure is not None:
            raise self._failure_for(method, session_id)

    def _failure_for(self, method: str | None, session_id: str | None) -> AcpError:
        failure = self.failure
        assert failure is not None
        if isinstance(failure, AgentExited):
            return AgentExited(
                failure.message,
                returncode=failure.returncode,
                method=method,
                session_id=session_id,
                stderr_tail=failure.stderr_tail,
            )
        return type(failure)(
            failure.message, method=method, session_id=session_id, stderr_tail=self.stderr_tail()
        )

    def _fail(self, failure: AcpError) -> None:
        if self.failure is not None:
            return
        self.failure = failure
        for entry in self.engine.fail_all():
            waiter = entry.waiter
            if isinstance(waiter, _Waiter):
                waiter.failed = True
                waiter.event.set()
        for req in self._agent_requests.values():
            req.scope.cancel()
        for session in self.sessions.values():
            session.model.finish()  # end-of-session checks (idempotent)
            session._notify()
        self.closed.set()
        self._call_hook("acp_connection_closed", client=self.hook_client)

    async def _watch_process(self) -> None:
        assert self.process is not None
        await self.process.process.wait()
        # Give the reader a moment to drain what the agent wrote before it exited,
        # but fail waiters promptly even if a grandchild keeps stdout open.
        with trio.move_on_after(self.limits.exit_status_wait):
            await self._reader_done.wait()
        if self.failure is None and not self._closing:
            self._fail(self._exited_error())

    def _exited_error(self) -> AgentExited:
        rc = self.process.returncode if self.process is not None else None
        if self.process is None:
            what = "the agent closed its output stream"
        elif rc is None:
            what = "the agent closed its stdout"
        elif rc < 0:
            what = f"the agent was killed by signal {-rc}"
        else:
            what = f"the agent exited with code {rc}"
        return AgentExited(what, returncode=rc, stderr_tail=self.stderr_tail())

    # ------------------------------------------------------------------ sending

    def flush(self) -> None:
        """Hand the engine's queued lines to the writer task (never blocks)."""
        lines = self.engine.data_to_send()
        if not lines:
            return
        record = self.transcript.record
        for line in lines:
            record("send", line[:-1])
            try:
                self._send_tx.send_nowait(line)
            except (trio.ClosedResourceError, trio.BrokenResourceError):
                return

    async def _write_loop(self) -> None:
        try:
            await self._write_lines()
        finally:
            self._writer_done.set()

    async def _write_lines(self) -> None:
        rx = self._send_rx
        stream = self._send_stream
        async for line in rx:
            parts = [line]
            while True:  # coalesce what is queued into one write
                try:
                    parts.append(rx.receive_nowait())
                except (trio.WouldBlock, trio.EndOfChannel):
                    break
            try:
                await stream.send_all(b"".join(parts))
            except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
                return  # the reader or the process watcher reports the exit

    async def call(
        self,
        method: str,
        params: Any,
        *,
        session_id: str | None = None,
        timeout: float | None = None,
        state: Callable[[], str | None] | None = None,
    ) -> Any:
        """Send a request and wait for its result (raw JSON value).

        Raises the matching :class:`RequestError` for an error response,
        :class:`AgentExited` when the agent goes away, :class:`Timeout` after
        ``timeout`` (default ``Limits.default_timeout``). On timeout or
        cancellation, ``$/cancel_request`` is sent; a late response is still
        applied (a prompt inserted late is still recorded in the model).
        """
        entry, waiter = self.send_request(method, params, session_id=session_id)
        return await self.wait_response(entry, waiter, timeout=timeout, state=state)

    def send_request(
        self, method: str, params: Any, *, session_id: str | None = None
    ) -> tuple[PendingRequest, _Waiter]:
        """Queue a request now; await :meth:`wait_response` for its result."""
        self.check(method=method, session_id=session_id)
        entry = self.engine.request(method, params, session_id=session_id)
        waiter = _Waiter()
        entry.waiter = waiter
        if method in _SESSION_CREATING:
            self._creating.add(entry.id)
        self.flush()
        return entry, waiter

    async def wait_response(
        self,
        entry: PendingRequest,
        waiter: _Waiter,
        *,
        timeout: float | None = None,
        state: Callable[[], str | None] | None = None,
    ) -> Any:
        """Wait for the response of a request sent with :meth:`send_request`."""
        if timeout is None:
            timeout = self.limits.default_timeout
        try:
            with trio.move_on_after(timeout):
                await waiter.event.wait()
        finally:
            # Timed out or cancelled: withdraw it (spec: $/cancel_request).
            if (
                not waiter.event.is_set()
                and self.failure is None
                and self.engine.cancel_request(entry.id)
            ):
                self.flush()
        if not waiter.event.is_set():
            if entry.id in self._creating:
                # Given up on: stop holding updates for the session it might have
                # created (a late response still creates it; early updates then go
                # to the client event log instead).
                self._creating.discard(entry.id)
                if not self._creating and self._early:
                    self._flush_early()
            raise Timeout(
                f"no response to {entry.method} (request {entry.id}) within {timeout:g}s",
                awaited=f"response to {entry.method} request {entry.id}",
                state=state() if state is not None else None,
                method=entry.method,
                session_id=entry.session_id,
                stderr_tail=self.stderr_tail(),
            )
        if waiter.failed:
            raise self._failure_for(entry.method, entry.session_id)
        if waiter.error is not None:
            raise waiter.error
        return waiter.result

    def notify(self, method: str, params: Any) -> None:
        """Send a notification."""
        self.check(method=method)
        self.engine.notify(method, params)
        self.flush()

    # ------------------------------------------------------------------ receiving

    async def _read_loop(self) -> None:
        reader = LineReader(self._receive_stream, self.limits.max_line_bytes)
        record_many = self.transcript.record_many
        decode = decode_update_line
        on_update = self._on_update
        route = self._route_update
        dispatch = self._dispatch
        try:
            while True:
                try:
                    lines = await reader.receive_lines()
                except (trio.BrokenResourceError, trio.ClosedResourceError):
                    break
                if lines is None:
                    break
                if not reader.plain:
                    self._receive_lines(lines)
                else:
                    # Hot path: only plain, non-empty lines (no per-line checks, one
                    # transcript call for the lines received together); the loop
                    # body is _handle_line, inlined.
                    plain = cast("list[bytes]", lines)
                    record_many("recv", plain)
                    for line in plain:
                        try:
                            msg = decode(line)
                            if msg.__class__ is tuple:  # (session id, update): a text chunk
                                route(msg[0], msg[1], line)
                            elif msg.__class__ is Notification and msg.method == _UPDATE:
                                on_update(msg, line)
                            else:
                                dispatch(msg)
                        except Exception as exc:  # never let one line kill the reader
                            logger.exception("error while handling a line from the agent")
                            self._log("protocol_error", data=line, error=exc)
                if self._dirty:
                    self._wake_dirty()
                self.flush()
        finally:
            self._reader_done.set()
        if self._dirty:
            self._wake_dirty()
        if self.failure is None and not self._closing:
            if self.process is not None:
                with trio.move_on_after(self.limits.exit_status_wait):
                    await self.process.process.wait()
                    await self.process.stderr_done.wait()
            self._fail(self._exited_error())

    def _receive_lines(self, lines: list[bytes | OversizeLine]) -> None:
        # Lines with an oversize or empty one among them, one by one.
        for line in lines:
            if line.__class__ is OversizeLine:
                assert isinstance(line, OversizeLine)
                self._on_oversize(line)
                continue
            assert isinstance(line, bytes)
            if not line or line == b"\r":
                continue
            self.transcript.record("recv", line)
            self._handle_line(line)

    def _handle_line(self, line: bytes) -> None:
        try:
            msg = decode_line(line)
            if msg.__class__ is Notification and msg.method == "session/update":
                self._on_update(msg, line)
            else:
                self._dispatch(msg)
        except Exception as exc:  # never let one line kill the reader
            logger.exception("error while handling a line from the agent")
            self._log("protocol_error", data=line, error=exc)

    def _wake_dirty(self) -> None:
        dirty = self._dirty
        self._dirty = []
        for session in dirty:
            session._dirty = False
            session._notify()

    def _log(
        self,
        kind: ConnectionEventKind,
        *,
        data: Any = None,
        error: BaseException | None = None,
        session_id: str | None = None,
        method: str | None = None,
    ) -> None:
        self.events.append(ConnectionEvent(kind, time.monotonic(), data, error, session_id, method))

    def _on_oversize(self, line: OversizeLine) -> None:
        # Recorded in the transcript as what we saw: the head, marked as truncated.
        self.transcript.record("recv", line.head + b"...<truncated>")
        err = ProtocolError(
            f"line of {line.size} bytes exceeds Limits.max_line_bytes="
            f"{self.limits.max_line_bytes}; skipped",
            stderr_tail=self.stderr_tail(),
        )
        self._log("oversize_line", data=line, error=err)

    def _on_update(self, msg: Any, line: bytes | None = None) -> None:
        params = msg.params
        self._route_update(params.session_id, params.update, line, msg)

    def _route_update(self, sid: str, update: Any, line: bytes | None, msg: Any = None) -> None:
        """Apply a ``session/update`` (decoded from ``line``; ``msg``: its Notification,
        when the decoder built one) to its session, keep it, or log it."""
        raw_update: dict[str, Any] | bytes | None = None
        if self._keep_raw:
            if line is not None:
                # The line itself (the transcript holds it anyway): the event log
                # decodes the payload again only if it is read (model/events.py).
                raw_update = line
            elif msg is not None:
                raw = msg.raw_params
                raw_update = raw.get("update") if raw.__class__ is dict else None
        session = self.sessions.get(sid)
        if session is not None:
            if self._update_hook is None:
                # Hot path: AsyncSession._apply without the Event only hooks read.
                session.model.feed(update, raw_update, sid, session._replaying)
                if not session._dirty:
                    session._dirty = True
                    self._dirty.append(session)
            else:
                session._apply(update, raw_update)
        elif self._creating:
            # Maybe for the session a pending session/new is creating: keep it and
            # apply it once the response names the session (spec: "Initial state
            # and synchronization": updates may arrive before the response).
            self._early.setdefault(sid, []).append((update, raw_update))
        else:
            if msg is None and line is not None:
                msg = decode_line(line)  # rare: the hot path built no Notification
            self._log("unknown_session_update", data=msg, session_id=sid)

    def _dispatch(self, message: Any) -> None:
        for ev in self.engine.receive(message):
            cls = ev.__class__
            if cls is ResponseReceived:
                self._on_response(ev)  # type: ignore[arg-type]
            elif cls is NotificationReceived:
                self._on_notification(ev.message)  # type: ignore[union-attr]
            elif cls is RequestReceived:
                self._on_request(ev)  # type: ignore[arg-type]
            elif cls is PeerCancelled:
                req = self._agent_requests.pop(ev.id, None)  # type: ignore[union-attr]
                if req is not None:
                    req.scope.cancel()
                self._log("agent_cancelled_request", data=ev)
            elif cls is UnhandledRequest:
                self._log("unhandled_request", data=ev, method=ev.method)  # type: ignore[union-attr]
            elif cls is UnmatchedResponse:
                self._log("unmatched_response", data=ev.message)  # type: ignore[union-attr]
            elif cls is InvalidReceived:
                inv: InvalidReceived = ev  # type: ignore[assignment]
                inv.error.stderr_tail = tuple(self.stderr_tail())
                self._log("protocol_error", data=inv.message, error=inv.error)
        # Answers the engine generated (-32601, batches) go out with the batch flush.

    def _on_response(self, ev: ResponseReceived) -> None:
        entry = ev.pending
        method = entry.method
        waiter = entry.waiter
        result: Any = ev.result
        error: AcpError | None = None
        if ev.error is not None:
            err = ev.error
            data = getattr(err, "data", None)
            error = request_error_from(
                err.code,
                err.message,
                None if data is UNSET else data,
                method=method,
                session_id=entry.session_id,
                stderr_tail=self.stderr_tail(),
            )
        if method == "session/prompt":
            session = self.sessions.get(entry.session_id or "")
            if session is not None:
                model = session.model
                if ev.error is not None:
                    model.prompt_rejected(entry.id, ev.error)
                else:
                    mid = result.get("messageId") if isinstance(result, dict) else None
                    model.prompt_accepted(entry.id, mid)
                self._mark_dirty(session)
        elif method in _SESSION_CREATING:
            self._creating.discard(entry.id)
            if method == "session/new" and error is None:
                result = self._session_created(result)
            elif method == "session/resume":
                result = self._session_resumed(entry.session_id or "", result, error)
            if not self._creating and self._early:
                self._flush_early()
            if isinstance(result, AcpError):
                error, result = result, None
        if isinstance(waiter, _Waiter):
            waiter.result = result
            waiter.error = error
            waiter.event.set()

    def _session_created(self, result: Any) -> Any:
        from acp_lite.aio._session import AsyncSession

        sid = result.get("sessionId") if isinstance(result, dict) else None
        if not isinstance(sid, str):
            return ProtocolError(
                f"session/new result has no sessionId: {result!r}", method="session/new"
            )
        session = AsyncSession(self, sid)
        session.model.setup_response(result)
        self.sessions[sid] = session
        for update, raw in self._early.pop(sid, ()):
            session._apply(update, raw)
        self._mark_dirty(session)
        return session

    def _session_resumed(self, sid: str, result: Any, error: AcpError | None) -> Any:
        session = self.sessions.get(sid)
        if session is None:
            return result
        session._replaying = False
        if error is not None:
            if session._resume_pending:
                del self.sessions[sid]
            return result
        session._resume_pending = False
        session.model.setup_response(result, resumed=True)
        self._mark_dirty(session)
        return session

    def _flush_early(self) -> None:
        # No session-creating request is in flight any more: these belonged to no
        # session opened on this connection.
        for sid, items in self._early.items():
            for update, raw in items:
                if raw.__class__ is bytes:
                    raw = loads_json(raw)["params"]["update"]
                self._log("unknown_session_update", data=raw or update, session_id=sid)
        self._early.clear()

    def _mark_dirty(self, session: AsyncSession) -> None:
        if not session._dirty:
            session._dirty = True
            self._dirty.append(session)

    def register_resuming(self, session: AsyncSession) -> None:
        """``session/resume`` is about to be sent for ``session``."""
        self.sessions[session.id] = session

    def _on_notification(self, msg: Any) -> None:
        method = msg.method
        if method == "session/update":
            # A batch member (single lines take the reader's fast path): JSON-RPC 2.0
            # section 6, each member is handled as if it had been sent alone.
            self._on_update(msg)
        elif method.startswith("_"):
            self._log("extension_notification", data=msg.params, method=method)
            self._call_hook(
                "acp_extension_notification",
                client=self.hook_client,
                method=method,
                params=msg.params,
            )
        else:
            self._log("notification", data=msg, method=method)

    def _call_hook(self, name: str, **kwargs: Any) -> Any:
        caller = getattr(self.pm.hook, name)
        if not caller.get_hookimpls():
            return None
        try:
            return caller(**kwargs)
        except Exception as exc:
            logger.exception("hook %s raised", name)
            self._log("callback_error", error=exc, method=name)
            return None

    def session_update_hook(self, session: AsyncSession, event: Any) -> None:
        """Run ``acp_session_update`` hooks for one applied update (if any)."""
        hook = self._update_hook
        if hook is not None:
            view = self.session_view(session) if self.session_view is not None else session
            try:
                hook(session=view, event=event)
            except Exception as exc:
                logger.exception("hook acp_session_update raised")
                self._log("callback_error", error=exc, session_id=session.id)
