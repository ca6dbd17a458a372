"""The blocking Client / Session against the reference agent: in this process, or a real
subprocess where the test is about the process (pid, exit, stderr, env, cwd)."""

from __future__ import annotations

import inspect
import os
import re
import subprocess
import threading
import time

import attrs
import pytest
import trio

import acp_lite.client as blocking
from acp_lite import connect_in_memory
from acp_lite.aio import AsyncClient, AsyncSession
from acp_lite.errors import AgentExited, AgentStartFailed, Timeout, UnsupportedProtocolVersion
from acp_lite.hookspec import hookimpl
from acp_lite.sync._mirror import mirrored_async
from acp_lite.sync._portal import ClientClosed
from acp_lite.testing import InProcessAgent, agent_command
from acp_lite.turn import Turn

from .conftest import FAST, portal_threads, process_gone, wait_for


def _public(cls: type) -> set[str]:
    return {name for name in dir(cls) if not name.startswith("_")}


#: Blocking methods that mirror an ``async def`` but are written by hand, because their
#: blocking semantics differ (see the comment in each). Every other async method must
#: be a ``blocking(...)`` twin: adding an async method needs one line, not a wrapper.
HAND_WRITTEN = {
    (AsyncClient, "close"),  # stops the trio thread itself
    (AsyncSession, "iter_updates"),  # a blocking generator, batch per thread hop
}


def _text(annotation: object) -> str:
    return annotation if isinstance(annotation, str) else inspect.formatannotation(annotation)


def _blocking_annotation(annotation: object) -> str:
    """An async-side annotation as the blocking side must spell it."""
    return re.sub(r"\bAsync(Session|Client|Iterator)\b", r"\1", _text(annotation))


def _assert_same_signature(amember: object, member: object, where: tuple[str, ...]) -> None:
    asig = inspect.signature(amember)  # type: ignore[arg-type]
    sig = inspect.signature(member)  # type: ignore[arg-type]
    assert list(asig.parameters) == list(sig.parameters), where
    for key, aparam in asig.parameters.items():
        param = sig.parameters[key]
        assert aparam.default == param.default, (*where, key)
        assert aparam.kind == param.kind, (*where, key)
        assert _blocking_annotation(aparam.annotation) == _blocking_annotation(param.annotation), (
            *where,
            key,
        )
    # Also catches a twin that forgot ``returns=Session`` (it would return a Session
    # typed as AsyncSession).
    assert _blocking_annotation(asig.return_annotation) == _text(sig.return_annotation), (
        *where,
        "return",
    )


def test_sync_names_mirror_async_names() -> None:
    """httpx style: the same public names on both sides, the same parameters."""
    # Attributes set in __init__ are not on the class.
    aclient = _public(AsyncClient) | {"initialize_response", "initialize_result"}
    asession = _public(AsyncSession) | {"id", "model"}
    session = _public(blocking.Session) | {"id"}
    # Facade-only extras: the async object underneath, and the owning client.
    assert _public(blocking.Client) - aclient == {"async_client"}
    assert aclient - _public(blocking.Client) == {"aclose"}
    assert session - asession == {"async_session", "client"}
    assert asession - session == set()
    checked = set()
    for acls, cls in ((AsyncClient, blocking.Client), (AsyncSession, blocking.Session)):
        for name in _public(acls) - {"aclose"}:
            amember = inspect.getattr_static(acls, name)
            member = inspect.getattr_static(cls, name)
            where = (cls.__name__, name)
            if isinstance(amember, property):
                assert isinstance(member, property), where
                assert _blocking_annotation(
                    inspect.signature(amember.fget).return_annotation  # type: ignore[arg-type]
                ) == _text(
                    inspect.signature(member.fget).return_annotation  # type: ignore[arg-type]
                ), where
                continue
            assert inspect.isfunction(amember) and inspect.isfunction(member), where
            # Never async on the blocking side; the same parameters (names, kinds,
            # defaults, annotations) and result type.
            assert not inspect.iscoroutinefunction(member), where
            assert not inspect.isasyncgenfunction(member), where
            _assert_same_signature(amember, member, where)
            checked.add(name)
            if not _is_async(amember):
                continue
            if (acls, name) in HAND_WRITTEN:
                assert mirrored_async(member) is None, where
                continue
            # A one-line twin of exactly this async method, carrying its docs.
            assert mirrored_async(member) is amember, where
            assert member.__name__ == name, where
            assert member.__qualname__ == f"{cls.__name__}.{name}", where
            assert member.__doc__ == amember.__doc__, where
    # Guard the guard: the loop really saw the methods of both kinds.
    assert {"new_session", "request", "close", "wait_idle", "run", "on_update"} <= checked
    for acls, name in HAND_WRITTEN:
        assert _is_async(getattr(acls, name)), name


def _is_async(fn: object) -> bool:
    """A coroutine function, an async generator function, or a function returning an
    async iterator (``iter_updates`` takes its starting point when called)."""
    if inspect.iscoroutinefunction(fn) or inspect.isasyncgenfunction(fn):
        return True
    return "AsyncIterator" in str(inspect.signature(fn).return_annotation)


def test_echo_round_trip_and_reads() -> None:
    with blocking.connect(agent_command("echo"), limits=FAST) as client:
        assert client.protocol_version == 2
        assert client.agent_info.name == "acp-lite-reference-agent"
        session = client.new_session(cwd="/tmp")
        assert client.sessions == {session.id: session}
        assert client.session(session.id) is session
        turn = session.run("hello blocking world")
        assert isinstance(turn, Turn)
        assert turn.stop_reason == "end_turn" and turn.error is None
        assert turn.text == "hello blocking world"
        assert turn.message_id == turn.submission.message_id is not None
        tags = [event.tag for event in turn.updates]
        assert "agent_message_chunk" in tags and tags[-1] == "state_update"
        assert session.state == "idle" and session.stop_reason == "end_turn"
        assert session.text() == "hello blocking world"
        assert session.text(turn.submission) == "hello blocking world"
        assert len(session.updates) >= len(turn.updates)
        assert [e.kind for e in session.timeline][:2] == ["user_message", "agent_message"]
        assert client.request("_acp_lite/ping", {"n": 1}) == {"echo": {"n": 1}}
        client.notify("_acp_lite/hello", {"x": 1})
        assert any("ready" in line for line in client.stderr_tail())
        sent = [e.json().get("method") for e in client.transcript if e.direction == "send"]
        assert sent[:2] == ["initialize", "session/new"] and "_acp_lite/hello" in sent
        pid = client.pid
        assert pid is not None
    assert client.closed
    assert client.returncode is not None and process_gone(pid)
    assert not portal_threads()
    with pytest.raises(ClientClosed):
        session.run("after close")
    # Reads still work after close (nothing mutates the state any more).
    assert session.text() == "hello blocking world"
    assert len(client.transcript) > 0


def test_prompt_then_wait_idle_and_submit() -> None:
    with connect_in_memory(InProcessAgent("streaming"), limits=FAST) as client:
        session = client.new_session(cwd="/tmp")
        submission = session.prompt("one two three")
        assert submission.status == "inserted" and submission.message_id
        session.wait_idle()
        assert submission.done and submission.stop_reason == "end_turn"
        pending = session.submit("again")
        assert session.wait_inserted(pending) is pending
        session.wait_quiet(grace=0.05)
        assert pending.done
        assert session.withdraw(pending) is False  # already answered


def test_list_resume_delete_sessions() -> None:
    with connect_in_memory(InProcessAgent("many_sessions", count=7), limits=FAST) as client:
        infos = client.list_sessions()
        assert sorted(i.session_id for i in infos) == sorted(f"stored-{i}" for i in range(1, 8))
        session = client.resume_session("stored-3", "/tmp", replay=True)
        assert session.id == "stored-3"
        assert session.updates and all(e.replayed for e in session.updates[:2])
        assert "answer 3" in session.text()
        client.delete_session("stored-4")
        assert "stored-4" not in [i.session_id for i in client.list_sessions()]


def test_login_when_auth_required() -> None:
    with connect_in_memory(InProcessAgent("auth_required"), limits=FAST) as client:
        assert client.auth_methods
        client.login(client.auth_methods[0].method_id)
        assert client.new_session(cwd="/tmp").id


def test_failure_after_insertion_is_on_the_turn() -> None:
    with connect_in_memory(InProcessAgent("failure"), limits=FAST) as client:
        turn = client.new_session(cwd="/tmp").run("go")
        assert turn.stop_reason == "error"
        assert turn.error is not None
        with pytest.raises(Exception, match="Model provider unavailable"):
            turn.raise_for_stop()


def test_timeout_names_what_was_awaited_and_the_state() -> None:
    with blocking.connect(agent_command("hang"), limits=FAST) as client:
        session = client.new_session(cwd="/tmp")
        start = time.monotonic()
        with pytest.raises(Timeout) as info:
            session.run("are you there?", timeout=0.2)
        assert time.monotonic() - start < 3
        text = str(info.value)
        assert "session/prompt" in text and "0.2s" in text
        assert f"session={session.id}" in text
        assert info.value.state == "running" and "session state=running" in text
        assert info.value.stderr_tail  # the agent's stderr is in the error


def test_unresponsive_agent_times_out_at_connect_and_leaves_nothing() -> None:
    start = time.monotonic()
    with pytest.raises(Timeout, match="initialize"):
        blocking.connect(agent_command("unresponsive"), timeout=0.1, limits=FAST)
    assert time.monotonic() - start < 5
    assert wait_for(lambda: not portal_threads())


def test_unsupported_protocol_version() -> None:
    with pytest.raises(UnsupportedProtocolVersion) as info:
        connect_in_memory(InProcessAgent("wrong_protocol_version"), limits=FAST)
    assert info.value.version == 1
    assert wait_for(lambda: not portal_threads())


def test_start_failure() -> None:
    with pytest.raises(AgentStartFailed):
        blocking.connect(["/nonexistent/agent-binary"], limits=FAST)
    assert wait_for(lambda: not portal_threads())


def test_crash_mid_turn_fails_the_waiter_quickly() -> None:
    with blocking.connect(agent_command("crash"), limits=FAST) as client:
        session = client.new_session(cwd="/tmp")
        start = time.monotonic()
        with pytest.raises(AgentExited) as info:
            session.run("go")
        assert time.monotonic() - start < 2
        assert info.value.returncode == 3
        assert any("simulated crash" in line for line in info.value.stderr_tail)
        with pytest.raises(AgentExited):
            session.run("again")
        assert client.closed


def test_cancel_with_wait_confirms() -> None:
    with connect_in_memory(InProcessAgent("slow_cancel"), limits=FAST) as client:
        session = client.new_session(cwd="/tmp")
        submission = session.prompt("work")
        session.cancel(wait=True, timeout=5)
        assert session.state == "idle" and session.stop_reason == "cancelled"
        assert submission.done


def test_cancel_wait_says_so_when_never_confirmed() -> None:
    with connect_in_memory(InProcessAgent("broken_no_idle"), limits=FAST) as client:
        session = client.new_session(cwd="/tmp")
        session.prompt("work")
        with pytest.raises(Timeout, match="confirms cancellation"):
            session.cancel(wait=True, timeout=0.1)


def test_hook_calling_the_blocking_api_on_the_trio_thread_gets_a_clear_error() -> None:
    errors: list[BaseException] = []

    class Reentrant:
        @hookimpl
        def acp_session_update(self, session: blocking.Session, event: object) -> None:
            assert isinstance(session, blocking.Session)
            if not errors:
                try:
                    session.wait_idle()
                except RuntimeError as exc:
                    errors.append(exc)

    with connect_in_memory(InProcessAgent("echo"), limits=FAST, plugins=[Reentrant()]) as client:
        client.new_session(cwd="/tmp").run("hi")
    assert len(errors) == 1 and "own trio thread" in str(errors[0])


def test_connection_hooks_see_the_blocking_client() -> None:
    seen: list[tuple[str, object]] = []

    class Watcher:
        @hookimpl
        def acp_connection_opened(self, client: blocking.Client) -> None:
            # Ready to read, on the trio thread (blocking calls would be an error).
            seen.append(("opened", client))
            seen.append(("agent", client.agent_info.name))

        @hookimpl
        def acp_connection_closed(self, client: object) -> None:
            seen.append(("closed", client))

        @hookimpl
        def acp_extension_notification(self, client: object, method: str, params: object) -> None:
            seen.append((method, client))

    with connect_in_memory(InProcessAgent("echo"), limits=FAST, plugins=[Watcher()]) as client:
        client.new_session(cwd="/tmp")
    assert seen == [
        ("opened", client),
        ("agent", "acp-lite-reference-agent"),
        ("closed", client),
    ]


def test_iter_updates_batches_until_close() -> None:
    with connect_in_memory(InProcessAgent("streaming"), limits=FAST) as client:
        session = client.new_session(cwd="/tmp")
        session.submit("a b c d e f")
        tags = []
        for event in session.iter_updates(from_start=True):
            tags.append(event.tag)
            if event.tag == "state_update" and session.state == "idle" and len(tags) > 2:
                break
        assert tags.count("agent_message_chunk") >= 1
        assert [e.index for e in session.updates][: len(tags)] == list(range(len(tags)))


def test_an_iterator_starts_when_it_is_made_not_at_its_first_step() -> None:
    with connect_in_memory(InProcessAgent("echo"), limits=FAST) as client:
        session = client.new_session(cwd="/tmp")
        updates = session.iter_updates(until="idle")
        turn = session.run("x")
        assert [e.tag for e in updates] == [e.tag for e in turn.updates]


def test_iter_updates_ends_when_the_agent_exits() -> None:
    with connect_in_memory(InProcessAgent("crash"), limits=FAST) as client:
        session = client.new_session(cwd="/tmp")
        session.submit("go")
        # Ends (instead of waiting for more) once the connection is gone.
        events = list(session.iter_updates(from_start=True))
        assert "agent_message_chunk" in [e.tag for e in events]
        assert client.closed


def test_on_update_runs_off_the_trio_thread_in_order() -> None:
    seen: list[int] = []
    threads: set[str] = set()
    with connect_in_memory(InProcessAgent("flood", count=3000), limits=FAST) as client:
        session = client.new_session(cwd="/tmp")
        done = threading.Event()

        def callback(event: object) -> None:
            seen.append(event.index)  # type: ignore[attr-defined]
            threads.add(threading.current_thread().name)
            if len(seen) == len(session.updates) and session.state == "idle":
                done.set()

        unsubscribe = session.on_update(callback)
        turn = session.run("go")
        assert wait_for(lambda: len(seen) == len(session.updates), 5)
        unsubscribe()
    assert seen == list(range(len(seen)))
    assert len(seen) == len(session.updates) >= 3000 and len(turn.updates) == len(seen)
    assert not any(name.startswith("acp-lite-") for name in threads)


def test_connect_streams_over_pipes_we_opened() -> None:
    """A custom transport: the test spawns the agent; the client only gets its pipes."""
    proc = subprocess.Popen(agent_command("echo"), stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None
    stdin_fd, stdout_fd = proc.stdin.fileno(), proc.stdout.fileno()
    try:

        def open_streams() -> tuple[trio.lowlevel.FdStream, trio.lowlevel.FdStream]:
            assert threading.current_thread().name == "acp-lite-pipes"
            return trio.lowlevel.FdStream(os.dup(stdin_fd)), trio.lowlevel.FdStream(
                os.dup(stdout_fd)
            )

        # The agent sees no end of input while we hold its stdin: a short wait for
        # its output to end on close (the default is 0.5 s).
        limits = attrs.evolve(FAST, exit_status_wait=0.05)
        with blocking.connect_streams(open_streams, limits=limits, name="pipes") as client:
            assert client.pid is None
            assert client.new_session(cwd="/tmp").run("over streams").text == "over streams"
        proc.stdin.close()  # our copy: now the agent sees EOF and exits
        assert proc.wait(10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdout.close()


def test_connect_streams_with_an_async_factory_failing() -> None:
    async def refuse() -> tuple[trio.abc.SendStream, trio.abc.ReceiveStream]:
        await trio.sleep(0)
        raise ConnectionRefusedError("no agent listening")

    with pytest.raises(ConnectionRefusedError, match="no agent listening"):
        blocking.connect_streams(refuse, limits=FAST)
    assert wait_for(lambda: not portal_threads())


def test_prompt_content_is_a_str_a_block_or_a_list() -> None:
    from acp_lite.protocol import TextContent

    with connect_in_memory(InProcessAgent("echo"), limits=FAST) as client:
        session = client.new_session(cwd="/tmp")
        assert session.run(TextContent(text="typed block")).text == "typed block"
        assert session.run([{"type": "text", "text": "wire"}, "and str"]).text == "wire and str"
        with pytest.raises(ValueError, match="at least one content block"):
            session.run([])
        prompts = [
            e.json()["params"]["prompt"]
            for e in client.transcript
            if e.direction == "send" and e.json().get("method") == "session/prompt"
        ]
        assert prompts == [
            [{"type": "text", "text": "typed block"}],
            [{"type": "text", "text": "wire"}, {"type": "text", "text": "and str"}],
        ]


ENDLESS_PAGES = r"""
import json, sys
n = 0
for line in sys.stdin:
    msg = json.loads(line)
    if msg.get("method") == "initialize":
        result = {"protocolVersion": 2, "info": {"name": "pager", "version": "0"},
                  "capabilities": {"session": {}}}
    elif msg.get("method") == "session/list":
        n += 1
        result = {"sessions": [{"sessionId": f"s{n}", "cwd": "/tmp"}], "nextCursor": f"c{n}"}
    else:
        continue
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}) + "\n")
    sys.stdout.flush()
"""


def test_list_sessions_is_bounded_as_a_whole() -> None:
    import sys

    with blocking.connect([sys.executable, "-c", ENDLESS_PAGES], limits=FAST) as client:
        start = time.monotonic()
        with pytest.raises(Timeout, match="session/list still had pages") as info:
            client.list_sessions(timeout=0.2)
        assert time.monotonic() - start < 2
        assert info.value.method == "session/list"


#: Background work that runs until cancelled (``tool_call/cancel``), started by each turn.
BACKGROUND_UNTIL_CANCELLED = {
    "turns": [
        [
            {"type": "background", "id": "bg-{{turn}}", "title": "Index", "seconds": 60},
            {"type": "text", "text": "Indexing runs in the background."},
        ]
    ]
}


def test_wait_quiet_waits_for_background_work_and_the_grace() -> None:
    # The work runs until the test ends it: "still running at idle" holds however
    # slow the machine is, and no sleep of the agent has to be waited out.
    agent = InProcessAgent(script=BACKGROUND_UNTIL_CANCELLED)
    with connect_in_memory(agent, limits=FAST) as client:
        session = client.new_session(cwd="/tmp")
        turn = session.run("index")
        assert turn.stop_reason == "end_turn" and session.state == "idle"
        assert session.model.background  # idle, but the indexing still runs
        assert not session.model.is_quiet
        ended: list[float] = []

        def end_the_work() -> None:
            time.sleep(0.05)  # let wait_quiet wait for it a moment
            ended.append(time.monotonic())
            session.cancel_tool_call("bg-1")

        stopper = threading.Thread(target=end_the_work)
        stopper.start()
        session.wait_quiet(grace=0.05)
        stopper.join()
        assert session.model.is_quiet and not session.model.background
        # It waited for the work to end, then for nothing during the whole grace.
        assert ended and time.monotonic() - ended[0] >= 0.05
        last = session.updates[-1].time
        assert time.monotonic() - last >= 0.05
        with pytest.raises(Timeout, match="quiet"):
            # Once inserted, the new work is known to run: it cannot look quiet yet.
            session.wait_inserted(session.submit("again"))
            session.wait_quiet(timeout=0.05, grace=0.01)


def test_client_info_and_capabilities_are_sent_and_env_cwd_reach_the_agent(
    tmp_path: os.PathLike[str],
) -> None:
    import sys

    code = (
        "import json, os, sys\n"
        "req = json.loads(sys.stdin.readline())\n"
        "info = {'name': os.getcwd() + '|' + os.environ.get('ACP_T', '-'), 'version': '0'}\n"
        "res = {'protocolVersion': 2, 'info': info, 'echo': req['params']}\n"
        "print(json.dumps({'jsonrpc': '2.0', 'id': req['id'], 'result': res}), flush=True)\n"
        "sys.stdin.read()\n"
    )
    with blocking.connect(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        env={"ACP_T": "set"},
        client_info={"name": "my-ide", "version": "9"},
        capabilities={"fs": {}},
        limits=FAST,
    ) as client:
        assert client.agent_info.name == f"{os.fspath(tmp_path)}|set"
        sent = client.initialize_result["echo"]
        assert sent == {"protocolVersion": 2, "info": {"name": "my-ide", "version": "9"},
                        "capabilities": {"fs": {}}}  # fmt: skip
