"""A real agent, Gemini CLI (pinned in ``package.json``), runs over ACP on our scripted
model (issue 23): its own code does the turns, the shell tool and the permission
request; only the model beneath it is scripted. No network, no key.

Gemini CLI is the cheapest real agent for CI: plain JavaScript from npm on Node 20
(about 115 MB, ``npm ci`` in ~5 s, no install script: see ``.npmrc``); the numbers and
the other agents are in ``docs/agents-on-scripted-models.md``. The test fails (never
skips) when Node or the package is missing, as the other interop tests do.

The agent is pointed at the model by its agent profile (``gemini``), as ``acp-lite
prompt --model-reply`` and pytest_acp's ``acp_model`` do: this test checks the profile
too.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import pytest
from early import in_thread
from rawpipe import HERE, node_executable

from acp_lite import Limits, permissions
from acp_lite.client import Client, connect
from acp_lite.models import ScriptedModel
from acp_lite.models.home import prepare_home
from acp_lite.models.profiles import AgentProfile, profile_named
from acp_lite.models.server import run_in_thread

GEMINI = HERE / "node_modules" / "@google" / "gemini-cli" / "bundle" / "gemini.js"

#: The agent, pointed at the model by its agent profile (``acp_lite.models.profiles``:
#: its environment, a temporary home with its settings, the variables it must not see),
#: and its tool for a shell command with that tool's arguments.
AGENT: dict[str, Any] = {
    "argv": [str(GEMINI), "--acp"],
    "profile": profile_named("gemini"),
    "shell_tool": "run_shell_command",
    "shell_arguments": {"command": "{command}", "description": "Create the marker file"},
}
COMMAND = "touch marker.txt && echo marker-made"
TIMEOUT = 30.0
#: Node loads Gemini CLI's 100 MB bundle before it answers `initialize`: seconds of CPU.
START_TIMEOUT = 90.0

SCRIPT = {
    "name": "real agent: reply, then a shell tool call",
    "steps": [
        {
            "type": "reply",
            "text": "Hello from the scripted model.",
            "when": {"last_user_text_contains": "say hello"},
        },
        {
            "type": "tool_call",
            "name": AGENT["shell_tool"],
            "arguments": {
                k: v.format(command=COMMAND) for k, v in AGENT["shell_arguments"].items()
            },
            "id": "call_shell_1",
            "when": {"last_user_text_contains": "make the marker"},
        },
        {
            "type": "reply",
            "text": "The marker file is made.",
            "when": {"tool_result_for": "call_shell_1"},
        },
    ],
}


def agent_env(url: str, home: Path) -> dict[str, str]:
    """The agent's whole environment, its profile's files written in ``home``."""
    profile: AgentProfile = AGENT["profile"]
    return prepare_home(profile.setup(url=url, home=str(home)), home)


class Run:
    """The scripted model's server and the agent connected over ACP, in ``directory``
    (``home``: the agent's home; ``work``: its session's cwd); :meth:`close` stops both."""

    def __init__(self, directory: Path) -> None:
        self.home, self.cwd = directory / "home", directory / "work"
        self.model = ScriptedModel(SCRIPT)
        self.asked: list[Any] = []  # the permission requests, each answered allow once
        self.stack = contextlib.ExitStack()

    def allow(self, request: Any, session: Any) -> str | None:
        self.asked.append(request)
        return permissions.allow_once(request, session)

    def start(self) -> Run:
        node = node_executable()  # fails when Node is missing; npm ci when a package is
        assert GEMINI.is_file(), f"{GEMINI} is missing: run `npm ci` in {HERE}"
        self.home.mkdir()
        self.cwd.mkdir()
        try:
            server = self.stack.enter_context(run_in_thread(self.model))
            self.client: Client = self.stack.enter_context(
                connect(
                    [node, *AGENT["argv"]],
                    cwd=self.cwd,
                    env=agent_env(server.url, self.home),
                    inherit_env=False,
                    timeout=START_TIMEOUT,
                    on_permission=self.allow,
                    # It takes seconds to exit once its stdin closes, as long after
                    # SIGTERM, and has nothing to flush: kill it (bounded, nothing left).
                    limits=Limits(close_grace=0.2, terminate_grace=0.2),
                )
            )
        except BaseException:
            self.stack.close()
            raise
        return self

    def close(self) -> None:
        self.stack.close()


#: The run being started since the first interop test (:func:`start_early`).
_early: list[Future[Run]] = []


def start_early(tmp_path_factory: pytest.TempPathFactory, items: list[pytest.Function]) -> bool:
    """Starts the server and the agent in a thread now (``conftest.py`` calls this at
    the first interop test, not under pytest-xdist), so that Node loads Gemini CLI
    (seconds of CPU) while the tests before this module's run."""
    if _early:
        return False
    _early.append(in_thread(Run(tmp_path_factory.mktemp("real-agent")).start, "real agent"))
    return True


def end_early() -> None:
    """Stops the run started early if no test took it."""
    while _early:
        with contextlib.suppress(Exception):
            _early.pop().result(timeout=START_TIMEOUT).close()


@pytest.fixture
def run(tmp_path: Path) -> Iterator[Run]:
    started = _early.pop().result(timeout=START_TIMEOUT) if _early else Run(tmp_path).start()
    try:
        yield started
    finally:
        started.close()


def test_a_real_agent_runs_a_turn_and_a_tool_call_on_the_scripted_model(run: Run) -> None:
    session = run.client.new_session(cwd=str(run.cwd))
    turn = session.run("say hello", timeout=TIMEOUT)
    assert (turn.stop_reason, turn.text) == ("end_turn", "Hello from the scripted model.")
    assert run.asked == []

    turn = session.run("make the marker", timeout=TIMEOUT)
    assert (turn.stop_reason, turn.text) == ("end_turn", "The marker file is made.")
    (request,) = run.asked
    call_id = request.subject.tool_call.tool_call_id
    assert COMMAND in str(request.subject.tool_call.title)
    assert session.model.entity("tool_call", call_id).status == "completed"
    assert session.model.violations == []
    assert (run.cwd / "marker.txt").is_file()  # the agent ran the command, once allowed
    run.model.check(all_steps_used=True)
    assert {r.api for r in run.model.requests} == {"gemini"}
