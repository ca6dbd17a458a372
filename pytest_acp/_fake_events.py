"""What an ``acp_fake_agent`` saw: typed records of the reference agent's events.

The agent reports plain JSON events (``acp_lite/testing/_expect.py``); each
connection (an in-process agent, or a process running the fixture's command)
is named by :attr:`FakeEvent.connection`.
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs

__all__ = [
    "FakeEvent",
    "PermissionAnswer",
    "ReceivedPrompt",
    "ReceivedRequest",
    "UnexpectedRequest",
    "event_from",
]


@attrs.frozen(kw_only=True)
class ReceivedRequest:
    """A request for a method the fake agent answers (``initialize`` ...)."""

    connection: str
    method: str


@attrs.frozen(kw_only=True)
class ReceivedPrompt:
    """A prompt that met expectation number ``expectation`` (0-based)."""

    connection: str
    expectation: int
    text: str
    session_id: str


@attrs.frozen(kw_only=True)
class UnexpectedRequest:
    """A request the fake agent did not expect; it answered with an error."""

    connection: str
    method: str
    message: str


@attrs.frozen(kw_only=True)
class PermissionAnswer:
    """The client's answer to a scripted permission request.

    ``outcome`` is ``selected`` (then ``option_id`` and its ``kind``),
    ``cancelled``, ``error`` (the client answered with an error) or ``withdrawn``
    (the turn was cancelled before the client answered).
    """

    connection: str
    label: str
    title: str
    outcome: str
    option_id: str | None = None
    kind: str | None = None

    def matches(self, expected: str) -> bool:
        """Whether this is the answer ``expected`` names (an option id or kind, or
        an outcome such as ``cancelled``)."""
        if self.outcome == "selected":
            return expected in (self.option_id, self.kind)
        return expected == self.outcome

    def describe(self) -> str:
        """``kind (option 'id')`` or the outcome."""
        if self.outcome == "selected":
            return f"{self.kind or 'an option'} (option {self.option_id!r})"
        return self.outcome


FakeEvent = ReceivedRequest | ReceivedPrompt | UnexpectedRequest | PermissionAnswer
"""One thing the fake agent saw."""


def _str(data: Mapping[str, object], key: str) -> str:
    value = data.get(key)
    return value if isinstance(value, str) else ""


def _opt(data: Mapping[str, object], key: str) -> str | None:
    value = data.get(key)
    return value if isinstance(value, str) else None


def event_from(data: Mapping[str, object], connection: str) -> FakeEvent | None:
    """The record of one reported event (``None`` for ``start`` and unknown events)."""
    kind = data.get("event")
    if kind == "request":
        return ReceivedRequest(connection=connection, method=_str(data, "method"))
    if kind == "prompt":
        turn = data.get("turn")
        return ReceivedPrompt(
            connection=connection,
            expectation=turn if isinstance(turn, int) else -1,
            text=_str(data, "text"),
            session_id=_str(data, "session_id"),
        )
    if kind == "unexpected":
        return UnexpectedRequest(
            connection=connection, method=_str(data, "method"), message=_str(data, "message")
        )
    if kind == "permission":
        return PermissionAnswer(
            connection=connection,
            label=_str(data, "label"),
            title=_str(data, "title"),
            outcome=_str(data, "outcome"),
            option_id=_opt(data, "option_id"),
            kind=_opt(data, "kind"),
        )
    return None
