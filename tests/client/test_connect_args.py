"""connect() arguments: a command string is refused; one timeout for every wait."""

from __future__ import annotations

import sys

import pytest
import trio

import acp_lite
from acp_lite import aio

AGENT = [sys.executable, "-m", "acp_lite.testing.agent"]


@pytest.mark.parametrize("command", ["node agent.mjs", b"node agent.mjs"])
def test_a_command_string_is_a_type_error_with_a_hint(command: str) -> None:
    with pytest.raises(TypeError, match=r"list of arguments.*shlex\.split"):
        acp_lite.connect(command)  # type: ignore[arg-type]

    async def main() -> None:
        async with aio.connect(command):  # type: ignore[arg-type]
            pass

    with pytest.raises(TypeError, match="list of arguments"):
        trio.run(main)


def test_connect_timeout_is_the_default_of_every_wait() -> None:
    with acp_lite.connect(AGENT, timeout=7.5) as client:
        assert client.limits.default_timeout == 7.5
        assert client.limits.connect_timeout == 7.5
        session = client.new_session("/")
        assert session.async_session._conn.limits.default_timeout == 7.5
