"""OpenAI Responses (``POST /v1/responses``), streamed and not: what Codex reads.

Streams are named events, each with its ``type`` and a ``sequence_number``:
``response.created``, ``response.in_progress``, per output item
``response.output_item.added`` / ``.done``; a message's
``response.content_part.added`` / ``response.output_text.delta`` (or
``response.refusal.delta``) / ``.done`` / ``response.content_part.done``; a
function call's ``response.function_call_arguments.delta`` pieces and ``.done``;
then ``response.completed`` (``status: incomplete`` for a truncated reply) with
the whole response and its usage. Errors use OpenAI's error object.
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
from acp_lite.models.providers.openai_chat import error_body
from acp_lite.models.script import (
    ErrorReply,
    HangReply,
    ModelStep,
    Refusal,
    Reply,
    ToolCalls,
    chunks_of,
)

__all__ = ["OpenAIResponses"]


class OpenAIResponses:
    """The Responses API."""

    api = "openai_responses"

    def parse(self, request: HttpRequest, body: JsonObject) -> ParsedRequest:
        """Model, stream flag, the last user text, ``function_call_output`` call ids."""
        items = body.get("input")
        last_user: str | None = items if isinstance(items, str) else None
        results: set[str] = set()
        for item in items if isinstance(items, list) else []:
            if not isinstance(item, dict):
                continue
            if item.get("type") == "function_call_output":
                results.add(str(item.get("call_id")))
            elif item.get("role") == "user":
                text = text_of(item.get("content"), ("input_text", "text"))
                if text is not None:
                    last_user = text
        output = body.get("text")
        return ParsedRequest(
            api=self.api,
            path=request.path,
            model=str(body.get("model", "")),
            stream=body.get("stream") is True,
            body=body,
            last_user_text=last_user,
            tool_results=frozenset(results),
            # text.format: {"type": "json_schema", "name", "schema", "strict"}
            schema=json_schema_of(output.get("format")) if isinstance(output, dict) else None,
        )

    def error(self, status: int, message: str) -> HttpResponse:
        """An OpenAI error object."""
        return json_response(error_body(status, message), status)

    def answer(
        self, step: ModelStep, request: ParsedRequest, ids: Ids
    ) -> HttpResponse | EventStream:
        """A ``response``, or its event stream."""
        if isinstance(step, ErrorReply) and not (step.mid_stream and request.stream):
            return self.error(step.status, step.message)
        if isinstance(step, HangReply) and not request.stream:
            return hang_without_stream(step)
        response_id = ids.new("resp_")
        output: list[JsonObject] = []
        text = (
            step.full_text()
            if isinstance(step, Reply)
            else ("" if isinstance(step, ErrorReply) else step.text)
        )
        if text:
            part: JsonObject = (
                {"type": "refusal", "refusal": text}
                if isinstance(step, Refusal)
                else {"type": "output_text", "text": text, "annotations": []}
            )
            output.append(
                {
                    "type": "message",
                    "id": ids.new("msg_"),
                    "status": "completed",
                    "role": "assistant",
                    "content": [part],
                }
            )
        if isinstance(step, ToolCalls):
            for call in step.calls:
                output.append(
                    {
                        "type": "function_call",
                        "id": ids.new("fc_"),
                        "call_id": call.id or ids.new("call_"),
                        "name": call.name,
                        "arguments": call.arguments_json(),
                        "status": "completed",
                    }
                )
        output_tokens = rough_tokens("".join(dumps(o) for o in output))
        truncated = isinstance(step, Reply) and step.truncated
        response: JsonObject = {
            "id": response_id,
            "object": "response",
            "created_at": CREATED,
            "status": "incomplete" if truncated else "completed",
            "error": None,
            "incomplete_details": {"reason": "max_output_tokens"} if truncated else None,
            "instructions": None,
            "model": request.model,
            "output": list[JsonValue](output),
            "parallel_tool_calls": True,
            "tool_choice": "auto",
            "tools": [],
            "usage": {
                "input_tokens": request.prompt_tokens,
                "input_tokens_details": {"cached_tokens": 0},
                "output_tokens": output_tokens,
                "output_tokens_details": {"reasoning_tokens": 0},
                "total_tokens": request.prompt_tokens + output_tokens,
            },
        }
        if not request.stream:
            return json_response(response)
        return EventStream(items=_Stream(step).events(response, output))


class _Stream:
    """Builds one response's events (numbering them)."""

    def __init__(self, step: ModelStep) -> None:
        self.step = step
        self.items: list[StreamItem] = [*step_pause(step)]
        self.sequence = 0

    def emit(self, name: str, value: JsonObject) -> None:
        self.items.append(
            SseEvent(dumps({"type": name, "sequence_number": self.sequence, **value}), event=name)
        )
        self.sequence += 1

    def events(self, response: JsonObject, output: list[JsonObject]) -> list[StreamItem]:
        step = self.step
        pending: JsonObject = {
            **response,
            "status": "in_progress",
            "output": [],
            "usage": None,
            "incomplete_details": None,
        }
        self.emit("response.created", {"response": pending})
        self.emit("response.in_progress", {"response": pending})
        if isinstance(step, ErrorReply):
            error = error_body(step.status, step.message)["error"]
            assert isinstance(error, dict)
            failed: JsonObject = {
                **pending,
                "status": "failed",
                "error": {"code": error["code"] or error["type"], "message": step.message},
            }
            self.emit("response.failed", {"response": failed})
            return self.items
        for index, item in enumerate(output):
            if item["type"] == "message":
                if not self._message(index, item):
                    return self.items
            else:
                self._function_call(index, item)
        if isinstance(step, HangReply):
            self.items.append(Hang())
            return self.items
        self.emit("response.completed", {"response": response})
        return self.items

    def _message(self, index: int, item: JsonObject) -> bool:
        """The message item's events; ``False`` if the stream hangs in it."""
        step = self.step
        content = item["content"]
        assert isinstance(content, list) and isinstance(content[0], dict)
        part = content[0]
        refusal = part["type"] == "refusal"
        where: JsonObject = {"item_id": item["id"], "output_index": index, "content_index": 0}
        self.emit(
            "response.output_item.added",
            {
                "output_index": index,
                "item": {**item, "status": "in_progress", "content": []},
            },
        )
        empty: JsonObject = (
            {"type": "refusal", "refusal": ""}
            if refusal
            else {"type": "output_text", "text": "", "annotations": []}
        )
        self.emit("response.content_part.added", {**where, "part": empty})
        text = str(part["refusal"] if refusal else part["text"])
        pieces = step.pieces() if isinstance(step, Reply) else chunks_of(text)
        for n, piece in enumerate(pieces):
            if n and isinstance(step, Reply) and step.chunk_delay > 0:
                self.items.append(Pause(step.chunk_delay))
            if refusal:
                self.emit("response.refusal.delta", {**where, "delta": piece})
            else:
                self.emit("response.output_text.delta", {**where, "delta": piece, "logprobs": []})
        if isinstance(step, HangReply):
            self.items.append(Hang())
            return False
        if refusal:
            self.emit("response.refusal.done", {**where, "refusal": text})
        else:
            self.emit("response.output_text.done", {**where, "text": text, "logprobs": []})
        self.emit("response.content_part.done", {**where, "part": part})
        self.emit("response.output_item.done", {"output_index": index, "item": item})
        return True

    def _function_call(self, index: int, item: JsonObject) -> None:
        arguments = str(item["arguments"])
        self.emit(
            "response.output_item.added",
            {"output_index": index, "item": {**item, "arguments": "", "status": "in_progress"}},
        )
        where: JsonObject = {"item_id": item["id"], "output_index": index}
        for piece in split_json(arguments):
            self.emit("response.function_call_arguments.delta", {**where, "delta": piece})
        self.emit(
            "response.function_call_arguments.done",
            {**where, "name": item["name"], "arguments": arguments},
        )
        self.emit("response.output_item.done", {"output_index": index, "item": item})
