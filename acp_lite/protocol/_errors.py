"""The one exception the wire layer raises."""

from __future__ import annotations

from acp_lite.errors import ProtocolError


class WireError(ProtocolError, ValueError):
    """A JSON value does not match the ACP schema type it was structured as.

    Raised by ``converter.structure`` (and the generated structure functions) only;
    :func:`acp_lite.protocol.decode_line` never raises it but returns an
    ``InvalidMessage`` (-32602), and ``SessionUpdate`` structuring turns a malformed
    known update into ``UnrecognizedSessionUpdate`` with ``.error`` set.
    """


__all__ = ["WireError"]
