"""``AsyncSession``: one ACP session on an :class:`AsyncClient`."""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Literal, TypeAlias

import trio

from acp_lite.aio._link import Link
from acp_lite.aio._outside import outside_safe
from acp_lite.aio._session_methods import SessionMethods
from acp_lite.aio._turn_view import EventSlice, build_turn
from acp_lite.errors import Timeout
from acp_lite.jsontypes import JsonObject, JsonValue
from acp_lite.model.submissions import Submission
from acp_lite.protocol import ContentBlock, IdleStateUpdate, converter
from acp_lite.protocol.constants import IDLE
from acp_lite.turn import Turn

if TYPE_CHECKING:
    from acp_lite.core import PendingRequest, SessionState
    from acp_lite.model.entities import Entity
    from acp_lite.model.session import Event

__all__ = ["AsyncSession", "EventSlice", "PromptBlock", "PromptContent", "prompt_blocks"]

#: How long a stopped on_update dispatcher lets a running callback batch finish
#: before abandoning it in its thread (seconds).
_CALLBACK_GRACE = 0.25

logger = logging.getLogger("acp_lite.session")


PromptBlock: TypeAlias = str | ContentBlock | Mapping[str, JsonValue]
"""One block of a prompt: a text, a typed content block or a wire dict."""

PromptContent: TypeAlias = PromptBlock | Sequence[PromptBlock]
"""What ``submit`` / ``prompt`` / ``run`` take: one block or a sequence of them."""


def prompt_blocks(content: PromptContent) -> list[JsonObject]:
    """The wire ``prompt`` array for ``content``: a str, a content block or a sequence.

    Blocks may be typed (``TextContent(...)``) or wire dicts; strings become text.
    """
    if isinstance(content, str) or not isinstance(content, Sequence):
        content = [content]
    blocks: list[JsonObject] = []
    for item in content:
        if isinstance(item, str):
            blocks.append({"type": "text", "text": item})
        elif isinstance(item, dict):
            blocks.append(item)
        else:
            blocks.append(converter.unstructure(item))
    if not blocks:
        # Spec (prompt lifecycle, step 1): clients MUST NOT send an empty prompt.
        raise ValueError("a prompt needs at least one content block")
    return blocks


class AsyncSession(SessionMethods):
    """A session: its :class:`~acp_lite.SessionModel` (``model``) and its methods.

    Every wait has a default timeout (``Limits.default_timeout``) and raises
    :class:`~acp_lite.errors.Timeout` naming what was awaited and the state then;
    if the agent goes away every wait raises
    :class:`~acp_lite.errors.AgentExited` at once.
    """

    def __init__(self, connection: Link, state: SessionState) -> None:
        self._conn = connection
        self._state = state
        state.handle = self
        self.id = state.id
        self.model = state.model
        # request id -> core entry of prompts whose response is awaited.
        self._prompts: dict[int, PendingRequest] = {}

    def __repr__(self) -> str:
        return f"<AsyncSession {self.id!r} state={self.model.state!r}>"

    # ------------------------------------------------------------------ reads

    @property
    def state(self) -> str:
        """The foreground state (``idle``, ``running``, ``requires_action`` ...)."""
        return self.model.state

    @property
    def stop_reason(self) -> str | None:
        """The stop reason of the last idle."""
        return self.model.stop_reason

    @property
    def updates(self) -> Sequence[Event]:
        """Every update received for this session, in order (the model's event log)."""
        return self.model.events

    @property
    def timeline(self) -> list[Entity]:
        """Entities in timeline order."""
        return self.model.timeline

    def text(self, submission: Submission | int | None = None) -> str:
        """Agent message text of the session, or of the work after ``submission``."""
        return self.model.text(submission)

    # ------------------------------------------------------------------ waking

    async def _changed_wait(self) -> None:
        await self._conn.session_changed(self.id)

    async def _wait_until(
        self,
        predicate: Callable[[], bool],
        *,
        timeout: float | None,
        awaited: str,
        message: str | None = None,
        method: str | None = None,
    ) -> None:
        # ``message`` replaces the generic wording (the session state is added to it).
        conn = self._conn
        if timeout is None:
            timeout = conn.limits.default_timeout
        with trio.move_on_after(timeout):
            while not predicate():
                conn.check(session_id=self.id)
                await self._changed_wait()
            return
        conn.timed_out = True
        raise Timeout(
            message
            or f"timed out after {timeout:g}s waiting for {awaited} "
            f"(session state: {self.model.state})",
            awaited=awaited,
            state=self.model.state,
            session_id=self.id,
            method=method,
            stderr_tail=conn.stderr_tail(),
        )

    # ------------------------------------------------------------------ prompts

    @outside_safe
    async def submit(self, content: PromptContent) -> Submission:
        """Send ``session/prompt`` and return its pending :class:`Submission` at once.

        Prompting during active work is allowed (spec: "Prompts during active
        work"); it is never refused locally.
        """
        blocks = prompt_blocks(content)
        conn = self._conn
        entry, submission = conn.core.prompt(self.id, blocks)
        conn.flush()
        self._prompts[entry.id] = entry
        return submission

    @outside_safe
    async def wait_inserted(
        self, submission: Submission, *, timeout: float | None = None
    ) -> Submission:
        """Wait for the prompt's response; raise :class:`PromptRejected` on error."""
        return await self._wait_inserted(submission, timeout, None)

    @outside_safe
    async def _wait_inserted(
        self,
        submission: Submission,
        timeout: float | None,
        on_timeout: Callable[[], None] | None,
    ) -> Submission:
        entry = self._prompts.get(submission.request_id)  # type: ignore[arg-type]
        if entry is None:
            return submission  # already answered and awaited once
        try:
            await self._conn.wait_response(
                entry, timeout=timeout, state=lambda: self.model.state, on_timeout=on_timeout
            )
        finally:
            if entry.done:
                self._prompts.pop(entry.id, None)
        return submission

    @outside_safe
    async def prompt(self, content: PromptContent, *, timeout: float | None = None) -> Submission:
        """Send a prompt; return once the agent inserted it (``submission.message_id``).

        Raises :class:`~acp_lite.errors.PromptRejected` when the agent answers
        with an error (not inserted). Cancelling this call (or its timeout)
        withdraws a held prompt with ``$/cancel_request``.
        """
        submission = await self.submit(content)
        return await self.wait_inserted(submission, timeout=timeout)

    def withdraw(self, submission: Submission) -> bool:
        """Send ``$/cancel_request`` for a prompt not answered yet (a held prompt).

        The agent answers -32800 if it had not inserted it, else its messageId.
        """
        entry = self._prompts.get(submission.request_id)  # type: ignore[arg-type]
        if entry is None or entry.done:
            return False
        sent = self._conn.core.withdraw(entry.id)
        self._conn.flush()
        return sent

    async def run(
        self,
        content: PromptContent,
        *,
        timeout: float | None = None,
        insert_timeout: float | None = None,
        stop_on_cancel: float | None = 2.0,
        cancel_on_timeout: bool = False,
    ) -> Turn:
        """Prompt and wait until the foreground work that followed its insertion ends.

        ``timeout`` bounds the whole turn (default ``Limits.default_timeout``);
        ``insert_timeout``, if given, bounds the wait for the prompt's answer (the
        insertion) within it. A failure after insertion is not an exception: it is
        ``turn.stop_reason == "error"`` with ``turn.error`` (use
        ``turn.raise_for_stop()``).

        Cancelling this call (Ctrl-C, for the blocking ``Session.run``) stops the
        work it started: a prompt the agent holds is withdrawn
        (``$/cancel_request``); once inserted, ``session/cancel`` is sent, and the
        answer or the confirming idle is awaited up to ``stop_on_cancel`` seconds
        (shielded), then the cancellation goes on. ``stop_on_cancel=None``: only
        the withdrawal, nothing awaited (the inserted work goes on).

        ``cancel_on_timeout``: when a limit fires, send ``session/cancel`` before
        raising :class:`~acp_lite.errors.Timeout` (and before the withdrawal of a
        prompt not answered yet: a v1 agent's turn runs until its answer), so the
        agent stops the work too; nothing is awaited.
        """
        started: list[Submission] = []
        if stop_on_cancel is None:
            return await self._run(content, timeout, started, insert_timeout, cancel_on_timeout)
        try:
            return await self._run(content, timeout, started, insert_timeout, cancel_on_timeout)
        except trio.Cancelled:
            with (
                trio.CancelScope(shield=True),
                trio.move_on_after(stop_on_cancel),
                contextlib.suppress(Exception),
            ):
                await self._stop_started(started, stop_on_cancel)
            raise

    async def _stop_started(self, started: list[Submission], wait: float) -> None:
        # Stop the work of a cancelled run, and only that work.
        if not started:
            return  # nothing was sent
        submission = started[0]
        if submission.status == "pending":
            # Withdrawn already ($/cancel_request when the wait was cancelled). The
            # answer says whether that was in time: -32800 (PromptRejected), or a
            # messageId when the agent had inserted it after all.
            await self.wait_inserted(submission, timeout=wait)
        if submission.status == "inserted" and not submission.done:
            # session/cancel stops the session's current foreground work, which is
            # this prompt's (a held prompt of someone else is never touched).
            await self.cancel(wait=True, timeout=wait)

    async def _run(
        self,
        content: PromptContent,
        timeout: float | None,
        started: list[Submission],
        insert_timeout: float | None = None,
        cancel_on_timeout: bool = False,
    ) -> Turn:
        # ``started`` receives the submission as soon as it is sent, so a caller that
        # is cancelled (Ctrl-C in the blocking facade) knows what it has to stop.
        conn = self._conn
        if timeout is None:
            timeout = conn.limits.default_timeout
        deadline = trio.current_time() + timeout
        start = len(self.model.events)
        submission = await self.submit(content)
        started.append(submission)
        insert = timeout if insert_timeout is None else min(timeout, insert_timeout)
        stop = (lambda: conn.cancel_session(self.id)) if cancel_on_timeout else None
        await self._wait_inserted(submission, insert, stop)
        remaining = max(0.0, deadline - trio.current_time())
        if conn.core.protocol_version == 1:
            # A v1 turn is the one session/prompt request, answered with the stop
            # reason (v1 schema PromptResponse); its "message id" is our own
            # synthesised one, and v1 has no idle: say it in v1's terms.
            # (Not "response to ...": that names the per-request limit, this is the turn's.)
            rid = submission.request_id
            awaited = f"the response to session/prompt (request {rid})"
            message: str | None = (
                f"no response to session/prompt (request {rid}) within {timeout:g}s"
            )
        else:
            awaited = f"the idle ending the work of message {submission.message_id!r}"
            message = None
        try:
            await self._wait_until(
                lambda: submission.done,
                timeout=remaining,
                awaited=awaited,
                message=message,
                method="session/prompt" if message else None,
            )
        except Timeout:
            if stop is not None:
                stop()
            raise
        return build_turn(self.model, submission, start, self.id)

    def _idle_done(self) -> bool:
        # Idle, and no prompt of ours is still to be inserted or still working.
        model = self.model
        return model.state == IDLE and not model.outstanding()

    def _quiet_done(self) -> bool:
        model = self.model
        return model.is_quiet and not model.outstanding()

    async def wait_idle(self, *, timeout: float | None = None) -> None:
        """Wait until the foreground work is over: the state is ``idle`` and every
        prompt sent on this session was answered and, if inserted, the work that
        followed it ended (spec 000, "Prompt accepted": after ``submit`` the
        ``running`` may not have arrived yet). Returns at once if that holds.
        """
        await self._wait_until(self._idle_done, timeout=timeout, awaited="state idle")

    async def wait_quiet(self, *, timeout: float | None = None, grace: float = 0.5) -> None:
        """Wait until all work is over (idle as for :meth:`wait_idle`, and no
        background work) and it stays so for ``grace`` seconds with no update.

        Spec ("Foreground and background work"): a client that acts on quiet
        SHOULD wait a short grace period, since finished work may start a follow-up.
        """
        conn = self._conn
        if timeout is None:
            timeout = conn.limits.default_timeout
        deadline = trio.current_time() + timeout
        while True:
            await self._wait_until(
                self._quiet_done,
                timeout=max(0.0, deadline - trio.current_time()),
                awaited="quiet (idle, no background work)",
            )
            count = len(self.model.events)
            with trio.move_on_after(grace):
                while len(self.model.events) == count:
                    conn.check(session_id=self.id)
                    await self._changed_wait()
            if self._quiet_done() and len(self.model.events) == count:
                return
            if trio.current_time() >= deadline:
                await self._wait_until(lambda: False, timeout=0, awaited="quiet for the grace")

    async def cancel(self, *, wait: bool = False, timeout: float | None = None) -> None:
        """Send ``session/cancel``; answer pending foreground permission requests
        ``cancelled``; with ``wait``, wait for the idle that confirms it."""
        conn = self._conn
        conn.check(method="session/cancel", session_id=self.id)
        start = len(self.model.events)
        # Busy also when a prompt is pending or inserted but its work has not ended:
        # its "running" may not have arrived yet.
        busy = self.model.state != IDLE or bool(self.model.outstanding())
        conn.cancel_session(self.id)
        if not wait or not busy:
            return

        def confirmed() -> bool:
            events = self.model.events
            return self.model.state == IDLE and any(
                isinstance(events[i].update, IdleStateUpdate) for i in range(start, len(events))
            )

        await self._wait_until(
            confirmed, timeout=timeout, awaited="the idle state that confirms cancellation"
        )

    # ------------------------------------------------------------------ other methods

    # ------------------------------------------------------------------ streaming

    def iter_updates(
        self,
        *,
        from_start: bool = False,
        timeout: float | None = None,
        until: Literal["idle", "quiet"] | None = None,
    ) -> AsyncIterator[Event]:
        """Yield events as they arrive (from now, or from the first with ``from_start``).

        Without ``until`` it ends only when the connection closes, after the events
        received before that. ``until="idle"`` ends once the condition of
        :meth:`wait_idle` holds after the events so far (so after ``submit`` it
        yields the prompt's work, then stops); ``until="quiet"`` likewise with
        :meth:`wait_quiet`'s condition, without its grace period.
        ``timeout`` (default: ``Limits.default_timeout``) bounds each wait for new
        events: :class:`~acp_lite.errors.Timeout` when nothing arrives for that long.
        """
        # "From now" is the call, not the first step: an iterator made before a
        # prompt is sent sees all of its work, whenever its task starts.
        start = 0 if from_start else len(self.model.events)
        budget = self._conn.limits.default_timeout if timeout is None else timeout
        done = None if until is None else self._until(until)
        return self._iter_from(start, budget, done)

    async def _iter_from(
        self, i: int, budget: float, done: Callable[[], bool] | None
    ) -> AsyncIterator[Event]:
        conn = self._conn
        while True:
            events = self.model.events
            while i < len(events):
                yield events[i]
                i += 1
            if conn.failure is not None or (done is not None and done()):
                return
            with trio.move_on_after(budget) as scope:
                await self._changed_wait()
            if scope.cancelled_caught:
                raise self._no_update(budget)

    async def next_updates(
        self,
        start: int,
        *,
        timeout: float | None = None,
        until: Literal["idle", "quiet"] | None = None,
    ) -> list[Event] | None:
        """The events of :attr:`updates` from index ``start`` on, once there is at
        least one (waiting for it), or ``None`` when the stream ends: the connection
        closed, or ``until`` holds (as for :meth:`iter_updates`) with nothing new.

        One consistent batch (the blocking ``Session.iter_updates`` fetches one per
        thread hop). ``timeout`` (default ``Limits.default_timeout``) bounds the
        wait: :class:`~acp_lite.errors.Timeout` when nothing arrives for that long.
        """
        conn = self._conn
        budget = conn.limits.default_timeout if timeout is None else timeout
        done = None if until is None else self._until(until)
        with trio.move_on_after(budget):
            while True:
                events = self.model.events
                if len(events) > start:
                    return list(events[start:])
                if conn.failure is not None or (done is not None and done()):
                    return None
                await self._changed_wait()
        raise self._no_update(budget)

    def _no_update(self, budget: float) -> Timeout:
        return Timeout(
            f"no update for session {self.id} within {budget:g}s",
            awaited="the next session update",
            state=self.model.state,
            session_id=self.id,
            stderr_tail=self._conn.stderr_tail(),
        )

    def _until(self, until: str) -> Callable[[], bool]:
        if until == "idle":
            return self._idle_done
        if until == "quiet":
            return self._quiet_done
        raise ValueError(f"until must be 'idle', 'quiet' or None, not {until!r}")

    def __aiter__(self) -> AsyncIterator[Event]:
        return self.iter_updates()

    def on_update(self, callback: Callable[[Event], object]) -> Callable[[], None]:
        """Call ``callback(event)`` for each update from now on; returns ``unsubscribe``.

        Callbacks run in a worker thread, never on the trio thread, in order,
        several per thread hop (one hop per batch of updates, not per update).
        A callback may block; one still running when the connection closes is
        abandoned (its thread finishes on its own) with a warning naming it, so
        ``close()`` keeps its bound.
        """
        cancel_scope = trio.CancelScope()
        nursery = self._conn.nursery
        start = len(self.model.events)

        running = threading.Event()  # set while a batch runs in its thread

        def run_batch(batch: list[Event]) -> None:
            try:
                for event in batch:
                    try:
                        callback(event)
                    except Exception:
                        logger.exception("on_update callback raised")
            finally:
                running.clear()

        async def dispatch() -> None:
            i = start
            with cancel_scope:
                while True:
                    events = self.model.events
                    if i < len(events):
                        batch = list(events[i:])
                        i += len(batch)
                        running.set()
                        try:
                            await trio.to_thread.run_sync(run_batch, batch, abandon_on_cancel=True)
                        except trio.Cancelled:
                            # Stopped mid-batch: a batch about to finish gets a moment
                            # (no warning for a callback that was merely in flight).
                            with trio.CancelScope(shield=True), trio.move_on_after(_CALLBACK_GRACE):
                                while running.is_set():
                                    await trio.sleep(0.005)
                            if not running.is_set():
                                raise
                            logger.warning(
                                "on_update callback %r of session %s was still running "
                                "when it was stopped: abandoned in its thread",
                                callback,
                                self.id,
                            )
                            raise
                        continue
                    if self._conn.failure is not None:
                        return
                    await self._changed_wait()

        nursery.start_soon(dispatch)
        return cancel_scope.cancel
