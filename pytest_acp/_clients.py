"""Starting agents for the fixtures: connection settings, shared pools, policies."""

from __future__ import annotations

import contextlib
import shlex
from collections.abc import Callable
from typing import Any

from pytest_acp._incremental import IncrementalCheck
from pytest_acp._settings import AgentCommand

__all__ = ["HANDSHAKE_TIMEOUT", "Policies", "Pool", "close_quietly", "connect", "limits_for"]

HANDSHAKE_TIMEOUT = 10.0
"""Least time given to start the agent and answer ``initialize`` (seconds)."""


class Policies:
    """The permission/elicitation answers of a shared client, switched per test."""

    def __init__(
        self, permission: Callable[[Any, Any], Any], elicitation: Callable[[Any, Any], Any]
    ) -> None:
        self.current_permission = permission
        self.current_elicitation = elicitation

    def permission(self, request: Any, session: Any) -> Any:
        return self.current_permission(request, session)

    def elicitation(self, request: Any, session: Any) -> Any:
        return self.current_elicitation(request, session)


def limits_for(timeout: float) -> Any:
    from acp_lite.limits import Limits

    # The test's timeout bounds every call; starting the agent (interpreter start-up,
    # the initialize handshake) gets at least HANDSHAKE_TIMEOUT so a short
    # @pytest.mark.acp_timeout does not fail in the handshake.
    return Limits(default_timeout=timeout, connect_timeout=max(timeout, HANDSHAKE_TIMEOUT))


#: Commands that could not be started at all (not found, not executable): later
#: tests fail at once with the same message instead of trying again.
_UNSTARTABLE: dict[tuple[Any, ...], str] = {}


def connect(command: AgentCommand, timeout: float, policies: Policies) -> Any:
    """A connected blocking client; a failure to start or initialize the agent fails
    the test with one clear line (the agent's stderr tail once), no traceback."""
    __tracebackhide__ = True
    import pytest

    from acp_lite.client import connect as acp_connect
    from acp_lite.errors import AcpError, AgentStartFailed

    key = command.key()
    known = _UNSTARTABLE.get(key)
    if known is not None:
        pytest.fail(known + " (as in an earlier test)", pytrace=False)
    try:
        return acp_connect(
            list(command.argv),
            cwd=command.cwd,
            env=dict(command.env) or None,
            limits=limits_for(timeout),
            on_permission=policies.permission,
            on_elicitation=policies.elicitation,
            # The session rules are judged by the client's own models, located
            # in its transcript (no replay of the traffic).
            conformance=True,
        )
    except AcpError as exc:
        message = f"could not start the agent {shlex.join(command.argv)}: {exc}"
        if isinstance(exc, AgentStartFailed):
            _UNSTARTABLE[key] = message
    # Outside the except block: the report shows this one message, not the chain.
    pytest.fail(message, pytrace=False)


def close_quietly(client: Any) -> None:
    # Closing a dead agent must not mask the test's own outcome.
    with contextlib.suppress(Exception):
        client.close()


class Pool:
    """Agent processes shared by the tests of one module or of the whole session."""

    def __init__(self) -> None:
        self.clients: dict[tuple[Any, ...], tuple[Any, Policies, IncrementalCheck]] = {}

    def get(
        self, command: AgentCommand, timeout: float, policies: Policies
    ) -> tuple[Any, Policies, IncrementalCheck]:
        """The shared client for ``command`` (started on first use, restarted if its
        agent died), its policies and the conformance state of its traffic."""
        key = (*command.key(), timeout)
        found = self.clients.get(key)
        if found is not None and (
            getattr(found[0], "closed", False) or getattr(found[0], "returncode", None) is not None
        ):
            close_quietly(found[0])  # the agent died in an earlier test: start a new one
            found = None
        if found is None:
            client = connect(command, timeout, policies)
            found = self.clients[key] = (client, policies, IncrementalCheck())
        return found

    def close(self) -> None:
        clients, self.clients = self.clients, {}
        for client, _, _ in clients.values():
            close_quietly(client)
