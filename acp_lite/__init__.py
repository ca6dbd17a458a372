"""acp_lite: a sync-first Agent Client Protocol (ACP) v2 client.

::

    import acp_lite

    with acp_lite.connect(["my-agent"], timeout=30) as client:
        session = client.new_session(cwd="/abs/dir")
        turn = session.run("hello")
        print(turn.stop_reason, turn.text)

The async (trio) twin lives in :mod:`acp_lite.aio`; the wire types in
:mod:`acp_lite.protocol`; the sans-IO session model in :mod:`acp_lite.model`.

Names are imported lazily (PEP 562): ``import acp_lite`` is cheap, which matters
for the reference agent (:mod:`acp_lite.testing`), started once per test.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from acp_lite import errors
from acp_lite._lazy_names import lazy_names

# Every exception of the library, from its one home (layer 0, so eager is allowed).
from acp_lite.errors import (
    AcpError,
    AgentExited,
    AgentStartFailed,
    AuthRequired,
    CapabilityNotSupported,
    CassetteError,
    ClientClosed,
    HandlerError,
    InternalError,
    InvalidParams,
    MethodNotFound,
    ModelScriptError,
    PathNotAllowed,
    PromptAuthRequired,
    PromptInternalError,
    PromptInvalidParams,
    PromptMethodNotFound,
    PromptRejected,
    PromptRequestCancelled,
    PromptResourceNotFound,
    ProtocolError,
    RequestCancelled,
    RequestError,
    ResourceNotFound,
    Timeout,
    TooManyPendingRequests,
    TransportError,
    TurnFailed,
    Unsupported,
    UnsupportedInV1,
    UnsupportedProtocolVersion,
    WireError,
)

if TYPE_CHECKING:
    from acp_lite import aio, files, permissions, protocol
    from acp_lite.aio import (
        AsyncClient,
        AsyncSession,
        LocalTerminals,
        TerminalCommand,
        TerminalExitStatus,
        TerminalHandler,
        TerminalOutput,
    )
    from acp_lite.auth import AuthMethod
    from acp_lite.files import FileHandler, LocalFiles, Workspace
    from acp_lite.hookspec import hookimpl
    from acp_lite.jsontypes import JsonObject, JsonValue
    from acp_lite.limits import Limits
    from acp_lite.model import RULES, Event, SessionModel, Submission, Violation
    from acp_lite.sync import Client, Session, connect, connect_in_memory, connect_streams
    from acp_lite.transcript import Transcript, TranscriptEntry
    from acp_lite.turn import Turn

from acp_lite._version import __version__ as __version__

_LAZY: dict[str, str] = {
    "connect": "acp_lite.sync",
    "connect_streams": "acp_lite.sync",
    "connect_in_memory": "acp_lite.sync",
    "Client": "acp_lite.sync",
    "Session": "acp_lite.sync",
    # The trio API's two classes, for annotations and isinstance checks next to the
    # blocking ones (its connect functions stay in acp_lite.aio: the names clash).
    "AsyncClient": "acp_lite.aio",
    "AsyncSession": "acp_lite.aio",
    "Turn": "acp_lite.turn",
    "Limits": "acp_lite.limits",
    "Transcript": "acp_lite.transcript",
    "TranscriptEntry": "acp_lite.transcript",
    "SessionModel": "acp_lite.model",
    "Submission": "acp_lite.model",
    "Event": "acp_lite.model",
    "Violation": "acp_lite.model",
    "RULES": "acp_lite.model",
    "hookimpl": "acp_lite.hookspec",
    "JsonObject": "acp_lite.jsontypes",
    "JsonValue": "acp_lite.jsontypes",
    "AuthMethod": "acp_lite.auth",
    "LocalFiles": "acp_lite.files",
    "FileHandler": "acp_lite.files",
    "Workspace": "acp_lite.files",
    "LocalTerminals": "acp_lite.aio",
    "TerminalHandler": "acp_lite.aio",
    "TerminalCommand": "acp_lite.aio",
    "TerminalOutput": "acp_lite.aio",
    "TerminalExitStatus": "acp_lite.aio",
}
_SUBMODULES = {"aio", "auth", "files", "permissions", "protocol", "model", "hookspec", "testing"}

__all__ = [
    "RULES",
    "AcpError",
    "AgentExited",
    "AgentStartFailed",
    "AsyncClient",
    "AsyncSession",
    "AuthMethod",
    "AuthRequired",
    "CapabilityNotSupported",
    "CassetteError",
    "Client",
    "ClientClosed",
    "Event",
    "FileHandler",
    "HandlerError",
    "InternalError",
    "InvalidParams",
    "JsonObject",
    "JsonValue",
    "Limits",
    "LocalFiles",
    "LocalTerminals",
    "MethodNotFound",
    "ModelScriptError",
    "PathNotAllowed",
    "PromptAuthRequired",
    "PromptInternalError",
    "PromptInvalidParams",
    "PromptMethodNotFound",
    "PromptRejected",
    "PromptRequestCancelled",
    "PromptResourceNotFound",
    "ProtocolError",
    "RequestCancelled",
    "RequestError",
    "ResourceNotFound",
    "Session",
    "SessionModel",
    "Submission",
    "TerminalCommand",
    "TerminalExitStatus",
    "TerminalHandler",
    "TerminalOutput",
    "Timeout",
    "TooManyPendingRequests",
    "Transcript",
    "TranscriptEntry",
    "TransportError",
    "Turn",
    "TurnFailed",
    "Unsupported",
    "UnsupportedInV1",
    "UnsupportedProtocolVersion",
    "Violation",
    "WireError",
    "Workspace",
    "aio",
    "auth",
    "connect",
    "connect_in_memory",
    "connect_streams",
    "errors",
    "files",
    "hookimpl",
    "permissions",
    "protocol",
]


__getattr__, __dir__ = lazy_names(globals(), _LAZY, submodules=_SUBMODULES)
