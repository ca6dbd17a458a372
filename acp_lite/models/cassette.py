"""Model cassettes: provider traffic recorded from a real upstream, as data (no IO).

A model cassette is one JSON file (``<test>.model.json`` beside the test's ACP
cassette under pytest)::

    {"acpModelCassette": 1, "acpLite": "0.1.0", "recordedAt": "2026-12-03T14:00:00Z",
     "upstream": "https://api.openai.com",
     "interactions": [
       {"request": {"method": "POST", "path": "/v1/chat/completions", "query": {},
                    "headers": [["authorization", "<redacted>"], ...],
                    "json": {"model": "gpt-4.1", "messages": [...]}},
        "response": {"status": 200, "headers": [["content-type", "text/event-stream"]],
                     "events": [{"data": "{...}"}, {"data": "[DONE]"}]}}]}

A body is ``"json"`` (a JSON value) when it parses as JSON, else ``"text"`` (UTF-8)
or ``"base64"``; no key: empty. A streamed (``text/event-stream``) response keeps its
``events`` in order (``event`` name and ``data``; comments, ``id:`` and ``retry:``
are not kept) and ``"truncated": true`` when the stream did not end (the client
left, or the upstream broke off).

:class:`Redaction` keeps secrets out before anything is stored: see its docstring.
:class:`SseParser` cuts an upstream's byte stream into :class:`SseEvent` values.
:mod:`acp_lite.models.replay` answers from a cassette; :mod:`acp_lite.models.upstream`
(trio, h11) records one.
"""

from __future__ import annotations

import base64
import binascii
import fnmatch
import json
import re
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

import attrs

from acp_lite.cassettes import looks_like_credential, secrets_of
from acp_lite.errors import CassetteError
from acp_lite.jsontypes import JsonObject, JsonValue
from acp_lite.models.http import EventStream, HttpRequest, HttpResponse, SseEvent
from acp_lite.models.scripted import SECRET_HEADERS

__all__ = [
    "MODEL_CASSETTE_VERSION",
    "REDACTED",
    "Body",
    "CassetteRequest",
    "CassetteResponse",
    "Interaction",
    "ModelCassette",
    "Redaction",
    "SseParser",
]

MODEL_CASSETTE_VERSION = 1
"""The ``acpModelCassette`` value this version writes (and the only one it reads)."""

REDACTED = "<redacted>"

#: Headers about one hop, not the message: never stored, never forwarded.
HOP_BY_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-connection",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
    }
)
#: Response headers not stored: the framing (the server makes its own), and what
#: only says which machine answered when (they change on every recording).
_DROPPED_RESPONSE_HEADERS = HOP_BY_HOP | {
    "content-length",
    "date",
    "server",
    "via",
    "alt-svc",
    "cf-ray",
    "cf-cache-status",
    "nel",
    "report-to",
    "server-timing",
    "strict-transport-security",
    "x-envoy-upstream-service-time",
    "set-cookie",  # a cookie of the upstream is the recorder's, not the test's
}
#: Request headers not stored: the framing, and the host the agent was pointed at.
_DROPPED_REQUEST_HEADERS = HOP_BY_HOP | {"content-length", "host"}
#: Organisation and project ids (``openai-organization``, ``openai-project``,
#: ``anthropic-organization-id``, ``x-goog-user-project``): who pays, not secrets as
#: such, but nobody's business in a cassette.
ORG_ID_PATTERNS = ("*organization*", "*-project", "*-project-id")
#: Request ids: redacted unless ``Redaction(request_ids=False)`` keeps them.
REQUEST_ID_HEADERS = frozenset({"request-id", "x-request-id", "openai-request-id", "cf-ray"})
#: Query parameters that carry a key (Gemini's ``key``); credential-like names too.
SECRET_QUERY = frozenset({"key", "api_key", "apikey", "access_token", "token"})


#: A list of two strings (a header) as ``json.dumps(indent=1)`` spreads it over four
#: lines: put back on one, so a cassette reads one header a line.
_PAIR = re.compile(r'\[\n\s+("(?:[^"\\]|\\.)*"),\n\s+("(?:[^"\\]|\\.)*")\n\s+\]')


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _pairs(value: JsonValue, what: str) -> tuple[tuple[str, str], ...]:
    if not isinstance(value, list):
        raise CassetteError(f"{what} must be a list of [name, value] pairs")
    out: list[tuple[str, str]] = []
    for pair in value:
        if (
            not isinstance(pair, list)
            or len(pair) != 2
            or not all(isinstance(p, str) for p in pair)
        ):
            raise CassetteError(f"{what}: {pair!r} is not a [name, value] pair of strings")
        out.append((str(pair[0]), str(pair[1])))
    return tuple(out)


@attrs.frozen
class Body:
    """A message body as stored: ``json`` (the parsed value), ``text``, ``base64``
    or ``none`` (empty)."""

    kind: Literal["json", "text", "base64", "none"]
    value: JsonValue = None

    @classmethod
    def of(cls, data: bytes) -> Body:
        """The stored form of ``data``: JSON when it parses, else text, else base64."""
        if not data:
            return cls("none")
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            return cls("base64", base64.b64encode(data).decode("ascii"))
        try:
            return cls("json", json.loads(text))
        except ValueError:
            return cls("text", text)

    def data(self) -> bytes:
        """The bytes to send (JSON re-encoded compactly: clients parse, not compare)."""
        if self.kind == "none":
            return b""
        if self.kind == "json":
            return json.dumps(self.value, ensure_ascii=False).encode("utf-8")
        assert isinstance(self.value, str)
        if self.kind == "base64":
            return base64.b64decode(self.value)
        return self.value.encode("utf-8")

    def to_json(self) -> JsonObject:
        """The body's keys in an interaction (none for an empty body)."""
        return {} if self.kind == "none" else {self.kind: self.value}

    @classmethod
    def from_json(cls, value: JsonObject, what: str) -> Body:
        found = [k for k in ("json", "text", "base64") if k in value]
        if len(found) > 1:
            raise CassetteError(f"{what} has more than one body ({', '.join(found)})")
        if not found:
            return cls("none")
        kind = found[0]
        body = value[kind]
        if kind != "json" and not isinstance(body, str):
            raise CassetteError(f"{what}: {kind} must be a string")
        if kind == "base64":
            try:
                base64.b64decode(str(body), validate=True)
            except (binascii.Error, ValueError):
                raise CassetteError(f"{what}: base64 body is not base64") from None
        return cls(kind, body)


def _object(value: JsonValue, what: str) -> JsonObject:
    if not isinstance(value, dict):
        raise CassetteError(f"{what} must be a JSON object")
    return value


@attrs.frozen(kw_only=True)
class CassetteRequest:
    """A recorded request (already redacted): the path without query string."""

    method: str
    path: str
    query: Mapping[str, str] = attrs.field(factory=dict)
    headers: tuple[tuple[str, str], ...] = ()
    body: Body = Body("none")

    @property
    def route(self) -> tuple[str, str, tuple[tuple[str, str], ...]]:
        """What replay matches on first: method, path, and the query (sorted)."""
        return self.method, self.path, tuple(sorted(self.query.items()))

    def shown(self) -> str:
        """``METHOD /path?query`` as messages name it."""
        query = "&".join(f"{k}={v}" for k, v in self.query.items())
        return f"{self.method} {self.path}?{query}" if query else f"{self.method} {self.path}"

    def to_json(self) -> JsonObject:
        return {
            "method": self.method,
            "path": self.path,
            "query": dict(self.query),
            "headers": [[k, v] for k, v in self.headers],
            **self.body.to_json(),
        }

    @classmethod
    def from_json(cls, value: JsonObject, what: str) -> CassetteRequest:
        method, path, query = value.get("method"), value.get("path"), value.get("query", {})
        if not isinstance(method, str) or not isinstance(path, str):
            raise CassetteError(f"{what} needs a method and a path (strings)")
        if not isinstance(query, dict) or not all(isinstance(v, str) for v in query.values()):
            raise CassetteError(f"{what}: query must be an object of strings")
        return cls(
            method=method,
            path=path,
            query={k: str(v) for k, v in query.items()},
            headers=_pairs(value.get("headers", []), f"{what} headers"),
            body=Body.from_json(value, what),
        )


@attrs.frozen(kw_only=True)
class CassetteResponse:
    """A recorded response: a whole ``body``, or the ``events`` of a stream (in order;
    ``truncated``: the stream did not end)."""

    status: int
    headers: tuple[tuple[str, str], ...] = ()
    body: Body = Body("none")
    events: tuple[SseEvent, ...] | None = None
    truncated: bool = False

    def answer(self) -> HttpResponse | EventStream:
        """The response to replay: the stream's events, or the whole body."""
        if self.events is not None:
            return EventStream(self.events, status=self.status, headers=self.headers)
        return HttpResponse(self.status, self.body.data(), self.headers)

    def to_json(self) -> JsonObject:
        out: JsonObject = {"status": self.status, "headers": [[k, v] for k, v in self.headers]}
        if self.events is not None:
            out["events"] = [
                {"data": e.data} if e.event is None else {"event": e.event, "data": e.data}
                for e in self.events
            ]
            if self.truncated:
                out["truncated"] = True
        else:
            out.update(self.body.to_json())
        return out

    @classmethod
    def from_json(cls, value: JsonObject, what: str) -> CassetteResponse:
        status = value.get("status")
        if isinstance(status, bool) or not isinstance(status, int) or not 100 <= status < 600:
            raise CassetteError(f"{what} needs a status (an HTTP status code)")
        headers = _pairs(value.get("headers", []), f"{what} headers")
        raw = value.get("events")
        if raw is None:
            return cls(status=status, headers=headers, body=Body.from_json(value, what))
        if not isinstance(raw, list):
            raise CassetteError(f"{what}: events must be a list")
        events: list[SseEvent] = []
        for n, event in enumerate(raw):
            event = _object(event, f"{what} event {n}")
            data, name = event.get("data"), event.get("event")
            if not isinstance(data, str) or not isinstance(name, str | None):
                raise CassetteError(f"{what} event {n}: data (and event) must be strings")
            events.append(SseEvent(data, name))
        truncated = value.get("truncated", False)
        return cls(
            status=status, headers=headers, events=tuple(events), truncated=truncated is True
        )


@attrs.frozen
class Interaction:
    """One request and the response the upstream gave it."""

    request: CassetteRequest
    response: CassetteResponse

    def to_json(self) -> JsonObject:
        return {"request": self.request.to_json(), "response": self.response.to_json()}

    @classmethod
    def from_json(cls, value: JsonValue, what: str = "interaction") -> Interaction:
        """Parse one interaction; ``CassetteError`` saying what is wrong."""
        item = _object(value, what)
        request = CassetteRequest.from_json(
            _object(item.get("request"), f"{what} request"), f"{what} request"
        )
        response = CassetteResponse.from_json(
            _object(item.get("response"), f"{what} response"), f"{what} response"
        )
        return cls(request, response)


@attrs.frozen(kw_only=True)
class ModelCassette:
    """A model cassette: the interactions in the order the requests came."""

    interactions: tuple[Interaction, ...] = ()
    #: The upstream it was recorded from (informational).
    upstream: str | None = None
    recorded_at: str = attrs.field(factory=_now)

    def dumps(self) -> str:
        """The file's text (indented JSON: cassettes are read and diffed in reviews)."""
        from acp_lite._version import __version__

        document: JsonObject = {
            "acpModelCassette": MODEL_CASSETTE_VERSION,
            "acpLite": __version__,
            "recordedAt": self.recorded_at,
            "upstream": self.upstream,
            "interactions": [i.to_json() for i in self.interactions],
        }
        text = json.dumps(document, indent=1, ensure_ascii=False)
        return _PAIR.sub(r"[\1, \2]", text) + "\n"

    def save(self, path: str | Path) -> None:
        """Write the cassette (its directory made as needed)."""
        target = Path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(self.dumps(), encoding="utf-8")

    @classmethod
    def loads(cls, text: str, name: str = "<model cassette>") -> ModelCassette:
        """Parse a cassette; ``CassetteError`` naming ``name`` and what is wrong."""
        try:
            document = json.loads(text)
        except ValueError as exc:
            raise CassetteError(f"{name}: not JSON ({exc})") from None
        try:
            document = _object(document, "a model cassette")
            version = document.get("acpModelCassette")
            if version != MODEL_CASSETTE_VERSION:
                raise CassetteError(
                    f"not a model cassette of version {MODEL_CASSETTE_VERSION} "
                    f"(acpModelCassette is {version!r})"
                )
            raw = document.get("interactions")
            if not isinstance(raw, list):
                raise CassetteError("interactions must be a list")
            interactions = [
                Interaction.from_json(item, f"interaction {n}") for n, item in enumerate(raw)
            ]
        except CassetteError as exc:
            raise CassetteError(f"{name}: {exc}") from None
        upstream, recorded = document.get("upstream"), document.get("recordedAt")
        return cls(
            interactions=tuple(interactions),
            upstream=upstream if isinstance(upstream, str) else None,
            recorded_at=recorded if isinstance(recorded, str) else "",
        )

    @classmethod
    def load(cls, path: str | Path) -> ModelCassette:
        """Read a cassette file (``FileNotFoundError`` when there is none)."""
        return cls.loads(Path(path).read_text(encoding="utf-8"), str(path))


def _matches(name: str, patterns: Iterable[str]) -> bool:
    return any(fnmatch.fnmatchcase(name, p) for p in patterns)


def _replace(value: JsonValue, secrets: Mapping[str, str]) -> JsonValue:
    if isinstance(value, str):
        for secret in sorted(secrets, key=len, reverse=True):  # longest first
            if secret in value:
                value = value.replace(secret, secrets[secret])
        return value
    if isinstance(value, list):
        return [_replace(v, secrets) for v in value]
    if isinstance(value, dict):
        return {k: _replace(v, secrets) for k, v in value.items()}
    return value


@attrs.frozen(kw_only=True)
class Redaction:
    """What is kept out of a cassette (values become ``"<redacted>"``):

    * request headers that carry keys (``authorization``, ``x-api-key``,
      ``x-goog-api-key``, ``api-key``, ``cookie`` ... and any credential-like name,
      ``*-key``, ``*-token``, ``*secret*``) and org / project ids
      (:data:`ORG_ID_PATTERNS`), in responses too (``anthropic-organization-id``);
    * query parameters that carry keys (Gemini's ``key``: :data:`SECRET_QUERY`);
    * request ids (:data:`REQUEST_ID_HEADERS`) unless ``request_ids=False``;
    * anywhere in a body or an event: the values of this process's credential-like
      environment variables (``secrets``: value -> placeholder, as the ACP
      cassettes redact them), and the request's own key (from its headers).

    Response cookies (``set-cookie``) and headers that change with every answer
    (``date``, ``server``, ``cf-ray`` ...) are not stored at all. ``headers`` and
    ``query`` add names (lower case) to redact.
    """

    secrets: Mapping[str, str] = attrs.field(factory=secrets_of)
    request_ids: bool = True
    headers: frozenset[str] = frozenset()
    query: frozenset[str] = frozenset()

    def secret_header(self, name: str) -> bool:
        """Whether header ``name``'s value is redacted."""
        name = name.lower()
        return (
            name in SECRET_HEADERS
            or name in self.headers
            or looks_like_credential(name)
            or _matches(name, ORG_ID_PATTERNS)
            or (self.request_ids and name in REQUEST_ID_HEADERS)
        )

    def secret_query(self, name: str) -> bool:
        """Whether query parameter ``name``'s value is redacted."""
        name = name.lower()
        return name in SECRET_QUERY or name in self.query or looks_like_credential(name)

    def table_for(self, request: HttpRequest) -> dict[str, str]:
        """The secrets to replace in this interaction's bodies: the environment's and
        the keys the request itself carries."""
        table = dict(self.secrets)
        values = [v for k, v in request.headers if k.lower() in SECRET_HEADERS]
        values += [v for k, v in request.query.items() if self.secret_query(k)]
        for value in values:
            for prefix in ("Bearer ", "bearer ", "Basic ", "basic "):
                value = value.removeprefix(prefix)
            if len(value) >= 8:  # a key, not a short word that would wreck the text
                table.setdefault(value, REDACTED)
        return table

    def request(self, request: HttpRequest) -> CassetteRequest:
        """``request`` as stored."""
        table = self.table_for(request)
        headers = tuple(
            (k, REDACTED if self.secret_header(k) else v)
            for k, v in request.headers
            if k.lower() not in _DROPPED_REQUEST_HEADERS
        )
        query = {k: REDACTED if self.secret_query(k) else v for k, v in request.query.items()}
        return CassetteRequest(
            method=request.method,
            path=request.path,
            query=query,
            headers=headers,
            body=self.body(Body.of(request.body), table),
        )

    def response_headers(self, headers: Iterable[tuple[str, str]]) -> tuple[tuple[str, str], ...]:
        """The response headers as stored (and replayed)."""
        return tuple(
            (k.lower(), REDACTED if self.secret_header(k) else v)
            for k, v in headers
            if k.lower() not in _DROPPED_RESPONSE_HEADERS
        )

    def body(self, body: Body, table: Mapping[str, str]) -> Body:
        """``body`` with the secrets of ``table`` replaced."""
        if body.kind in ("json", "text"):
            return Body(body.kind, _replace(body.value, table))
        return body

    def event(self, event: SseEvent, table: Mapping[str, str]) -> SseEvent:
        """``event`` with the secrets of ``table`` replaced."""
        data = _replace(event.data, table)
        assert isinstance(data, str)
        return SseEvent(data, event.event)


class SseParser:
    """Server-sent events from a byte stream, as it arrives (the WHATWG rules:
    ``\\n``, ``\\r\\n`` or ``\\r`` line ends, ``data:`` lines joined with ``\\n``, one
    leading space dropped; ``event:`` names; comments, ``id:`` and ``retry:``
    ignored; an event without data lines is not dispatched)."""

    def __init__(self) -> None:
        self._buffer = b""
        self._data: list[str] = []
        self._event: str | None = None

    def feed(self, data: bytes) -> list[SseEvent]:
        """The events ``data`` completes."""
        self._buffer += data
        out: list[SseEvent] = []
        while True:
            cut = _line_end(self._buffer)
            if cut is None:
                return out
            end, after = cut
            line = self._buffer[:end].decode("utf-8", "replace")
            self._buffer = self._buffer[after:]
            event = self._line(line)
            if event is not None:
                out.append(event)

    def close(self) -> list[SseEvent]:
        """The last event, when the stream ended without its blank line."""
        out = self.feed(b"\n") if self._buffer else []
        event = self._line("")
        return [*out, event] if event is not None else out

    def _line(self, line: str) -> SseEvent | None:
        if not line:
            if not self._data:
                self._event = None
                return None
            event = SseEvent("\n".join(self._data), self._event)
            self._data, self._event = [], None
            return event
        if line.startswith(":"):
            return None
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._event = value
        return None


def _line_end(buffer: bytes) -> tuple[int, int] | None:
    """Where the first line of ``buffer`` ends, and where the next begins (a ``\\r``
    at the very end waits: a ``\\n`` may follow in the next chunk)."""
    ends = [n for n in (buffer.find(b"\n"), buffer.find(b"\r")) if n >= 0]
    if not ends:
        return None
    n = min(ends)
    if buffer[n] == 0x0A:
        return n, n + 1
    if n + 1 == len(buffer):
        return None
    return n, n + 2 if buffer[n + 1] == 0x0A else n + 1
