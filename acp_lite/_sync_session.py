"""The blocking ``Session`` (see :mod:`acp_lite.client`): one portal call per operation."""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, Literal, TypeVar

import trio

from acp_lite._mirror import DirectRunner, Facade, blocking
from acp_lite._portal import ClientClosed
from acp_lite.aio import AsyncSession
from acp_lite.errors import Timeout

if TYPE_CHECKING:
    from acp_lite.client import Client
    from acp_lite.model import SessionModel
    from acp_lite.model.events import Event
    from acp_lite.model.submissions import Submission
    from acp_lite.turn import Turn

__all__ = ["Session"]

T = TypeVar("T")

BACKSTOP = 10.0
"""Seconds added to a call's own timeout for the portal's last-resort deadline: the
async layer enforces (and describes) every timeout; this only guards against a bug
there leaving a blocking caller stuck forever."""

INTERRUPT_CANCEL_WAIT = 2.0
"""After Ctrl-C in ``run``, wait this long for the idle confirming ``session/cancel``."""


async def _stop_started(asession: AsyncSession, started: list[Submission]) -> None:
    """Stop the work of an interrupted ``run``, and only that work."""
    if not started:
        return  # nothing was sent
    submission = started[0]
    if submission.status == "pending":
        # Withdrawn already ($/cancel_request when the wait was cancelled). The
        # answer says whether that was in time: -32800 (PromptRejected), or a
        # messageId when the agent had inserted it after all.
        await asession.wait_inserted(submission, timeout=INTERRUPT_CANCEL_WAIT)
    if submission.status == "inserted" and not submission.done:
        # session/cancel stops the session's current foreground work, which is
        # this prompt's (a held prompt of someone else is never touched).
        await asession.cancel(wait=True, timeout=INTERRUPT_CANCEL_WAIT)


class Session(Facade):
    """One ACP session on a :class:`Client` (blocking). Get one from ``Client.new_session``.

    ``model`` is the live :class:`~acp_lite.SessionModel`, updated on the client's trio
    thread as notifications arrive: read it freely once the session is idle (after
    ``run`` / ``wait_idle``); while updates stream, prefer ``iter_updates`` or
    ``on_update``, which hand over consistent batches.
    """

    _async: AsyncSession

    def __init__(self, client: Client, asession: AsyncSession) -> None:
        self._client = client
        self._async = asession
        self.id: str = asession.id

    def __repr__(self) -> str:
        return f"<Session {self.id!r} state={self._async.model.state!r}>"

    # ------------------------------------------------------------------ plumbing

    def _call(
        self, afn: Callable[..., Awaitable[T]], *args: Any, timeout: float | None = None
    ) -> T:
        return self._client._call(afn, *args, timeout=timeout)

    def _direct_runner(self) -> DirectRunner:
        return self._client._direct_runner()

    def _view(self, value: Any) -> Any:
        return self._client._view(value)

    # ------------------------------------------------------------------ reads

    @property
    def client(self) -> Client:
        """The client this session belongs to."""
        return self._client

    @property
    def async_session(self) -> AsyncSession:
        """The underlying :class:`AsyncSession` (use it only on the client's trio thread)."""
        return self._async

    @property
    def model(self) -> SessionModel:
        """The session model (live; see the class docstring)."""
        return self._async.model

    @property
    def state(self) -> str:
        """The foreground state (``idle``, ``running``, ``requires_action`` ...)."""
        return self._async.state

    @property
    def stop_reason(self) -> str | None:
        """The stop reason of the last idle."""
        return self._async.stop_reason

    @property
    def updates(self) -> Sequence[Event]:
        """Every update received for this session, in order (the model's event log)."""
        return self._async.updates

    @property
    def timeline(self) -> list[Any]:
        """Entities in timeline order (a consistent snapshot)."""
        result: list[Any] = self._client._read(lambda: list(self._async.timeline))
        return result

    def text(self, submission: Submission | int | None = None) -> str:
        """Agent message text of the session, or of the work after ``submission``."""
        result: str = self._client._read(lambda: self._async.text(submission))
        return result

    # ------------------------------------------------------------------ prompts

    submit = blocking(AsyncSession.submit, direct=True)
    wait_inserted = blocking(AsyncSession.wait_inserted, direct=True)
    prompt = blocking(AsyncSession.prompt, direct=True)

    def withdraw(self, submission: Submission) -> bool:
        """Send ``$/cancel_request`` for a prompt not answered yet (a held prompt)."""
        # Not async: a quick step on the trio thread, no wait and no timeout.
        result: bool = self._client._portal.run_sync(self._async.withdraw, submission)
        return result

    def run(
        self,
        content: Any,
        *,
        timeout: float | None = None,
        insert_timeout: float | None = None,
    ) -> Turn:
        """Prompt and wait until the foreground work that followed its insertion ends.

        ``timeout`` bounds the whole turn (default ``Limits.default_timeout``);
        ``insert_timeout``, if given, bounds the wait for the prompt's answer (the
        insertion) within it. A failure after insertion is not an exception: it is
        ``turn.stop_reason == "error"`` with ``turn.error`` (use
        ``turn.raise_for_stop()``). Ctrl-C stops
        the work this call started and re-raises: a prompt the agent holds is
        withdrawn (``$/cancel_request``); once inserted, ``session/cancel`` is sent
        and the confirming idle awaited briefly.
        """
        # Hand-written: on Ctrl-C it must stop the agent's work for the submission it
        # started (withdraw or session/cancel), which cancelling the await alone
        # does not do once the prompt is inserted.
        asession = self._async

        async def run() -> Turn:
            started: list[Submission] = []
            try:
                return await asession._run(content, timeout, started, insert_timeout)
            except trio.Cancelled:
                # Only our portal cancels this task (Ctrl-C, backstop, close): stop the
                # agent's work too instead of leaving it streaming into nobody.
                # The agent may be gone or never confirm: the Ctrl-C still wins.
                with (
                    trio.CancelScope(shield=True),
                    trio.move_on_after(INTERRUPT_CANCEL_WAIT),
                    contextlib.suppress(Exception),
                ):
                    await _stop_started(asession, started)
                raise

        return self._call(run, timeout=timeout)

    wait_idle = blocking(AsyncSession.wait_idle)
    wait_quiet = blocking(AsyncSession.wait_quiet)
    cancel = blocking(AsyncSession.cancel)

    # ------------------------------------------------------------------ other methods

    set_config_option = blocking(AsyncSession.set_config_option, direct=True)
    cancel_tool_call = blocking(AsyncSession.cancel_tool_call, direct=True)
    cancel_terminal = blocking(AsyncSession.cancel_terminal, direct=True)
    close = blocking(AsyncSession.close, direct=True)
    delete = blocking(AsyncSession.delete, direct=True)
    fork = blocking(AsyncSession.fork, direct=True)
    archive = blocking(AsyncSession.archive, direct=True)
    unarchive = blocking(AsyncSession.unarchive, direct=True)
    set_title = blocking(AsyncSession.set_title, direct=True)
    status = blocking(AsyncSession.status, direct=True)

    # ------------------------------------------------------------------ streaming

    def iter_updates(
        self,
        *,
        from_start: bool = False,
        timeout: float | None = None,
        until: Literal["idle", "quiet"] | None = None,
    ) -> Iterator[Event]:
        """Yield events as they arrive (from now, or from the first with ``from_start``).

        One thread hop per *batch* of events, never per event. Without ``until``
        it ends when the connection closes, after the events received before
        that; ``until="idle"`` / ``"quiet"`` end it as for
        :meth:`AsyncSession.iter_updates`. ``timeout`` (default: the connection's
        default timeout) bounds each wait for new events: ``Timeout`` when
        nothing arrives for that long.
        """
        # Hand-written: a blocking generator, not one call; each step fetches a whole
        # batch on the trio thread, and the end of the connection ends it quietly.
        # "From now" is the call, not the first step (as for the async iterator).
        asession = self._async
        budget = asession._conn.limits.default_timeout if timeout is None else timeout
        index: int = self._client._read(lambda: 0 if from_start else len(asession.model.events))
        done = None if until is None else asession._until(until)
        return self._batches(index, budget, done)

    def _batches(
        self, index: int, budget: float, done: Callable[[], bool] | None
    ) -> Iterator[Event]:
        asession = self._async
        client = self._client

        async def next_batch(start: int) -> list[Event] | None:
            # Runs on the trio thread: a consistent slice of the log, or None at the end.
            conn = asession._conn
            with trio.move_on_after(budget):
                while True:
                    events = asession.model.events
                    if len(events) > start:
                        return list(events[start:])
                    if conn.failure is not None or (done is not None and done()):
                        return None
                    await asession._changed_wait()
            raise Timeout(
                f"no update for session {asession.id} within {budget:g}s",
                awaited="the next session update",
                state=asession.model.state,
                session_id=asession.id,
                stderr_tail=conn.stderr_tail(),
            )

        while True:
            try:
                batch = client._portal.call(next_batch, index, timeout=budget + BACKSTOP)
            except ClientClosed:
                return
            if batch is None:
                return
            index += len(batch)
            yield from batch

    def __iter__(self) -> Iterator[Event]:
        return self.iter_updates()

    def on_update(self, callback: Callable[[Event], object]) -> Callable[[], None]:
        """Call ``callback(event)`` for each update from now on; returns ``unsubscribe``.

        Callbacks run in a worker thread (never the trio thread), in order, several
        per thread hop. An exception in a callback is logged, not raised.
        """
        # Hand-written: not async; the returned ``unsubscribe`` must itself cross to
        # the trio thread (or run directly when called there, e.g. from a hook).
        portal = self._client._portal
        unsubscribe: Callable[[], None] = portal.run_sync(self._async.on_update, callback)

        def stop() -> None:
            if portal.in_trio_thread():
                unsubscribe()
                return
            with contextlib.suppress(ClientClosed):
                portal.run_sync(unsubscribe)

        return stop
