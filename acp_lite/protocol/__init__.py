"""ACP v2 wire layer (sans-IO): typed messages and the JSON-RPC envelope codec.

* ``converter`` structures JSON values into the generated attrs classes and back
  (``structure_update`` / ``unstructure`` are typed shortcuts).
* ``SessionUpdate`` is the union of every ``session/update`` payload, with
  ``UnrecognizedSessionUpdate`` for unknown (or malformed known) variants.
* ``UNSET`` marks an omitted field; ``None`` is an explicit ``null``.
* ``decode_line`` / ``encode_message``: one JSON-RPC line <-> message objects.

See docs/architecture.md ("Wire layer").
"""

from acp_lite.protocol._converter import converter, structure_update, unstructure
from acp_lite.protocol._errors import WireError
from acp_lite.protocol._generated import *  # noqa: F403
from acp_lite.protocol._generated import __all__ as _generated_all
from acp_lite.protocol._unset import UNSET, Unset
from acp_lite.protocol.jsonrpc import (
    JSON_BACKEND,
    METHODS,
    ErrorCode,
    ErrorObject,
    ErrorResponse,
    InvalidMessage,
    Message,
    MethodSpec,
    Notification,
    Request,
    Response,
    decode_line,
    decode_value,
    encode_message,
    to_wire,
)

__all__ = [
    "JSON_BACKEND",
    "METHODS",
    "UNSET",
    "ErrorCode",
    "ErrorObject",
    "ErrorResponse",
    "InvalidMessage",
    "Message",
    "MethodSpec",
    "Notification",
    "Request",
    "Response",
    "Unset",
    "WireError",
    "converter",
    "decode_line",
    "decode_value",
    "encode_message",
    "structure_update",
    "to_wire",
    "unstructure",
    *_generated_all,
]
