"""What a probe function gets: the peer, what initialize said, and the verbs of a probe.

A probe passes by returning; it fails with :meth:`ProbeContext.fail` (or a failed
:meth:`~ProbeContext.check`), naming what it saw; a wait that times out or an
agent that exits fails it too, with the lines seen as evidence. It is skipped
with :meth:`ProbeContext.skip` when the agent did not opt into what it checks.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import NoReturn

from acp_lite.conformance.requirements import Requirement
from acp_lite.jsontypes import JsonObject, JsonValue
from acp_lite.probes._peer import Line, Peer

__all__ = ["PROBE_CLIENT_INFO", "ProbeContext", "ProbeFailed", "ProbeSkipped"]

PROBE_CLIENT_INFO: JsonObject = {"name": "acp-lite-probe", "version": "1"}


class ProbeFailed(Exception):
    """A probe found the requirement broken: why, and the lines that show it."""

    def __init__(self, reason: str, lines: Iterable[Line] = ()) -> None:
        super().__init__(reason)
        self.reason = reason
        self.lines = tuple(lines)


class ProbeSkipped(Exception):
    """A probe does not apply to this agent (a capability it does not advertise)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def _dig(value: JsonValue | None, path: str) -> JsonValue | None:
    for key in path.split("."):
        if not isinstance(value, dict):
            return None
        value = value.get(key)
    return value


class ProbeContext:
    """One probe's view of one agent connection (see the module docstring).

    ``init`` is the ``initialize`` result (``{}`` for a ``fresh`` probe until it
    calls :meth:`initialize`); ``start`` is the log index where the probe began.
    """

    def __init__(
        self,
        peer: Peer,
        requirement: Requirement,
        *,
        init: JsonObject,
        protocol_version: int,
        timeout: float,
        cwd: str,
    ) -> None:
        self.peer = peer
        self.requirement = requirement
        self.init = init
        self.protocol_version = protocol_version
        self.timeout = timeout
        self.cwd = cwd
        self.start = peer.mark

    # -- outcomes --------------------------------------------------------------------

    def fail(self, reason: str, *lines: Line) -> NoReturn:
        """Fail the probe: ``reason``, shown by ``lines`` (default: the last lines it
        exchanged); a response's request is added before it."""
        if not lines:
            raise ProbeFailed(reason, self.peer.log[self.start :][-8:])
        shown: dict[int, Line] = {}
        for line in lines:
            request = self._request_of(line)
            if request is not None:
                shown[request.index] = request
            shown[line.index] = line
        raise ProbeFailed(reason, [shown[i] for i in sorted(shown)])

    def _request_of(self, line: Line) -> Line | None:
        if not line.is_response or line.obj.get("id") is None:
            return None
        wanted = line.obj.get("id")
        for earlier in reversed(self.peer.log[: line.index]):
            if earlier.direction != line.direction and earlier.obj.get("id") == wanted:
                return earlier if earlier.method is not None else None
        return None

    def check(self, condition: object, reason: str, *lines: Line) -> None:
        """:meth:`fail` with ``reason`` unless ``condition`` holds."""
        if not condition:
            self.fail(reason, *lines)

    def skip(self, reason: str) -> NoReturn:
        """Skip the probe (it does not apply to this agent)."""
        raise ProbeSkipped(reason)

    # -- what the agent said at initialize ---------------------------------------------

    def capability(self, path: str) -> JsonValue | None:
        """The agent's advertised capability at ``path`` (dotted, under
        ``capabilities`` in v2 and ``agentCapabilities`` in v1), or ``None``."""
        root = "agentCapabilities" if self.protocol_version == 1 else "capabilities"
        return _dig(self.init.get(root), path)

    def advertised(self, path: str) -> bool:
        """Whether the agent advertises the capability at ``path`` (present, not
        ``null`` or ``false``)."""
        value = self.capability(path)
        return value is not None and value is not False

    # -- requests --------------------------------------------------------------------

    def call(self, method: str, params: JsonValue | None = None) -> Line:
        """Send a request and wait (the probe timeout) for its response line."""
        return self.peer.call(method, params, timeout=self.timeout)

    def result(self, method: str, params: JsonValue | None = None) -> JsonObject:
        """Send a request; its ``result`` object (the probe fails on an error)."""
        line = self.call(method, params)
        result = line.obj.get("result")
        if not isinstance(result, dict):
            self.fail(f"{method} answered with no result object", line)
        return result

    def initialize(self, protocol_version: int = 2, capabilities: JsonObject | None = None) -> Line:
        """Send ``initialize`` (the probe client's info, no capability by default)."""
        params: JsonObject
        if protocol_version == 1:
            params = {
                "protocolVersion": 1,
                "clientCapabilities": capabilities or {},
                "clientInfo": PROBE_CLIENT_INFO,
            }
        else:
            params = {
                "protocolVersion": protocol_version,
                "capabilities": capabilities or {},
                "info": PROBE_CLIENT_INFO,
            }
        return self.call("initialize", params)

    def new_session(self, cwd: str | None = None) -> str:
        """Open a session (``session/new`` in ``cwd``, default the probe's directory)."""
        params: JsonObject = {"cwd": cwd or self.cwd}
        if self.protocol_version == 1:
            params["mcpServers"] = []
        result = self.result("session/new", params)
        session_id = result.get("sessionId")
        if not isinstance(session_id, str):
            self.fail("session/new returned no sessionId string")
        return session_id

    def prompt_params(self, session_id: str, text: str = "hello") -> JsonObject:
        """The params of a text prompt."""
        return {"sessionId": session_id, "prompt": [{"type": "text", "text": text}]}

    def prompt(self, session_id: str, text: str = "hello") -> Line:
        """Send a text prompt and wait for its response (v2: the insertion; v1: the
        end of the turn)."""
        return self.call("session/prompt", self.prompt_params(session_id, text))

    # -- updates ---------------------------------------------------------------------

    def wait_update(
        self,
        session_id: str,
        predicate: Callable[[JsonObject], bool],
        *,
        since: int | None = None,
        what: str = "a matching session/update",
    ) -> Line:
        """The first ``session/update`` of ``session_id`` (from log index ``since``,
        default the probe's start) whose ``update`` matches."""

        def matches(line: Line) -> bool:
            if line.method != "session/update":
                return False
            params = line.obj.get("params")
            if not isinstance(params, dict) or params.get("sessionId") != session_id:
                return False
            update = params.get("update")
            return isinstance(update, dict) and predicate(update)

        return self.peer.wait(
            matches,
            timeout=self.timeout,
            since=self.start if since is None else since,
            what=what,
        )

    def wait_idle(self, session_id: str, *, since: int | None = None) -> Line:
        """The first ``state_update`` idle of ``session_id`` (v2)."""
        return self.wait_update(
            session_id,
            lambda u: u.get("sessionUpdate") == "state_update" and u.get("state") == "idle",
            since=since,
            what=f"state_update idle for {session_id}",
        )

    def updates(self, session_id: str, *, since: int | None = None) -> list[JsonObject]:
        """The ``update`` objects of ``session_id`` received so far (no waiting)."""
        out: list[JsonObject] = []
        for line in self.peer.received(self.start if since is None else since):
            params = line.obj.get("params")
            if (
                line.method == "session/update"
                and isinstance(params, dict)
                and params.get("sessionId") == session_id
            ):
                update = params.get("update")
                if isinstance(update, dict):
                    out.append(update)
        return out
