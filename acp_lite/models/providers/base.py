"""What the provider modules share: the parsed request, deterministic ids, the
provider interface, and small JSON helpers."""

from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING, Protocol

import attrs

from acp_lite.jsontypes import JsonObject, JsonValue
from acp_lite.models.http import (
    EventStream,
    Hang,
    HttpRequest,
    HttpResponse,
    Pause,
    StreamItem,
)

if TYPE_CHECKING:
    from acp_lite.models.script import ModelStep

__all__ = [
    "CREATED",
    "Ids",
    "ParsedRequest",
    "Provider",
    "dumps",
    "hang_without_stream",
    "json_response",
    "json_schema_of",
    "object_for_schema",
    "rough_tokens",
    "split_json",
    "step_pause",
    "text_of",
]

#: The ``created`` timestamp every answer carries (fixed, so snapshots are stable).
CREATED = 1_700_000_000


@attrs.define
class Ids:
    """Deterministic ids: ``new("chatcmpl-")`` is ``chatcmpl-0001``, then
    ``...0002`` (one counter for every prefix, per scripted model)."""

    count: int = 0

    def new(self, prefix: str) -> str:
        """The next id, with ``prefix``."""
        self.count += 1
        return f"{prefix}{self.count:04d}"


@attrs.frozen(kw_only=True)
class ParsedRequest:
    """What the script matching and the answers need of one request."""

    api: str
    path: str
    model: str
    stream: bool
    body: JsonObject
    last_user_text: str | None = None
    tool_results: frozenset[str] = frozenset()
    #: OpenAI Chat: ``stream_options.include_usage`` (a final usage chunk).
    include_usage: bool = False
    #: The JSON Schema a structured-output request asks the answer to fit (Gemini's
    #: ``responseSchema``, OpenAI's ``json_schema`` response format, Anthropic's
    #: ``output_format``), or ``None``.
    schema: JsonObject | None = None
    #: Gemini: ``streamGenerateContent`` without ``alt=sse`` (a JSON array of responses).
    stream_as_array: bool = False

    #: A rough input token count (see :func:`rough_tokens`), counted once.
    prompt_tokens: int = attrs.field(init=False)

    @prompt_tokens.default
    def _count_prompt(self) -> int:
        return rough_tokens(dumps(self.body))


class Provider(Protocol):
    """One provider API."""

    api: str

    def parse(self, request: HttpRequest, body: JsonObject) -> ParsedRequest:
        """The request's model, stream flag, last user text and tool results."""

    def answer(
        self, step: ModelStep, request: ParsedRequest, ids: Ids
    ) -> HttpResponse | EventStream:
        """The answer for ``step`` (an error step too): a body, or a stream."""

    def error(self, status: int, message: str) -> HttpResponse:
        """An error in this API's own shape."""


def dumps(value: JsonValue) -> str:
    """Compact JSON, as the APIs send it."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def json_response(value: JsonValue, status: int = 200) -> HttpResponse:
    """``value`` as an ``application/json`` response."""
    return HttpResponse(status=status, body=dumps(value).encode("utf-8"))


def rough_tokens(text: str) -> int:
    """A rough token count: a quarter of the characters, at least 1. Not any
    tokenizer's; enough for usage blocks and count_tokens answers."""
    return max(1, math.ceil(len(text) / 4))


def step_pause(step: ModelStep) -> list[StreamItem]:
    """The :class:`Pause` a step's ``delay`` asks for before the stream (or none)."""
    return [Pause(step.delay)] if step.delay > 0 else []


def split_json(text: str, pieces: int = 3) -> list[str]:
    """``text`` (tool call arguments) in up to ``pieces`` parts, as the APIs
    stream them: the parts join back to ``text``; never an empty part."""
    if not text:
        return []
    size = max(1, math.ceil(len(text) / pieces))
    return [text[i : i + size] for i in range(0, len(text), size)]


def hang_without_stream(step: ModelStep) -> EventStream:
    """A hang for a request that asked for no stream: the status line and JSON
    headers, then nothing (the client waits for a body that never comes)."""
    return EventStream(
        items=[*step_pause(step), Hang()],
        headers=(("content-type", "application/json"),),
    )


def text_of(content: JsonValue, part_types: tuple[str, ...] = ("text",)) -> str | None:
    """The text of a message ``content``: a string, or the joined ``text`` of the
    parts whose ``type`` is in ``part_types`` (``None`` if there is none)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = [
            part["text"]
            for part in content
            if isinstance(part, dict)
            and part.get("type") in part_types
            and isinstance(part.get("text"), str)
        ]
        return "\n".join(t for t in texts if isinstance(t, str)) if texts else None
    return None


def object_for_schema(schema: JsonValue, depth: int = 0) -> JsonValue:
    """A value that fits ``schema`` (JSON Schema, or Gemini's upper-case ``type``
    form): objects get their required properties (all, if none are listed),
    enums their first value, strings ``"scripted"``, numbers 0, booleans false,
    arrays ``minItems`` items (none by default)."""
    if not isinstance(schema, dict) or depth > 16:
        return None
    enum = schema.get("enum")
    if isinstance(enum, list) and enum:
        return enum[0]
    if "const" in schema:
        return schema["const"]
    for key in ("anyOf", "oneOf", "allOf"):
        options = schema.get(key)
        if isinstance(options, list) and options:
            return object_for_schema(options[0], depth + 1)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), None)
    kind = kind.lower() if isinstance(kind, str) else ("object" if "properties" in schema else None)
    if kind == "object":
        properties = schema.get("properties")
        properties = properties if isinstance(properties, dict) else {}
        required = schema.get("required")
        names = required if isinstance(required, list) else list(properties)
        return {
            str(name): object_for_schema(properties.get(str(name), {}), depth + 1) for name in names
        }
    if kind == "array":
        count = schema.get("minItems")
        count = int(count) if isinstance(count, int | str) and str(count).isdigit() else 0
        return [object_for_schema(schema.get("items", {}), depth + 1) for _ in range(count)]
    if kind == "string":
        return "scripted"
    if kind in ("integer", "number"):
        return 0
    if kind == "boolean":
        return False
    return None


def json_schema_of(output_format: JsonValue, inner: str | None = None) -> JsonObject | None:
    """The JSON Schema of a structured-output format ``{"type": "json_schema", ...}``:
    its ``schema`` (or the ``schema`` of its ``inner`` object); ``None`` for any other
    format (plain text, ``json_object``) or a malformed one."""
    if not isinstance(output_format, dict) or output_format.get("type") != "json_schema":
        return None
    holder = output_format.get(inner) if inner is not None else output_format
    schema = holder.get("schema") if isinstance(holder, dict) else None
    return schema if isinstance(schema, dict) else None
