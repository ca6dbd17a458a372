"""``AsyncSession``: one ACP session on an :class:`AsyncClient`."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, overload

import trio

from acp_lite.aio._methods import SessionMethods
from acp_lite.errors import Timeout
from acp_lite.model import SessionModel
from acp_lite.model.submissions import Submission
from acp_lite.protocol import IdleStateUpdate, converter, structure_update
from acp_lite.turn import Turn

if TYPE_CHECKING:
    from acp_lite.aio._connection import Connection
    from acp_lite.model.session import Event

__all__ = ["AsyncSession", "EventSlice", "prompt_blocks"]

logger = logging.getLogger("acp_lite.session")


def prompt_blocks(content: Any) -> list[Any]:
    """The wire ``prompt`` array for ``content``: a str, a content block or a list.

    Blocks may be typed (``TextContent(...)``) or wire dicts; strings become text.
    """
    items = content if isinstance(content, list | tuple) else [content]
    blocks: list[Any] = []
    for item in items:
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


class EventSlice(Sequence["Event"]):
    """A lazy view of ``events[start:stop]``: events are built only when read.

    A turn can hold hundreds of thousands of updates; building one object per
    update up front would cost more than receiving them.
    """

    __slots__ = ("_events", "_start", "_stop")

    def __init__(self, events: Sequence[Event], start: int, stop: int) -> None:
        self._events = events
        self._start = start
        self._stop = max(start, stop)

    def __len__(self) -> int:
        return self._stop - self._start

    @overload
    def __getitem__(self, index: int) -> Event: ...
    @overload
    def __getitem__(self, index: slice) -> list[Event]: ...
    def __getitem__(self, index: int | slice) -> Event | list[Event]:
        if isinstance(index, slice):
            return [self._events[self._start + i] for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(index)
        return self._events[self._start + index]

    def __iter__(self) -> Iterator[Event]:
        events = self._events
        for i in range(self._start, self._stop):
            yield events[i]

    def __repr__(self) -> str:
        return f"<{len(self)} events [{self._start}:{self._stop}]>"


class AsyncSession(SessionMethods):
    """A session: its :class:`~acp_lite.SessionModel` (``model``) and its methods.

    Every wait has a default timeout (``Limits.default_timeout``) and raises
    :class:`~acp_lite.errors.Timeout` naming what was awaited and the state then;
    if the agent goes away every wait raises
    :class:`~acp_lite.errors.AgentExited` at once.
    """

    def __init__(self, connection: Connection, session_id: str) -> None:
        self._conn = connection
        self.id = session_id
        self.model = SessionModel(session_id, max_events=connection.limits.max_session_events)
        self._dirty = False
        self._changed: trio.Event | None = None
        self._replaying = False
        self._resume_pending = False
        # request id -> (engine entry, waiter) of prompts whose response is awaited.
        self._pending_waits: dict[Any, Any] = {}

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
    def timeline(self) -> list[Any]:
        """Entities in timeline order."""
        return self.model.timeline

    def text(self, submission: Submission | int | None = None) -> str:
        """Agent message text of the session, or of the work after ``submission``."""
        return self.model.text(submission)

    # ------------------------------------------------------------------ feeding (reader task)

    def _apply(self, update: Any, raw: Any, source: str | None = None) -> None:
        event = self.model.apply(
            update, raw=raw, session_id=self.id, replayed=self._replaying, source=source
        )
        if not self._dirty:
            self._dirty = True
            self._conn._dirty.append(self)
        if self._conn._update_hook is not None:
            self._conn.session_update_hook(self, event)

    def _apply_permission_tool_call(self, tool_call: Any) -> None:
        # Spec (ToolCallPermissionSubject.toolCall): "Clients apply this to their
        # stored tool call exactly like a tool_call_update notification, in the
        # order it was received".
        raw = converter.unstructure(tool_call)
        raw["sessionUpdate"] = "tool_call_update"
        self._apply(structure_update(raw), raw, source="session/request_permission")

    def _notify(self) -> None:
        event = self._changed
        if event is not None:
            self._changed = None
            event.set()

    async def _changed_wait(self) -> None:
        if self._changed is None:
            self._changed = trio.Event()
        await self._changed.wait()

    async def _wait_until(
        self, predicate: Callable[[], bool], *, timeout: float | None, awaited: str
    ) -> None:
        conn = self._conn
        if timeout is None:
            timeout = conn.limits.default_timeout
        with trio.move_on_after(timeout):
            while not predicate():
                conn.check(session_id=self.id)
                await self._changed_wait()
            return
        raise Timeout(
            f"timed out after {timeout:g}s waiting for {awaited} "
            f"(session state: {self.model.state})",
            awaited=awaited,
            state=self.model.state,
            session_id=self.id,
            stderr_tail=conn.stderr_tail(),
        )

    # ------------------------------------------------------------------ prompts

    async def submit(self, content: Any) -> Submission:
        """Send ``session/prompt`` and return its pending :class:`Submission` at once.

        Prompting during active work is allowed (spec: "Prompts during active
        work"); it is never refused locally.
        """
        blocks = prompt_blocks(content)
        conn = self._conn
        conn.check(method="session/prompt", session_id=self.id)
        entry, waiter = conn.send_request(
            "session/prompt", {"sessionId": self.id, "prompt": blocks}, session_id=self.id
        )
        submission = self.model.submit(entry.id, blocks)
        self._pending_waits[entry.id] = (entry, waiter)
        return submission

    async def wait_inserted(
        self, submission: Submission, *, timeout: float | None = None
    ) -> Submission:
        """Wait for the prompt's response; raise :class:`PromptRejected` on error."""
        pair = self._pending_waits.get(submission.request_id)
        if pair is None:
            return submission  # already answered and awaited once
        entry, waiter = pair
        try:
            await self._conn.wait_response(
                entry, waiter, timeout=timeout, state=lambda: self.model.state
            )
        finally:
            if waiter.event.is_set():
                self._pending_waits.pop(submission.request_id, None)
        return submission

    async def prompt(self, content: Any, *, timeout: float | None = None) -> Submission:
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
        pair = self._pending_waits.get(submission.request_id)
        if pair is None:
            return False
        sent = self._conn.engine.cancel_request(pair[0].id)
        self._conn.flush()
        return sent

    async def run(self, content: Any, *, timeout: float | None = None) -> Turn:
        """Prompt and wait until the foreground work that followed its insertion ends.

        A failure after insertion is not an exception: it is ``turn.stop_reason
        == "error"`` with ``turn.error`` (use ``turn.raise_for_stop()``).
        """
        return await self._run(content, timeout, [])

    async def _run(self, content: Any, timeout: float | None, started: list[Submission]) -> Turn:
        # ``started`` receives the submission as soon as it is sent, so a caller that
        # is cancelled (Ctrl-C in the blocking facade) knows what it has to stop.
        conn = self._conn
        if timeout is None:
            timeout = conn.limits.default_timeout
        deadline = trio.current_time() + timeout
        start = len(self.model.events)
        submission = await self.submit(content)
        started.append(submission)
        await self.wait_inserted(submission, timeout=timeout)
        remaining = max(0.0, deadline - trio.current_time())
        await self._wait_until(
            lambda: submission.done,
            timeout=remaining,
            awaited=f"the idle ending the work of message {submission.message_id!r}",
        )
        events = self.model.events
        end = submission.end_event_index
        updates = EventSlice(events, start, end + 1 if end is not None else len(events))
        return Turn(
            submission=submission,
            message_id=submission.message_id,
            updates=updates,
            stop_reason=submission.stop_reason,
            error=submission.error,
            text=self.model.text(submission),
            session_id=self.id,
        )

    async def wait_idle(self, *, timeout: float | None = None) -> None:
        """Wait until the foreground state is ``idle`` (returns at once if it is)."""
        await self._wait_until(
            lambda: self.model.state == "idle", timeout=timeout, awaited="state idle"
        )

    async def wait_quiet(self, *, timeout: float | None = None, grace: float = 0.5) -> None:
        """Wait until idle with no background work, and still so after ``grace`` s.

        Spec ("Background work"): a client that acts on quiet SHOULD wait a short
        grace period, since finished work may start a follow-up.
        """
        conn = self._conn
        if timeout is None:
            timeout = conn.limits.default_timeout
        deadline = trio.current_time() + timeout
        while True:
            await self._wait_until(
                lambda: self.model.is_quiet,
                timeout=max(0.0, deadline - trio.current_time()),
                awaited="quiet (idle, no background work)",
            )
            count = len(self.model.events)
            with trio.move_on_after(grace):
                while len(self.model.events) == count:
                    conn.check(session_id=self.id)
                    await self._changed_wait()
            if self.model.is_quiet and len(self.model.events) == count:
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
        busy = self.model.state != "idle" or any(
            s.status != "rejected" and not s.done for s in self.model.submissions
        )
        self.model.cancel_sent()
        conn.engine.notify("session/cancel", {"sessionId": self.id})
        conn.flush()
        conn.cancel_permission_requests(self)
        if not wait or not busy:
            return

        def confirmed() -> bool:
            events = self.model.events
            return self.model.state == "idle" and any(
                isinstance(events[i].update, IdleStateUpdate) for i in range(start, len(events))
            )

        await self._wait_until(
            confirmed, timeout=timeout, awaited="the idle state that confirms cancellation"
        )

    # ------------------------------------------------------------------ other methods

    # ------------------------------------------------------------------ streaming

    async def iter_updates(
        self, *, from_start: bool = False, timeout: float | None = None
    ) -> AsyncIterator[Event]:
        """Yield events as they arrive (from now, or from the first with ``from_start``).

        Ends when the connection closes, after the events received before that.
        ``timeout`` (default: ``Limits.default_timeout``) bounds each wait for new
        events: :class:`~acp_lite.errors.Timeout` when nothing arrives for that long.
        """
        i = 0 if from_start else len(self.model.events)
        conn = self._conn
        budget = conn.limits.default_timeout if timeout is None else timeout
        while True:
            events = self.model.events
            while i < len(events):
                yield events[i]
                i += 1
            if conn.failure is not None:
                return
            with trio.move_on_after(budget) as scope:
                await self._changed_wait()
            if scope.cancelled_caught:
                raise Timeout(
                    f"no update for session {self.id} within {budget:g}s",
                    awaited="the next session update",
                    state=self.model.state,
                    session_id=self.id,
                    stderr_tail=conn.stderr_tail(),
                )

    def __aiter__(self) -> AsyncIterator[Event]:
        return self.iter_updates()

    def on_update(self, callback: Callable[[Event], object]) -> Callable[[], None]:
        """Call ``callback(event)`` for each update from now on; returns ``unsubscribe``.

        Callbacks run in a worker thread, never on the trio thread, in order,
        several per thread hop (one hop per batch of updates, not per update).
        """
        cancel_scope = trio.CancelScope()
        nursery = self._conn._nursery
        assert nursery is not None
        start = len(self.model.events)

        def run_batch(batch: list[Event]) -> None:
            for event in batch:
                try:
                    callback(event)
                except Exception:
                    logger.exception("on_update callback raised")

        async def dispatch() -> None:
            i = start
            with cancel_scope:
                while True:
                    events = self.model.events
                    if i < len(events):
                        batch = list(events[i:])
                        i += len(batch)
                        await trio.to_thread.run_sync(run_batch, batch)
                        continue
                    if self._conn.failure is not None:
                        return
                    await self._changed_wait()

        nursery.start_soon(dispatch)
        return cancel_scope.cancel
