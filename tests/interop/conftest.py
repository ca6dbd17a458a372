"""The Python SDK agent's server (``py_sdk_fork.py``): one import of the SDK for the
test session, a forked agent per start."""

from __future__ import annotations

import selectors
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

FORK = Path(__file__).resolve().parent / "py_sdk_fork.py"
#: Importing the SDK takes a second or more of CPU, many on a busy machine.
READY_TIMEOUT = 60.0


@pytest.fixture(scope="session")
def py_sdk_agent(tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[str]]:
    """The command that starts ``py_sdk_agent_v1.py`` (the agent's arguments follow),
    through the session's ``py_sdk_fork.py serve``."""
    socket_path = tmp_path_factory.mktemp("py-sdk-fork") / "s"
    server = subprocess.Popen(
        [sys.executable, str(FORK), "serve", str(socket_path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    assert server.stdin is not None and server.stdout is not None
    try:
        with selectors.DefaultSelector() as selector:
            selector.register(server.stdout, selectors.EVENT_READ)
            ready = selector.select(READY_TIMEOUT) and server.stdout.readline() == b"ready\n"
        assert ready, f"py_sdk_fork.py serve did not start (exit status {server.poll()})"
        yield [sys.executable, "-S", str(FORK), "launch", str(socket_path)]
    finally:
        server.stdin.close()  # the server's end of input: it stops
        try:
            server.wait(10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        server.stdout.close()
