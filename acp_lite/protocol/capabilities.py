"""Which advertised capability each client -> agent method needs (pure, sans-IO).

Spec (docs-v2-draft ``initialization.mdx``, "Capabilities"): "Clients and Agents
MUST treat all capabilities omitted in the ``initialize`` request as UNSUPPORTED."
A capability object is present when it is an object (``{}`` included); omitted,
``null`` and malformed values (read as ``UNSET``, ``x-deserialize-default-on-error``)
mean unsupported.

Paths are wire names from the ``initialize`` result, e.g.
``("capabilities", "session", "fork")`` for ``result.capabilities.session.fork``.
``("authMethods",)`` means a non-empty ``authMethods`` list: the schema
(``InitializeResponse.authMethods``, ``LoginAuthRequest``, ``LogoutAuthRequest``)
says ``auth/login`` and ``auth/logout`` are advertised by it, not by
``capabilities.auth``.

The baseline is ``initialize`` (always) and, with ``capabilities.session``
present (``{}`` suffices), the baseline session methods of ``SessionCapabilities``:
``session/new``, ``session/list``, ``session/resume``, ``session/close``,
``session/prompt``, ``session/cancel`` (and the ``session/update`` notification).

Some methods are gated on an entity instead (:data:`ENTITY_CAPABILITIES`):
``tool_call/cancel`` "is only available while the tool call advertises
``capabilities.cancel``", ``terminal/cancel`` likewise for the terminal, and
``session/cancel`` of a *child* session needs the parent's ``subagent_update``
``capabilities.cancel`` (``SubagentSessionCapabilities``: "Support for the method
on ordinary sessions does not grant support on a child").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING

from acp_lite.protocol._runtime import WireObject
from acp_lite.protocol._unset import UNSET, Unset

if TYPE_CHECKING:
    from acp_lite.protocol._generated import (
        AgentCapabilities,
        AuthMethod,
        SubagentSessionCapabilities,
        TerminalCapabilities,
        ToolCallCapabilities,
    )

__all__ = [
    "AUTH_METHODS",
    "ENTITY_CAPABILITIES",
    "METHOD_CAPABILITIES",
    "PARAM_CAPABILITIES",
    "CapabilityPath",
    "capability_name",
    "entity_capability",
    "entity_supports",
    "param_capability",
    "required_capability",
    "supports",
    "supports_param",
]

CapabilityPath = tuple[str, ...]
"""Wire-name path from the ``initialize`` result (or from an entity)."""

AUTH_METHODS: CapabilityPath = ("authMethods",)
"""The gate of ``auth/login`` / ``auth/logout``: a non-empty ``authMethods`` list."""

_SESSION: CapabilityPath = ("capabilities", "session")

METHOD_CAPABILITIES: Mapping[str, CapabilityPath | None] = MappingProxyType(
    {
        # Always available: negotiates everything else.
        "initialize": None,
        # Protocol level, both directions: cancels one of our own requests.
        "$/cancel_request": None,
        # Authentication: advertised by authMethods (InitializeResponse.authMethods,
        # "Supplying one or more methods means the agent MUST support both").
        "auth/login": AUTH_METHODS,
        "auth/logout": AUTH_METHODS,
        # AuthStatusRequest: "only available if the agent advertises auth.status".
        "auth/status": ("capabilities", "auth", "status"),
        # SessionCapabilities: "{} means the agent supports the baseline session
        # methods"; omitted / null: "does not support the session/* methods".
        "session/new": _SESSION,
        "session/list": _SESSION,
        "session/resume": _SESSION,
        "session/close": _SESSION,
        "session/prompt": _SESSION,
        "session/cancel": _SESSION,
        # A session/* method without a capability of its own; the per-session gate
        # is the session's advertised configOptions ("Agents MUST support this
        # method for any session where they advertise config options").
        "session/set_config_option": _SESSION,
        # "only available if the agent advertises the session.<x> capability".
        "session/delete": ("capabilities", "session", "delete"),
        "session/fork": ("capabilities", "session", "fork"),
        "session/archive": ("capabilities", "session", "archive"),
        "session/unarchive": ("capabilities", "session", "archive"),
        "session/set_title": ("capabilities", "session", "title"),
        "session/status": ("capabilities", "session", "status"),
        # Gated on the entity (ENTITY_CAPABILITIES), not on the agent.
        "tool_call/cancel": None,
        "terminal/cancel": None,
        # ProvidersCapabilities: "{} means the agent supports provider configuration
        # methods".
        "providers/list": ("capabilities", "providers"),
        "providers/set": ("capabilities", "providers"),
        "providers/disable": ("capabilities", "providers"),
        # Client -> agent mcp/message is a notification for a request on an ACP MCP
        # server the client declared; declaring one needs session.mcp.acp.
        "mcp/message": ("capabilities", "session", "mcp", "acp"),
    }
)
"""Every client -> agent method of the unstable v2 schema and its agent-level gate."""

ENTITY_CAPABILITIES: Mapping[str, tuple[str, CapabilityPath]] = MappingProxyType(
    {
        "tool_call/cancel": ("tool_call", ("capabilities", "cancel")),
        "terminal/cancel": ("terminal", ("capabilities", "cancel")),
        # Only for cancelling a child session (reported by subagent_update).
        "session/cancel": ("subagent", ("capabilities", "cancel")),
    }
)
"""Methods gated on one entity: method -> (entity kind, path on the entity)."""


_ADDITIONAL_DIRECTORIES: CapabilityPath = ("capabilities", "session", "additionalDirectories")
_SYSTEM_PROMPT: CapabilityPath = ("capabilities", "session", "systemPrompt")

PARAM_CAPABILITIES: Mapping[tuple[str, str], CapabilityPath] = MappingProxyType(
    {
        # SessionCapabilities.additionalDirectories: "supports additionalDirectories on
        # supported session lifecycle requests".
        ("session/new", "additionalDirectories"): _ADDITIONAL_DIRECTORIES,
        ("session/resume", "additionalDirectories"): _ADDITIONAL_DIRECTORIES,
        ("session/fork", "additionalDirectories"): _ADDITIONAL_DIRECTORIES,
        # SystemPrompt: "Clients MUST only send this when the Agent advertises
        # session.systemPrompt".
        ("session/new", "systemPrompt"): _SYSTEM_PROMPT,
        ("session/resume", "systemPrompt"): _SYSTEM_PROMPT,
        ("session/fork", "systemPrompt"): _SYSTEM_PROMPT,
        # ListSessionsRequest.archived: "Only send this when the Agent advertises the
        # session.archive capability".
        ("session/list", "archived"): ("capabilities", "session", "archive"),
    }
)
"""Optional parameters (wire names) that need a capability of their own."""


def required_capability(method: str) -> CapabilityPath | None:
    """The path the agent must advertise for the client to call ``method``.

    ``None``: no agent-level gate (``initialize``; methods gated on an entity, see
    :func:`entity_capability`; methods this table does not know, such as
    ``_``-prefixed extensions, whose capabilities live in ``_meta``).
    """
    return METHOD_CAPABILITIES.get(method)


def capability_name(path: Sequence[str]) -> str:
    """``"capabilities.session.fork"`` for ``("capabilities", "session", "fork")``."""
    return ".".join(path)


def _snake(name: str) -> str:
    return "".join("_" + c.lower() if c.isupper() else c for c in name)


def _present(value: object) -> bool:
    # "An object (including {}) means supported"; UNSET / None / malformed do not.
    return isinstance(value, WireObject | Mapping)


def _walk(value: object, path: Sequence[str]) -> bool:
    for name in path:
        if isinstance(value, Mapping):
            value = value.get(name)
        elif isinstance(value, WireObject):
            value = getattr(value, _snake(name), UNSET)
        else:
            return False
    return _present(value)


def supports(
    capabilities: AgentCapabilities | Mapping[str, object] | Unset | None,
    method: str,
    *,
    auth_methods: Sequence[AuthMethod | Mapping[str, object]] | Unset | None = UNSET,
) -> bool:
    """Whether the agent advertised what ``method`` needs.

    ``capabilities`` is ``InitializeResponse.capabilities`` (typed, or the wire
    dict; ``UNSET`` / ``None`` when the agent sent none). ``auth/login`` and
    ``auth/logout`` depend on ``auth_methods`` (``InitializeResponse.auth_methods``)
    instead: pass it, or they read as unsupported.
    """
    path = required_capability(method)
    if path is None:
        return True
    if path == AUTH_METHODS:
        return isinstance(auth_methods, Sequence) and len(auth_methods) > 0
    return _walk(capabilities, path[1:])


def entity_capability(method: str) -> tuple[str, CapabilityPath] | None:
    """``(entity kind, path on the entity)`` for a method gated on an entity, else ``None``."""
    return ENTITY_CAPABILITIES.get(method)


def entity_supports(
    capabilities: ToolCallCapabilities
    | TerminalCapabilities
    | SubagentSessionCapabilities
    | Mapping[str, object]
    | Unset
    | None,
    method: str,
) -> bool:
    """Whether an entity's ``capabilities`` allow ``method`` on it.

    ``capabilities`` is the entity's latest ``capabilities`` (a tool call's
    ``ToolCallCapabilities``, a terminal's ``TerminalCapabilities``, a subagent's
    ``SubagentSessionCapabilities``). A method without an entity gate is allowed.
    """
    gate = entity_capability(method)
    if gate is None:
        return True
    return _walk(capabilities, gate[1][1:])


def param_capability(method: str, param: str) -> CapabilityPath | None:
    """The path the agent must advertise for ``method`` to carry ``param`` (wire name)."""
    return PARAM_CAPABILITIES.get((method, param))


def supports_param(
    capabilities: AgentCapabilities | Mapping[str, object] | Unset | None,
    method: str,
    param: str,
) -> bool:
    """Whether ``method`` may carry the optional parameter ``param`` (wire name)."""
    path = param_capability(method, param)
    return path is None or _walk(capabilities, path[1:])
