"""Prompt submissions and their reconciliation with user messages and idle states.

A submission is known by its JSON-RPC request id. A successful ``session/prompt``
response carries the inserted user message's ``messageId`` (spec: "Prompt
accepted"). The ``user_message`` update, the agent's output and even the idle that
ends the resulting work may arrive before or after that response, so nothing here
depends on the order of the response relative to updates, and nothing links by
content or arrival order.

``done`` means: the foreground work that followed the insertion has ended, i.e. an
idle that ends foreground work was received *after* the first update of the user
message carrying the submission's ``messageId``. Both may precede the response, so
when the response lands the already-received events decide. Only when the agent
has not echoed the user message does the first such idle after the response count
(and ``user-message-not-echoed`` is recorded).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Mapping, Sequence
from typing import Literal, TypeAlias

from acp_lite import _lazy_attrs as lazy_attrs
from acp_lite.jsontypes import JsonValue
from acp_lite.model.entities import MessageEntity
from acp_lite.model.rules import Violation, violation
from acp_lite.protocol import ContentBlock, Error, ErrorObject, Usage

SubmissionStatus = Literal["pending", "inserted", "rejected"]
RequestId = int | str

SubmittedContent: TypeAlias = Sequence[ContentBlock | Mapping[str, JsonValue]] | None
"""A submission's ``content``: the prompt's blocks as sent (typed or wire dicts), or
``None`` when the model was not told (a response for a prompt it did not see)."""


@lazy_attrs.define(eq=False)
class Submission:
    """One ``session/prompt`` request as the client knows it.

    ``status``: ``pending`` (no response yet), ``inserted`` (the response carried
    ``message_id``) or ``rejected`` (JSON-RPC error: not inserted, ``error`` holds it).
    ``done`` / ``stop_reason`` / ``error`` / ``end_event_index`` describe the idle that
    ended the work following the insertion. ``first_event_index`` is the index of the
    user message's first update (or, for an agent that never echoes it, the number
    of events received when the prompt was sent). ``user_message`` is the linked entity.
    """

    request_id: RequestId
    content: SubmittedContent
    sent_event_count: int
    status: SubmissionStatus = "pending"
    message_id: str | None = None
    error: ErrorObject | Error | None = None
    stop_reason: str | None = None
    usage: Usage | None = None
    done: bool = False
    first_event_index: int | None = None
    end_event_index: int | None = None
    user_message: MessageEntity | None = None


@lazy_attrs.frozen
class _EndingIdle:
    event_index: int
    stop_reason: str | None
    error: Error | None
    usage: Usage | None


class SubmissionTracker:
    """Holds submissions and the ending idles they are judged against."""

    def __init__(self) -> None:
        self.by_request: dict[RequestId, Submission] = {}
        self.by_message: dict[str, Submission] = {}
        self._open: list[Submission] = []  # inserted, not yet done
        self._idles: list[_EndingIdle] = []
        self._idle_indices: list[int] = []
        # Submissions judged by the fallback, with the idle that ended them: the echo
        # may still come later (no order against the idle is required), so whether
        # it never came is only known at the end (SessionModel.finish).
        self._unechoed: list[tuple[Submission, int]] = []

    def submit(
        self, request_id: RequestId, content: SubmittedContent, event_count: int
    ) -> Submission:
        sub = Submission(request_id, content, event_count)
        self.by_request[request_id] = sub
        return sub

    def _get(self, request_id: RequestId, event_count: int) -> Submission:
        sub = self.by_request.get(request_id)
        if sub is None:  # response for a request the model was not told about
            sub = self.submit(request_id, None, event_count)
        return sub

    def accepted(
        self,
        request_id: RequestId,
        message_id: object,
        event_count: int,
        user_messages: Mapping[str, MessageEntity],
    ) -> tuple[Submission, list[Violation]]:
        sub = self._get(request_id, event_count)
        found: list[Violation] = []
        if not isinstance(message_id, str):
            found.append(
                violation(
                    "prompt-response-without-message-id",
                    f"session/prompt request {request_id!r} succeeded without a messageId",
                    None,
                )
            )
            # Inserted, but unlinkable: only the fallback can tell when its work ended.
            sub.status = "inserted"
            self._open.append(sub)
            return sub, found
        other = self.by_message.get(message_id)
        if other is not None and other is not sub:
            found.append(
                violation(
                    "duplicate-submission-message-id",
                    f"requests {other.request_id!r} and {request_id!r} were both inserted "
                    f"as user message {message_id!r}",
                    None,
                )
            )
        self.by_message[message_id] = sub
        sub.status = "inserted"
        sub.message_id = message_id
        entity = user_messages.get(message_id)
        if entity is not None:
            self._link(sub, entity)
            # The message and even the idle ending its work may precede the response.
            i = bisect_right(self._idle_indices, entity.first_event_index)
            if i < len(self._idles):
                self._finish(sub, self._idles[i])
                return sub, found
        self._open.append(sub)
        return sub, found

    def rejected(self, request_id: RequestId, error: ErrorObject, event_count: int) -> Submission:
        sub = self._get(request_id, event_count)
        sub.status = "rejected"
        sub.error = error
        return sub

    def on_user_message(self, entity: MessageEntity) -> None:
        """A user message entity was created: link it to its submission, if known."""
        sub = self.by_message.get(entity.id)
        if sub is not None and sub.user_message is None:
            self._link(sub, entity)

    def on_ending_idle(
        self, event_index: int, stop_reason: str | None, error: Error | None, usage: Usage | None
    ) -> list[Violation]:
        """An idle ended foreground work: every open submission's work has ended."""
        idle = _EndingIdle(event_index, stop_reason, error, usage)
        self._idles.append(idle)
        self._idle_indices.append(event_index)
        found: list[Violation] = []
        if self._open:
            for sub in self._open:
                if sub.user_message is None:
                    # Fallback for an agent that did not echo the user message: the
                    # first ending idle after the response (which came before this).
                    self._unechoed.append((sub, event_index))
                    sub.first_event_index = sub.sent_event_count
                self._finish(sub, idle)
            self._open.clear()
        return found

    def never_echoed(self) -> list[Violation]:
        """``user-message-not-echoed`` for each submission whose user message never came.

        Spec (000, "Prompt accepted"): the Agent MUST report the inserted user message
        through ``user_message`` / ``user_message_chunk`` updates; it sets no order
        against the idle, so a late echo is not a violation.
        """
        return [
            violation(
                "user-message-not-echoed",
                f"user message {sub.message_id!r} of request {sub.request_id!r} was never "
                "reported (its work was judged ended by the first idle after the response)",
                event_index,
            )
            for sub, event_index in self._unechoed
            if sub.user_message is None
        ]

    def last_ending_idle(self) -> int:
        """The event index of the latest idle that ended foreground work (-1: none)."""
        return self._idle_indices[-1] if self._idle_indices else -1

    def drop_finished(self, keep: int, is_kept: Callable[[MessageEntity], bool]) -> int:
        """Let go done submissions beyond the newest ``keep`` whose user message is no
        longer kept (``is_kept``), and idles beyond the newest ``keep``; return how many
        submissions were let go (``Limits.max_session_entities``)."""
        subs = list(self.by_request.values())
        old = len(subs) - keep
        dropped = 0
        for i, sub in enumerate(subs):
            if i >= old:
                break
            if (sub.done or sub.status == "rejected") and (
                sub.user_message is None or not is_kept(sub.user_message)
            ):
                del self.by_request[sub.request_id]
                if sub.message_id is not None and self.by_message.get(sub.message_id) is sub:
                    del self.by_message[sub.message_id]
                dropped += 1
        if len(self._idles) > keep:
            del self._idles[:-keep]
            del self._idle_indices[:-keep]
        return dropped

    def pending_count(self) -> int:
        return sum(1 for s in self.by_request.values() if s.status == "pending")

    @staticmethod
    def _link(sub: Submission, entity: MessageEntity) -> None:
        sub.user_message = entity
        if sub.first_event_index is None or not sub.done:
            sub.first_event_index = entity.first_event_index

    @staticmethod
    def _finish(sub: Submission, idle: _EndingIdle) -> None:
        sub.done = True
        sub.stop_reason = idle.stop_reason
        sub.error = idle.error
        sub.usage = idle.usage
        sub.end_event_index = idle.event_index


__all__ = [
    "RequestId",
    "Submission",
    "SubmissionStatus",
    "SubmissionTracker",
    "SubmittedContent",
]
