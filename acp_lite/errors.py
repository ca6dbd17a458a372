"""Exceptions raised by acp_lite.

Our exception hierarchy::

    AcpError
     +-- ProtocolError               the agent broke the protocol (bad line, bad envelope)
     |    +-- WireError (also a ValueError)  a JSON value does not match its schema type
     +-- RequestError                the agent answered a request with a JSON-RPC error
     |    +-- MethodNotFound           -32601
     |    +-- InvalidParams            -32602
     |    +-- InternalError            -32603
     |    +-- RequestCancelled         -32800
     |    +-- AuthRequired             -32000
     |    +-- ResourceNotFound         -32002
     |    +-- PromptRejected           session/prompt failed: the message was NOT inserted
     |         (a prompt answered with a code above is both, e.g. PromptMethodNotFound)
     +-- CapabilityNotSupported       not sent: the agent did not advertise the method
     +-- TransportError
     |    +-- AgentStartFailed         the command could not be started
     |    +-- AgentExited              the agent exited or closed its stdout
     +-- Timeout (also a TimeoutError) a wait ran out; says what was awaited
     +-- UnsupportedProtocolVersion   initialize answered with another protocol version
     +-- Unsupported                  the connection cannot express the request (nothing sent)
     |    +-- UnsupportedInV1        ... because the agent speaks ACP v1
     +-- ClientClosed (also a RuntimeError)  a call on, or cut short by, a closed client
     +-- TurnFailed                   Turn.raise_for_stop(): the work ended another way
     +-- TooManyPendingRequests       Limits.max_pending_requests requests already wait

Not raised by acp_lite to its caller, so not AcpErrors::

    HandlerError                      a file / terminal handler answers the agent an error
     +-- PathNotAllowed               a path the session may not use (-32602)
    CassetteError (a ValueError)      a cassette file that cannot be read
    ModelScriptError (a ValueError)   a model script (acp_lite.models) that is malformed

This module is the one home of acp_lite's exceptions (each is importable from
``acp_lite`` too; the modules that raise them re-export them, under their old
names). Every error carries, where known, the ``session_id`` and ``method`` it concerns and
the last lines the agent wrote to stderr (``stderr_tail``); ``str()`` names them,
so a log line alone is enough to diagnose a failure.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from acp_lite.auth import AuthMethod
    from acp_lite.jsontypes import JsonValue

__all__ = [
    "AcpError",
    "AgentExited",
    "AgentStartFailed",
    "AuthRequired",
    "CapabilityNotSupported",
    "CassetteError",
    "ClientClosed",
    "HandlerError",
    "InternalError",
    "InvalidParams",
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
    "Timeout",
    "TooManyPendingRequests",
    "TransportError",
    "TurnFailed",
    "TurnOutcome",
    "Unsupported",
    "UnsupportedInV1",
    "UnsupportedProtocolVersion",
    "WireError",
    "request_error_from",
]

_STDERR_LINES_SHOWN = 10


class AcpError(Exception):
    """Base class of every error acp_lite raises."""

    #: For a failure while connecting (``connect`` raised it: the handshake timed
    #: out, the agent exited, answered another version ...): the
    #: :class:`acp_lite.transcript.Transcript` of every line exchanged before it, as
    #: the client's ``transcript`` would have held them; else ``None``. (Typed
    #: ``object``: this bottom module may not import the transcript, even for its
    #: type; the import would close a circle through the wire layer.)
    transcript: object = None

    def __init__(
        self,
        message: str,
        *,
        session_id: str | None = None,
        method: str | None = None,
        stderr_tail: Sequence[str] = (),
    ) -> None:
        super().__init__(message)
        self.message = message
        self.session_id = session_id
        self.method = method
        self.stderr_tail: tuple[str, ...] = tuple(stderr_tail)

    def _where(self) -> list[str]:
        where = []
        if self.method is not None:
            where.append(f"method={self.method}")
        if self.session_id is not None:
            where.append(f"session={self.session_id}")
        return where

    def __str__(self) -> str:
        parts = [self.message]
        where = self._where()
        if where:
            parts.append(f" [{', '.join(where)}]")
        if self.stderr_tail:
            shown = self.stderr_tail[-_STDERR_LINES_SHOWN:]
            parts.append("\nagent stderr (last lines):\n  " + "\n  ".join(shown))
        return "".join(parts)


class ProtocolError(AcpError):
    """The agent sent something that is not valid ACP / JSON-RPC."""


class WireError(ProtocolError, ValueError):
    """A JSON value does not match the ACP schema type it was structured as.

    Raised by ``converter.structure`` (and the generated structure functions) only;
    :func:`acp_lite.protocol.decode_line` never raises it but returns an
    ``InvalidMessage`` (-32602), and ``SessionUpdate`` structuring turns a malformed
    known update into ``UnrecognizedSessionUpdate`` with ``.error`` set.
    """


class RequestError(AcpError):
    """The agent answered a request with a JSON-RPC error object."""

    #: The JSON-RPC code this subclass stands for (``None`` on the base class).
    default_code: int | None = None

    def __init__(
        self,
        message: str,
        *,
        code: int,
        data: Any = None,
        session_id: str | None = None,
        method: str | None = None,
        stderr_tail: Sequence[str] = (),
    ) -> None:
        super().__init__(message, session_id=session_id, method=method, stderr_tail=stderr_tail)
        self.code = code
        self.data = data

    def __str__(self) -> str:
        base = super().__str__()
        head, sep, tail = base.partition("\n")
        return f"{head} (code {self.code})" + (sep + tail if sep else "")


# The codes below are spelled out, not taken from ErrorCode (their home,
# acp_lite/protocol/jsonrpc.py): the protocol imports this module, and the reference
# agent loads it without loading the protocol. tests/protocol/test_constants.py
# checks that they are ErrorCode's.


class MethodNotFound(RequestError):
    """-32601: the agent does not implement the method."""

    default_code = -32601


class InvalidParams(RequestError):
    """-32602: the agent rejected the parameters."""

    default_code = -32602


class InternalError(RequestError):
    """-32603: the agent failed internally."""

    default_code = -32603


class RequestCancelled(RequestError):
    """-32800: the request was cancelled (``$/cancel_request`` or ``session/cancel``)."""

    default_code = -32800


class AuthRequired(RequestError):
    """-32000: the agent needs authentication first (see ``Client.login``).

    :attr:`auth_methods` lists the ways to log in: those the error names
    (``data.authMethods``, what v1 agents send), else those the agent advertised
    in ``initialize``; ``str()`` says which methods and which variables to set.
    """

    default_code = -32000

    def __init__(
        self,
        message: str,
        *,
        code: int,
        data: Any = None,
        session_id: str | None = None,
        method: str | None = None,
        stderr_tail: Sequence[str] = (),
    ) -> None:
        super().__init__(
            message,
            code=code,
            data=data,
            session_id=session_id,
            method=method,
            stderr_tail=stderr_tail,
        )
        # Imported here: the reference agent loads this module, and nothing else.
        from acp_lite.auth import auth_methods_from

        listed = data.get("authMethods") if isinstance(data, dict) else None
        #: The ways to log in (:class:`acp_lite.auth.AuthMethod`).
        self.auth_methods: list[AuthMethod] = auth_methods_from(listed)

    def __str__(self) -> str:
        from acp_lite.auth import login_hint

        base = super().__str__()
        head, sep, tail = base.partition("\n")
        return f"{head}; {login_hint(self.auth_methods)}" + (sep + tail if sep else "")


class ResourceNotFound(RequestError):
    """-32002: the resource (for example the session) does not exist."""

    default_code = -32002


class PromptRejected(RequestError):
    """``session/prompt`` was answered with an error: the message was not inserted.

    Spec (``PromptRequest``): "An error response means the user message was not
    inserted." Every error answer to ``session/prompt`` is a ``PromptRejected``.
    The code is mapped first, so a prompt answered with a standard code raises
    that code's class too: a prompt answered -32601 raises :class:`MethodNotFound`
    (the class ``PromptMethodNotFound`` is both), -32602 :class:`InvalidParams`,
    -32800 :class:`RequestCancelled` (a withdrawn held prompt), and so on; catch
    ``MethodNotFound`` before ``PromptRejected`` to tell "the agent cannot prompt"
    from "this prompt was refused". Any other code gives a plain ``PromptRejected``.

    A failure *after* insertion is not an exception: it is an ``idle`` state update
    with ``stopReason: "error"``, reported on the ``Turn``.
    """


class PromptMethodNotFound(MethodNotFound, PromptRejected):
    """-32601 answer to ``session/prompt``: not inserted, the method is missing."""


class PromptInvalidParams(InvalidParams, PromptRejected):
    """-32602 answer to ``session/prompt``: not inserted, the prompt was invalid."""


class PromptInternalError(InternalError, PromptRejected):
    """-32603 answer to ``session/prompt``: not inserted, the agent failed."""


class PromptRequestCancelled(RequestCancelled, PromptRejected):
    """-32800 answer to ``session/prompt``: not inserted, the prompt was withdrawn."""


class PromptAuthRequired(AuthRequired, PromptRejected):
    """-32000 answer to ``session/prompt``: not inserted, authentication is needed."""


class PromptResourceNotFound(ResourceNotFound, PromptRejected):
    """-32002 answer to ``session/prompt``: not inserted, e.g. the session is unknown."""


def _capability_text(capability: Sequence[str]) -> str:
    if tuple(capability) == ("authMethods",):
        return "a non-empty `authMethods` list"
    return "`" + ".".join(capability) + "`"


class CapabilityNotSupported(AcpError):
    """The agent did not advertise what a method needs, so nothing was sent.

    ``capability`` is the path in the ``initialize`` result (wire names), e.g.
    ``("capabilities", "session", "fork")``, or for an entity-level gate the path
    on the entity (``("capabilities", "cancel")`` of a tool call). Spec
    (initialization, "Capabilities"): omitted capabilities MUST be treated as
    unsupported. Pass ``force=True`` to the method to send it anyway.
    """

    def __init__(
        self,
        method: str,
        capability: Sequence[str],
        *,
        entity: str | None = None,
        session_id: str | None = None,
        stderr_tail: Sequence[str] = (),
    ) -> None:
        what = _capability_text(capability)
        where = (
            f"the {entity} does not advertise {what}"
            if entity
            else (f"the agent did not advertise {what}")
        )
        message = (
            f"{method} not sent: {where} (the agent must advertise it for the client "
            f"to call {method}); pass force=True to send it anyway"
        )
        super().__init__(message, session_id=session_id, method=method, stderr_tail=stderr_tail)
        self.capability: tuple[str, ...] = tuple(capability)
        self.entity = entity


class TransportError(AcpError):
    """The byte stream to the agent failed."""


class AgentStartFailed(TransportError):
    """The agent command could not be started (not found, not executable...)."""


class AgentExited(TransportError):
    """The agent process exited or closed its stdout while we were waiting."""

    def __init__(
        self,
        message: str,
        *,
        returncode: int | None = None,
        session_id: str | None = None,
        method: str | None = None,
        stderr_tail: Sequence[str] = (),
    ) -> None:
        super().__init__(message, session_id=session_id, method=method, stderr_tail=stderr_tail)
        self.returncode = returncode


class Timeout(AcpError, TimeoutError):
    """A wait ran out of time. The message says what was awaited and the state then."""

    def __init__(
        self,
        message: str,
        *,
        awaited: str = "",
        state: str | None = None,
        session_id: str | None = None,
        method: str | None = None,
        stderr_tail: Sequence[str] = (),
    ) -> None:
        super().__init__(message, session_id=session_id, method=method, stderr_tail=stderr_tail)
        self.awaited = awaited
        self.state = state

    def _where(self) -> list[str]:
        # The session state at the time is part of what a timeout says.
        where = super()._where()
        if self.state is not None and "session state:" not in self.message:
            where.append(f"session state={self.state}")
        return where


class UnsupportedProtocolVersion(AcpError):
    """The agent answered ``initialize`` with a protocol version we do not speak."""

    def __init__(
        self,
        message: str,
        *,
        version: JsonValue,
        stderr_tail: Sequence[str] = (),
    ) -> None:
        super().__init__(message, method="initialize", stderr_tail=stderr_tail)
        self.version = version


class Unsupported(AcpError):
    """The request cannot be made on this connection; it was not sent."""


class UnsupportedInV1(Unsupported):
    """The agent speaks ACP v1, which cannot express the request: a method v1 does
    not have (``tool_call/cancel``, ``session/fork`` ...), a capability the agent
    did not advertise, or a second prompt while a v1 turn runs (v1 allows one
    prompt at a time). Raised before anything is sent."""


class ClientClosed(AcpError, RuntimeError):
    """The client is closed: a call made after ``close()``, or cut short by it."""


class TooManyPendingRequests(AcpError):
    """``Limits.max_pending_requests`` requests are already awaiting a response."""


class TurnOutcome(Protocol):
    """What :class:`TurnFailed` carries of the turn that failed (:class:`acp_lite.Turn`
    is one).

    A protocol, not ``Turn`` itself: ``Turn`` names the session model's records,
    which stand on the wire layer, which raises the errors of this module; naming
    it here would close that circle. ``exc.turn`` is the ``Turn`` object itself.
    """

    @property
    def message_id(self) -> str | None:
        """The inserted user message's id."""

    @property
    def session_id(self) -> str | None:
        """The session the turn ran in."""

    @property
    def stop_reason(self) -> str | None:
        """The idle's stop reason (``None`` if the agent reported none)."""

    @property
    def error(self) -> object:
        """The idle's ``error`` object when the stop reason is ``"error"``."""

    @property
    def text(self) -> str:
        """The agent message text of the turn."""


class TurnFailed(AcpError):
    """Raised by ``Turn.raise_for_stop()``: the work ended with another stop reason.

    A failure after insertion is reported on the ``Turn`` (``stopReason: "error"``),
    not raised, unless the caller asks for it with ``raise_for_stop()``. ``turn``
    is that ``Turn`` (typed :class:`TurnOutcome`), ``stop_reason`` and ``error``
    are its own.
    """

    def __init__(self, message: str, *, turn: TurnOutcome, session_id: str | None = None) -> None:
        super().__init__(message, session_id=session_id, method="session/prompt")
        self.turn = turn
        self.stop_reason = turn.stop_reason
        # Typed as Turn.error is (the error object of the idle, as the wire gave it).
        self.error: Any = turn.error


# --- not AcpErrors: raised by your code, or by reading a file, not by the connection
# (HandlerError's codes are spelled out like the ones above; tests/test_errors.py
# checks them against ErrorCode.)


class HandlerError(Exception):
    """Raise from a file or terminal handler to answer the agent with this error.

    ``code`` is the JSON-RPC error code (default -32603, internal error),
    ``message`` the one sentence the agent sees, ``data`` optional details.
    """

    def __init__(self, message: str, *, code: int = -32603, data: Any = None) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.data = data


class PathNotAllowed(HandlerError):
    """A path the session may not use (-32602): relative, with ``..``, outside the
    session's ``cwd`` and ``additional_directories``, or leading out by a symlink."""

    def __init__(self, message: str, *, path: object = None) -> None:
        super().__init__(message, code=-32602, data={"path": path})


class CassetteError(ValueError):
    """A cassette file that cannot be read (names the file and line)."""


class ModelScriptError(ValueError):
    """A scripted model's script (:mod:`acp_lite.models.script`) is malformed; the
    message names the script and the step (``steps[2] (tool_call): ...``)."""


_BY_CODE: dict[int, type[RequestError]] = {
    cls.default_code: cls
    for cls in (
        MethodNotFound,
        InvalidParams,
        InternalError,
        RequestCancelled,
        AuthRequired,
        ResourceNotFound,
    )
    if cls.default_code is not None
}

_PROMPT_BY_CODE: dict[int, type[RequestError]] = {
    cls.default_code: cls
    for cls in (
        PromptMethodNotFound,
        PromptInvalidParams,
        PromptInternalError,
        PromptRequestCancelled,
        PromptAuthRequired,
        PromptResourceNotFound,
    )
    if cls.default_code is not None
}


def request_error_from(
    code: int,
    message: str,
    data: Any = None,
    *,
    method: str | None = None,
    session_id: str | None = None,
    stderr_tail: Sequence[str] = (),
) -> RequestError:
    """Build the most specific :class:`RequestError` for a JSON-RPC error object.

    The code decides first, for every method (-32601 is :class:`MethodNotFound`
    even for ``session/prompt``); then the method: any error answer to
    ``session/prompt`` is also a :class:`PromptRejected` (not inserted).
    """
    if method == "session/prompt":
        cls = _PROMPT_BY_CODE.get(code, PromptRejected)
    else:
        cls = _BY_CODE.get(code, RequestError)
    return cls(
        message,
        code=code,
        data=data,
        method=method,
        session_id=session_id,
        stderr_tail=stderr_tail,
    )
