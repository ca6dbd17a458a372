"""Foreground state and the background list (spec: "Session states", "Background work").

``state_update`` is a snapshot of the session's aggregate foreground activity. The
model starts ``idle`` (spec: "Initial state and synchronization") and a setup
response never overwrites a reported state. Unrecognised states are kept as given
and mean busy. A repeated idle without a new stop reason is not a new completion;
an idle with a missing, null or unknown stop reason still ends foreground work.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from acp_lite.model.entities import Entity, TerminalEntity, ToolCallEntity
from acp_lite.model.state import (
    IDLE,
    KNOWN_STATES,
    STOP_REASONS,
    UNKNOWN,
    background_key,
    is_custom,
)
from acp_lite.model.submissions import SubmissionTracker
from acp_lite.protocol import UNSET, BackgroundWork, Error, Usage
from acp_lite.protocol.constants import ERROR

Violate = Callable[[str, str, "int | None"], None]


class Foreground:
    """The state machine behind ``SessionModel.state`` / ``background`` / ``is_quiet``."""

    def __init__(
        self, kinds: Mapping[str, Mapping[str, Any]], subs: SubmissionTracker, violate: Violate
    ) -> None:
        self._kinds = kinds
        self._subs = subs
        self._violate = violate
        self.state = IDLE
        self.last_known_state = IDLE
        self.stop_reason: str | None = None
        self.error: Error | None = None
        self.token_usage: Usage | None = None
        self.updates = 0
        self.completions = 0
        self.background: list[BackgroundWork] | None = None
        # Keys of the latest *concrete* list. Kept while background is unknown, to
        # see removals against the last list that was actually reported.
        self.listed: set[tuple[str, str]] = set()
        self._background_reported = False
        # Between session/resume and its response, state updates are the resume
        # snapshot: they report the current state without implying a transition.
        self.resyncing = False
        # Event index where the current foreground work became busy: checked when the
        # work fails.
        self.busy_since = 0
        # Event index of the latest idle snapshot (-1: none yet). Tool calls first seen
        # before it do not pertain to the current active work (spec: "Cancellation").
        self.last_idle_index = -1

    # ---------------------------------------------------------------- applying

    def apply(
        self,
        state: str,
        update: Any,
        index: int,
        raw: Callable[[], Mapping[str, Any] | None],
    ) -> None:
        """Apply one state snapshot (``state`` is the standard or given state string).

        ``raw()`` gives the payload as received; it is called only when the typed
        update cannot tell (a malformed ``background``), so the received line is
        not parsed a second time for every state update.
        """
        prev = self.state
        self.updates += 1
        self._apply_background(update, index, raw)
        if state == IDLE:
            self._idle(prev, update, index)
            return
        if state not in KNOWN_STATES and not is_custom(state):
            self._violate(
                "reserved-state", f"state {state!r} is neither standard nor '_'-prefixed", index
            )
        # Only leaving idle for activity clears the stop reason: `unknown` is loss
        # of observability, not new work (spec: "Session states").
        if self._was_idle(prev) and state != UNKNOWN:
            self.stop_reason = None
            self.error = None
            self.busy_since = index
        if state in KNOWN_STATES and state != UNKNOWN:
            self.last_known_state = state
        self.state = state

    def _was_idle(self, prev: str) -> bool:
        # `unknown` after a known idle restores idle without implying that work
        # started or ended while unobservable (spec: "State transitions").
        return prev == IDLE or (prev == UNKNOWN and self.last_known_state == IDLE)

    def _idle(self, prev: str, update: Any, index: int) -> None:
        raw_reason = update.stop_reason
        reason = raw_reason if isinstance(raw_reason, str) else None
        if reason is not None and reason not in STOP_REASONS and not is_custom(reason):
            self._violate(
                "unknown-stop-reason",
                f"stop reason {reason!r} is neither standard nor '_'-prefixed",
                index,
            )
        was_busy = not self._was_idle(prev)
        self.last_idle_index = index
        # A repeated idle without a new stop reason is not a new completion; one with
        # a new stop reason ends work that was never reported busy.
        ends = was_busy or (reason is not None and reason != self.stop_reason)
        self.state = IDLE
        self.last_known_state = IDLE
        if self.resyncing:
            self.stop_reason = reason
            self.error = update.error if reason == ERROR and update.error is not UNSET else None
            return
        if not ends:
            return
        error = update.error if reason == ERROR else None
        error = None if error is UNSET else error  # beside other reasons: unknown field
        usage = None if update.usage is UNSET else update.usage
        self.stop_reason = reason
        self.error = error
        self.token_usage = usage
        self.completions += 1
        if reason is None:
            self._violate(
                "idle-without-stop-reason",
                "idle ended foreground work without a stop reason",
                index,
            )
        elif reason == ERROR and error is None:
            self._violate(
                "error-stop-reason-without-error",
                "stop reason 'error' without an error object",
                index,
            )
        self._check_unfinished(reason, index)
        for found in self._subs.on_ending_idle(index, reason, error, usage):
            self._violate(found.rule, found.message, found.event_index)

    def _check_unfinished(self, reason: str | None, index: int) -> None:
        # spec "Failures": before reporting `error`, the agent SHOULD give each tool
        # call the failed work left unfinished a final status (listed background work
        # and tool calls referencing a listed terminal are not part of it).
        # No rule for a cancellation: spec "Cancellation" puts the duty on the client
        # (it SHOULD mark the tool calls cancelled, a local display hint the agent's
        # updates replace); a mark left standing breaks nothing the agent must do.
        if reason == ERROR:
            left = [
                t
                for t in self._kinds["tool_call"].values()
                if t.first_event_index >= self.busy_since and self._unfinished_foreground(t)
            ]
            if left:
                ids = ", ".join(repr(t.id) for t in left)
                self._violate(
                    "tool-call-unfinished-at-failure",
                    f"failed work ended with tool calls still unfinished: {ids}",
                    index,
                )

    def _unfinished_foreground(self, tool_call: ToolCallEntity) -> bool:
        return not (
            tool_call.is_final
            or ("tool_call", tool_call.id) in self.listed
            or self._references_listed_terminal(tool_call)
        )

    def _apply_background(
        self, update: Any, index: int, raw: Callable[[], Mapping[str, Any] | None]
    ) -> None:
        items = update.background
        if not isinstance(items, list | tuple):
            if _malformed(update, raw):
                self._violate(
                    "background-malformed",
                    "background is not a list of work items; background is unknown",
                    index,
                )
            elif self._background_reported:
                self._violate(
                    "background-omitted",
                    "state_update omits background after background was reported",
                    index,
                )
            self.background = None  # not reported = unknown, never "empty"
            return
        items = list(items)
        keys: set[tuple[str, str]] = set()
        for item in items:
            key = background_key(item)
            if key is None:
                continue  # unknown item types still count as running work
            if key in keys:
                self._violate(
                    "background-duplicate-item", f"{key[0]} {key[1]!r} listed twice", index
                )
            keys.add(key)
            if key not in self.listed and key[1] not in self._kinds[key[0]]:
                self._violate(
                    "background-item-not-announced",
                    f"{key[0]} {key[1]!r} listed before it was announced",
                    index,
                )
        for kind, ident in sorted(self.listed - keys):
            ent = self._kinds[kind].get(ident)
            if (isinstance(ent, ToolCallEntity) and not ent.is_final) or (
                isinstance(ent, TerminalEntity) and not ent.exited
            ):
                self._violate(
                    "background-removed-before-final",
                    f"{kind} {ident!r} removed from background before its final status",
                    index,
                )
        self.background = items
        self.listed = keys
        self._background_reported = True

    # ---------------------------------------------------------------- reading

    @property
    def is_quiet(self) -> bool:
        return self.state == IDLE and self.background is not None and not self.background

    def _references_listed_terminal(self, tool_call: ToolCallEntity) -> bool:
        return any(("terminal", t) in self.listed for t in tool_call.terminal_ids)

    def live_entities(self) -> list[Entity]:
        if self.background is None:
            return []
        found: list[Entity] = []
        for kind, ident in self.listed:
            ent = self._kinds[kind].get(ident)
            if ent is not None:
                found.append(ent)
        for tool_call in self._kinds["tool_call"].values():
            if ("tool_call", tool_call.id) not in self.listed and (
                self._references_listed_terminal(tool_call)
            ):
                found.append(tool_call)
        return sorted(found, key=_position)

    def abandoned(self) -> list[Entity]:
        # Only when idle and background is reported (spec: "Background work": a
        # Client MUST NOT treat anything as abandoned when background is not reported).
        if self.state != IDLE or self.background is None:
            return []
        found: list[Entity] = []
        for terminal in self._kinds["terminal"].values():
            if not terminal.exited and ("terminal", terminal.id) not in self.listed:
                found.append(terminal)
        for tool_call in self._kinds["tool_call"].values():
            if tool_call.is_final or ("tool_call", tool_call.id) in self.listed:
                continue
            if not self._references_listed_terminal(tool_call):
                found.append(tool_call)
        return sorted(found, key=_position)

    def cancel_hint(self) -> list[ToolCallEntity]:
        # spec "Cancellation": mark non-finished tool calls of the active work,
        # skipping those in the latest background list or referencing a listed terminal.
        # "Latest background list": the latest list actually reported, even if a later
        # snapshot omitted it, so listed work is never marked. Only tool calls "pertaining
        # to the current active work": one first seen before the latest idle snapshot
        # belongs to earlier work (possibly unlisted background work), so is left alone.
        if self.state == IDLE:
            return []
        listed = self.listed
        since = self.last_idle_index
        marked: list[ToolCallEntity] = []
        for tool_call in self._kinds["tool_call"].values():
            if tool_call.is_final or ("tool_call", tool_call.id) in listed:
                continue
            if tool_call.first_event_index < since:
                continue
            if any(("terminal", t) in listed for t in tool_call.terminal_ids):
                continue
            tool_call.cancel_hint = True
            marked.append(tool_call)
        return marked


def _malformed(update: Any, raw: Callable[[], Mapping[str, Any] | None]) -> bool:
    # The codec keeps a malformed value in `extra` (or `raw` for an unrecognised
    # state); a malformed list is treated as not reported.
    for source in (getattr(update, "extra", None), getattr(update, "raw", None)):
        if isinstance(source, Mapping) and source.get("background") is not None:
            return True
    received = raw()
    return isinstance(received, Mapping) and received.get("background") is not None


def _position(entity: Entity) -> int:
    return entity.position


__all__ = ["Foreground"]
