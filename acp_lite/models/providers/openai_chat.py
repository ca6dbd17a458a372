"""OpenAI Chat Completions (``POST /v1/chat/completions``), streamed and not.

Streams are ``data:`` chunks (``object: chat.completion.chunk``): a first delta
with the role, content (or refusal) pieces, tool calls as deltas split over
several events (``index``, ``id``, ``function.name`` first, then the
``arguments`` in pieces), a last chunk with ``finish_reason``, with
``stream_options.include_usage`` a usage chunk (``choices: []``; the others carry
``usage: null``), and ``data: [DONE]``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from acp_lite.jsontypes import JsonObject, JsonValue
from acp_lite.models.http import EventStream, Hang, HttpRequest, HttpResponse, Pause, SseEvent
from acp_lite.models.providers.base import (
    CREATED,
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

if TYPE_CHECKING:
    from acp_lite.models.http import StreamItem

__all__ = ["OpenAIChat", "error_body"]

_ERROR_TYPES = {
    400: ("invalid_request_error", None),
    401: ("invalid_request_error", "invalid_api_key"),
    404: ("invalid_request_error", "model_not_found"),
    429: ("requests", "rate_limit_exceeded"),
}


def error_body(status: int, message: str) -> JsonObject:
    """OpenAI's error object for ``status`` (also what the Responses API sends)."""
    kind, code = _ERROR_TYPES.get(status, ("server_error", None))
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


class OpenAIChat:
    """The Chat Completions API."""

    api = "openai_chat"

    def parse(self, request: HttpRequest, body: JsonObject) -> ParsedRequest:
        """Model, stream flag, last user text, ``tool`` messages' call ids."""
        messages = body.get("messages")
        last_user: str | None = None
        results: set[str] = set()
        for message in messages if isinstance(messages, list) else []:
            if not isinstance(message, dict):
                continue
            if message.get("role") == "user":
                text = text_of(message.get("content"))
                if text is not None:
                    last_user = text
            elif message.get("role") == "tool" and isinstance(message.get("tool_call_id"), str):
                results.add(str(message["tool_call_id"]))
        options = body.get("stream_options")
        return ParsedRequest(
            api=self.api,
            path=request.path,
            model=str(body.get("model", "")),
            stream=body.get("stream") is True,
            body=body,
            last_user_text=last_user,
            tool_results=frozenset(results),
            include_usage=isinstance(options, dict) and options.get("include_usage") is True,
            # {"type": "json_schema", "json_schema": {"name", "schema", "strict"}}
            schema=json_schema_of(body.get("response_format"), "json_schema"),
        )

    def error(self, status: int, message: str) -> HttpResponse:
        """An OpenAI error object."""
        return json_response(error_body(status, message), status)

    def answer(
        self, step: ModelStep, request: ParsedRequest, ids: Ids
    ) -> HttpResponse | EventStream:
        """A ``chat.completion``, or its chunk stream."""
        if isinstance(step, ErrorReply) and not (step.mid_stream and request.stream):
            return self.error(step.status, step.message)
        if isinstance(step, HangReply) and not request.stream:
            return hang_without_stream(step)
        completion_id = ids.new("chatcmpl-")
        calls: list[JsonObject] = []
        if isinstance(step, ToolCalls):
            for call in step.calls:
                function: JsonObject = {"name": call.name, "arguments": call.arguments_json()}
                call_id = call.id or ids.new("call_")
                calls.append({"id": call_id, "type": "function", "function": function})
        text = _text(step)
        refusal = step.text if isinstance(step, Refusal) else None
        finish = _finish(step)
        completion_tokens = rough_tokens(
            (text or "") + (refusal or "") + "".join(dumps(c) for c in calls)
        )
        usage: JsonObject = {
            "prompt_tokens": request.prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": request.prompt_tokens + completion_tokens,
        }
        if not request.stream:
            message: JsonObject = {
                "role": "assistant",
                "content": None if refusal is not None else text,
                "refusal": refusal,
            }
            if calls:
                message["tool_calls"] = list[JsonValue](calls)
            choice: JsonObject = {
                "index": 0,
                "message": message,
                "logprobs": None,
                "finish_reason": finish,
            }
            return json_response(
                {
                    "id": completion_id,
                    "object": "chat.completion",
                    "created": CREATED,
                    "model": request.model,
                    "choices": [choice],
                    "usage": usage,
                    "system_fingerprint": "fp_acp_lite",
                }
            )
        return EventStream(items=_stream(step, request, completion_id, calls, usage))


def _text(step: ModelStep) -> str | None:
    if isinstance(step, Reply):
        return step.full_text()
    if isinstance(step, ToolCalls | HangReply):
        return step.text or None
    return None


def _finish(step: ModelStep) -> str:
    if isinstance(step, ToolCalls):
        return "tool_calls"
    if isinstance(step, Reply) and step.truncated:
        return "length"
    return "stop"


def _stream(
    step: ModelStep,
    request: ParsedRequest,
    completion_id: str,
    calls: list[JsonObject],
    usage: JsonObject,
) -> list[StreamItem]:
    def chunk(delta: JsonObject, finish: str | None = None) -> SseEvent:
        choice: JsonObject = {
            "index": 0,
            "delta": delta,
            "logprobs": None,
            "finish_reason": finish,
        }
        value: JsonObject = {
            "id": completion_id,
            "object": "chat.completion.chunk",
            "created": CREATED,
            "model": request.model,
            "system_fingerprint": "fp_acp_lite",
            "choices": [choice],
        }
        if request.include_usage:
            value["usage"] = None
        return SseEvent(dumps(value))

    items: list[StreamItem] = [*step_pause(step)]
    items.append(chunk({"role": "assistant", "content": "", "refusal": None}))
    if isinstance(step, ErrorReply):
        # An error after the stream began: a chunk holding only the error object.
        items.append(SseEvent(dumps(error_body(step.status, step.message))))
        return items
    if isinstance(step, Reply):
        pieces = step.pieces()
        for n, piece in enumerate(pieces):
            if n and step.chunk_delay > 0:
                items.append(Pause(step.chunk_delay))
            items.append(chunk({"content": piece}))
    elif isinstance(step, Refusal):
        items.extend(chunk({"refusal": piece}) for piece in chunks_of(step.text))
    elif isinstance(step, ToolCalls | HangReply):
        items.extend(chunk({"content": piece}) for piece in chunks_of(step.text))
    if isinstance(step, HangReply):
        items.append(Hang())
        return items
    for index, call in enumerate(calls):
        function = call["function"]
        assert isinstance(function, dict)
        first: JsonObject = {
            "index": index,
            "id": call["id"],
            "type": "function",
            "function": {"name": function["name"], "arguments": ""},
        }
        items.append(chunk({"tool_calls": [first]}))
        for piece in split_json(str(function["arguments"])):
            items.append(
                chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
            )
    items.append(chunk({}, _finish(step)))
    if request.include_usage:
        items.append(
            SseEvent(
                dumps(
                    {
                        "id": completion_id,
                        "object": "chat.completion.chunk",
                        "created": CREATED,
                        "model": request.model,
                        "system_fingerprint": "fp_acp_lite",
                        "choices": [],
                        "usage": usage,
                    }
                )
            )
        )
    items.append(SseEvent("[DONE]"))
    return items
