"""A tiny hand-written ACP v2 agent that echoes every prompt back.

    acp-lite prompt --agent "python examples/echo_agent.py" "hello there"

It is a plain blocking loop over stdin/stdout that uses only the wire types of
``acp_lite.protocol`` (no client, no trio): read a line, decode it, answer it.
For each prompt it does what the v2 prompt lifecycle requires of an agent
(spec: "Prompt Lifecycle"):

1. report ``running`` when foreground work starts;
2. *insert* the user message: answer ``session/prompt`` with the message's
   ``messageId`` and echo the message as a ``user_message`` update;
3. stream its output as ``agent_message_chunk`` updates;
4. report ``idle`` with the stop reason ``end_turn``.

Everything the agent writes on stdout is JSON-RPC; logging goes to stderr.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable
from typing import Any, BinaryIO

from acp_lite import protocol as p

PROTOCOL_VERSION = 2
INFO = p.Implementation(name="echo-agent", title="Echo agent (examples)", version="1.0.0")


class EchoAgent:
    """Answers one decoded message at a time; writes JSON-RPC lines to ``out``."""

    def __init__(self, out: BinaryIO) -> None:
        self.out = out
        self.sessions: dict[str, p.SessionInfo] = {}
        self.counter = 0
        self.methods: dict[str, Callable[[int | str, Any], Any]] = {
            "initialize": self.initialize,
            "session/new": self.new_session,
            "session/list": self.list_sessions,
            "session/resume": self.resume_session,
            "session/close": self.close_session,
            "session/prompt": self.prompt,
        }

    # -- output -------------------------------------------------------------------------

    def send(self, message: p.Message) -> None:
        self.out.write(p.encode_message(message))
        self.out.flush()

    def update(self, session_id: str, update: Any) -> None:
        params = p.UpdateSessionNotification(session_id=session_id, update=update)
        self.send(p.Notification("session/update", params))

    def error(self, request_id: int | str, code: int, message: str) -> None:
        self.send(p.ErrorResponse(request_id, p.ErrorObject(code, message)))

    # -- dispatch -----------------------------------------------------------------------

    def handle(self, message: p.Message) -> None:
        if isinstance(message, p.InvalidMessage):
            # Bad JSON or a bad envelope: answer with id null (JSON-RPC 2.0 "Error
            # object"); bad params: answer requests, drop notifications.
            code = message.error.code
            if message.id is not None or code in (
                p.ErrorCode.PARSE_ERROR,
                p.ErrorCode.INVALID_REQUEST,
            ):
                self.send(p.ErrorResponse(message.id, message.error))
            return
        if isinstance(message, p.Request):
            handler = self.methods.get(message.method)
            if handler is None:
                self.error(message.id, p.ErrorCode.METHOD_NOT_FOUND, f"no {message.method}")
                return
            result = handler(message.id, message.params)
            if result is not None:
                self.send(p.Response(message.id, result))
        # Notifications (session/cancel, $/cancel_request) need no answer here: each
        # prompt is handled to its idle before the next line is read, so there is
        # never foreground work to cancel. Responses never come: we send no requests.

    # -- methods ------------------------------------------------------------------------

    def initialize(self, request_id: int | str, params: p.InitializeRequest) -> Any:
        # Answer the highest version we support at or below the client's, or -32022
        # (schema: InitializeResponse.protocolVersion).
        if params.protocol_version < PROTOCOL_VERSION:
            code = p.ErrorCode.UNSUPPORTED_PROTOCOL_VERSION
            self.error(request_id, code, "this agent speaks ACP version 2 only")
            return None
        capabilities = p.AgentCapabilities(session=p.SessionCapabilities())
        return p.InitializeResponse(
            protocol_version=PROTOCOL_VERSION, info=INFO, capabilities=capabilities
        )

    def new_session(self, request_id: int | str, params: p.NewSessionRequest) -> Any:
        self.counter += 1
        session_id = f"echo-session-{self.counter}"
        self.sessions[session_id] = p.SessionInfo(session_id=session_id, cwd=params.cwd)
        # A new session is idle until a state update says otherwise: nothing to send.
        return p.NewSessionResponse(session_id=session_id)

    def list_sessions(self, request_id: int | str, params: p.ListSessionsRequest) -> Any:
        sessions = [s for s in self.sessions.values() if params.cwd in (None, p.UNSET, s.cwd)]
        return p.ListSessionsResponse(sessions=sessions)

    def resume_session(self, request_id: int | str, params: p.ResumeSessionRequest) -> Any:
        if params.session_id not in self.sessions:
            self.error(request_id, p.ErrorCode.RESOURCE_NOT_FOUND, "unknown session")
            return None
        # Resume MUST report the current state before its response; we keep no
        # history, so there is nothing to replay (spec: "Initial state").
        self.update(params.session_id, p.IdleStateUpdate(background=[]))
        return p.ResumeSessionResponse()

    def close_session(self, request_id: int | str, params: p.CloseSessionRequest) -> Any:
        self.sessions.pop(params.session_id, None)
        return p.CloseSessionResponse()

    def prompt(self, request_id: int | str, params: p.PromptRequest) -> Any:
        session_id = params.session_id
        if session_id not in self.sessions:
            self.error(request_id, p.ErrorCode.RESOURCE_NOT_FOUND, "unknown session")
            return None
        # Reject what we cannot insert *before* inserting it: an empty prompt, or
        # content other than the baseline text and resource_link (we advertise none).
        if not params.prompt or any(
            block.type not in ("text", "resource_link") for block in params.prompt
        ):
            code = p.ErrorCode.INVALID_PARAMS
            self.error(request_id, code, "prompt must be non-empty text or resource links")
            return None
        self.counter += 1
        user_id, agent_id = f"user-{self.counter}", f"echo-{self.counter}"
        self.update(session_id, p.RunningStateUpdate(background=[]))
        # Insertion: the response carries the messageId, and the message is echoed.
        self.send(p.Response(request_id, p.PromptResponse(message_id=user_id)))
        self.update(session_id, p.UserMessage(message_id=user_id, content=params.prompt))
        text = "".join(
            block.text if isinstance(block, p.TextContent) else f"<{getattr(block, 'uri', '')}>"
            for block in params.prompt
        )
        for word in re.findall(r"\s*\S+\s*$|\s*\S+", text) or [text]:
            chunk = p.TextContent(text=word)
            self.update(session_id, p.AgentMessageChunk(message_id=agent_id, content=chunk))
        self.update(session_id, p.IdleStateUpdate(stop_reason="end_turn", background=[]))
        return None  # already answered


def main() -> int:
    agent = EchoAgent(sys.stdout.buffer)
    print(f"echo agent ready (pid {os.getpid()})", file=sys.stderr, flush=True)
    for line in sys.stdin.buffer:  # ends when the client closes our stdin
        if not line.strip():
            continue
        decoded = p.decode_line(line)
        for message in decoded if isinstance(decoded, list) else [decoded]:
            agent.handle(message)
    return 0


if __name__ == "__main__":
    sys.exit(main())
