"""Starting agents for the fixtures: connection settings, shared pools, policies."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, Literal

import attrs

from pytest_acp._diagnostics import fail_test
from pytest_acp._settings import AgentCommand

if TYPE_CHECKING:  # loaded with the first client (the conformance checks)
    from acp_lite.aio import AsyncClient
    from acp_lite.client import Client
    from acp_lite.limits import Limits
    from acp_lite.permissions import ElicitationPolicy, PermissionPolicy
    from acp_lite.protocol import (
        CreateElicitationRequest,
        CreateElicitationResponse,
        RequestPermissionRequest,
    )
    from pytest_acp._incremental import IncrementalCheck

__all__ = [
    "HANDSHAKE_TIMEOUT",
    "Handshake",
    "Policies",
    "Pool",
    "close_quietly",
    "connect",
    "connect_async",
    "limits_for",
]

HANDSHAKE_TIMEOUT = 10.0
"""Least time given to start the agent and answer ``initialize`` (seconds)."""

STDERR_LINES = 20
"""How many of an in-process agent's last log lines a failed start shows."""


class Policies:
    """The permission/elicitation answers of a shared client, switched per test."""

    def __init__(self, permission: PermissionPolicy, elicitation: ElicitationPolicy) -> None:
        self.current_permission = permission
        self.current_elicitation = elicitation

    def permission(self, request: RequestPermissionRequest, session: object) -> str | None:
        """The current test's answer to a permission request."""
        return self.current_permission(request, session)

    def elicitation(
        self, request: CreateElicitationRequest, session: object
    ) -> CreateElicitationResponse:
        """The current test's answer to an elicitation request."""
        return self.current_elicitation(request, session)


def limits_for(timeout: float) -> Limits:
    from acp_lite.limits import Limits

    # The test's timeout bounds every call; starting the agent (interpreter start-up,
    # the initialize handshake) gets at least HANDSHAKE_TIMEOUT so a short
    # @pytest.mark.acp_timeout does not fail in the handshake.
    return Limits(default_timeout=timeout, connect_timeout=max(timeout, HANDSHAKE_TIMEOUT))


#: Commands that could not be started at all (not found, not executable): later
#: tests fail at once with the same message instead of trying again.
_UNSTARTABLE: dict[tuple[Any, ...], str] = {}


@attrs.frozen
class Handshake:
    """How to open the connection: the protocol to speak, the auth method to log in
    with, whether the traffic is checked (``conformance``)."""

    protocol: int | Literal["auto"] = "auto"
    login: str | None = None
    #: ``connect(conformance=...)``: off (``--acp-conformance=off``), the client costs
    #: what a plain one costs (no findings located as lines arrive).
    conformance: bool = True
    #: What serves the agent's ``fs/*`` and ``terminal/*`` requests (``None``: nothing).
    files: Any = None
    terminals: Any = None

    def checked(self) -> Handshake:
        """This handshake with the traffic checked."""
        return attrs.evolve(self, conformance=True)

    def served(self) -> dict[str, Any]:
        """``connect``'s ``files=`` / ``terminals=`` keywords, for those served."""
        both = {"files": self.files, "terminals": self.terminals}
        return {k: v for k, v in both.items() if v is not None}

    def key(self) -> tuple[object, ...]:
        """What a shared agent must have been opened with (the handlers' kinds)."""
        kinds = (
            type(v).__qualname__ if v is not None else None for v in (self.files, self.terminals)
        )
        return (self.protocol, self.login, *kinds)


def connect(
    command: AgentCommand, timeout: float, policies: Policies, handshake: Handshake = Handshake()
) -> Client:
    """A connected blocking client, logged in if ``handshake.login`` says so; a failure
    to start, initialize or log in fails the test with one clear line (the agent's
    stderr tail once), no traceback."""
    __tracebackhide__ = True
    client = _connect(command, timeout, policies, handshake)
    if handshake.login is not None:
        _login(client, command, handshake.login)
    return client


def _login(client: Client, command: AgentCommand, method_id: str) -> None:
    __tracebackhide__ = True

    from acp_lite.errors import AcpError

    try:
        client.login(method_id)
        return
    except AcpError as exc:
        message = f"could not log in to the agent {command} with {method_id!r} (--acp-login): {exc}"
    close_quietly(client)
    fail_test(message)


def _connect(
    command: AgentCommand, timeout: float, policies: Policies, handshake: Handshake
) -> Client:
    __tracebackhide__ = True

    from acp_lite.client import connect as acp_connect
    from acp_lite.errors import AcpError, AgentStartFailed

    key = command.key()
    known = _UNSTARTABLE.get(key)
    if known is not None:
        fail_test(known + " (as in an earlier test)")
    options: dict[str, Any] = {
        "limits": limits_for(timeout),
        "on_permission": policies.permission,
        "on_elicitation": policies.elicitation,
        # The session rules are judged by the client's own models, located in its
        # transcript (no replay of the traffic); not at all when they are off.
        "conformance": handshake.conformance,
        "protocol_version": handshake.protocol,
        **handshake.served(),
    }
    if command.in_process is not None:
        from pytest_acp._inprocess import connect_in_process, new_agent, stderr_tail_of

        agent = new_agent(command.in_process)
        try:
            return connect_in_process(agent, **options)
        except AcpError as exc:
            # A process's stderr tail is in the error already; this agent's is not.
            tail = stderr_tail_of(agent)[-STDERR_LINES:]
            message = "\n".join([f"could not start the agent {command}: {exc}", *tail])
        fail_test(message)
    try:
        return acp_connect(
            list(command.argv),
            cwd=command.cwd,
            env=dict(command.env) or None,
            inherit_env=command.inherit_env,
            **options,
        )
    except AcpError as exc:
        message = f"could not start the agent {command}: {exc}"
        if isinstance(exc, AgentStartFailed):
            _UNSTARTABLE[key] = message
    # Outside the except block: the report shows this one message, not the chain.
    fail_test(message)


@asynccontextmanager
async def connect_async(
    command: AgentCommand,
    timeout: float,
    permission: PermissionPolicy,
    elicitation: ElicitationPolicy,
    handshake: Handshake = Handshake(),
) -> AsyncIterator[AsyncClient]:
    """A connected ``acp_lite.aio.AsyncClient`` (one agent per use), logged in if
    ``handshake.login`` says so."""
    options: dict[str, Any] = {
        "limits": limits_for(timeout),
        "on_permission": permission,
        "on_elicitation": elicitation,
        "conformance": handshake.conformance,  # as for connect()
        "protocol_version": handshake.protocol,
        **handshake.served(),
    }
    if command.in_process is not None:
        from pytest_acp._inprocess import connect_in_process_async

        async with connect_in_process_async(command.in_process, **options) as client:
            if handshake.login is not None:
                await client.login(handshake.login)
            yield client
        return
    from acp_lite import aio

    async with aio.connect(
        list(command.argv),
        cwd=command.cwd,
        env=dict(command.env) or None,
        inherit_env=command.inherit_env,
        **options,
    ) as client:
        if handshake.login is not None:
            await client.login(handshake.login)
        yield client


def close_quietly(client: Client) -> None:
    # Closing a dead agent must not mask the test's own outcome.
    with contextlib.suppress(Exception):
        client.close()


class Pool:
    """Agent processes shared by the tests of one module or of the whole session."""

    def __init__(self) -> None:
        self.clients: dict[tuple[Any, ...], tuple[Client, Policies, IncrementalCheck]] = {}

    def get(
        self,
        command: AgentCommand,
        timeout: float,
        policies: Policies,
        handshake: Handshake = Handshake(),
    ) -> tuple[Client, Policies, IncrementalCheck]:
        """The shared client for ``command`` (started on first use, restarted if its
        agent died), its policies and the conformance state of its traffic."""
        key = (*command.key(), timeout, *handshake.key())
        found = self.clients.get(key)
        if found is not None and (found[0].closed or found[0].returncode is not None):
            close_quietly(found[0])  # the agent died in an earlier test: start a new one
            found = None
        if found is None:
            client = connect(command, timeout, policies, handshake)
            from pytest_acp._incremental import IncrementalCheck

            found = self.clients[key] = (client, policies, IncrementalCheck())
        return found

    def close(self) -> None:
        clients, self.clients = self.clients, {}
        for client, _, _ in clients.values():
            close_quietly(client)
