"""The trio pump: moves bytes between the agent's streams and the sans-IO core.

One reader task feeds what the agent wrote to :class:`acp_lite.core.ClientConnection`
and then acts on what it reports: wakes the tasks waiting on a response or a
session, starts a task per agent request, runs hooks. One writer task writes what
the core queued. Nothing here knows the protocol's rules; those live in the core.
"""

from __future__ import annotations

import contextlib
import logging
import math
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

import trio

from acp_lite.aio._agent_requests import AgentRequestDecider
from acp_lite.aio._client_requests import ClientRequests
from acp_lite.aio._deadlines import Deadlines, TaskWaiter
from acp_lite.aio._outside import PATH, OutsideReading
from acp_lite.aio._peer import AgentOutput, ReportsExit
from acp_lite.aio._pipe import AgentPipe
from acp_lite.aio._process import AgentProcess
from acp_lite.aio._session import AsyncSession
from acp_lite.core import (
    AgentRequestReceived,
    AgentRequestWithdrawn,
    ClientConnection,
    ExtensionNotificationReceived,
    PendingRequest,
    ResponseArrived,
    SessionOpened,
    SessionState,
    UpdateApplied,
)
from acp_lite.errors import AcpError, AgentExited, Timeout, TransportError
from acp_lite.options import ConnectOptions
from acp_lite.protocol import ErrorCode

if TYPE_CHECKING:
    import pluggy

    from acp_lite.core import AgentRequest
    from acp_lite.transcript import Transcript

__all__ = ["Connection"]

logger = logging.getLogger("acp_lite.connection")

_RECEIVE_SIZE = 256 * 1024
#: A read this large found the pipe (64 KiB by default) full or nearly: the agent
#: is ahead, so read again at once even while a message streams.
_FULL_READ = 32 * 1024


#: The close grace after a wait on the agent timed out (seconds).
_AFTER_TIMEOUT_GRACE = 0.1


class Connection:
    """Runs one :class:`ClientConnection` over a pair of trio byte streams."""

    def __init__(
        self,
        send_stream: trio.abc.SendStream,
        receive_stream: trio.abc.ReceiveStream,
        options: ConnectOptions,
        *,
        session_view: Callable[[AsyncSession], Any] | None = None,
        process: AgentProcess | None = None,
    ) -> None:
        """``session_view`` maps an :class:`AsyncSession` to what callbacks and hooks
        receive (``None``: the session itself); ``process``: the agent's, if any."""
        #: What the connection was made with.
        self.options = options
        limits = options.effective_limits
        plugin_manager: pluggy.PluginManager | None = None
        if options.plugins:  # else pluggy, a sizeable import, is not needed
            from acp_lite.hookspec import plugin_manager as make_plugin_manager

            plugin_manager = make_plugin_manager(options.plugins)
        protocol_version = options.protocol_version
        self.limits = limits
        self.process = process
        self._send_stream = send_stream
        self._receive_stream = receive_stream
        #: The plugins' hooks; ``None`` without plugins (pluggy is then not imported).
        self.pm = plugin_manager
        hook = None if plugin_manager is None else plugin_manager.hook.acp_session_update
        self._update_hook = hook if hook is not None and hook.get_hookimpls() else None
        self.core = ClientConnection(
            limits,
            stderr_tail=self.stderr_tail,
            update_events=self._update_hook is not None,
            protocol_version=protocol_version,
            locate_findings=options.conformance,
        )
        self.session_view = session_view
        #: The ``protocol_version`` asked for (1, 2 or "auto").
        self.requested_version = protocol_version
        self._decider = AgentRequestDecider(
            plugin_manager, options.on_permission, options.on_elicitation
        )
        #: Serves fs/* and terminal/* when the user gave handlers (else None).
        self.client_requests = ClientRequests.create(options.files, options.terminals)
        if self.client_requests is not None:
            rpc = self.core.rpc
            rpc.handled_methods = rpc.handled_methods | self.client_requests.methods
        #: Object passed as ``client`` to hooks (the facade may substitute its own).
        self.hook_client: Any = None
        self.closed = trio.Event()
        self._closing = False
        #: A wait on the agent timed out: closing then skips the close grace (the
        #: agent did not answer in time; it is not waited for again).
        self.timed_out = False
        self._reader_done = trio.Event()
        self._writer_done = trio.Event()
        self._send_tx, self._send_rx = trio.open_memory_channel[bytes](math.inf)
        # Write-through (see flush): only for a pipe, whose fd trio made non-blocking.
        self._direct = isinstance(send_stream, trio.lowlevel.FdStream)
        self._queued = 0  # chunks handed to the writer task and not yet written
        #: Callers outside trio (acp_lite.aio._outside): what they left for this thread.
        pipe = receive_stream if isinstance(receive_stream, AgentPipe) else None
        self.outside = OutsideReading(self, pipe)
        #: Session id -> the event trio tasks waiting for that session to change wait on.
        self.session_waiters: dict[str, trio.Event] = {}
        self._nursery: trio.Nursery | None = None
        #: The timeouts of the trio tasks' response waits (one watcher task).
        self.deadlines = Deadlines()

    # ------------------------------------------------------------------ reads

    @property
    def transcript(self) -> Transcript:
        """Every wire line, both ways."""
        return self.core.transcript

    @property
    def failure(self) -> AcpError | None:
        """Why the connection ended (``None`` while open)."""
        return self.core.failure

    @property
    def sessions(self) -> dict[str, AsyncSession]:
        """The sessions open on this connection, by id."""
        return {sid: self.session_for(state) for sid, state in self.core.sessions.items()}

    def session_for(self, state: SessionState) -> AsyncSession:
        """The :class:`AsyncSession` of a core session state (made on first use)."""
        handle = state.handle
        if handle is None:
            return AsyncSession(self, state)  # it sets state.handle
        assert isinstance(handle, AsyncSession)
        return handle

    def stderr_tail(self) -> list[str]:
        """The agent's last stderr lines (empty without a process or an in-process
        agent that keeps them)."""
        if self.process is not None:
            return self.process.stderr_tail()
        peer = self._peer
        return peer.stderr_tail() if peer is not None else []

    @property
    def _peer(self) -> ReportsExit | None:
        stream = self._receive_stream
        return stream.agent if isinstance(stream, AgentOutput) else None

    @property
    def nursery(self) -> trio.Nursery:
        """Where the connection's tasks run (once started)."""
        assert self._nursery is not None
        return self._nursery

    def check(self, *, method: str | None = None, session_id: str | None = None) -> None:
        """Raise the connection's failure, if it failed or was closed."""
        self.core.check(method=method, session_id=session_id)

    # ------------------------------------------------------------------ lifecycle

    def start(self, nursery: trio.Nursery) -> None:
        """Start the reader, writer (and process watcher) tasks in ``nursery``."""
        self._nursery = nursery
        nursery.start_soon(self._read_loop)
        nursery.start_soon(self._write_loop)
        nursery.start_soon(self.deadlines.run)
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
            for req in self.core.agent_requests.values():
                if req.handle is not None:
                    req.handle.cancel()
            # Let what is already queued (e.g. a session/cancel) reach the agent
            # before its stdin closes; bounded, since the agent may not be reading.
            self._send_tx.close()
            started = trio.current_time()
            # After a timeout, a moment for an agent that exits at end of input, then
            # SIGTERM: one that did not answer in time is not waited for again.
            grace = min(_AFTER_TIMEOUT_GRACE, self.limits.close_grace)
            if not self.timed_out:
                grace = self.limits.close_grace
            with trio.move_on_after(grace):
                await self._writer_done.wait()
            if self.process is not None:
                # The drain is part of the close grace: an agent that stopped
                # reading must not make close() exceed Limits.shutdown_timeout.
                spent = trio.current_time() - started
                await self.process.aclose(close_grace=max(0.0, grace - spent))
            else:
                with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError):
                    await self._send_stream.aclose()
                with trio.move_on_after(self.limits.exit_status_wait):
                    await self._reader_done.wait()
            self._fail(TransportError("the connection was closed by the client"))

    def _fail(self, failure: AcpError) -> None:
        if self.core.failure is not None:
            return
        if self.client_requests is not None:
            self.client_requests.close()  # no terminal outlives the connection
        for entry in self.core.connection_lost(failure):
            self._wake(entry)
        self._pump_events()
        self.closed.set()
        self.call_hook("acp_connection_closed", client=self.hook_client)

    async def _watch_process(self) -> None:
        assert self.process is not None
        await self.process.process.wait()
        # Give the reader a moment to drain what the agent wrote before it exited,
        # but fail waiters promptly even if a grandchild keeps stdout open.
        with trio.move_on_after(self.limits.exit_status_wait):
            await self._reader_done.wait()
        if self.core.failure is None and not self._closing:
            self._fail(self._exited_error())

    def _exited_error(self) -> AgentExited:
        peer = self._peer
        if self.process is not None:
            rc = self.process.returncode
        else:
            rc = peer.returncode if peer is not None else None
        if self.process is None and rc is None:
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
        """Write what the core queued, or hand it to the writer task (never blocks)."""
        PATH.get().flush(self, self.core.data_to_send())

    def write(self, data: bytes) -> None:
        """(The trio thread) Write ``data`` as far as the pipe takes it now, queue the
        rest for the writer task."""
        if not data:
            return
        data = self.write_now(data)
        if data:
            with contextlib.suppress(trio.ClosedResourceError, trio.BrokenResourceError):
                self._send_tx.send_nowait(data)
                self._queued += 1

    def write_now(self, data: bytes) -> bytes:
        """Write what the pipe takes now, if nothing is queued before it; what is left.

        Write-through: as much as the pipe takes goes out without waking the writer
        task (one task switch less per request); the rest, if any, follows through
        the writer, in order. (Outside trio too: the writer is idle then exactly
        when nothing is queued.)
        """
        if self._direct and not self._queued and not self._closing:
            # fileno() is -1 once the stream is closed: the write then fails.
            with contextlib.suppress(OSError):  # full pipe, or gone: the writer says
                sent = os.write(cast("trio.lowlevel.FdStream", self._send_stream).fileno(), data)
                return data[sent:]
        return data

    async def _write_loop(self) -> None:
        try:
            await self._write_all()
        finally:
            self._writer_done.set()

    async def _write_all(self) -> None:
        rx = self._send_rx
        stream = self._send_stream
        async for data in rx:
            parts = [data]
            while True:  # coalesce what is queued into one write
                try:
                    parts.append(rx.receive_nowait())
                except (trio.WouldBlock, trio.EndOfChannel):
                    break
            try:
                await stream.send_all(b"".join(parts))
            except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
                return  # the reader or the process watcher reports the exit
            finally:
                self._queued -= len(parts)

    async def call(
        self,
        method: str,
        params: Any,
        *,
        session_id: str | None = None,
        timeout: float | None = None,
        state: Callable[[], str | None] | None = None,
    ) -> Any:
        """Send a request and wait for its typed result.

        Raises the matching :class:`RequestError` for an error response,
        :class:`AgentExited` when the agent goes away, :class:`Timeout` after
        ``timeout`` (default ``Limits.default_timeout``). On timeout or
        cancellation, ``$/cancel_request`` is sent; a late response is still
        applied (a prompt inserted late is still recorded in the model).
        """
        entry = self.send_request(method, params, session_id=session_id)
        return await self.wait_response(entry, timeout=timeout, state=state)

    def send_request(
        self, method: str, params: Any, *, session_id: str | None = None
    ) -> PendingRequest:
        """Queue a request now; await :meth:`wait_response` for its result."""
        entry = self.core.send_request(method, params, session_id=session_id)
        self.sent(entry, params)
        self.flush()
        return entry

    def sent(self, entry: PendingRequest, params: Any) -> None:
        """Note a request queued with the core (a session's directories, for fs/*)."""
        if self.client_requests is not None:
            self.client_requests.sent(entry, params)

    async def wait_response(
        self,
        entry: PendingRequest,
        *,
        timeout: float | None = None,
        state: Callable[[], str | None] | None = None,
        on_timeout: Callable[[], None] | None = None,
    ) -> Any:
        """Wait for the response of a request queued with the core; its typed result.

        ``on_timeout`` runs when the wait times out, before the request is withdrawn
        (``Session.run`` sends ``session/cancel`` there: the work goes first).
        """
        if not entry.done:
            if timeout is None:
                timeout = self.limits.default_timeout
            try:
                # A trio task waits in trio; a coroutine run in a blocking caller's
                # thread parks and its driver waits (acp_lite.aio._outside).
                await PATH.get().wait(self, entry, timeout)
                if not entry.done and on_timeout is not None:
                    on_timeout()
            finally:
                if not entry.done:
                    # Timed out or cancelled: withdraw it (spec: $/cancel_request).
                    self.core.abandon(entry)
                    self.flush()
            if not entry.done:
                self.timed_out = True
                raise Timeout(
                    f"no response to {entry.method} (request {entry.id}) within {timeout:g}s",
                    awaited=f"response to {entry.method} request {entry.id}",
                    state=state() if state is not None else None,
                    method=entry.method,
                    session_id=entry.session_id,
                    stderr_tail=self.stderr_tail(),
                )
        if entry.error is not None:
            raise entry.error
        return entry.result

    async def wait_in_trio(self, entry: PendingRequest, timeout: float) -> None:
        """(A trio task) Wait at most ``timeout`` s for ``entry``'s response."""
        # One task keeps every request's timeout (aio/_deadlines.py): a cancel scope
        # per request costs more than the rest of the wait.
        deadline = trio.current_time() + timeout
        if self.deadlines.running:
            waiter = entry.waiter = TaskWaiter(trio.lowlevel.current_task(), deadline)
            if not await self.deadlines.wait(waiter) or entry.done:
                return
        # Before the watcher runs, or it stopped: a cancel scope of its own.
        event = entry.waiter = trio.Event()
        with trio.move_on_at(deadline):
            await event.wait()

    def notify(self, method: str, params: Any) -> None:
        """Send a notification."""
        self.core.send_notification(method, params)
        self.flush()

    def cancel_session(self, session_id: str) -> None:
        """``session/cancel`` through the core; stop deciding what it answered."""
        for req in self.core.cancel(session_id):
            if req.handle is not None:
                req.handle.cancel()
        self.flush()

    # ------------------------------------------------------------------ receiving

    async def _read_loop(self) -> None:
        stream = self._receive_stream
        core = self.core
        receive = core.receive_data
        delay = self.limits.stream_read_delay
        try:
            while True:
                try:
                    data = bytes(await stream.receive_some(_RECEIVE_SIZE))
                except (trio.BrokenResourceError, trio.ClosedResourceError):
                    data = b""
                receive(data)
                self.pump()
                if not data:
                    break
                if delay and core.streaming and len(data) < _FULL_READ:
                    # A message streams, a few lines at a time: let more of it
                    # arrive, so that one wake-up handles many chunks
                    # (Limits.stream_read_delay).
                    await trio.sleep(delay)
        finally:
            self._reader_done.set()
        if self.core.failure is None and not self._closing:
            if self.process is not None:
                with trio.move_on_after(self.limits.exit_status_wait):
                    await self.process.process.wait()
                    await self.process.stderr_done.wait()
            self._fail(self._exited_error())

    def pump(self) -> None:
        """Act on what the core reported (and a borrower left), write what it queued."""
        self._pump_events()
        self.flush()

    def _pump_events(self) -> None:
        # What a borrower of the pipe read and left to this thread comes before
        # anything this thread read itself (the core's order).
        outside = self.outside
        events = outside.take_events(self.core.next_events())
        for ev in events:
            if isinstance(ev, ResponseArrived):
                if self.client_requests is not None:
                    self.client_requests.answered(ev.request)
                self._wake(ev.request)
            elif isinstance(ev, SessionOpened):
                self.session_for(ev.session)
            elif isinstance(ev, UpdateApplied):
                self._run_update_hook(ev)
            elif isinstance(ev, AgentRequestReceived):
                self._start_deciding(ev.request)
            elif isinstance(ev, AgentRequestWithdrawn):
                if ev.request.handle is not None:
                    ev.request.handle.cancel()
            elif isinstance(ev, ExtensionNotificationReceived):
                self.call_hook(
                    "acp_extension_notification",
                    client=self.hook_client,
                    method=ev.method,
                    params=ev.params,
                )
        waiters = self.session_waiters
        for state in outside.take_sessions(self.core.changed_sessions()):
            event = waiters.pop(state.id, None)
            if event is not None:
                event.set()

    async def session_changed(self, session_id: str) -> None:
        """Wait until session ``session_id`` changes (a trio task; woken once per batch
        of received lines)."""
        event = self.session_waiters.get(session_id)
        if event is None:
            event = self.session_waiters[session_id] = trio.Event()
        await event.wait()

    @staticmethod
    def _wake(entry: PendingRequest) -> None:
        if entry.waiter is not None:
            entry.waiter.set()

    def view_of(self, session_id: str | None) -> Any:
        """What callbacks receive as the session ``session_id`` (``None`` if unknown)."""
        state = self.core.sessions.get(session_id) if session_id is not None else None
        if state is None:
            return None
        session = self.session_for(state)
        return self.session_view(session) if self.session_view is not None else session

    def _start_deciding(self, req: AgentRequest) -> None:
        scope = trio.CancelScope()
        req.handle = scope
        assert self._nursery is not None
        requests = self.client_requests
        if requests is not None and req.method in requests.methods:
            self._nursery.start_soon(requests.handle, self, req, scope)
            return
        self._nursery.start_soon(self._decide, req, scope)

    async def _decide(self, req: AgentRequest, scope: trio.CancelScope) -> None:
        view = self.view_of(req.session_id)
        with scope:
            try:
                # User callbacks may block: never on the trio thread. Abandoned on
                # cancel, so a $/cancel_request or session/cancel answers at once.
                result = await trio.to_thread.run_sync(
                    self._decider.decide, req, view, abandon_on_cancel=True
                )
            except Exception as exc:
                logger.exception("%s callback raised", req.method)
                self.core.log_event("callback_error", error=exc, session_id=req.session_id)
                self.core.respond_error(
                    req.id,
                    ErrorCode.INTERNAL_ERROR,
                    f"client callback failed: {type(exc).__name__}: {exc}",
                )
            else:
                self.core.respond(req.id, result)
            self.flush()

    def _run_update_hook(self, ev: UpdateApplied) -> None:
        hook = self._update_hook
        if hook is None:  # pragma: no cover - the core reports updates only for hooks
            return
        session = self.session_for(ev.session)
        view = self.session_view(session) if self.session_view is not None else session
        try:
            hook(session=view, event=ev.event)
        except Exception as exc:
            logger.exception("hook acp_session_update raised")
            self.core.log_event("callback_error", error=exc, session_id=ev.session.id)

    def call_hook(self, name: str, **kwargs: Any) -> Any:
        """Run hook ``name`` if any plugin implements it (errors are logged, not raised)."""
        if self.pm is None:
            return None
        caller = getattr(self.pm.hook, name)
        if not caller.get_hookimpls():
            return None
        try:
            return caller(**kwargs)
        except Exception as exc:
            logger.exception("hook %s raised", name)
            self.core.log_event("callback_error", error=exc, method=name)
            return None
