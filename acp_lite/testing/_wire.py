"""Wire helpers of the reference agent: line writer, JSON-RPC shapes, error codes."""

from __future__ import annotations

import json
import os
import sys
import threading
from typing import Any, BinaryIO

# JSON-RPC / ACP error codes (schema ``ErrorCode``).
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
REQUEST_CANCELLED = -32800
AUTH_REQUIRED = -32000
RESOURCE_NOT_FOUND = -32002
UNSUPPORTED_VERSION = -32022


DEFERRED: Any = object()
"""A method handler's result meaning "the response is sent later"."""


class RpcError(Exception):
    """Raised by a handler to answer its request with a JSON-RPC error."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data

    def to_error(self) -> dict[str, Any]:
        """The JSON-RPC error object."""
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error


class Wire:
    """Writes whole lines to stdout; one lock so lines never interleave."""

    def __init__(self, out: BinaryIO) -> None:
        self._out = out
        self._lock = threading.Lock()

    def send(self, message: Any) -> None:
        """Write one JSON-RPC message (or a batch list) as one line."""
        self.write(encode(message))

    def write(self, data: bytes) -> None:
        """Write raw bytes (pre-encoded lines, or deliberate garbage)."""
        with self._lock:
            try:
                self._out.write(data)
                self._out.flush()
            except (BrokenPipeError, ValueError):
                # The client closed our stdout: nobody is listening any more.
                os._exit(0)

    def exit(self, code: int) -> None:
        """Exit the process at once, after the lines already written."""
        with self._lock:
            sys.stderr.flush()
            os._exit(code)


def encode(message: Any) -> bytes:
    """One compact JSON line (lone surrogates, valid in JSON strings but not in
    UTF-8, are written as ``\\u`` escapes)."""
    text = json.dumps(message, separators=(",", ":"), ensure_ascii=False)
    try:
        return text.encode() + b"\n"
    except UnicodeEncodeError:
        return json.dumps(message, separators=(",", ":")).encode() + b"\n"


def notification(method: str, params: dict[str, Any]) -> dict[str, Any]:
    """A JSON-RPC notification."""
    return {"jsonrpc": "2.0", "method": method, "params": params}


def cancelled_error() -> dict[str, Any]:
    """The -32800 error for a request cancelled before it completed."""
    return {"code": REQUEST_CANCELLED, "message": "Request cancelled"}


def absolute_path(value: Any, name: str) -> str:
    """``value`` if it is an absolute path, else a -32602 error naming ``name``."""
    if not isinstance(value, str) or not value.startswith("/"):
        raise RpcError(INVALID_PARAMS, f"{name} must be an absolute path, got {value!r}")
    return value


def list_param(params: dict[str, Any], key: str) -> list[Any]:
    """The list ``params[key]`` (``[]`` when absent), else a -32602 error."""
    value = params.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise RpcError(INVALID_PARAMS, f"{key} must be an array")
    return value
