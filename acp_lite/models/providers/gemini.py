"""Gemini (``POST /v1beta/models/{model}:generateContent``,
``:streamGenerateContent?alt=sse`` and ``:countTokens``).

A stream is ``data:`` events, each a whole ``GenerateContentResponse`` with the
next text piece; function calls come whole in one event (Gemini does not split
them); the last event has ``finishReason`` (``STOP``, ``MAX_TOKENS``, ``SAFETY``
for a refusal) and ``usageMetadata``. Without ``alt=sse`` the same responses
come as one JSON array. A request with a response schema
(``generationConfig.responseSchema`` / ``responseJsonSchema``, as Gemini CLI's
model router sends) is answered with a JSON object built from the schema
(:func:`~acp_lite.models.providers.base.object_for_schema`), without using up
a script step (see ``ScriptedModel``). Errors are ``{"error": {"code", "message", "status"}}``.
"""

from __future__ import annotations

import json
import re

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
    rough_tokens,
    step_pause,
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

__all__ = ["PATH", "Gemini", "count_tokens"]

#: ``.../models/{model}:{method}``: the Gemini paths (any version prefix).
PATH = re.compile(
    r"/models/(?P<model>[^/:]+):(?P<method>generateContent|streamGenerateContent|countTokens)$"
)

_STATUS = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}


def count_tokens(body: JsonObject) -> HttpResponse:
    """The ``countTokens`` answer: a rough count (see ``base.rough_tokens``)."""
    return json_response({"totalTokens": rough_tokens(dumps(body))})


class Gemini:
    """The Gemini generateContent API."""

    api = "gemini"

    def parse(self, request: HttpRequest, body: JsonObject) -> ParsedRequest:
        """Model (from the path), stream (the method), last user text,
        ``functionResponse`` ids and names, and a response schema."""
        match = PATH.search(request.path)
        model = match["model"] if match else ""
        last_user: str | None = None
        results: set[str] = set()
        contents = body.get("contents")
        for content in contents if isinstance(contents, list) else []:
            if not isinstance(content, dict) or content.get("role", "user") != "user":
                continue
            parts = content.get("parts")
            texts: list[str] = []
            for part in parts if isinstance(parts, list) else []:
                if not isinstance(part, dict):
                    continue
                if isinstance(part.get("text"), str):
                    texts.append(str(part["text"]))
                response = part.get("functionResponse")
                if isinstance(response, dict):
                    results.update(
                        str(response[k]) for k in ("id", "name") if response.get(k) is not None
                    )
            if texts:
                last_user = "\n".join(texts)
        config = body.get("generationConfig")
        schema: JsonObject | None = None
        if isinstance(config, dict):
            for key in ("responseJsonSchema", "responseSchema", "response_json_schema"):
                if isinstance(config.get(key), dict):
                    found = config[key]
                    assert isinstance(found, dict)
                    schema = found
                    break
        return ParsedRequest(
            api=self.api,
            path=request.path,
            model=model,
            stream=bool(match and match["method"] == "streamGenerateContent"),
            body=body,
            last_user_text=last_user,
            tool_results=frozenset(results),
            schema=schema,
            stream_as_array=request.query.get("alt") != "sse",
        )

    def error(self, status: int, message: str) -> HttpResponse:
        """A Google API error object."""
        code = _STATUS.get(status, "UNAVAILABLE" if status >= 500 else "FAILED_PRECONDITION")
        return json_response(
            {"error": {"code": status, "message": message, "status": code}}, status
        )

    def answer(
        self, step: ModelStep, request: ParsedRequest, ids: Ids
    ) -> HttpResponse | EventStream:
        """A ``GenerateContentResponse``, or their stream."""
        if isinstance(step, ErrorReply):
            if step.mid_stream and request.stream and not request.stream_as_array:
                # The stream began (200), then an event holding only the error.
                items: list[StreamItem] = [*step_pause(step)]
                items.append(SseEvent(self.error(step.status, step.message).body.decode()))
                return EventStream(items=items)
            return self.error(step.status, step.message)
        if isinstance(step, HangReply) and not request.stream:
            return hang_without_stream(step)
        response_id = ids.new("gen-")
        text = step.full_text() if isinstance(step, Reply) else step.text
        calls: list[JsonObject] = []
        if isinstance(step, ToolCalls):
            for call in step.calls:
                function: JsonObject = {
                    "id": call.id or ids.new("call_"),
                    "name": call.name,
                    "args": call.arguments,
                }
                calls.append({"functionCall": function})
        finish = _finish(step)
        output_tokens = rough_tokens(text + "".join(dumps(c) for c in calls))
        usage: JsonObject = {
            "promptTokenCount": request.prompt_tokens,
            "candidatesTokenCount": output_tokens,
            "totalTokenCount": request.prompt_tokens + output_tokens,
        }

        def response(parts: list[JsonObject], last: bool) -> JsonObject:
            candidate: JsonObject = {
                "content": {"role": "model", "parts": list[JsonValue](parts)},
                "index": 0,
            }
            value: JsonObject = {"candidates": [candidate]}
            if last:
                candidate["finishReason"] = finish
                value["usageMetadata"] = usage
            value["modelVersion"] = request.model
            value["responseId"] = response_id
            return value

        text_parts: list[JsonObject] = [{"text": text}] if text else []
        if not request.stream:
            return json_response(response([*text_parts, *calls], last=True))
        items = [*step_pause(step)]
        pieces = step.pieces() if isinstance(step, Reply) else chunks_of(text)
        for n, piece in enumerate(pieces):
            if n and isinstance(step, Reply) and step.chunk_delay > 0:
                items.append(Pause(step.chunk_delay))
            last = n == len(pieces) - 1 and not calls and not isinstance(step, HangReply)
            items.append(SseEvent(dumps(response([{"text": piece}], last))))
        if isinstance(step, HangReply):
            items.append(Hang())
        elif calls or not pieces:
            items.append(SseEvent(dumps(response(calls, last=True))))
        if request.stream_as_array and not isinstance(step, HangReply):
            # Without alt=sse the REST API answers the same responses as one JSON array.
            array = [json.loads(i.data) for i in items if isinstance(i, SseEvent)]
            return json_response(array)
        return EventStream(items=items)


def _finish(step: ModelStep) -> str:
    if isinstance(step, Refusal):
        return "SAFETY"
    if isinstance(step, Reply) and step.truncated:
        return "MAX_TOKENS"
    return "STOP"
