"""The builder behind ``acp_fake_agent``: expectations, compiled to a reference-agent script.

Each :class:`PromptExpectation` becomes one turn of an ``expect`` script (the
reference agent's script format, ``docs/reference-agent.md``): the prompt it
matches, then the steps the builder methods add. The script is plain JSON, so
the same expectations run in this process or in a child process.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Literal, Protocol, Self

from pytest_acp._fake_events import PermissionAnswer

__all__ = ["JsonObject", "PermissionRequest", "PromptExpectation", "StopReason"]

JsonObject = Mapping[str, object]
"""A JSON object (a raw ``SessionUpdate``, a permission option ...)."""

StopReason = Literal["end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled"]
"""The stop reasons a scripted turn can end with (``error``: :meth:`PromptExpectation.fail`)."""

_FINAL = frozenset({"completed", "failed", "cancelled"})
_APPROVED = ("allow_once", "allow_always")
_REFUSED = ("reject_once", "reject_always", "default")


def _text(text: str, *, thought: bool = False) -> dict[str, object]:
    return {"type": "text", "text": text, "thought": thought}


def _update(update: Mapping[str, object]) -> dict[str, object]:
    return {"type": "update", "update": dict(update)}


def _reply_steps(thought: str | None, text: str | None) -> list[dict[str, object]]:
    steps = [_text(thought, thought=True)] if thought is not None else []
    return steps + ([_text(text)] if text is not None else [])


class PermissionRequest:
    """A ``session/request_permission`` the agent sends during a turn.

    After an approving answer (an ``allow_*`` option) the agent runs :meth:`then`,
    then the rest of the turn; after a refusal (a ``reject_*`` option) or the
    ``cancelled`` outcome it runs :meth:`otherwise`, which ends the turn
    (``end_turn`` after a refusal, ``cancelled`` after the cancelled outcome,
    unless :meth:`otherwise` says more). ``expect`` (an option id, an option kind
    or ``"cancelled"``) is the answer the client must give; the fixture checks it
    at teardown. :attr:`answer` is what the client answered.
    """

    def __init__(
        self,
        turn: PromptExpectation,
        label: str,
        title: str,
        tool_call_id: str | None,
        options: Sequence[JsonObject] | None,
        expect: str | None,
    ) -> None:
        self.turn = turn
        #: The name the agent reports its answer under.
        self.label = label
        self.title = title
        self.tool_call_id = tool_call_id
        self.tool_call: dict[str, object] | None = None
        self.options = [dict(o) for o in options] if options is not None else None
        #: The answer the client must give (option id or kind, or ``"cancelled"``).
        self.expect = expect
        self._then: list[dict[str, object]] = []
        self._otherwise: list[dict[str, object]] | None = None
        self._cancelled: list[dict[str, object]] | None = None

    def then(
        self,
        *,
        thought: str | None = None,
        text: str | None = None,
        tool_call_status: str | None = "completed",
        stop_reason: StopReason | None = None,
    ) -> Self:
        """What the agent does once approved: the permission's tool call gets
        ``tool_call_status``, then ``thought`` and ``text``; ``stop_reason`` ends
        the turn there (``None``: the turn's later steps run)."""
        self._then = self._branch(thought, text, tool_call_status, stop_reason)
        self.turn._changed()
        return self

    def otherwise(
        self,
        *,
        thought: str | None = None,
        text: str | None = None,
        tool_call_status: str | None = "failed",
        stop_reason: StopReason | None = "end_turn",
    ) -> Self:
        """What the agent does when refused or cancelled (the ``cancelled`` outcome
        still ends the turn ``cancelled``): like :meth:`then`."""
        self._otherwise = self._branch(thought, text, tool_call_status, stop_reason)
        cancelled = self._branch(thought, text, tool_call_status, None)
        self._cancelled = [*cancelled, {"type": "stop", "stop_reason": "cancelled"}]
        self.turn._changed()
        return self

    def _branch(
        self,
        thought: str | None,
        text: str | None,
        status: str | None,
        stop_reason: str | None,
    ) -> list[dict[str, object]]:
        steps: list[dict[str, object]] = []
        if status is not None and self.tool_call_id is not None:
            steps.append(
                _update(
                    {
                        "sessionUpdate": "tool_call_update",
                        "toolCallId": self.tool_call_id,
                        "status": status,
                    }
                )
            )
        steps += _reply_steps(thought, text)
        if stop_reason is not None:
            steps.append({"type": "stop", "stop_reason": stop_reason})
        return steps

    @property
    def answer(self) -> PermissionAnswer | None:
        """The client's answer (its first, over all connections); ``None`` while
        unanswered."""
        return self.turn._owner._answer(self.label)

    def compile(self) -> dict[str, object]:
        """The ``permission`` step."""
        refused = self._otherwise or [{"type": "stop", "stop_reason": "end_turn"}]
        branches: dict[str, object] = {key: self._then for key in _APPROVED}
        branches.update({key: refused for key in _REFUSED})
        if self._cancelled is not None:
            branches["cancelled"] = self._cancelled
        step: dict[str, object] = {
            "type": "permission",
            "title": self.title,
            "label": self.label,
            "branches": branches,
        }
        if self.options is not None:
            step["options"] = self.options
        if self.tool_call is not None:
            step["tool_call"] = dict(self.tool_call)
        return step


class _Owner(Protocol):
    """What an expectation needs from the fake agent that holds it."""

    def _answer(self, label: str) -> PermissionAnswer | None: ...

    def _changed(self) -> None: ...


class PromptExpectation:
    """One expected ``session/prompt`` and what the agent does for it.

    Every method adds to the turn and returns the expectation, so calls chain:
    ``fake.expect_prompt("hi").thought("Hmm").text("Hello").reply(stop_reason="end_turn")``.
    A turn with no steps answers with no output and ends ``end_turn``.
    """

    def __init__(
        self,
        owner: _Owner,
        index: int,
        prompt: str | re.Pattern[str] | None,
        label: str | None,
    ) -> None:
        self._owner = owner
        #: Its position among the fake agent's expectations (0-based).
        self.index = index
        self.prompt = prompt
        self.label = label
        self._steps: list[dict[str, object] | PermissionRequest] = []
        self._stop_reason: str | None = "end_turn"
        self._defer = False
        self._calls = 0
        self._tool_calls: dict[str, dict[str, object]] = {}

    def __repr__(self) -> str:
        return f"<PromptExpectation {self.describe()}>"

    def describe(self) -> str:
        """How reports name it: its label, its prompt, or ``any prompt``."""
        if self.label is not None:
            return self.label
        if isinstance(self.prompt, re.Pattern):
            return f"a prompt matching {self.prompt.pattern!r}"
        return repr(self.prompt) if self.prompt is not None else "any prompt"

    def _changed(self) -> None:
        self._owner._changed()

    def _add(self, *steps: dict[str, object] | PermissionRequest) -> Self:
        self._steps.extend(steps)
        self._changed()
        return self

    # -- output ----------------------------------------------------------------------

    def thought(self, text: str) -> Self:
        """Stream a thought (``agent_thought_chunk``)."""
        return self._add(_text(text, thought=True))

    def text(self, *chunks: str) -> Self:
        """Stream one agent message, in these chunks."""
        if not chunks:
            raise ValueError("text() needs at least one chunk")
        return self._add({"type": "text", "chunks": list(chunks)})

    def tool_call(
        self,
        tool_call_id: str,
        title: str,
        *,
        kind: str = "other",
        status: str = "completed",
        output: str | None = None,
    ) -> Self:
        """Report a tool call: announced ``in_progress`` (or ``pending``), then
        ``status`` when that is final, with ``output`` as its text content."""
        first = "pending" if status == "pending" else "in_progress"
        announce = {"sessionUpdate": "tool_call_update", "toolCallId": tool_call_id,
                    "title": title, "kind": kind, "status": first}  # fmt: skip
        self._tool_calls[tool_call_id] = {"toolCallId": tool_call_id, "title": title, "kind": kind}
        steps = [_update(announce)]
        if status in _FINAL:
            final: dict[str, object] = {"sessionUpdate": "tool_call_update",
                                        "toolCallId": tool_call_id, "status": status}  # fmt: skip
            if output is not None:
                block = {"type": "text", "text": output}
                final["content"] = [{"type": "content", "content": block}]
            steps.append(_update(final))
        return self._add(*steps)

    def plan(self, *entries: str | tuple[str, str], plan_id: str = "plan-{{turn}}") -> Self:
        """Report the plan (replacing an earlier one of the same id): each entry is
        its text, or ``(text, status)`` (status ``pending`` by default)."""
        items = []
        for entry in entries:
            content, status = (entry, "pending") if isinstance(entry, str) else entry
            items.append({"content": content, "priority": "medium", "status": status})
        plan = {"type": "items", "planId": plan_id, "entries": items}
        return self._add(_update({"sessionUpdate": "plan_update", "plan": plan}))

    def update(self, update: JsonObject) -> Self:
        """Send one raw ``SessionUpdate`` (``{"sessionUpdate": ..., ...}``)."""
        return self._add(_update(update))

    def sleep(self, seconds: float) -> Self:
        """Wait (a ``session/cancel`` interrupts the wait and ends the turn)."""
        return self._add({"type": "sleep", "seconds": seconds})

    def reply(
        self,
        *,
        thought: str | None = None,
        text: str | None = None,
        stop_reason: StopReason = "end_turn",
    ) -> Self:
        """Answer: a thought, a message, and the turn's stop reason."""
        self._stop_reason = stop_reason
        return self._add(*_reply_steps(thought, text))

    def defer_response(self) -> Self:
        """Send the ``session/prompt`` response only after the turn's updates (v2;
        a v1 agent always answers at the end of the turn)."""
        self._defer = True
        self._changed()
        return self

    # -- questions -------------------------------------------------------------------

    def ask_permission(
        self,
        title: str = "Allow this tool call?",
        *,
        tool_call_id: str | None = None,
        options: Sequence[JsonObject] | None = None,
        expect: str | None = None,
    ) -> PermissionRequest:
        """Ask ``session/request_permission`` about the tool call ``tool_call_id``
        (reported earlier with :meth:`tool_call` ``status="pending"``: the request
        then carries its title and kind; or named here for the first time; a v1
        client requires one).
        ``options`` default to ``allow`` (allow_once), ``allow_always`` and
        ``reject`` (reject_once). Returns the request, to say what follows
        (:meth:`PermissionRequest.then` / ``otherwise``)."""
        self._calls += 1
        label = f"{self.describe()} permission {self._calls}"
        request = PermissionRequest(self, label, title, tool_call_id, options, expect)
        if tool_call_id is not None:
            # What agents send: the tool call as reported so far (title, kind).
            request.tool_call = self._tool_calls.get(tool_call_id, {"toolCallId": tool_call_id})
        self._add(request)
        return request

    # -- endings ---------------------------------------------------------------------

    def fail(self, message: str = "The turn failed", *, code: int = -32603) -> Self:
        """End the work with an error: v2 ``idle`` with ``stopReason: error`` and
        ``error``; v1 answers the prompt with that JSON-RPC error."""
        return self._add({"type": "fail", "code": code, "message": message})

    def refuse(self, message: str = "Prompt refused", *, code: int = -32603) -> Self:
        """Answer the prompt with a JSON-RPC error at once: it is not inserted."""
        return self._add({"type": "reject", "code": code, "message": message})

    def crash(self, exit_code: int = 1, *, stderr: str | None = None) -> Self:
        """Write ``stderr`` and exit with ``exit_code`` (in this process: the agent
        stops and records it, the client sees its output end)."""
        steps: list[dict[str, object]] = []
        if stderr is not None:
            steps.append({"type": "stderr", "text": stderr})
        return self._add(*steps, {"type": "exit", "code": exit_code})

    def hang(self) -> Self:
        """Block forever, ignoring cancels: the client's timeout must end the wait."""
        return self._add({"type": "hang"})

    def compile(self) -> dict[str, object]:
        """The script turn."""
        steps = [s.compile() if isinstance(s, PermissionRequest) else s for s in self._steps]
        if self._defer and not any(s.get("type") in ("insert", "reject") for s in steps):
            steps.insert(0, {"type": "insert", "respond": False})
        turn: dict[str, object] = {"steps": steps, "stop_reason": self._stop_reason}
        if isinstance(self.prompt, re.Pattern):
            turn["prompt_pattern"] = self.prompt.pattern
        elif self.prompt is not None:
            turn["prompt"] = self.prompt
        turn["label"] = self.describe()
        return turn

    def permissions(self) -> list[PermissionRequest]:
        """The permission requests of this turn, in order."""
        return [s for s in self._steps if isinstance(s, PermissionRequest)]
