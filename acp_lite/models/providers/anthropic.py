"""Anthropic Messages (``POST /v1/messages``, also as ``?beta=true``, and
``/v1/messages/count_tokens``), streamed and not.

Streams are named events: ``message_start`` (the message, empty, with input
usage), a ``ping`` (keep-alive), per content block ``content_block_start`` /
``content_block_delta`` (``text_delta``, or ``input_json_delta`` pieces for a
``tool_use``) / ``content_block_stop``, then ``message_delta`` (the
``stop_reason`` and output usage) and ``message_stop``. Errors are
``{"type": "error", "error": {"type": ..., "message": ...}}`` (529 is
``overloaded_error``).
"""

from __future__ import annotations

from acp_lite.jsontypes import JsonObject, JsonValue
from acp_lite.models.http import (
    EventStream,
    Hang,
    HttpRequest,
    HttpResponse,
    Pause,
    SseEvent,
    StreamItem,
)
from acp_lite.models.providers.base import (
    Ids,
    ParsedRequest,
    dumps,
    hang_without_stream,
    json_response,
    json_schema_of,
    rough_tokens,
    split_json,
    step_pause,
    text_of,
)
from acp_lite.models.script import (
    ErrorReply,
    HangReply,
    ModelStep,
    Refusal,
    Reply,
    ToolCalls,
    chunks_of,
)

__all__ = ["Anthropic", "count_tokens"]

_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    529: "overloaded_error",
}


def count_tokens(body: JsonObject) -> HttpResponse:
    """The ``count_tokens`` answer: a rough count (see ``base.rough_tokens``)."""
    return json_response({"input_tokens": rough_tokens(dumps(body))})


def _output_schema(body: JsonObject) -> JsonObject | None:
    # {"type": "json_schema", "schema"}: output_config.format (GA), output_format (beta).
    config = body.get("output_config")
    found = json_schema_of(config.get("format")) if isinstance(config, dict) else None
    return found if found is not None else json_schema_of(body.get("output_format"))


class Anthropic:
    """The Messages API."""

    api = "anthropic"

    def parse(self, request: HttpRequest, body: JsonObject) -> ParsedRequest:
        """Model, stream flag, the last user text, ``tool_result`` blocks' ids."""
        messages = body.get("messages")
        last_user: str | None = None
        results: set[str] = set()
        for message in messages if isinstance(messages, list) else []:
            if not isinstance(message, dict) or message.get("role") != "user":
                continue
            content = message.get("content")
            text = text_of(content)
            if text is not None:
                last_user = text
            for block in content if isinstance(content, list) else []:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    results.add(str(block.get("tool_use_id")))
        return ParsedRequest(
            api=self.api,
            path=request.path,
            model=str(body.get("model", "")),
            stream=body.get("stream") is True,
            body=body,
            last_user_text=last_user,
            tool_results=frozenset(results),
            schema=_output_schema(body),
        )

    def error(self, status: int, message: str) -> HttpResponse:
        """An Anthropic error object."""
        kind = _ERROR_TYPES.get(status, "api_error")
        return json_response({"type": "error", "error": {"type": kind, "message": message}}, status)

    def answer(
        self, step: ModelStep, request: ParsedRequest, ids: Ids
    ) -> HttpResponse | EventStream:
        """A ``message``, or its event stream."""
        if isinstance(step, ErrorReply) and not (step.mid_stream and request.stream):
            return self.error(step.status, step.message)
        if isinstance(step, HangReply) and not request.stream:
            return hang_without_stream(step)
        message_id = ids.new("msg_")
        blocks: list[JsonObject] = []
        text = _text(step)
        if text:
            blocks.append({"type": "text", "text": text})
        if isinstance(step, ToolCalls):
            for call in step.calls:
                call_id = call.id or ids.new("toolu_")
                blocks.append(
                    {"type": "tool_use", "id": call_id, "name": call.name, "input": call.arguments}
                )
        stop = _stop_reason(step)
        output_tokens = rough_tokens("".join(dumps(b) for b in blocks))
        usage: JsonObject = {
            "input_tokens": request.prompt_tokens,
            "output_tokens": output_tokens,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
        }
        message: JsonObject = {
            "id": message_id,
            "type": "message",
            "role": "assistant",
            "model": request.model,
            "content": list[JsonValue](blocks),
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": usage,
        }
        if not request.stream:
            return json_response(message)
        return EventStream(items=_stream(step, message, blocks))


def _text(step: ModelStep) -> str:
    if isinstance(step, Reply):
        return step.full_text()
    return step.text if isinstance(step, ToolCalls | HangReply | Refusal) else ""


def _stop_reason(step: ModelStep) -> str:
    if isinstance(step, ToolCalls):
        return "tool_use"
    if isinstance(step, Refusal):
        return "refusal"
    if isinstance(step, Reply) and step.truncated:
        return "max_tokens"
    return "end_turn"


def _event(name: str, value: JsonObject) -> SseEvent:
    return SseEvent(dumps({"type": name, **value}), event=name)


def _stream(step: ModelStep, message: JsonObject, blocks: list[JsonObject]) -> list[StreamItem]:
    usage = message["usage"]
    assert isinstance(usage, dict)
    start_usage: JsonObject = {**usage, "output_tokens": 1}
    start: JsonObject = {**message, "content": [], "stop_reason": None, "usage": start_usage}
    items: list[StreamItem] = [*step_pause(step)]
    items.append(_event("message_start", {"message": start}))
    items.append(_event("ping", {}))
    if isinstance(step, ErrorReply):
        error: JsonObject = {
            "type": _ERROR_TYPES.get(step.status, "api_error"),
            "message": step.message,
        }
        items.append(_event("error", {"error": error}))
        return items
    for index, block in enumerate(blocks):
        if block["type"] == "text":
            items.append(
                _event(
                    "content_block_start",
                    {"index": index, "content_block": {"type": "text", "text": ""}},
                )
            )
            pieces = step.pieces() if isinstance(step, Reply) else chunks_of(str(block["text"]))
            for n, piece in enumerate(pieces):
                if n and isinstance(step, Reply) and step.chunk_delay > 0:
                    items.append(Pause(step.chunk_delay))
                items.append(
                    _event(
                        "content_block_delta",
                        {"index": index, "delta": {"type": "text_delta", "text": piece}},
                    )
                )
            if isinstance(step, HangReply):
                items.append(Hang())
                return items
        else:
            head: JsonObject = {**block, "input": {}}
            items.append(_event("content_block_start", {"index": index, "content_block": head}))
            for piece in split_json(dumps(block["input"])):
                delta: JsonObject = {"type": "input_json_delta", "partial_json": piece}
                items.append(_event("content_block_delta", {"index": index, "delta": delta}))
        items.append(_event("content_block_stop", {"index": index}))
    if isinstance(step, HangReply):
        items.append(Hang())
        return items
    delta_usage: JsonObject = {"output_tokens": usage["output_tokens"]}
    items.append(
        _event(
            "message_delta",
            {
                "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
                "usage": delta_usage,
            },
        )
    )
    items.append(_event("message_stop", {}))
    return items
