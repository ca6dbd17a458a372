"""Ready-made answers to the agent's ``session/request_permission`` and ``elicitation/create``.

A **permission policy** is a callable ``(request, session) -> option id | CANCELLED |
None`` that receives the typed ``RequestPermissionRequest`` (its ``options`` have
``option_id``, ``name`` and ``kind``) and returns the ``option_id`` to select, or
``None`` / :data:`CANCELLED` for the ``cancelled`` outcome (spec: "Requesting
Permission"; the agent MUST NOT proceed without a selected option). Policies pick
options by ``kind`` (``allow_once``, ``allow_always``, ``reject_once``,
``reject_always``), never by position or name, because only the kind has meaning.
If no offered option fits, a policy answers ``cancelled``, which the agent must
treat as "not approved" — a policy never grants more than it was asked to.

An **elicitation policy** is a callable ``(request, session) -> response`` that
receives the typed ``CreateElicitationRequest`` and returns the typed
``CreateElicitationResponse`` (``action`` ``accept`` / ``decline`` / ``cancel``).

Policies may block (for example to ask a human): acp_lite calls them off the trio
thread. Use them as ``connect(..., on_permission=permissions.allow_once)``.

**Policy names** (one vocabulary for ``acp-lite prompt --permission``, pytest_acp's
``--acp-permission`` / ``acp_permission`` marker / ini, and :func:`permission_policy`)
are the protocol's option kinds plus ``cancel``: ``allow_once``, ``allow_always``,
``reject_once``, ``reject_always``, ``cancel`` (:data:`PERMISSION_POLICIES`). The
older spellings ``allow``, ``reject`` and ``cancelled`` are accepted aliases
(:data:`PERMISSION_ALIASES`). Elicitation policy names: ``decline``, ``cancel``,
``accept_defaults`` (:data:`ELICITATION_POLICIES`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Final, Protocol, TypeAlias, TypeVar

from acp_lite.protocol import (
    CreateElicitationRequest,
    CreateElicitationResponse,
    RequestPermissionRequest,
    converter,
)

_S = TypeVar("_S")

__all__ = [
    "CANCELLED",
    "ELICITATION_POLICIES",
    "PERMISSION_ALIASES",
    "PERMISSION_POLICIES",
    "ElicitationCallback",
    "ElicitationContent",
    "ElicitationPolicy",
    "PermissionCallback",
    "PermissionPolicy",
    "accept",
    "accept_defaults",
    "allow_always",
    "allow_once",
    "ask",
    "cancel",
    "cancelled",
    "choose",
    "decline",
    "elicitation_policy",
    "field_defaults",
    "option_of_kind",
    "permission_outcome",
    "permission_policy",
    "reject",
    "reject_always",
    "reject_once",
]


class _Cancelled(str):
    """Type of :data:`CANCELLED` (a ``str`` subclass so it fits ``str | None`` results)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "CANCELLED"


CANCELLED: Final[str] = _Cancelled("\x00acp_lite.cancelled")
"""Answer ``cancelled``. Same as returning ``None`` from ``on_permission``; needed in
pluggy ``acp_permission_request`` hooks, where ``None`` means "no opinion"."""


class _Option(Protocol):
    @property
    def option_id(self) -> str: ...
    @property
    def kind(self) -> str: ...


class _PermissionRequest(Protocol):
    @property
    def options(self) -> Sequence[_Option]: ...


PermissionPolicy: TypeAlias = Callable[[RequestPermissionRequest, object], "str | None"]
"""``(request: RequestPermissionRequest, session) -> option id | CANCELLED | None``
(a policy for any session: it may not rely on what the session is)."""

ElicitationPolicy: TypeAlias = Callable[
    [CreateElicitationRequest, object], CreateElicitationResponse
]
"""``(request: CreateElicitationRequest, session | None) -> CreateElicitationResponse``."""

PermissionCallback: TypeAlias = Callable[[RequestPermissionRequest, _S], "str | None"]
"""``on_permission``: ``(request, session) -> option id | CANCELLED | None``, ``_S``
the session it gets (``Session``; ``AsyncSession`` in :mod:`acp_lite.aio`)."""

ElicitationCallback: TypeAlias = Callable[
    [CreateElicitationRequest, _S], "CreateElicitationResponse | Mapping[str, object] | None"
]
"""``on_elicitation``: ``(request, session or None) -> response``; a wire dict is sent
as given, ``None`` declines."""

ElicitationContent: TypeAlias = Mapping[str, "str | int | float | bool | Sequence[str]"]
"""An accepted form's ``content``: property name -> value (spec: a string, number,
boolean or a list of strings)."""

_ALLOW_KINDS = ("allow_once", "allow_always")
_REJECT_KINDS = ("reject_once", "reject_always")


def option_of_kind(request: _PermissionRequest, *kinds: str) -> str | None:
    """The ``option_id`` of the first offered option whose ``kind`` is ``kinds[0]``,
    else ``kinds[1]``, ...; ``None`` if none is offered."""
    options: Sequence[_Option] = request.options
    for kind in kinds:
        for option in options:
            if option.kind == kind:
                return option.option_id
    return None


def choose(*kinds: str) -> PermissionPolicy:
    """A policy selecting the first offered option of the given kinds, in preference order.

    ``choose("allow_once")`` is :func:`allow_once`. Custom (``_``-prefixed) kinds work too.
    """
    if not kinds:
        raise ValueError("choose() needs at least one option kind")

    def policy(request: _PermissionRequest, session: object) -> str | None:
        return option_of_kind(request, *kinds)

    policy.__name__ = policy.__qualname__ = f"choose{kinds!r}"
    return policy


def allow_once(request: _PermissionRequest, session: object) -> str | None:
    """Select the ``allow_once`` option; ``cancelled`` when none is offered
    (never escalates to ``allow_always``)."""
    return option_of_kind(request, "allow_once")


def allow_always(request: _PermissionRequest, session: object) -> str | None:
    """Select ``allow_always``, else ``allow_once``; ``cancelled`` when neither is offered."""
    return option_of_kind(request, "allow_always", "allow_once")


def reject_once(request: _PermissionRequest, session: object) -> str | None:
    """Select ``reject_once``, else ``reject_always``; ``cancelled`` (also "not approved")
    when no reject option is offered. This is the default policy."""
    return option_of_kind(request, *_REJECT_KINDS)


reject = reject_once
"""The default policy, :func:`reject_once` (the older name)."""


def reject_always(request: _PermissionRequest, session: object) -> str | None:
    """Select ``reject_always``, else ``reject_once``; ``cancelled`` when neither is offered."""
    return option_of_kind(request, "reject_always", "reject_once")


def cancelled(request: object, session: object) -> str | None:
    """Always answer the ``cancelled`` outcome (the agent must not proceed)."""
    return None


def ask(
    question: Callable[[RequestPermissionRequest, _S], object],
) -> Callable[[RequestPermissionRequest, _S], str | None]:
    """Wrap a decision function (for example one that asks a human) into a policy.

    ``question(request, session)`` may block and returns one of:

    * ``True`` / ``False``: approve (``allow_once``) / reject (``reject_once``, else
      ``reject_always``); a missing kind gives ``cancelled``;
    * an offered ``option_id``;
    * an option kind (``"allow_always"`` ...): the first offered option of that kind;
    * ``None`` or :data:`CANCELLED`: the ``cancelled`` outcome.

    Anything else raises ``ValueError`` naming the offered options, so a typo is
    never silently taken as approval.
    """

    def policy(request: RequestPermissionRequest, session: _S) -> str | None:
        answer = question(request, session)
        if answer is None or answer is CANCELLED:
            return None
        if answer is True:
            return option_of_kind(request, "allow_once")
        if answer is False:
            return option_of_kind(request, *_REJECT_KINDS)
        if isinstance(answer, str):
            options: Sequence[_Option] = request.options
            if any(o.option_id == answer for o in options):
                return answer
            by_kind = option_of_kind(request, answer)
            if by_kind is not None:
                return by_kind
        offered = ", ".join(f"{o.option_id!r} ({o.kind})" for o in request.options)
        raise ValueError(
            f"permission answer {answer!r} is neither an offered option id, an offered "
            f"kind, True/False nor None; offered: {offered}"
        )

    policy.__name__ = policy.__qualname__ = f"ask({getattr(question, '__name__', question)!r})"
    return policy


# --- elicitation ------------------------------------------------------------------------


def _elicitation_response(payload: Mapping[str, object]) -> CreateElicitationResponse:
    return converter.structure(payload, CreateElicitationResponse)


def decline(request: object, session: object) -> CreateElicitationResponse:
    """Answer ``{"action": "decline"}``: the user said no. The default elicitation policy."""
    return _elicitation_response({"action": "decline"})


def cancel(request: object, session: object) -> CreateElicitationResponse:
    """Answer ``{"action": "cancel"}``: dismissed without a choice."""
    return _elicitation_response({"action": "cancel"})


def accept(content: ElicitationContent | None = None) -> ElicitationPolicy:
    """A policy answering ``{"action": "accept", "content": content}``.

    ``content`` maps the requested schema's property names to values (str, int,
    float, bool or a list of str); ``None`` sends no content (for URL mode).
    """
    payload: dict[str, object] = {"action": "accept"}
    if content is not None:
        payload["content"] = dict(content)

    def policy(request: object, session: object) -> CreateElicitationResponse:
        return _elicitation_response(dict(payload))

    policy.__name__ = policy.__qualname__ = f"accept({content!r})"
    return policy


def accept_defaults(request: object, session: object) -> CreateElicitationResponse:
    """Accept a form with the ``default`` of each requested field; ``decline`` when a
    required field has no default (nothing honest to send for it)."""
    content = field_defaults(request)
    required = getattr(getattr(request, "requested_schema", None), "required", None) or ()
    if any(name not in content for name in required):
        return decline(request, session)
    return _elicitation_response({"action": "accept", "content": content})


def field_defaults(request: object) -> dict[str, object]:
    """The ``default`` of each field of a form elicitation's requested schema
    (``requestedSchema.properties``; fields without a default are left out)."""
    properties = getattr(getattr(request, "requested_schema", None), "properties", None)
    out: dict[str, object] = {}
    if isinstance(properties, Mapping):
        for name, prop in properties.items():
            if isinstance(prop, Mapping) and prop.get("default") is not None:
                out[str(name)] = prop["default"]
    return out


# --- policy names --------------------------------------------------------------------

_Permission = Callable[[_PermissionRequest, object], "str | None"]
_Elicitation = Callable[[object, object], CreateElicitationResponse]

PERMISSION_POLICIES: Final[dict[str, _Permission]] = {
    "allow_once": allow_once,
    "allow_always": allow_always,
    "reject_once": reject_once,
    "reject_always": reject_always,
    "cancel": cancelled,
}
"""Permission policies by name: the option kinds, plus ``cancel`` (the ``cancelled``
outcome)."""

PERMISSION_ALIASES: Final[dict[str, str]] = {
    "allow": "allow_once",
    "reject": "reject_once",
    "cancelled": "cancel",
}
"""Older spellings still accepted, and the name each stands for."""

ELICITATION_POLICIES: Final[dict[str, _Elicitation]] = {
    "decline": decline,
    "cancel": cancel,
    "accept_defaults": accept_defaults,
}
"""Elicitation policies by name."""


def permission_policy(name: str) -> _Permission:
    """The permission policy called ``name`` (or an alias); ``ValueError`` naming the
    choices otherwise."""
    policy = PERMISSION_POLICIES.get(PERMISSION_ALIASES.get(name, name))
    if policy is None:
        raise ValueError(
            f"unknown permission policy {name!r}; expected one of "
            f"{', '.join(PERMISSION_POLICIES)} (aliases: {', '.join(PERMISSION_ALIASES)})"
        )
    return policy


def elicitation_policy(name: str) -> _Elicitation:
    """The elicitation policy called ``name``; ``ValueError`` naming the choices otherwise."""
    policy = ELICITATION_POLICIES.get(name)
    if policy is None:
        raise ValueError(
            f"unknown elicitation policy {name!r}; expected one of "
            f"{', '.join(ELICITATION_POLICIES)}"
        )
    return policy


def permission_outcome(answer: object) -> dict[str, str]:
    """The wire ``RequestPermissionOutcome`` for a policy's answer.

    ``None`` / :data:`CANCELLED` -> ``{"outcome": "cancelled"}``, an option id ->
    ``{"outcome": "selected", "optionId": id}``. Anything else raises ``TypeError``.
    """
    if answer is None or isinstance(answer, _Cancelled):
        return {"outcome": "cancelled"}
    if isinstance(answer, str):
        return {"outcome": "selected", "optionId": answer}
    raise TypeError(f"a permission policy must return an option id or None, not {answer!r}")
