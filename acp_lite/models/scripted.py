"""``ScriptedModel``: a :data:`~acp_lite.models.http.Handler` that answers the
provider APIs from a :class:`~acp_lite.models.script.ModelScript`.

Routes (matched on the path's end, so any base URL prefix works):

=========================================== ===================================
``POST .../chat/completions``               OpenAI Chat Completions
``POST .../responses``                      OpenAI Responses
``POST .../messages`` (``?beta=true`` too)  Anthropic Messages
``POST .../messages/count_tokens``          Anthropic token count (rough)
``POST .../models/{m}:generateContent``     Gemini; ``:streamGenerateContent``
                                            (``alt=sse``), ``:countTokens``
``GET .../models``                          the script's ``models`` (OpenAI and
                                            Anthropic shape; Gemini's under
                                            ``/v1beta`` or with a Google key)
=========================================== ===================================

Each generate request uses up a step (see :mod:`acp_lite.models.script`); model
lists, token counts and structured-output requests (a JSON Schema for the answer:
Gemini's ``responseSchema``, OpenAI's ``response_format`` / ``text.format``,
Anthropic's ``output_format`` / ``output_config.format``; agents send them for side
tasks, such as Gemini CLI's model router and Codex's auto-review) are answered
without one, with an object built from the schema. A request no step matches gets a
provider-style 400 that names the script and the request, and is remembered in
:attr:`failures`; so is a body that is not a JSON object. An unknown path gets a 404
naming the known ones (recorded, not a failure: agents probe).
:meth:`ScriptedModel.check`, which the pytest fixture calls at teardown, raises with
every failure's request shown.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Awaitable, Mapping
from typing import Protocol

import attrs

from acp_lite.jsontypes import JsonObject, JsonValue
from acp_lite.models.http import Answer, EventStream, HttpRequest, HttpResponse
from acp_lite.models.providers import anthropic, gemini
from acp_lite.models.providers.anthropic import Anthropic
from acp_lite.models.providers.base import (
    CREATED,
    Ids,
    ParsedRequest,
    Provider,
    dumps,
    json_response,
    object_for_schema,
)
from acp_lite.models.providers.gemini import Gemini
from acp_lite.models.providers.openai_chat import OpenAIChat
from acp_lite.models.providers.openai_responses import OpenAIResponses
from acp_lite.models.script import ModelScript, Reply

__all__ = [
    "SECRET_HEADERS",
    "CheckedModel",
    "RecordedRequest",
    "RequestBook",
    "ScriptedModel",
    "provider_error",
    "provider_of",
]

#: Headers whose values are never recorded (replaced by ``"<redacted>"``); the
#: ``key`` query parameter (Gemini's API key) likewise.
SECRET_HEADERS = frozenset(
    {
        "authorization",
        "proxy-authorization",
        "x-api-key",
        "x-goog-api-key",
        "api-key",
        "cookie",
    }
)
_REDACTED = "<redacted>"
_SHOWN_BODY_CHARS = 2000

_CHAT, _RESPONSES, _ANTHROPIC, _GEMINI = OpenAIChat(), OpenAIResponses(), Anthropic(), Gemini()
_KNOWN_PATHS = (
    "POST /v1/chat/completions",
    "POST /v1/responses",
    "POST /v1/messages",
    "POST /v1/messages/count_tokens",
    "POST /v1beta/models/{model}:generateContent",
    "POST /v1beta/models/{model}:streamGenerateContent",
    "POST /v1beta/models/{model}:countTokens",
    "GET /v1/models",
    "GET /v1beta/models",
)


@attrs.frozen(kw_only=True)
class RecordedRequest:
    """One request the scripted model got, secrets removed, and how it answered."""

    #: 0-based position among all requests.
    index: int
    method: str
    path: str
    query: Mapping[str, str]
    headers: tuple[tuple[str, str], ...]
    #: The parsed JSON body (``None`` for an empty one), or the raw text if not JSON.
    body: JsonValue
    #: ``openai_chat``, ``openai_responses``, ``anthropic``, ``gemini`` or ``None``.
    api: str | None
    #: The script step that answered (its index), or ``None``.
    step: int | None
    status: int

    def show(self) -> str:
        """The request as failure messages show it: method, path, body (cut)."""
        query = "&".join(f"{k}={v}" for k, v in self.query.items())
        body = self.body if isinstance(self.body, str) else json.dumps(self.body, indent=1)
        if len(body) > _SHOWN_BODY_CHARS:
            body = body[:_SHOWN_BODY_CHARS] + f"... ({len(body)} characters)"
        target = f"{self.path}?{query}" if query else self.path
        return f"request #{self.index}: {self.method} {target}\n{body}"


class CheckedModel(Protocol):
    """What the ``acp_model`` fixture needs of the model answering a test: a handler
    (sync, or async like the upstream recorder's) that records its requests and
    checks itself at teardown. :class:`ScriptedModel`,
    :class:`~acp_lite.models.ReplayModel` and
    :class:`~acp_lite.models.upstream.RecordingModel` are ones."""

    @property
    def name(self) -> str:
        """What messages call it."""
        ...

    @property
    def requests(self) -> tuple[RecordedRequest, ...]: ...

    @property
    def unmatched(self) -> tuple[RecordedRequest, ...]: ...

    def check(self, *, all_steps_used: bool = False) -> None: ...

    def __call__(self, request: HttpRequest) -> Answer | Awaitable[Answer]: ...


def _route(request: HttpRequest) -> tuple[Provider | None, str]:
    """The provider for a path, and what is asked of it: ``generate``,
    ``count``, ``models``, or ``""`` (unknown path) / ``"method"`` (wrong method)."""
    path = request.path.rstrip("/")
    match = gemini.PATH.search(path)
    routes: list[tuple[bool, Provider, str]] = [
        (path.endswith("/chat/completions"), _CHAT, "generate"),
        (path.endswith("/responses"), _RESPONSES, "generate"),
        (path.endswith("/messages/count_tokens"), _ANTHROPIC, "count"),
        (path.endswith("/messages"), _ANTHROPIC, "generate"),
        (
            bool(match),
            _GEMINI,
            "count" if match and match["method"] == "countTokens" else "generate",
        ),
    ]
    for hit, provider, what in routes:
        if hit:
            return provider, what if request.method == "POST" else "method"
    if path.endswith("/models"):
        gemini_like = (
            "v1beta" in path
            or request.header("x-goog-api-key") is not None
            or "key" in request.query
        )
        provider = _GEMINI if gemini_like else _CHAT
        return provider, "models" if request.method == "GET" else "method"
    return None, ""


def provider_of(request: HttpRequest) -> Provider | None:
    """The provider API ``request``'s path belongs to (``None``: no known path)."""
    return _route(request)[0]


def provider_error(request: HttpRequest, status: int, message: str) -> HttpResponse:
    """A provider-style error response, in the shape of the API of ``request``'s path
    (a shape OpenAI's and Anthropic's clients both read for an unknown path)."""
    provider = provider_of(request)
    if provider is None:
        return _not_found(message, status)
    return provider.error(status, message)


class RequestBook:
    """The requests a model handler was sent, in order, and what went wrong with
    them: what :class:`ScriptedModel`, ``ReplayModel`` and ``RecordingModel`` keep.

    Thread-safe: the server calls the handler from its own thread while a test
    reads :attr:`requests`; the handler records under ``_lock`` (which also covers
    its own state) and the properties return copies taken under it.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._requests: list[RecordedRequest] = []
        self._failures: list[tuple[str, RecordedRequest]] = []

    @property
    def requests(self) -> tuple[RecordedRequest, ...]:
        """Every request so far, in order (``step``: what answered it, if anything)."""
        with self._lock:
            return tuple(self._requests)

    @property
    def failures(self) -> tuple[str, ...]:
        """What went wrong so far, each with its request shown."""
        with self._lock:
            return tuple(f"{why}\n{request.show()}" for why, request in self._failures)


class ScriptedModel(RequestBook):
    """A model that answers from ``script``: call it with an :class:`HttpRequest`.

    Thread-safe: the server calls it from its own thread while a test reads
    :attr:`requests`; one lock covers picking a step and recording, and the
    properties return copies taken under it.
    """

    def __init__(self, script: ModelScript | Mapping[str, object]) -> None:
        super().__init__()
        self.script = script if isinstance(script, ModelScript) else ModelScript.from_dict(script)
        self._used = [False] * len(self.script.steps)
        self._ids = Ids()

    @property
    def name(self) -> str:
        """The script's name."""
        return self.script.name

    @property
    def unmatched(self) -> tuple[RecordedRequest, ...]:
        """The generate requests no step matched."""
        with self._lock:
            return tuple(r for why, r in self._failures if why.startswith("no step"))

    @property
    def unused_steps(self) -> tuple[int, ...]:
        """The indexes of the steps no request used (``repeat`` steps aside)."""
        with self._lock:
            return tuple(
                i
                for i, used in enumerate(self._used)
                if not used and not self.script.steps[i].repeat
            )

    def check(self, *, all_steps_used: bool = False) -> None:
        """Raise ``AssertionError`` listing every failure with its request (and,
        with ``all_steps_used``, the steps no request used)."""
        problems = list(self.failures)
        if all_steps_used:
            problems.extend(f"{self.script.describe(i)} was never used" for i in self.unused_steps)
        if problems:
            head = f"scripted model {self.script.name!r}: {len(problems)} problem(s)"
            raise AssertionError("\n\n".join([head, *problems]))

    def __call__(self, request: HttpRequest) -> HttpResponse | EventStream:
        """Answer one request (the :data:`~acp_lite.models.http.Handler`)."""
        with self._lock:
            return self._answer(request)

    # -- under the lock ------------------------------------------------------------

    def _answer(self, request: HttpRequest) -> HttpResponse | EventStream:
        provider, what = _route(request)
        try:
            body: JsonValue = json.loads(request.body) if request.body.strip() else None
        except ValueError:
            body = request.body.decode("utf-8", "replace")
            if provider is not None and what in ("generate", "count"):
                return self._fail(request, provider, body, "the request body is not JSON")
        if provider is None:
            known = ", ".join(_KNOWN_PATHS)
            message = (
                f"scripted model {self.script.name!r}: no such path {request.path}; known: {known}"
            )
            return self._record(request, None, body, None, _not_found(message, 404))
        if what == "method":
            message = f"scripted model: {request.method} is not allowed on {request.path}"
            return self._record(request, provider.api, body, None, provider.error(405, message))
        if what == "models":
            return self._record(request, provider.api, body, None, self._models(provider))
        if not isinstance(body, dict):
            return self._fail(request, provider, body, "the request body is not a JSON object")
        if what == "count":
            counted = (
                anthropic.count_tokens(body)
                if provider is _ANTHROPIC
                else gemini.count_tokens(body)
            )
            return self._record(request, provider.api, body, None, counted)
        parsed = provider.parse(request, body)
        if parsed.schema is not None:
            # An agent's side request for structured output (Gemini CLI's model
            # router, Codex's auto-review "guardian"): a script step's prose would
            # not parse, so answer an object that fits, using up no step.
            fitting = Reply(text=dumps(object_for_schema(parsed.schema)))
            return self._record(
                request, provider.api, body, None, provider.answer(fitting, parsed, self._ids)
            )
        index = self._pick(parsed)
        if index is None:
            return self._fail(request, provider, body, self._no_step(parsed))
        step = self.script.steps[index]
        answer = provider.answer(step, parsed, self._ids)
        if isinstance(answer, HttpResponse) and step.delay > 0:
            # A stream carries its delay as a Pause; a whole answer waits as a whole.
            answer = attrs.evolve(answer, delay=step.delay)
        return self._record(request, provider.api, body, index, answer)

    def _pick(self, parsed: ParsedRequest) -> int | None:
        for index, step in enumerate(self.script.steps):
            if self._used[index] and not step.repeat:
                continue
            if step.when is None or step.when.matches(
                api=parsed.api,
                path=parsed.path,
                model=parsed.model,
                last_user_text=parsed.last_user_text,
                tool_results=parsed.tool_results,
            ):
                self._used[index] = True
                return index
        return None

    def _no_step(self, parsed: ParsedRequest) -> str:
        left = [
            self.script.describe(i)
            + (f" when {step.when.describe()}" if step.when is not None else "")
            for i, step in enumerate(self.script.steps)
            if step.repeat or not self._used[i]
        ]
        return (
            f"no step of scripted model {self.script.name!r} matches this {parsed.api} request "
            f"(model {parsed.model!r}, last user text {parsed.last_user_text!r}, tool results "
            f"for {sorted(parsed.tool_results)}); steps left: {'; '.join(left) or 'none'}"
        )

    def _fail(
        self, request: HttpRequest, provider: Provider, body: JsonValue, why: str
    ) -> HttpResponse:
        answer = provider.error(
            400, f"acp_lite scripted model: {why} (request #{len(self._requests)})"
        )
        record = self._recorded(request, provider.api, body, None, answer.status)
        self._failures.append((why, record))
        self._requests.append(record)
        return answer

    def _record(
        self,
        request: HttpRequest,
        api: str | None,
        body: JsonValue,
        step: int | None,
        answer: HttpResponse | EventStream,
    ) -> HttpResponse | EventStream:
        self._requests.append(self._recorded(request, api, body, step, answer.status))
        return answer

    def _recorded(
        self, request: HttpRequest, api: str | None, body: JsonValue, step: int | None, status: int
    ) -> RecordedRequest:
        headers = tuple(
            (name, _REDACTED if name.lower() in SECRET_HEADERS else value)
            for name, value in request.headers
        )
        query = {k: (_REDACTED if k == "key" else v) for k, v in request.query.items()}
        return RecordedRequest(
            index=len(self._requests),
            method=request.method,
            path=request.path,
            query=query,
            headers=headers,
            body=body,
            api=api,
            step=step,
            status=status,
        )

    def _models(self, provider: Provider) -> HttpResponse:
        if provider is _GEMINI:
            return json_response(
                {
                    "models": [
                        {
                            "name": f"models/{m}",
                            "displayName": m,
                            "supportedGenerationMethods": ["generateContent", "countTokens"],
                        }
                        for m in self.script.models
                    ]
                }
            )
        # One shape both clients read: OpenAI's (object, created, owned_by) and
        # Anthropic's (type, display_name, created_at, first_id / last_id / has_more).
        data: list[JsonValue] = [
            {
                "id": m,
                "object": "model",
                "created": CREATED,
                "owned_by": "acp-lite",
                "type": "model",
                "display_name": m,
                "created_at": "2023-11-14T22:13:20Z",
            }
            for m in self.script.models
        ]
        listing: JsonObject = {
            "object": "list",
            "data": data,
            "has_more": False,
            "first_id": self.script.models[0] if self.script.models else None,
            "last_id": self.script.models[-1] if self.script.models else None,
        }
        return json_response(listing)


def _not_found(message: str, status: int) -> HttpResponse:
    # No provider to speak for: a shape OpenAI's and Anthropic's clients both read.
    return json_response(
        {"type": "error", "error": {"type": "not_found_error", "message": message, "code": status}},
        status,
    )
