"""No new ``typing.Any`` in the public API.

Walks ``acp_lite.__all__`` (and the modules it lists), ``acp_lite.aio.__all__`` and
``acp_lite.model.__all__``: every public function, and every public class's
annotated fields, methods (parameters and return) and properties. An annotation
that is, or contains, ``typing.Any`` must be allowed by rule (the protocol's open
values: ``meta``, ``extra``, ``raw``, ``data``; the raw ``request`` method's
``params`` and result; the ``extra`` / ``meta`` fields of the generated wire
classes) or listed in ``KNOWN_ANY``.

``KNOWN_ANY`` may only shrink: an entry that is no longer ``Any`` fails the test
too, so remove it when you type the thing.
"""

from __future__ import annotations

import inspect
import re
import sys
import types
import typing
from collections.abc import Callable, Iterator

import attrs

import acp_lite
import acp_lite.aio
import acp_lite.model
from acp_lite.protocol._runtime import WireObject

#: Parameter / field names whose values are the protocol's open JSON values.
OPEN_NAMES = frozenset({"meta", "extra", "raw", "data"})

#: ``name.member:param`` entries that are Any today (to be typed, then removed).
KNOWN_ANY: frozenset[str] = frozenset(
    {
        "acp_lite.Client.agent_capabilities:return",
        "acp_lite.Client.agent_info:return",
        "acp_lite.Client.initialize_response:return",
        "acp_lite.Client.new_session:mcp_servers",
        "acp_lite.Client.new_session:params",
        "acp_lite.Client.notify:params",
        "acp_lite.Client.resume_session:mcp_servers",
        "acp_lite.Client.resume_session:params",
        "acp_lite.Event.__init__:update",
        "acp_lite.Event.raw:return",
        "acp_lite.Event.update:return",
        "acp_lite.Session.prompt:content",
        "acp_lite.Session.run:content",
        "acp_lite.Session.submit:content",
        "acp_lite.Session.timeline:return",
        "acp_lite.SessionModel.apply:update",
        "acp_lite.SessionModel.available_commands:return",
        "acp_lite.SessionModel.background:return",
        "acp_lite.SessionModel.config_options:return",
        "acp_lite.SessionModel.entities:return",
        "acp_lite.SessionModel.entity:return",
        "acp_lite.SessionModel.error:return",
        "acp_lite.SessionModel.feed:update",
        "acp_lite.SessionModel.get_entity:return",
        "acp_lite.SessionModel.prompt_rejected:error",
        "acp_lite.SessionModel.setup_response:result",
        "acp_lite.SessionModel.submit:content",
        "acp_lite.SessionModel.token_usage:return",
        "acp_lite.Submission.__init__:content",
        "acp_lite.Submission.__init__:error",
        "acp_lite.Submission.__init__:usage",
        "acp_lite.Submission.content",
        "acp_lite.Submission.error",
        "acp_lite.Submission.usage",
        "acp_lite.TranscriptEntry.json:return",
        "acp_lite.TranscriptEntry.message:return",
        "acp_lite.TranscriptEntry.to_record:return",
        "acp_lite.Turn.__init__:error",
        "acp_lite.Turn.__init__:submission",
        "acp_lite.Turn.__init__:updates",
        "acp_lite.Turn.error",
        "acp_lite.Turn.submission",
        "acp_lite.Turn.updates",
        "acp_lite.UnsupportedProtocolVersion.__init__:version",
        "acp_lite.aio.AsyncClient.__init__:hook_client",
        "acp_lite.aio.AsyncClient.agent_capabilities:return",
        "acp_lite.aio.AsyncClient.agent_info:return",
        "acp_lite.aio.AsyncClient.new_session:mcp_servers",
        "acp_lite.aio.AsyncClient.new_session:params",
        "acp_lite.aio.AsyncClient.notify:params",
        "acp_lite.aio.AsyncClient.resume_session:mcp_servers",
        "acp_lite.aio.AsyncClient.resume_session:params",
        "acp_lite.aio.AsyncSession.prompt:content",
        "acp_lite.aio.AsyncSession.run:content",
        "acp_lite.aio.AsyncSession.submit:content",
        "acp_lite.aio.AsyncSession.timeline:return",
        "acp_lite.aio.connect:capabilities",
        "acp_lite.aio.connect:client_info",
        "acp_lite.aio.connect:on_elicitation",
        "acp_lite.aio.connect:on_permission",
        "acp_lite.aio.connect:plugins",
        "acp_lite.aio.connect_streams:capabilities",
        "acp_lite.aio.connect_streams:client_info",
        "acp_lite.aio.connect_streams:on_elicitation",
        "acp_lite.aio.connect_streams:on_permission",
        "acp_lite.aio.connect_streams:plugins",
        "acp_lite.aio.prompt_blocks:content",
        "acp_lite.aio.prompt_blocks:return",
        "acp_lite.connect:capabilities",
        "acp_lite.connect:client_info",
        "acp_lite.connect:on_elicitation",
        "acp_lite.connect:on_permission",
        "acp_lite.connect:plugins",
        "acp_lite.connect_streams:capabilities",
        "acp_lite.connect_streams:client_info",
        "acp_lite.connect_streams:on_elicitation",
        "acp_lite.connect_streams:on_permission",
        "acp_lite.connect_streams:plugins",
        "acp_lite.model.CompactionEntity.__init__:summary",
        "acp_lite.model.CompactionEntity.content:return",
        "acp_lite.model.CompactionEntity.summary",
        "acp_lite.model.ContextUsage.__init__:cost",
        "acp_lite.model.ContextUsage.cost",
        "acp_lite.model.EventLog.append:update",
        "acp_lite.model.EventLog.kept_raw:return",
        "acp_lite.model.EventLog.raw:return",
        "acp_lite.model.EventLog.update:return",
        "acp_lite.model.MessageEntity.__init__:content",
        "acp_lite.model.MessageEntity.content",
        "acp_lite.model.PlanEntity.__init__:plan",
        "acp_lite.model.PlanEntity.entries:return",
        "acp_lite.model.PlanEntity.plan",
        "acp_lite.model.SessionMessageEntity.__init__:content",
        "acp_lite.model.SessionMessageEntity.content",
        "acp_lite.model.SubagentEntity.__init__:capabilities",
        "acp_lite.model.SubagentEntity.__init__:state",
        "acp_lite.model.SubagentEntity.capabilities",
        "acp_lite.model.SubagentEntity.state",
        "acp_lite.model.TerminalEntity.__init__:capabilities",
        "acp_lite.model.TerminalEntity.__init__:exit_status",
        "acp_lite.model.TerminalEntity.__init__:size",
        "acp_lite.model.TerminalEntity.capabilities",
        "acp_lite.model.TerminalEntity.exit_status",
        "acp_lite.model.TerminalEntity.size",
        "acp_lite.model.ToolCallEntity.__init__:capabilities",
        "acp_lite.model.ToolCallEntity.__init__:content",
        "acp_lite.model.ToolCallEntity.__init__:locations",
        "acp_lite.model.ToolCallEntity.__init__:raw_input",
        "acp_lite.model.ToolCallEntity.__init__:raw_output",
        "acp_lite.model.ToolCallEntity.capabilities",
        "acp_lite.model.ToolCallEntity.content",
        "acp_lite.model.ToolCallEntity.locations",
        "acp_lite.model.ToolCallEntity.raw_input",
        "acp_lite.model.ToolCallEntity.raw_output",
        "acp_lite.permissions.accept:content",
        "acp_lite.permissions.accept:return",
        "acp_lite.permissions.allow_always:request",
        "acp_lite.permissions.allow_always:session",
        "acp_lite.permissions.allow_once:request",
        "acp_lite.permissions.allow_once:session",
        "acp_lite.permissions.ask:question",
        "acp_lite.permissions.ask:return",
        "acp_lite.permissions.cancel:request",
        "acp_lite.permissions.cancel:session",
        "acp_lite.permissions.cancelled:request",
        "acp_lite.permissions.cancelled:session",
        "acp_lite.permissions.choose:return",
        "acp_lite.permissions.decline:request",
        "acp_lite.permissions.decline:session",
        "acp_lite.permissions.permission_outcome:return",
        "acp_lite.protocol.CreateElicitationResponse.__init__:content",
        "acp_lite.protocol.CreateElicitationResponse.content",
        "acp_lite.protocol.ElicitationAcceptAction.__init__:content",
        "acp_lite.protocol.ElicitationAcceptAction.content",
        "acp_lite.protocol.ElicitationSchema.__init__:properties",
        "acp_lite.protocol.ElicitationSchema.properties",
        "acp_lite.protocol.MessageMcpNotification.__init__:params",
        "acp_lite.protocol.MessageMcpNotification.params",
        "acp_lite.protocol.MessageMcpRequest.__init__:params",
        "acp_lite.protocol.MessageMcpRequest.params",
        "acp_lite.protocol.MessageMcpResponse.__init__:result",
        "acp_lite.protocol.MessageMcpResponse.result",
        "acp_lite.protocol.MethodSpec.__init__:params",
        "acp_lite.protocol.MethodSpec.__init__:result",
        "acp_lite.protocol.MethodSpec.params",
        "acp_lite.protocol.MethodSpec.result",
        "acp_lite.protocol.Notification.__init__:params",
        "acp_lite.protocol.Notification.__init__:raw_params",
        "acp_lite.protocol.Notification.params",
        "acp_lite.protocol.Notification.raw_params",
        "acp_lite.protocol.ProxySuccessorNotification.__init__:params",
        "acp_lite.protocol.ProxySuccessorNotification.params",
        "acp_lite.protocol.ProxySuccessorRequest.__init__:params",
        "acp_lite.protocol.ProxySuccessorRequest.params",
        "acp_lite.protocol.Request.__init__:params",
        "acp_lite.protocol.Request.__init__:raw_params",
        "acp_lite.protocol.Request.params",
        "acp_lite.protocol.Request.raw_params",
        "acp_lite.protocol.Response.__init__:result",
        "acp_lite.protocol.Response.result",
        "acp_lite.protocol.SetProviderRequest.__init__:headers",
        "acp_lite.protocol.SetProviderRequest.headers",
        "acp_lite.protocol.SetSessionConfigOptionRequest.__init__:value",
        "acp_lite.protocol.SetSessionConfigOptionRequest.value",
        "acp_lite.protocol.ToolCall.__init__:raw_input",
        "acp_lite.protocol.ToolCall.__init__:raw_output",
        "acp_lite.protocol.ToolCall.raw_input",
        "acp_lite.protocol.ToolCall.raw_output",
        "acp_lite.protocol.ToolCallUpdate.__init__:raw_input",
        "acp_lite.protocol.ToolCallUpdate.__init__:raw_output",
        "acp_lite.protocol.ToolCallUpdate.raw_input",
        "acp_lite.protocol.ToolCallUpdate.raw_output",
        "acp_lite.protocol.decode_value:d",
        "acp_lite.protocol.structure_update:update",
        "acp_lite.protocol.to_wire:return",
        "acp_lite.protocol.unstructure:obj",
        "acp_lite.protocol.unstructure:return",
    }
)

_ANY_TEXT = re.compile(r"\b(typing\.)?Any\b")


def _contains_any(annotation: object) -> bool:
    if annotation is typing.Any:
        return True
    if isinstance(annotation, str):
        return bool(_ANY_TEXT.search(annotation))
    if isinstance(annotation, list | tuple):  # Callable's parameter list
        return any(_contains_any(a) for a in annotation)
    if isinstance(annotation, typing.ForwardRef):
        return bool(_ANY_TEXT.search(annotation.__forward_arg__))
    args = typing.get_args(annotation)
    if typing.get_origin(annotation) is typing.Annotated:
        args = args[:1]
    return any(_contains_any(a) for a in args)


def _hints(obj: object) -> dict[str, object]:
    """Resolved annotations; the raw ones (strings) where resolving fails."""
    try:
        return dict(typing.get_type_hints(obj, include_extras=True))
    except Exception:
        raw = getattr(obj, "__annotations__", None)
        return dict(raw) if isinstance(raw, dict) else {}


def _public_names(module: types.ModuleType) -> list[str]:
    names = getattr(module, "__all__", None)
    if names is None:
        names = [n for n in vars(module) if not n.startswith("_")]
    return list(names)


def _ours(obj: object) -> bool:
    module = getattr(obj, "__module__", "") or ""
    return module.split(".")[0] in ("acp_lite", "pytest_acp")


def _callable_hints(qual: str, fn: Callable[..., object]) -> Iterator[tuple[str, object]]:
    for param, annotation in _hints(fn).items():
        yield f"{qual}:{param}", annotation


def _class_hints(qual: str, cls: type) -> Iterator[tuple[str, object]]:
    # Record classes processed by attrs on first use (acp_lite._lazy_attrs) get their
    # real __init__ then: let attrs process the class before reading it statically.
    attrs.has(cls)
    for field, annotation in _hints(cls).items():
        if not field.startswith("_"):
            yield f"{qual}.{field}", annotation
    for name in sorted(dir(cls)):
        if name.startswith("_") and name != "__init__":
            continue
        owner = next((k for k in cls.__mro__ if name in vars(k)), None)
        if owner is None or not _ours(owner):
            continue
        member = inspect.getattr_static(owner, name)
        if isinstance(member, property):
            if member.fget is not None:
                for key, annotation in _callable_hints(f"{qual}.{name}", member.fget):
                    if key.endswith(":return"):
                        yield key, annotation
        elif isinstance(member, staticmethod | classmethod):
            yield from _callable_hints(f"{qual}.{name}", member.__func__)
        elif inspect.isfunction(member):
            yield from _callable_hints(f"{qual}.{name}", member)


def _walk() -> Iterator[tuple[str, object, object]]:
    """(qualified name, annotation, owning object) of every public annotation."""
    seen: set[int] = set()
    modules: list[tuple[str, types.ModuleType]] = [
        ("acp_lite", acp_lite),
        ("acp_lite.aio", acp_lite.aio),
        ("acp_lite.model", acp_lite.model),
    ]
    for name in _public_names(acp_lite):
        value = getattr(acp_lite, name)
        if isinstance(value, types.ModuleType) and value is not acp_lite.aio:
            modules.append((f"acp_lite.{name}", value))
    for label, module in modules:
        for name in _public_names(module):
            value = getattr(module, name, None)
            if value is None or id(value) in seen or isinstance(value, types.ModuleType):
                continue
            if inspect.isclass(value) and _ours(value):
                seen.add(id(value))
                for key, annotation in _class_hints(f"{label}.{name}", value):
                    yield key, annotation, value
            elif inspect.isfunction(value) and _ours(value):
                seen.add(id(value))
                for key, annotation in _callable_hints(f"{label}.{name}", value):
                    yield key, annotation, value


def _allowed(key: str) -> bool:
    member, _, param = key.partition(":")
    leaf = param or member.rsplit(".", 1)[-1]
    if leaf in OPEN_NAMES:
        return True
    # The raw request(...): any JSON value in, any JSON value out.
    return member.rsplit(".", 1)[-1] == "request" and leaf in ("params", "return")


def _found() -> dict[str, bool]:
    """Every Any-bearing key: True when allowed by rule."""
    out: dict[str, bool] = {}
    for key, annotation, _owner in _walk():
        if _contains_any(annotation):
            out[key] = _allowed(key)
    return out


def test_walk_sees_the_public_surface() -> None:
    keys = {key for key, _annotation, _owner in _walk()}
    # A few anchors, so a broken walk cannot pass by finding nothing.
    for anchor in (
        "acp_lite.aio.AsyncClient.list_sessions:return",
        "acp_lite.aio.AsyncSession.fork:cwd",
        "acp_lite.Client.new_session:cwd",
        "acp_lite.SessionModel.apply:update",
    ):
        assert anchor in keys, anchor
    assert issubclass(acp_lite.protocol.AgentCapabilities, WireObject)


def test_no_new_any_in_public_annotations() -> None:
    found = _found()
    unexpected = sorted(k for k, allowed in found.items() if not allowed and k not in KNOWN_ANY)
    print(
        f"\npublic annotations with Any: {len(found)} "
        f"({sum(found.values())} allowed by rule, {len(KNOWN_ANY)} in KNOWN_ANY)",
        file=sys.stderr,
    )
    assert not unexpected, (
        "new typing.Any in the public API (type it, or if it is an open protocol value, "
        f"name it meta / extra / raw / data): {unexpected}"
    )


def test_known_any_has_no_stale_entries() -> None:
    found = _found()
    stale = sorted(k for k in KNOWN_ANY if k not in found or found[k])
    assert not stale, f"no longer Any (or allowed by rule): remove from KNOWN_ANY: {stale}"


def test_contains_any_sees_nested_and_string_annotations() -> None:
    assert _contains_any(typing.Any)
    assert _contains_any(list[dict[str, typing.Any]])
    assert _contains_any(Callable[[typing.Any], None])
    assert _contains_any(typing.Annotated[typing.Any, "x"])
    assert _contains_any("Mapping[str, Any] | None")
    assert not _contains_any("Anything | None")
    assert not _contains_any(dict[str, object])
