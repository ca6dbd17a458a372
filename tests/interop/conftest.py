"""The Python SDK agent's server (``py_sdk_fork.py``): one import of the SDK for the
test session, a forked agent per start. The server starts as soon as the collected
tests show that one needs it, so the import runs while the tests before them do."""

from __future__ import annotations

import os
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
FORK = HERE / "py_sdk_fork.py"
#: Importing the SDK takes a second or more of CPU, many on a busy machine.
READY_TIMEOUT = 60.0


class Server:
    """``py_sdk_fork.py serve`` in a temporary directory (a short socket path)."""

    def __init__(self) -> None:
        self.directory = Path(tempfile.mkdtemp(prefix="py-sdk-fork-"))
        self.socket = self.directory / "s"
        self.process = subprocess.Popen(
            [sys.executable, str(FORK), "serve", str(self.socket)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        # It forks the server and exits at once (the server is no child of ours,
        # so the leak checks of other tests do not see it): reap it now.
        self.process.wait(READY_TIMEOUT)
        self.pid: int | None = None

    def wait_ready(self) -> None:
        if self.pid is None:
            line = self._read_line()
            if line.startswith(b"ready "):
                self.pid = int(line.split()[1])
        assert self.pid is not None, f"py_sdk_fork.py serve did not start ({line!r})"

    def _read_line(self, timeout: float = READY_TIMEOUT) -> bytes:
        stdout = self.process.stdout
        assert stdout is not None
        with selectors.DefaultSelector() as selector:
            selector.register(stdout, selectors.EVENT_READ)
            return stdout.readline() if selector.select(timeout) else b"(timed out)"

    def stop(self) -> None:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.close()  # the server's end of input: it stops
        # Its end of output is its exit (the agents it forked do not hold it).
        if self.pid is not None and self._read_line(10.0) != b"":
            os.kill(self.pid, signal.SIGKILL)
        self.process.stdout.close()
        shutil.rmtree(self.directory, ignore_errors=True)


_server: list[Server] = []


def _get_server() -> Server:
    if not _server:
        _server.append(Server())
    return _server[0]


#: Modules whose tests run after the package's others: they wait for a real agent
#: started early (seconds of Node start-up), which then overlaps the tests before.
RUN_LAST = ("test_grade_clients.py", "test_real_agent_scripted.py")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    if any("py_sdk_agent" in getattr(item, "fixturenames", ()) for item in items):
        _get_server()  # starts importing the SDK now, in its own process
    last = [item for item in items if item.path.parent == HERE and item.path.name in RUN_LAST]
    if last:
        # After the package's last other test, not the session's: what it started
        # early must end with the package (``start_early``), before other packages.
        rest = [item for item in items if item not in last]
        ends = [n for n, item in enumerate(rest) if item.path.parent == HERE]
        at = ends[-1] + 1 if ends else len(rest)
        items[:] = rest[:at] + last + rest[at:]


def pytest_unconfigure() -> None:
    while _server:
        _server.pop().stop()


@pytest.fixture(scope="package", autouse=True)
def start_early(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[None]:
    """At the first interop test, calls ``start_early(tmp_path_factory, items)`` of
    each interop module whose tests will run and that has one (``items``: those
    tests): it starts what they wait for (a Node process loading the SDK, a batch
    of cases), so that start-up overlaps the tests before them. When the package's
    tests end, each module's ``end_early()`` waits for or stops what is left, so
    nothing of it outlives them. Not under pytest-xdist: every worker collects
    every test, so each would start what other workers' tests need."""
    if os.environ.get("PYTEST_XDIST_WORKER") is not None:
        yield
        return
    modules: dict[Any, list[pytest.Function]] = {}
    for item in request.session.items:
        if (
            isinstance(item, pytest.Function)
            and item.path.parent == HERE
            and hasattr(item.module, "start_early")
        ):
            modules.setdefault(item.module, []).append(item)
    started = [m for m, items in modules.items() if m.start_early(tmp_path_factory, items)]
    yield
    for module in started:
        module.end_early()


@pytest.fixture(scope="session")
def py_sdk_agent() -> list[str]:
    """The command that starts ``py_sdk_agent_v1.py`` (the agent's arguments follow),
    through the session's ``py_sdk_fork.py serve``."""
    server = _get_server()
    server.wait_ready()
    return [sys.executable, "-S", str(FORK), "launch", str(server.socket)]
