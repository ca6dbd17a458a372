"""acp_lite's blocking client drives ACP v1 agents written by others: one on the
official Python SDK (``agent-client-protocol`` 0.12.1, ``py_sdk_agent_v1.py``) and
one on the official TypeScript SDK's default, v1, export (``@agentclientprotocol/sdk``
2.4.0, ``ts_agent_v1.mjs``). Both agents implement the same scenarios, so every
journey runs against both (``[python-sdk]`` / ``[ts-sdk]``); one agent process per
SDK serves the whole module, each test opening fresh sessions.

What is asserted is what a user of acp_lite sees: ``protocol_version == 1``, the
turn's text and stop reason, tool call entities and statuses, the permission
outcome reaching the agent, plan entries, modes as a config option, the history
replayed by ``session/load``, the synthesized events marked, and a transcript
whose lines are the v1 wire (each validated against the v1 schema).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import pytest
import trio
from early import in_thread
from rawpipe import HERE, node_executable
from v1wire import validate_v1

import acp_lite
from acp_lite.errors import PromptRejected, TurnFailed
from acp_lite.limits import Limits

TIMEOUT = 20.0
#: Starting an agent: importing the Python SDK alone takes a second or more, many on
#: a busy machine (only a failing start waits this long).
LIMITS = Limits(default_timeout=TIMEOUT, connect_timeout=60.0)
TS_AGENT = HERE / "ts_agent_v1.mjs"


def agent_command(name: str, history: Path, py_sdk_agent: list[str]) -> list[str]:
    """The agent's command line; ``py_sdk_agent`` is the ``py_sdk_agent`` fixture
    (``py_sdk_fork.py``: the SDK imported once per test session, not per start)."""
    if name == "python-sdk":
        return [*py_sdk_agent, str(history)]
    return [node_executable(), str(TS_AGENT), str(history)]


class Agent:
    """One SDK agent process and acp_lite's client for it (module scope)."""

    client: acp_lite.Client

    def __init__(self, name: str, work: Path, history: Path) -> None:
        self.name = name
        self.work = work  # the sessions' cwd
        self.history = history  # where the agent saves its sessions
        #: The current test's permission answer (``on_permission``), reset per test.
        self.answer: Callable[[Any, Any], Any] = no_answer

    def wire(self, since: int = 0) -> list[tuple[str, dict[str, Any]]]:
        """The transcript from entry ``since`` on, as (direction, message), each
        message checked against the v1 schema."""
        entries = self.client.transcript[:]
        methods: dict[tuple[str, Any], str] = {}  # (requester, id) -> method
        for entry in entries:
            msg = entry.json()
            if "method" in msg and "id" in msg:
                methods[(entry.direction, msg["id"])] = msg["method"]
        out = []
        for entry in entries[since:]:
            msg = entry.json()
            validate_v1(msg, entry.direction, methods)
            out.append((entry.direction, msg))
        return out


@pytest.fixture(scope="module")
def echo_version_agent(
    tmp_path_factory: pytest.TempPathFactory, py_sdk_agent: list[str]
) -> Iterator[Any]:
    """The Python SDK agent with ``--echo-version``, started but not yet spoken to."""
    history = tmp_path_factory.mktemp("echo-version-history")
    command = [*py_sdk_agent, str(history), "--echo-version"]
    proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        for pipe in (proc.stdin, proc.stdout):
            if pipe is not None:
                pipe.close()


def _connect(name: str, tmp_path_factory: pytest.TempPathFactory, py_sdk_agent: list[str]) -> Agent:
    sdk = Agent(name, tmp_path_factory.mktemp(f"{name}-work"), tmp_path_factory.mktemp(name))
    sdk.client = acp_lite.connect(
        agent_command(name, sdk.history, py_sdk_agent),
        limits=LIMITS,
        on_permission=lambda request, session: sdk.answer(request, session),
    )
    return sdk


#: The TypeScript SDK agent's connection, made since the first interop test.
_early: list[Future[Agent]] = []


def start_early(tmp_path_factory: pytest.TempPathFactory, items: list[pytest.Function]) -> bool:
    """Connects to the TypeScript SDK's agent in a thread now
    (``tests/interop/conftest.py`` calls this at the first interop test), so Node
    loads the SDK while the ``[python-sdk]`` tests run; ``agent`` takes it. (The
    Python SDK's agents start fast: ``py_sdk_fork.py``.) Only if an ``[ts-sdk]`` test
    will run."""
    uses = [item for item in items if "agent" in item.fixturenames]
    if _early or not any(item.callspec.params.get("agent") == "ts-sdk" for item in uses):
        return False
    # The ``agent`` fixture takes it (and raises what it raised).
    _early.append(in_thread(lambda: _connect("ts-sdk", tmp_path_factory, []), "ts-sdk v1 connect"))
    return True


def end_early() -> None:
    """Closes the connection made early if no test took it."""
    while _early:
        with contextlib.suppress(Exception):
            _early.pop().result(timeout=120).client.close()


@pytest.fixture(scope="module", params=["python-sdk", "ts-sdk"])
def agent(
    request: pytest.FixtureRequest,
    tmp_path_factory: pytest.TempPathFactory,
    py_sdk_agent: list[str],
) -> Iterator[Agent]:
    name = request.param
    if name == "ts-sdk" and _early:
        sdk = _early.pop().result(timeout=120)
    else:
        sdk = _connect(name, tmp_path_factory, py_sdk_agent)
    with sdk.client:
        yield sdk


@pytest.fixture
def session(agent: Agent) -> Iterator[Any]:
    """A fresh session of the module's agent; the permission answer is reset."""
    agent.answer = no_answer
    yield agent.client.new_session(cwd=str(agent.work))
    agent.answer = no_answer


def no_answer(request: Any, session: Any) -> None:
    return None  # the cancelled outcome


def option_of(request: Any, kind: str) -> str:
    (option_id,) = [o.option_id for o in request.options if o.kind == kind]
    return str(option_id)


def turn_events(turn: Any) -> list[Any]:
    """The turn's events but the ``available_commands_update`` both agents send
    right after ``session/new``: it may arrive once the first prompt was sent."""
    return [e for e in turn.updates if e.tag != "available_commands_update"]


def updates(turn: Any, tag: str) -> list[Any]:
    return [e for e in turn.updates if e.tag == tag]


def prompt_request_id(turn: Any) -> Any:
    return turn.submission.request_id


# ---------------------------------------------------------------------- journeys


def test_initialize_negotiates_v1(agent: Agent) -> None:
    client = agent.client
    assert client.protocol_version == 1
    assert (
        client.agent_info.name
        == {"python-sdk": "py-sdk-v1-agent", "ts-sdk": "ts-sdk-v1-agent"}[agent.name]
    )
    assert client.agent_info.version == {"python-sdk": "0.12.1", "ts-sdk": "2.4.0"}[agent.name]
    (method,) = client.auth_methods
    assert (method.kind, method.method_id, method.name) == ("agent", "demo-key", "Demo key")
    assert client.agent_capabilities.session.extra["resume"] == {}  # loadSession
    # The raw answer is the SDK's v1 InitializeResponse, kept as received.
    raw = client.initialize_result
    assert raw["protocolVersion"] == 1 and raw["agentCapabilities"]["loadSession"] is True
    wire = agent.wire()
    ((_, init),) = [(d, m) for d, m in wire if m.get("method") == "initialize"]
    (answer,) = [m for d, m in wire if d == "recv" and m.get("id") == init["id"]]
    assert answer["result"] == raw
    # "auto" offered v2; the agent answered 1, in v1 fields.
    assert init["params"]["protocolVersion"] == 2


def test_echo_turn(agent: Agent, session: Any) -> None:
    mark = len(agent.client.transcript)
    turn = session.run("hello", timeout=TIMEOUT)
    assert (turn.stop_reason, turn.text, turn.error) == ("end_turn", "echo: hello", None)
    rid = prompt_request_id(turn)
    assert turn.message_id == f"v1-prompt-{rid}"
    # What v1 does not say is synthesized and marked: running, the user message
    # (the prompt's blocks, the synthetic id) and the idle made from the response.
    assert [(e.tag, e.synthesized) for e in turn_events(turn)] == [
        ("state_update", True),
        ("user_message", True),
        ("agent_message_chunk", False),
        ("agent_message_chunk", False),
        ("state_update", True),
    ]
    (user,) = updates(turn, "user_message")
    assert user.update.message_id == turn.message_id
    assert user.update.content[0].text == "hello"
    assert turn.updates[-1].update.stop_reason == "end_turn"
    # The agent's chunks are translated, their raw payload the v1 one as received.
    wire = agent.wire(mark)
    chunks = [
        m["params"]["update"]
        for d, m in wire
        if d == "recv"
        and m.get("method") == "session/update"
        and m["params"]["update"]["sessionUpdate"] == "agent_message_chunk"
    ]
    assert [e.raw for e in updates(turn, "agent_message_chunk")] == chunks
    wire_id = chunks[0].get("messageId")  # the TS agent sets one, the Python one does not
    (message,) = [e for e in session.model.timeline if e.kind == "agent_message"]
    assert message.id == (wire_id or f"v1-{rid}-agent") and message.text == "echo: hello"
    # The transcript is the v1 wire: the prompt answered with a bare stopReason,
    # no synthetic id anywhere in what was received.
    (answer,) = [m for d, m in wire if d == "recv" and m.get("id") == rid]
    assert answer["result"] == {"stopReason": "end_turn"}
    assert not any("v1-prompt-" in json.dumps(m) for d, m in wire if d == "recv")
    # The commands each new session gets (sent after the session/new response).
    assert [(c.type, c.name) for c in session.model.available_commands] == [
        ("command", "plan"),
        ("command", "think"),
    ]
    assert session.model.violations == []


def test_thought_then_message(session: Any) -> None:
    turn = session.run("think", timeout=TIMEOUT)
    assert (turn.stop_reason, turn.text) == ("end_turn", "done thinking")
    kinds = [(e.kind, e.text) for e in session.model.timeline]
    assert kinds == [
        ("user_message", "think"),
        ("agent_thought", "thinking about it"),
        ("agent_message", "done thinking"),
    ]


def test_an_echoed_prompt_is_the_user_message(session: Any) -> None:
    turn = session.run("recap this", timeout=TIMEOUT)
    assert (turn.stop_reason, turn.text) == ("end_turn", "recapped")
    # The agent echoed the prompt (user_message_chunk): that is the user message,
    # with the prompt's id; only running and idle are made up.
    assert [e.synthesized for e in turn_events(turn) if e.tag != "state_update"] == [False] * 2
    (user,) = [e for e in session.model.timeline if e.kind == "user_message"]
    assert (user.id, user.text) == (turn.message_id, "recap this")
    assert [e.synthesized for e in turn.updates if e.tag == "state_update"] == [True, True]


@pytest.mark.parametrize(
    ("answer", "stop_reason", "text", "tool_status"),
    [
        ("allow_once", "end_turn", "outcome: selected allow; permission granted", "completed"),
        ("reject_once", "end_turn", "outcome: selected reject; permission rejected", "failed"),
        (None, "cancelled", "", "failed"),
    ],
    ids=["allow", "reject", "cancelled"],
)
def test_tool_call_and_permission(
    agent: Agent, session: Any, answer: str | None, stop_reason: str, text: str, tool_status: str
) -> None:
    asked: list[Any] = []

    def decide(request: Any, asked_session: Any) -> str | None:
        asked.append((request, asked_session.id))
        return None if answer is None else option_of(request, answer)

    agent.answer = decide
    mark = len(agent.client.transcript)
    turn = session.run("permission", timeout=TIMEOUT)
    # The agent reports the outcome it received: the answer reached it as given.
    assert (turn.stop_reason, turn.text) == (stop_reason, text)
    ((request, asked_id),) = asked
    assert asked_id == session.id
    # v1 sends the tool call without a title: the one reported for it is used.
    assert request.title == "Write greeting.txt"
    assert [(o.option_id, o.kind) for o in request.options] == [
        ("allow", "allow_once"),
        ("reject", "reject_once"),
    ]
    tool_call_id = request.subject.tool_call.tool_call_id
    (tool,) = session.model.tool_calls
    assert (tool.id, tool.title, tool.tool_kind, tool.status) == (
        tool_call_id,
        "Write greeting.txt",
        "edit",
        tool_status,
    )
    wire = agent.wire(mark)
    (ask,) = [m for d, m in wire if d == "recv" and m.get("method") == "session/request_permission"]
    assert "title" not in ask["params"]["toolCall"]
    (reply,) = [m for d, m in wire if d == "send" and m.get("id") == ask["id"]]
    expected = {"outcome": "cancelled"} if answer is None else {"outcome": "selected"}
    if answer is not None:
        expected["optionId"] = option_of(request, answer)
    assert reply["result"] == {"outcome": expected}
    if answer == "allow_once":
        # The v1 diff {path, newText} becomes v2 changes + a git patch.
        (diff,) = tool.content
        assert [(c.operation, c.path) for c in diff.changes] == [
            ("add", str(agent.work / "greeting.txt"))
        ]
        assert "+hello" in diff.patch.text
        assert tool.raw_output == {"bytes": 6}
    assert session.model.violations == []


def test_a_permission_asked_first(agent: Agent, session: Any) -> None:
    """The agent asks before reporting anything, the tool call in the request: the
    user is asked with the prompt inserted and the session running."""
    seen: list[Any] = []

    def decide(request: Any, asked_session: Any) -> str:
        # The agent waits for this answer: nothing changes the session meanwhile.
        timeline = [(e.kind, e.id) for e in asked_session.timeline]
        seen.append((asked_session.state, timeline, request.title))
        return option_of(request, "allow_once")

    agent.answer = decide
    turn = session.run("ask", timeout=TIMEOUT)
    assert (turn.stop_reason, turn.text) == ("end_turn", "ran ls")
    ((state, timeline, title),) = seen
    (tool,) = session.model.tool_calls
    assert (state, title) == ("running", "Run ls")
    assert timeline == [("user_message", turn.message_id), ("tool_call", tool.id)]
    assert (tool.title, tool.tool_kind, tool.status) == ("Run ls", "execute", "completed")
    assert (tool.raw_input, tool.raw_output) == ({"command": "ls"}, {"files": ["a.txt"]})
    assert session.model.violations == []


def test_cancel_a_running_turn(agent: Agent, session: Any) -> None:
    mark = len(agent.client.transcript)
    submission = session.prompt("slow")
    assert submission.status == "inserted"  # at the agent's first update
    session.cancel(wait=True, timeout=TIMEOUT)
    assert submission.done and submission.stop_reason == "cancelled"
    assert session.model.stop_reason == "cancelled" and session.model.state == "idle"
    (tool,) = session.model.tool_calls
    assert (tool.title, tool.status, tool.text) == ("Long computation", "failed", "interrupted")
    sent = [m for d, m in agent.wire(mark) if d == "send" and m.get("method") == "session/cancel"]
    assert sent == [
        {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": session.id}}
    ]
    # The session takes the next prompt.
    assert session.run("after", timeout=TIMEOUT).text == "echo: after"


def test_cancel_with_a_pending_permission(agent: Agent, session: Any) -> None:
    """v1 (Cancellation): the client answers pending permission requests with the
    cancelled outcome; the blocked callback's late "allow" is never sent."""
    asked = threading.Event()
    release = threading.Event()

    def decide(request: Any, asked_session: Any) -> str:
        asked.set()
        release.wait(TIMEOUT)
        return option_of(request, "allow_once")

    agent.answer = decide
    mark = len(agent.client.transcript)
    submission = session.prompt("permission")
    assert asked.wait(TIMEOUT)
    session.cancel(wait=True, timeout=TIMEOUT)
    release.set()
    assert submission.stop_reason == "cancelled"
    (tool,) = session.model.tool_calls
    assert tool.status == "failed"
    wire = agent.wire(mark)
    (ask,) = [m for d, m in wire if d == "recv" and m.get("method") == "session/request_permission"]
    replies = [m for d, m in wire if d == "send" and m.get("id") == ask["id"]]
    assert [r["result"] for r in replies] == [{"outcome": {"outcome": "cancelled"}}]


def test_plan_entries(session: Any) -> None:
    turn = session.run("plan", timeout=TIMEOUT)
    assert (turn.stop_reason, turn.text) == ("end_turn", "planned")
    assert [e.tag for e in turn_events(turn) if not e.synthesized] == [
        "plan_update",
        "plan_update",
        "agent_message_chunk",
    ]
    (plan,) = session.model.plans  # v1 sends the whole list each time: one plan
    assert plan.id == "v1-plan"
    assert [(e.content, e.priority, e.status) for e in plan.entries] == [
        ("Read the code", "high", "completed"),
        ("Write the fix", "high", "in_progress"),
        ("Run the tests", "low", "pending"),
    ]


def values(options: Any) -> dict[str, Any]:
    return {o.config_id: o.current_value for o in options}


def test_modes_are_a_config_option(agent: Agent, session: Any) -> None:
    """v1 ``modes`` become a select option ``mode`` next to the agent's own options;
    setting it is ``session/set_mode``."""
    model_option, option = session.model.config_options
    assert (option.config_id, option.category, option.current_value) == ("mode", "mode", "ask")
    assert [(o.value, o.name) for o in option.options] == [("ask", "Ask"), ("code", "Code")]
    assert option.meta == {"acp_lite/v1": {"synthesized": True, "from": "modes"}}
    assert model_option.config_id == "model" and not model_option.meta  # the agent's own
    mark = len(agent.client.transcript)
    response = session.set_config_option("mode", "code", timeout=TIMEOUT)
    assert values(response.config_options) == {"model": "fast", "mode": "code"}
    assert values(session.model.config_options) == {"model": "fast", "mode": "code"}
    (set_mode,) = [m for d, m in agent.wire(mark) if d == "send"]
    assert set_mode["method"] == "session/set_mode"
    assert set_mode["params"] == {"sessionId": session.id, "modeId": "code"}
    # The agent switches the mode itself: current_mode_update.
    turn = session.run("mode", timeout=TIMEOUT)
    assert turn.text == "mode is now ask"
    (change,) = updates(turn, "config_option_update")
    assert change.raw == {"sessionUpdate": "current_mode_update", "currentModeId": "ask"}
    assert values(session.model.config_options) == {"model": "fast", "mode": "ask"}


def test_a_config_option_of_the_agent(agent: Agent, session: Any) -> None:
    """v1 ``configOptions`` (``id``, value groups keyed ``group``) in the v2 shape;
    setting one sends the v1 request, a value id without ``type``."""
    option = session.model.config_options[0]
    assert (option.config_id, option.name, option.category) == ("model", "Model", "model")
    (group,) = option.options
    assert (group.group_id, group.name) == ("house", "House models")
    assert [(o.value, o.name) for o in group.options] == [("fast", "Fast"), ("smart", "Smart")]
    mark = len(agent.client.transcript)
    response = session.set_config_option("model", "smart", timeout=TIMEOUT)
    assert values(response.config_options) == {"model": "smart", "mode": "ask"}
    assert values(session.model.config_options) == {"model": "smart", "mode": "ask"}
    (request,) = [m for d, m in agent.wire(mark) if d == "send"]
    assert request["method"] == "session/set_config_option"
    assert request["params"] == {"sessionId": session.id, "configId": "model", "value": "smart"}


def test_sessions_run_at_once(agent: Agent) -> None:
    """Three sessions of one v1 connection, their turns at the same time (one thread
    each): every turn's synthesized events and ids stay in its own session."""
    agent.answer = lambda request, asked: option_of(request, "allow_once")
    sessions = [agent.client.new_session(cwd=str(agent.work)) for _ in range(3)]
    turns: dict[str, Any] = {}

    def run(session: Any, text: str) -> None:
        turns[session.id] = session.run(text, timeout=TIMEOUT)

    texts = ["plan", "hello", "permission"]
    threads = [
        threading.Thread(target=run, args=pair) for pair in zip(sessions, texts, strict=True)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(TIMEOUT + 1)
    results = [(turns[s.id].stop_reason, turns[s.id].text) for s in sessions]
    assert results == [
        ("end_turn", "planned"),
        ("end_turn", "echo: hello"),
        ("end_turn", "outcome: selected allow; permission granted"),
    ]
    for session, text in zip(sessions, texts, strict=True):
        (user,) = [e for e in session.model.timeline if e.kind == "user_message"]
        assert (user.id, user.text) == (turns[session.id].message_id, text)
        assert session.model.violations == []
    assert len({turns[s.id].message_id for s in sessions}) == 3
    agent.answer = no_answer


def test_refusal_is_a_stop_reason(session: Any) -> None:
    turn = session.run("refuse", timeout=TIMEOUT)
    assert (turn.stop_reason, turn.text) == ("refusal", "I cannot help with that")
    with pytest.raises(TurnFailed, match="refusal"):
        turn.raise_for_stop()


def test_error_after_updates_ends_the_turn_with_error(agent: Agent, session: Any) -> None:
    turn = session.run("fail", timeout=TIMEOUT)
    assert turn.stop_reason == "error" and turn.message_id  # inserted, then failed
    assert (turn.error.code, turn.error.message) == (-32603, "Internal error")
    assert turn.error.data == {"details": "simulated model failure"}
    (tool,) = session.model.tool_calls
    assert (tool.title, tool.status) == ("Call the model", "failed")
    assert turn.updates[-1].synthesized and turn.updates[-1].update.stop_reason == "error"
    with pytest.raises(TurnFailed, match="Internal error"):
        turn.raise_for_stop()


def test_error_before_updates_is_a_rejection(session: Any) -> None:
    with pytest.raises(PromptRejected) as rejected:
        session.run("invalid", timeout=TIMEOUT)
    assert rejected.value.code == -32602
    assert rejected.value.data == {"reason": "this prompt is refused up front"}
    assert [e.kind for e in session.model.timeline] == []  # nothing was inserted
    assert session.model.state == "idle"
    assert session.run("again", timeout=TIMEOUT).text == "echo: again"


def test_login_is_authenticate(agent: Agent) -> None:
    mark = len(agent.client.transcript)
    agent.client.login("demo-key", timeout=TIMEOUT)
    (request, answer) = [m for _, m in agent.wire(mark)]
    assert (request["method"], request["params"]) == ("authenticate", {"methodId": "demo-key"})
    assert answer == {"jsonrpc": "2.0", "id": request["id"], "result": {}}


def test_load_replays_the_saved_history(agent: Agent, session: Any) -> None:
    agent.answer = lambda request, asked: option_of(request, "allow_once")
    session.set_config_option("model", "smart", timeout=TIMEOUT)
    for text in ("hello", "permission", "plan"):
        session.run(text, timeout=TIMEOUT).raise_for_stop()
    # A session saved by an earlier run of the agent: the same history, another id.
    saved = f"saved-{session.id}"
    shutil.copy(agent.history / f"{session.id}.json", agent.history / f"{saved}.json")
    listed = agent.client.list_sessions(cwd=str(agent.work), timeout=TIMEOUT)
    assert {saved, session.id} <= {s.session_id for s in listed}
    mark = len(agent.client.transcript)
    loaded = agent.client.resume_session(saved, cwd=str(agent.work), replay=True, timeout=TIMEOUT)
    (load,) = [m for d, m in agent.wire(mark) if d == "send"]
    assert load["method"] == "session/load" and load["params"]["sessionId"] == saved
    model = loaded.model
    assert model.state == "idle"
    # Every replayed update is marked; only the closing idle is made up.
    assert all(e.replayed for e in model.events)
    assert [e.synthesized for e in model.events].count(True) == 1
    assert model.events[-1].synthesized and model.events[-1].tag == "state_update"
    assert [(e.kind, e.text) for e in model.timeline if e.kind.endswith("message")] == [
        ("user_message", "hello"),
        ("agent_message", "echo: hello"),
        ("user_message", "permission"),
        ("agent_message", "outcome: selected allow; permission granted"),
        ("user_message", "plan"),
        ("agent_message", "planned"),
    ]
    (tool,) = model.tool_calls
    assert (tool.title, tool.status, tool.replayed) == ("Write greeting.txt", "completed", True)
    assert [e.status for e in model.latest_plan.entries] == ["completed", "in_progress", "pending"]
    assert values(model.config_options) == {"model": "smart", "mode": "ask"}
    # The loaded session is live.
    turn = loaded.run("after load", timeout=TIMEOUT)
    assert (turn.stop_reason, turn.text) == ("end_turn", "echo: after load")
    assert not any(e.replayed for e in turn.updates)
    assert model.violations == []


def test_python_sdk_example_echo_initialize(echo_version_agent: Any) -> None:
    """The SDK's example echo agent answers ``InitializeResponse(protocol_version=
    <requested>)``: asked for 2 it writes a bare ``{"protocolVersion": 2}`` (no
    ``info``, which v2 requires). acp_lite reads that as v1, and the agent works."""
    proc = echo_version_agent
    assert proc.stdin is not None and proc.stdout is not None
    fds = (proc.stdin.fileno(), proc.stdout.fileno())

    def open_streams() -> tuple[trio.lowlevel.FdStream, trio.lowlevel.FdStream]:
        return trio.lowlevel.FdStream(os.dup(fds[0])), trio.lowlevel.FdStream(os.dup(fds[1]))

    with acp_lite.connect_streams(open_streams, limits=LIMITS, name="echo-version") as client:
        # The client's copy is now the agent's only input: closing the client ends
        # it, the agent exits and its output ends (else closing waits out its grace).
        proc.stdin.close()
        assert client.initialize_result == {"protocolVersion": 2}
        assert client.protocol_version == 1
        assert client.agent_info.name == "unknown"  # v1 agentInfo is optional
        session = client.new_session(cwd=str(HERE))
        turn = session.run("hello", timeout=TIMEOUT)
        assert (turn.stop_reason, turn.text) == ("end_turn", "echo: hello")
        assert session.model.violations == []
    assert proc.wait(TIMEOUT) == 0  # it saw the end of its input
