"""The fixtures say what they give: a test that annotates ``acp_client: Client`` is
checked by mypy against the plugin's own annotations, so none is ``Any``."""

from __future__ import annotations

import typing
from collections.abc import AsyncIterator, Callable, Iterator

import pytest

from acp_lite import Client, Session
from acp_lite.aio import AsyncClient, AsyncSession, TerminalHandler
from acp_lite.files import FileHandler
from acp_lite.permissions import ElicitationPolicy, PermissionPolicy
from pytest_acp import FakeAgent, plugin
from pytest_acp.snapshot import AcpSnapshotAssertion

#: Fixture -> the type its function returns.
RETURNS: dict[str, object] = {
    "acp_client": Iterator[Client],
    "acp_session": Iterator[Session],
    "acp_async_client": AsyncIterator[AsyncClient],
    "acp_async_session": AsyncSession,
    "acp_snapshot": AcpSnapshotAssertion,
    "acp_transcript": plugin.TestTranscript,
    "acp_fake_agent": Iterator[FakeAgent],
    "acp_agent_command": plugin.AgentCommand,
    "acp_timeout": float,
    "acp_permission_policy": PermissionPolicy,
    "acp_elicitation_policy": ElicitationPolicy,
    "acp_files": FileHandler | None,
    "acp_terminals": TerminalHandler | None,
}


#: What the plugin imports for annotations only (it loads acp_lite lazily).
ANNOTATION_NAMES = {
    "AcpSnapshotAssertion": AcpSnapshotAssertion,
    "AsyncClient": AsyncClient,
    "AsyncSession": AsyncSession,
    "Client": Client,
    "ElicitationPolicy": ElicitationPolicy,
    "FileHandler": FileHandler,
    "PermissionPolicy": PermissionPolicy,
    "Session": Session,
    "TerminalHandler": TerminalHandler,
}


def _hints(name: str) -> dict[str, object]:
    function: Callable[..., object] = getattr(plugin, name).__wrapped__
    names = {**vars(typing), **function.__globals__, **ANNOTATION_NAMES}
    return typing.get_type_hints(function, names)


def _resolved(annotation: object) -> object:
    """``annotation`` with its forward references evaluated, as in ``_hints``."""

    def function() -> None: ...

    function.__annotations__ = {"return": annotation}
    return typing.get_type_hints(function)["return"]


@pytest.mark.parametrize("name", sorted(RETURNS))
def test_fixture_returns_its_type(name: str) -> None:
    assert _hints(name)["return"] == _resolved(RETURNS[name])


@pytest.mark.parametrize("name", ["acp_client", "acp_async_client"])
def test_client_fixtures_take_typed_fixtures(name: str) -> None:
    hints = _hints(name)
    assert hints["acp_permission_policy"] == _resolved(PermissionPolicy)
    assert hints["acp_elicitation_policy"] == _resolved(ElicitationPolicy)
    assert hints["acp_agent_command"] is object  # whatever an override returns
