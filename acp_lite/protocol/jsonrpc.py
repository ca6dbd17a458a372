"""JSON-RPC 2.0 envelopes for ACP: one line in, messages out, and back (sans-IO).

ACP's stdio transport is JSON-RPC 2.0, UTF-8, one message per line; messages "MUST NOT
contain embedded newlines" (docs-v2-draft ``transports.mdx``, "stdio"). Batches (JSON
arrays) are legal. :func:`decode_line` never raises: input that
is not a valid message becomes an :class:`InvalidMessage` value carrying the JSON-RPC
error to answer with (-32700 bad JSON, -32600 bad envelope, -32602 params that do not
match the method's schema). :func:`encode_message` produces exactly one line.

``params`` of known methods (both directions, see :data:`METHODS`) are typed wire
objects; params of unknown methods (``_``-prefixed extensions...) stay raw. ``result``
is left raw: only the sender of the request knows its method, so the caller structures
it with ``METHODS[method].result``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from typing import Any, Final, Literal, TypeAlias

import attrs

from acp_lite import _lazy_attrs as lazy_attrs
from acp_lite.protocol import _generated as g
from acp_lite.protocol._converter import converter
from acp_lite.protocol._errors import WireError
from acp_lite.protocol._unset import UNSET

__all__ = [
    "JSON_BACKEND",
    "METHODS",
    "ErrorCode",
    "ErrorObject",
    "ErrorResponse",
    "InvalidMessage",
    "Message",
    "MethodSpec",
    "Notification",
    "Request",
    "Response",
    "decode_line",
    "decode_value",
    "encode_message",
    "text_chunk_update",
    "to_wire",
]


class ErrorCode:
    """JSON-RPC / ACP error codes (schema ``ErrorCode``)."""

    PARSE_ERROR: Final = -32700
    INVALID_REQUEST: Final = -32600
    METHOD_NOT_FOUND: Final = -32601
    INVALID_PARAMS: Final = -32602
    INTERNAL_ERROR: Final = -32603
    REQUEST_CANCELLED: Final = -32800
    AUTH_REQUIRED: Final = -32000
    RESOURCE_NOT_FOUND: Final = -32002
    UNSUPPORTED_PROTOCOL_VERSION: Final = -32022


Direction: TypeAlias = Literal["to_agent", "to_client", "both", "proxy"]
_DIRECTIONS: Final[dict[str, Direction]] = {
    "agent": "to_agent",  # x-side "agent": the agent handles it
    "client": "to_client",
    "protocol": "both",
    "proxy": "proxy",
}


@lazy_attrs.frozen
class MethodSpec:
    """What the schema says about one method."""

    method: str
    params: object
    """Wire class (or union) of ``params``; ``None`` when untyped."""
    result: object
    """Wire class of the success ``result``; ``None`` for notifications / untyped."""
    direction: Direction
    """Who receives it: ``to_agent`` (client -> agent), ``to_client``, ``both``, ``proxy``."""
    notification: bool


METHODS: Final[dict[str, MethodSpec]] = {
    m: MethodSpec(
        method=m,
        params=e["params"],
        result=e["result"],
        direction=_DIRECTIONS[e["side"]],
        notification=e["kind"] == "notification",
    )
    for m, e in g.METHOD_TYPES.items()
}
"""Every ACP method of the schema (including drafts) -> :class:`MethodSpec`."""


_new: Any = object.__new__  # Notification.fast's: the slots filled, no __init__


@lazy_attrs.define
class ErrorObject:
    """The ``error`` member of an error response."""

    code: int
    message: str
    data: Any = UNSET
    """``UNSET`` when the error had no ``data`` member."""


@lazy_attrs.define
class Request:
    """A request: expects a response with the same ``id``."""

    id: int | str
    method: str
    params: Any = UNSET
    """Typed wire object for known methods, else the raw JSON value; ``UNSET`` = omitted."""
    raw_params: Any = attrs.field(default=UNSET, eq=False, repr=False)
    """The params as decoded from the wire (``UNSET`` for locally built messages)."""


@lazy_attrs.define
class Notification:
    """A notification: no response."""

    method: str
    params: Any = UNSET
    """Typed wire object for known methods, else the raw JSON value; ``UNSET`` = omitted."""
    raw_params: Any = attrs.field(default=UNSET, eq=False, repr=False)
    """The params dict as decoded (session/update keeps raw payloads without re-encoding)."""

    @staticmethod
    def fast(method: str, params: object, raw_params: object) -> Notification:
        """Made as decoding makes it: no ``__init__``, no checks (the hot path, every
        ``session/update``)."""
        msg: Notification = _new(Notification)
        msg.method, msg.params, msg.raw_params = method, params, raw_params
        return msg


@lazy_attrs.define
class Response:
    """A success response. ``result`` is raw JSON (see ``METHODS[method].result``)."""

    id: int | str
    result: Any


@lazy_attrs.define
class ErrorResponse:
    """An error response; ``id`` is ``None`` when the request id was unknown."""

    id: int | str | None
    error: ErrorObject


@lazy_attrs.define
class InvalidMessage:
    """A line or batch element that is not a valid message. A value, never raised.

    ``error`` is what to answer with; ``id`` is the request id when one could be read
    (reply with ``ErrorResponse(id, error)`` if it was a request); ``method`` is set for
    -32602; ``raw`` is the undecodable text or the offending JSON value.
    """

    error: ErrorObject
    id: int | str | None = None
    raw: Any = None
    method: str | None = None


Message: TypeAlias = Request | Notification | Response | ErrorResponse | InvalidMessage


# ------------------------------------------------------------------ JSON backend

_Loads: TypeAlias = Callable[[bytes | str], Any]


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")  # the stdlib would accept NaN / Infinity


_decoder = json.JSONDecoder(parse_constant=_reject_constant)
_decode_text = _decoder.decode
_scan_once: Callable[[str, int], tuple[Any, int]] = _decoder.scan_once  # type: ignore[attr-defined]


def _std_loads(line: bytes | str) -> Any:
    # str(b, "utf-8") takes any bytes-like; ACP lines are UTF-8 (no encoding sniffing).
    text = line if isinstance(line, str) else str(line, "utf-8")
    # Hot path: call the (C) scanner directly, skipping JSONDecoder.decode's two
    # whitespace regex matches per line. Anything but one JSON value filling the
    # whole line (surrounding whitespace, trailing data, errors at the start) goes
    # through decode(), which accepts or rejects it with the stdlib's messages.
    try:
        obj, end = _scan_once(text, 0)
    except StopIteration:
        return _decode_text(text)
    if end != len(text):
        return _decode_text(text)
    return obj


def _std_dumps(obj: Any) -> bytes:
    try:
        text = json.dumps(obj, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        return text.encode("utf-8") + b"\n"
    except UnicodeEncodeError:  # lone surrogates: escape them instead
        text = json.dumps(obj, ensure_ascii=True, separators=(",", ":"), allow_nan=False)
        return text.encode("ascii") + b"\n"


def _std_loads_many(lines: list[bytes]) -> list[Any]:
    return [_std_loads(line) for line in lines]


def _std_compact(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()


_compact: Callable[[Any], bytes] = _std_compact
_loads: _Loads = _std_loads
_loads_many: Callable[[list[bytes]], list[Any]] = _std_loads_many
_dumps: Callable[[Any], bytes] = _std_dumps
JSON_BACKEND = "json"
"""``"orjson"`` when the optional ``fast`` extra is installed (and not disabled with
``ACP_LITE_JSON=json``), else ``"json"`` (the standard library)."""

if os.environ.get("ACP_LITE_JSON", "").lower() != "json":  # pragma: no branch
    try:
        import orjson
    except ImportError:  # pragma: no cover - depends on the environment
        pass
    else:
        # orjson silently turns integers beyond 64 bits into floats: lines with a run of
        # 19+ digits go to the stdlib (one C-level translate + search, no Python loop).
        _DIGITS = bytes(48 if 48 <= i <= 57 else 32 for i in range(256))
        _LONG_RUN = b"0" * 19

        def _orjson_loads(line: bytes | str) -> Any:
            if type(line) is not bytes or _LONG_RUN in line.translate(_DIGITS):
                return _std_loads(line)
            try:
                return orjson.loads(line)
            except orjson.JSONDecodeError:
                # orjson also rejects some valid JSON (lone surrogate escapes): let the
                # stdlib decide, with its messages.
                return _std_loads(line)

        def _orjson_loads_many(lines: list[bytes]) -> list[Any]:
            # One search for long digit runs over all the lines, not one per line.
            if _LONG_RUN in b"".join(lines).translate(_DIGITS):
                return [_orjson_loads(line) for line in lines]
            out: list[Any] = []
            for line in lines:
                try:
                    out.append(orjson.loads(line))
                except orjson.JSONDecodeError:
                    out.append(_std_loads(line))
            return out

        def _orjson_dumps(obj: Any) -> bytes:
            try:
                return orjson.dumps(obj, option=orjson.OPT_APPEND_NEWLINE)
            except TypeError:
                return _std_dumps(obj)

        _loads, _dumps, JSON_BACKEND = _orjson_loads, _orjson_dumps, "orjson"
        _loads_many = _orjson_loads_many
        _compact = orjson.dumps


def loads_json(line: bytes | str) -> Any:
    """Parse one JSON text with the active backend (raises ``ValueError`` if invalid)."""
    return _loads(line)


def compact_json(value: Any) -> bytes:
    """``value`` as compact JSON (no spaces, non-ASCII as is), the way a raw UTF-8
    encoder writes it, with the active backend (raises ``ValueError`` / ``TypeError``
    when it cannot be encoded, e.g. a lone surrogate)."""
    return _compact(value)


def loads_json_lines(lines: list[bytes]) -> list[Any]:
    """:func:`loads_json` of each line, in fewer steps per line (raises ``ValueError``
    if one is invalid)."""
    return _loads_many(lines)


# ------------------------------------------------------------------ decoding


def _invalid(
    code: int, message: str, raw: Any, id: Any = None, method: str | None = None
) -> InvalidMessage:
    if type(id) is not int and type(id) is not str:
        id = None
    return InvalidMessage(ErrorObject(code, message), id=id, raw=raw, method=method)


def decode_line(line: bytes | str) -> Message | list[Message]:
    """Decode one wire line (without or with its ``\\n``) into a message or a batch list.

    Never raises: anything malformed comes back as :class:`InvalidMessage`. Stateless
    (every line decoded in full): a connection decodes with the cache of its own
    streamed chunks' lines, :class:`acp_lite.protocol.chunk_lines.ChunkLines`, which
    gives the same messages.
    """
    try:
        obj = _loads(line)
    except (ValueError, TypeError, RecursionError) as exc:
        # JSONDecodeError and UnicodeDecodeError are ValueErrors; TypeError: not bytes-like.
        return _invalid(ErrorCode.PARSE_ERROR, f"Parse error: {exc}", line)
    return _decode_parsed(obj)


def _decode_parsed(obj: Any) -> Message | list[Message]:
    if type(obj) is dict:
        method = obj.get("method")
        if "id" not in obj and type(method) is str and obj.get("jsonrpc") == "2.0":
            # Hot path, inlined: a notification (every session/update). Anything
            # unusual falls through to decode_value, which builds the error.
            raw = obj.get("params", UNSET)
            if method == "session/update":
                fast = _fast_update(raw)
                if fast is not None:
                    return _notification(method, fast, raw)
            structure = _PARAMS.get(method)
            params: Any
            if structure is not None:
                try:
                    params = structure({} if raw is UNSET else raw)
                except WireError:
                    return decode_value(obj)
            elif raw is UNSET or type(raw) is dict or type(raw) is list:
                params = raw
            else:
                return decode_value(obj)
            return _notification(method, params, raw)
        return decode_value(obj)
    if type(obj) is list:
        if not obj:  # JSON-RPC 2.0 section 6: an empty batch is one invalid request
            return _invalid(ErrorCode.INVALID_REQUEST, "Invalid Request: empty batch", obj)
        return [decode_value(item) for item in obj]
    return _invalid(ErrorCode.INVALID_REQUEST, "Invalid Request: not an object or array", obj)


# tag -> class (whose fast constructor sets the tag to its constant: the parsed
# string is not retained).
_CHUNKS: Final[dict[str, type[g.AgentMessageChunk] | type[g.AgentThoughtChunk]]] = {
    "agent_message_chunk": g.AgentMessageChunk,
    "agent_thought_chunk": g.AgentThoughtChunk,
}
_text_block: Final = g.TextContent.fast
_update_params: Final = g.UpdateSessionNotification.fast


def _fast_update(p: Any) -> g.UpdateSessionNotification | None:
    """The typed params of the most frequent ``session/update`` shape, or ``None``."""
    if type(p) is not dict or len(p) != 2:
        return None
    sid = p.get("sessionId")
    if type(sid) is not str:
        return None
    update = text_chunk_update(p.get("update"))
    if update is None:
        return None
    return _update_params(sid, update)


def text_chunk_update(u: Any) -> g.AgentMessageChunk | g.AgentThoughtChunk | None:
    """The typed update of a raw ``session/update`` payload (``params.update``) of the
    most frequent shape, or ``None``.

    Hot path (the notification path is the hot path): a message or thought chunk
    carrying one text block and no other keys is built directly, skipping the generic
    structure functions' per-key checks. The objects equal what those functions
    build; anything else returns ``None`` (``structure_update`` then builds it).
    """
    if type(u) is not dict or len(u) != 3:
        return None
    tag = u.get("sessionUpdate")
    if type(tag) is not str:
        return None
    cls = _CHUNKS.get(tag)
    c = u.get("content")
    mid = u.get("messageId")
    if cls is None or type(c) is not dict or type(mid) is not str or len(c) != 2:
        return None
    text = c.get("text")
    if type(text) is not str or c.get("type") != "text":
        return None
    return cls.fast(mid, _text_block(text))


def decode_value(d: Any) -> Message:
    """Classify one already-parsed JSON value (a batch element or a whole message)."""
    if type(d) is not dict:
        return _invalid(ErrorCode.INVALID_REQUEST, "Invalid Request: not an object", d)
    id = d.get("id", UNSET)
    if d.get("jsonrpc") != "2.0":
        return _invalid(
            ErrorCode.INVALID_REQUEST, 'Invalid Request: "jsonrpc" must be "2.0"', d, id
        )
    method = d.get("method", UNSET)
    if method is not UNSET:
        return _decode_call(d, method, id)
    if "result" in d:
        if "error" in d:
            return _invalid(ErrorCode.INVALID_REQUEST, "Invalid Response: result and error", d, id)
        if type(id) is not int and type(id) is not str:
            return _invalid(ErrorCode.INVALID_REQUEST, "Invalid Response: bad id", d, id)
        return Response(id, d["result"])
    if "error" in d:
        err = d["error"]
        if (
            type(err) is not dict
            or type(err.get("code")) is not int
            or type(err.get("message")) is not str
        ):
            return _invalid(ErrorCode.INVALID_REQUEST, "Invalid Response: bad error object", d, id)
        if id is not None and type(id) is not int and type(id) is not str:
            return _invalid(ErrorCode.INVALID_REQUEST, "Invalid Response: bad id", d)
        return ErrorResponse(id, ErrorObject(err["code"], err["message"], err.get("data", UNSET)))
    return _invalid(ErrorCode.INVALID_REQUEST, "Invalid Request: no method, result or error", d, id)


def _decode_call(d: dict[str, Any], method: Any, id: Any) -> Message:
    if type(method) is not str:
        return _invalid(
            ErrorCode.INVALID_REQUEST, "Invalid Request: method must be a string", d, id
        )
    raw = d.get("params", UNSET)
    structure = _PARAMS.get(method)
    params = raw
    if structure is not None:
        try:
            # Absent params of a known method are validated as {} (every ACP params
            # type is an object); re-encoding then emits "params": {...}.
            params = structure({} if raw is UNSET else raw)
        except WireError as exc:
            return _invalid(
                ErrorCode.INVALID_PARAMS, f"Invalid params for {method}: {exc}", d, id, method
            )
    elif raw is not UNSET and type(raw) is not dict and type(raw) is not list:
        return _invalid(
            ErrorCode.INVALID_REQUEST, "Invalid Request: params must be structured", d, id, method
        )
    if id is UNSET:
        # Hot path (every session/update): skip the keyword __init__.
        return _notification(method, params, raw)
    # ACP: a request id is a string or an integer and MUST NOT be null (schema RequestId).
    if type(id) is not int and type(id) is not str:
        return _invalid(ErrorCode.INVALID_REQUEST, "Invalid Request: bad id", d, None, method)
    return Request(id, method, params, raw)


_notification: Final = Notification.fast
# method -> structure function of its params (one dict lookup on the hot path).
_PARAMS: Final[dict[str, Callable[..., Any]]] = {
    m: g.STRUCTURE[spec.params] for m, spec in METHODS.items() if spec.params is not None
}


# ------------------------------------------------------------------ encoding


def _wire(value: Any) -> Any:
    fn = g.UNSTRUCTURE.get(type(value))
    if fn is not None:
        return fn(value)
    if type(value) in (dict, list, str, int, float, bool) or value is None:
        return value if type(value) is not list else [_wire(v) for v in value]
    return converter.unstructure(value)


def _error_dict(err: ErrorObject) -> dict[str, Any]:
    out: dict[str, Any] = {"code": err.code, "message": err.message}
    if err.data is not UNSET:
        out["data"] = _wire(err.data)
    return out


def to_wire(msg: Message) -> dict[str, Any]:
    """The JSON object of one message (an ``InvalidMessage`` becomes its error response)."""
    if isinstance(msg, Request):
        out: dict[str, Any] = {"jsonrpc": "2.0", "id": msg.id, "method": msg.method}
        if msg.params is not UNSET:
            out["params"] = _wire(msg.params)
        return out
    if isinstance(msg, Notification):
        out = {"jsonrpc": "2.0", "method": msg.method}
        if msg.params is not UNSET:
            out["params"] = _wire(msg.params)
        return out
    if isinstance(msg, Response):
        return {"jsonrpc": "2.0", "id": msg.id, "result": _wire(msg.result)}
    if isinstance(msg, ErrorResponse | InvalidMessage):
        return {"jsonrpc": "2.0", "id": msg.id, "error": _error_dict(msg.error)}
    raise TypeError(f"not a JSON-RPC message: {type(msg).__name__}")


def encode_message(msg: Message | list[Message]) -> bytes:
    """Serialise a message (or a batch list) as one UTF-8 line ending in ``\\n``.

    JSON string escaping guarantees there is no other newline in the line. Values that
    are not JSON (NaN, infinities, other objects) raise ``ValueError`` / ``TypeError``
    with the stdlib backend; orjson writes NaN and infinities as ``null``. A value
    nested too deeply to encode raises ``ValueError``.
    """
    try:
        if isinstance(msg, list):
            return _dumps([to_wire(m) for m in msg])
        return _dumps(to_wire(msg))
    except RecursionError:
        # A value nested deeper than the interpreter's recursion limit (the orjson
        # backend decodes deeper than json encodes): the documented error instead.
        raise ValueError("value too deeply nested to encode") from None
