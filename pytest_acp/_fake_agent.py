"""The ``acp_fake_agent`` fixture: a scripted fake agent for testing code that drives one.

In the spirit of pytest-httpserver: the test says which prompts it expects and
what the agent does for each, runs the code under test against the fake (in
this process with :meth:`FakeAgent.connect`, or as a child process with
:attr:`FakeAgent.command`), and the test fails when its call ends (the plugin
checks) if an expectation was not met, a request was not expected, or the client
answered a permission request otherwise than expected::

    def test_my_bot(acp_fake_agent):
        acp_fake_agent.expect_prompt("fix the bug").reply(
            thought="Looking", text="Done", stop_reason="end_turn")
        run_my_bot(acp_fake_agent.command)

The expectations compile to a script of the reference agent (``expect``
scripts, docs/reference-agent.md), which plays them in either place; its events
come back by callback (in this process) or through a report file (processes).
"""

from __future__ import annotations

import json
import re
import sys
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Literal, TypeVar

import pytest

from pytest_acp._diagnostics import fail_test
from pytest_acp._fake_events import (
    FakeEvent,
    PermissionAnswer,
    ReceivedPrompt,
    ReceivedRequest,
    UnexpectedRequest,
    event_from,
)
from pytest_acp._fake_script import JsonObject, PermissionRequest, PromptExpectation

if TYPE_CHECKING:
    from acp_lite.aio import PipeAgent
    from acp_lite.client import Client, Session
    from acp_lite.protocol import RequestPermissionRequest

__all__ = ["FakeAgent", "FakeAgentError", "acp_fake_agent", "call_problems", "failure_message"]

_E = TypeVar("_E", ReceivedPrompt, ReceivedRequest, UnexpectedRequest, PermissionAnswer)


class FakeAgentError(AssertionError):
    """The client did not do what the fake agent's expectations say."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("the fake ACP agent's expectations failed:\n" + "\n".join(problems))
        self.problems = problems


FakeAgentError.__module__ = "pytest_acp"  # its public home, shown in failures


class FakeAgent:
    """A scripted ACP agent (the ``acp_fake_agent`` fixture); see the module docstring.

    ``ordered`` (default ``True``): prompts must come in the order expected;
    ``False`` lets each prompt meet any expectation still owed. ``protocol`` is the
    ACP version the agent speaks (``2``, or ``1``: one blocking ``session/prompt``
    per turn). Set both before the agent starts. Each connection (or process)
    plays the whole script and must meet every expectation.
    """

    def __init__(self, directory: Path) -> None:
        self._dir = directory
        self._expectations: list[PromptExpectation] = []
        self._ordered = True
        self._protocol: Literal[1, 2] = 2
        self._allowed: list[str] = []
        self._initialize: dict[str, object] = {}
        self._protocol_version: int | None = None
        self._session_updates: list[dict[str, object]] = []
        self._required: list[str] = []
        self._lock = threading.Lock()
        self._in_process: list[tuple[str, dict[str, object]]] = []
        self._connections = 0
        self._clients: list[Client] = []
        self._agents: list[PipeAgent] = []
        self._script_file: Path | None = None
        self.report_file = directory / "events.ndjson"

    # -- configuration -----------------------------------------------------------------

    @property
    def ordered(self) -> bool:
        """Whether prompts must come in the order of the expectations."""
        return self._ordered

    @ordered.setter
    def ordered(self, value: bool) -> None:
        self._ordered = value
        self._changed()

    @property
    def protocol(self) -> Literal[1, 2]:
        """The ACP version the agent speaks."""
        return self._protocol

    @protocol.setter
    def protocol(self, value: Literal[1, 2]) -> None:
        if value not in (1, 2):
            raise ValueError(f"protocol must be 1 or 2, not {value!r}")
        self._protocol = value
        self._changed()

    def expect_initialize(
        self,
        *,
        protocol_version: int | None = None,
        agent_info: JsonObject | None = None,
        capabilities: JsonObject | None = None,
        auth_methods: Sequence[JsonObject] | None = None,
    ) -> None:
        """Require ``initialize`` and choose parts of the answer (v2 shapes; a v1
        agent translates them). Without this call the agent answers as the
        reference agent does, and does not require it."""
        self._check_not_started()
        self._require("initialize")
        self._protocol_version = protocol_version
        parts = {"info": agent_info, "capabilities": capabilities, "authMethods": auth_methods}
        for key, value in parts.items():
            if value is not None:
                self._initialize[key] = _json(value)
        self._changed()

    def expect_new_session(self, *, updates: Sequence[JsonObject] = ()) -> None:
        """Require ``session/new``; ``updates`` are sent for each new session before
        the response (which the spec allows). Without this call ``session/new`` is
        answered and not required."""
        self._check_not_started()
        self._require("session/new")
        self._session_updates = [_json_object(u) for u in updates]
        self._changed()

    def allow(self, *methods: str) -> None:
        """Answer these methods too, as the reference agent does (``session/list``,
        ``session/set_config_option`` ...; v1 names arrive translated to v2:
        ``session/load`` is ``session/resume``). Other methods are unexpected."""
        self._allowed += [m for m in methods if m not in self._allowed]
        self._changed()

    def expect_prompt(
        self, prompt: str | re.Pattern[str] | None = None, *, label: str | None = None
    ) -> PromptExpectation:
        """Expect a ``session/prompt`` whose text (its text blocks joined by spaces)
        is ``prompt`` (a string: exactly; a compiled pattern: ``re.search``;
        ``None``: any prompt). Returns the
        expectation, to script the turn (:class:`PromptExpectation`)."""
        self._check_not_started()
        expectation = PromptExpectation(self, len(self._expectations), prompt, label)
        self._expectations.append(expectation)
        self._changed()
        return expectation

    def _require(self, method: str) -> None:
        if method not in self._required:
            self._required.append(method)

    # -- the script --------------------------------------------------------------------

    @property
    def expectations(self) -> list[PromptExpectation]:
        """The prompt expectations, in order."""
        return list(self._expectations)

    def script(self) -> dict[str, object]:
        """The reference-agent script these expectations compile to (JSON)."""
        script: dict[str, object] = {
            "name": "acp_fake_agent",
            "expect": "ordered" if self._ordered else "unordered",
            "turns": [e.compile() for e in self._expectations],
        }
        if self._allowed:
            script["allowed_methods"] = list(self._allowed)
        if self._initialize:
            script["initialize_result"] = dict(self._initialize)
        if self._protocol_version is not None:
            script["protocol_version"] = self._protocol_version
        if self._session_updates:
            script["session_updates"] = list(self._session_updates)
        return script

    def _changed(self) -> None:
        self._check_not_started()
        # A command handed out already names the script file: keep it current.
        if self._script_file is not None:
            self._write_script()

    def _check_not_started(self) -> None:
        # An agent plays the script it started with: a change it cannot see would
        # only show up at teardown, as expectations "not asked".
        started = self.connections()
        if started:
            raise FakeAgentError(
                [
                    f"scripted after the agent started ({', '.join(started)}): each "
                    "connection plays the script it started with; script every "
                    "expectation before the code under test connects"
                ]
            )

    def _write_script(self) -> Path:
        path = self._dir / "script.json"
        path.write_text(json.dumps(self.script(), indent=1), encoding="utf-8")
        self._script_file = path
        return path

    # -- running it --------------------------------------------------------------------

    @property
    def command(self) -> list[str]:
        """The argv of a child process playing this script on stdio (for black-box
        clients); what it sees is reported back to the fixture through a file."""
        argv = [sys.executable, "-m", "acp_lite.testing.agent", "--script"]
        argv += [str(self._write_script()), "--report", str(self.report_file)]
        return argv + (["--protocol", "1"] if self._protocol == 1 else [])

    def in_process_agent(self) -> PipeAgent:
        """A new agent in this process playing this script, for
        ``acp_lite.connect_in_memory`` / ``acp_lite.aio.connect_in_memory``
        (one agent serves one connection)."""
        # The one import of the reference agent outside it (tests/test_import_boundary.py).
        from acp_lite.testing.inprocess import InProcessAgent

        with self._lock:
            self._connections += 1
            name = f"in-process #{self._connections}"

        def record(event: dict[str, object]) -> None:
            with self._lock:
                self._in_process.append((name, event))

        agent = InProcessAgent(script=self.script(), protocol=self._protocol, events=record)
        self._agents.append(agent)
        return agent

    def connect(
        self,
        *,
        timeout: float | None = None,
        on_permission: Callable[[RequestPermissionRequest, Session], str | None] | None = None,
        protocol_version: int | Literal["auto"] = "auto",
    ) -> Client:
        """A blocking ``acp_lite.Client`` connected to a new in-process agent
        (closed at teardown if the test did not close it). ``on_permission`` is a
        permission policy (``acp_lite.permissions``; default: reject)."""
        from pytest_acp._inprocess import connect_in_process

        client = connect_in_process(
            self.in_process_agent(),
            timeout=timeout,
            on_permission=on_permission,
            protocol_version=protocol_version,
        )
        self._clients.append(client)
        return client

    def close(self) -> None:
        """Close the clients :meth:`connect` opened and stop the in-process agents."""
        for client in self._clients:
            client.close()
        for agent in self._agents:
            agent.close()

    # -- what it saw -------------------------------------------------------------------

    def _raw_events(self) -> list[tuple[str, dict[str, object]]]:
        with self._lock:
            events = list(self._in_process)
        if self.report_file.exists():
            for line in self.report_file.read_text(encoding="utf-8").splitlines():
                try:
                    data = json.loads(line)
                except ValueError:
                    continue  # a line cut short by a killed process
                if isinstance(data, dict):
                    events.append((f"pid {data.get('pid')}", data))
        return events

    def connections(self) -> list[str]:
        """The connections (in-process agents, processes) that started, in order."""
        return [name for name, data in self._raw_events() if data.get("event") == "start"]

    @property
    def events(self) -> list[FakeEvent]:
        """Everything the agent saw, per connection in order."""
        found = (event_from(data, name) for name, data in self._raw_events())
        return [event for event in found if event is not None]

    def _of(self, kind: type[_E]) -> list[_E]:
        return [e for e in self.events if isinstance(e, kind)]

    @property
    def prompts(self) -> list[ReceivedPrompt]:
        """The prompts that met an expectation."""
        return self._of(ReceivedPrompt)

    @property
    def unexpected(self) -> list[UnexpectedRequest]:
        """The requests nothing expected (each got a JSON-RPC error)."""
        return self._of(UnexpectedRequest)

    @property
    def permission_answers(self) -> list[PermissionAnswer]:
        """The client's answers to the scripted permission requests."""
        return self._of(PermissionAnswer)

    def _answer(self, label: str) -> PermissionAnswer | None:
        return next((a for a in self.permission_answers if a.label == label), None)

    def problems(self) -> list[str]:
        """What went against the expectations, one line each (empty: all met)."""
        events = self.events
        connections = self.connections()
        problems = [
            f"{e.connection}: {e.message}" for e in events if isinstance(e, UnexpectedRequest)
        ]
        if not connections:
            owed = [f"{m} was never requested" for m in self._required]
            owed += [f"{e.describe()} was never asked" for e in self._expectations]
            if owed:
                problems.append("the fake agent was never started (no connection, no process)")
                problems += [f"  not met: {line}" for line in owed]
            return problems
        for name in connections:
            mine = [e for e in events if e.connection == name]
            methods = {e.method for e in mine if isinstance(e, ReceivedRequest)}
            met = {e.expectation for e in mine if isinstance(e, ReceivedPrompt)}
            answers = {e.label: e for e in mine if isinstance(e, PermissionAnswer)}
            problems += [
                f"{name}: {m} was never requested" for m in self._required if m not in methods
            ]
            for expectation in self._expectations:
                if expectation.index not in met:
                    problems.append(f"{name}: not asked: {expectation.describe()}")
                    continue
                for request in expectation.permissions():
                    problems += _permission_problems(name, request, answers.get(request.label))
        return problems

    def check(self) -> None:
        """Raise :class:`FakeAgentError` listing the problems, if there are any (the
        fixture does this at teardown)."""
        problems = self.problems()
        if problems:
            raise FakeAgentError(problems)


def _permission_problems(
    connection: str, request: PermissionRequest, answer: PermissionAnswer | None
) -> list[str]:
    if request.expect is None:
        return []
    where = f"{connection}: permission {request.title!r} ({request.label})"
    if answer is None:
        return [f"{where}: never answered (expected {request.expect})"]
    if not answer.matches(request.expect):
        return [f"{where}: expected {request.expect}, the client answered {answer.describe()}"]
    return []


def _json(value: object) -> object:
    """A JSON copy (mappings and sequences become dicts and lists)."""
    if isinstance(value, Mapping):
        return {str(k): _json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json(v) for v in value]
    return value


def _json_object(value: Mapping[str, object]) -> dict[str, object]:
    return {str(k): _json(v) for k, v in value.items()}


_FAKE = pytest.StashKey[FakeAgent]()
_REPORTED = pytest.StashKey[list[str]]()


def call_problems(item: pytest.Item) -> list[str]:
    """The problems of ``item``'s fake agent at the end of its call phase (none when
    it uses no ``acp_fake_agent``): reported with the call, as a failure of the test
    (pytest-httpserver's way), so the teardown does not report them again."""
    fake = item.stash.get(_FAKE, None)
    if fake is None:
        return []
    problems = fake.problems()
    item.stash[_REPORTED] = problems
    return problems


def failure_message(problems: list[str]) -> str:
    """What a test failing on ``problems`` says."""
    return str(FakeAgentError(problems))


@pytest.fixture
def acp_fake_agent(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[FakeAgent]:
    """A scripted fake ACP agent (:class:`FakeAgent`) whose expectations are checked
    when the test ends: an unmet one fails the test."""
    fake = FakeAgent(tmp_path_factory.mktemp("acp-fake-agent"))
    item: pytest.Item = request.node
    item.stash[_FAKE] = fake  # the plugin checks it at the end of the call
    try:
        yield fake
    finally:
        fake.close()
    # What the call's end did not see (the agents stopped since, or the test's
    # call never ran): the rest was reported with the call.
    reported = item.stash.get(_REPORTED, [])
    problems = [p for p in fake.problems() if p not in reported]
    if problems:
        fail_test(failure_message(problems))
