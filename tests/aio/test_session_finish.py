"""The live client runs the model's end-of-session checks when a session or the
connection ends, so checks that only the end can judge reach ``model.violations``."""

from __future__ import annotations

import pytest

from acp_lite import aio

from .conftest import FAST, inproc


@pytest.mark.trio
async def test_never_echoed_user_message_is_reported_when_the_connection_ends() -> None:
    async with aio.connect_in_memory(inproc("broken_no_user_message_echo"), limits=FAST) as client:
        session = await client.new_session(cwd="/tmp")
        await session.run("hello")
        assert "user-message-not-echoed" not in [v.rule for v in session.model.violations]
    assert "user-message-not-echoed" in [v.rule for v in session.model.violations]


@pytest.mark.trio
async def test_conforming_session_close_reports_nothing() -> None:
    async with aio.connect_in_memory(inproc("echo"), limits=FAST) as client:
        session = await client.new_session(cwd="/tmp")
        await session.run("hello")
        await session.close()
        assert session.model.violations == []
