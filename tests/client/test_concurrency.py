"""Several clients, several threads, Ctrl-C, and interpreter exit."""

from __future__ import annotations

import _thread
import contextlib
import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from typing import Any

import attrs
import pytest
from procs import child_processes

import acp_lite.client as blocking
from acp_lite import connect_in_memory
from acp_lite.testing import InProcessAgent, agent_command

from .conftest import FAST, crossings, portal_threads, process_gone, run_threads, wait_for

N = 2000


def assert_agent_gone(pid: int) -> None:
    """The agent a script started is gone; if not, kill it (a failing test leaks nothing)."""
    if wait_for(lambda: process_gone(pid), 5):
        return
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)
    raise AssertionError(f"agent {pid} outlived the script that started it")


def _chunks(turn: Any) -> int:
    return sum(1 for e in turn.updates if e.tag == "agent_message_chunk")


def test_eight_clients_at_once_lose_no_update() -> None:
    results: dict[int, tuple[int, int, int]] = {}

    def worker(k: int) -> None:
        with connect_in_memory(InProcessAgent("flood", count=N), limits=FAST) as client:
            session = client.new_session(cwd="/tmp")
            turn = session.run("go")
            results[k] = (_chunks(turn), len(session.updates), len(turn.text))

    errors = run_threads(worker, 8, timeout=60)
    assert not errors, errors
    assert len(results) == 8
    counts = set(results.values())
    assert len(counts) == 1, results  # every client saw exactly the same
    chunks, _, _ = counts.pop()
    assert chunks == N
    assert not portal_threads()


def test_one_client_shared_by_threads_with_a_session_each() -> None:
    with connect_in_memory(InProcessAgent("flood", count=N), limits=FAST) as client:
        counts: list[int] = []
        lock = threading.Lock()

        def worker() -> None:
            session = client.new_session(cwd="/tmp")
            turn = session.run("go")
            with lock:
                counts.append(_chunks(turn))

        threads = [threading.Thread(target=worker) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert counts == [N] * 4
        assert len(client.sessions) == 4


def test_twenty_sessions_on_one_connection() -> None:
    with connect_in_memory(InProcessAgent("echo"), limits=FAST) as client:
        sessions = [client.new_session(cwd="/tmp") for _ in range(20)]
        submissions = [s.prompt(f"message {i}") for i, s in enumerate(sessions)]
        for s in sessions:
            s.wait_idle()
        for i, (s, sub) in enumerate(zip(sessions, submissions, strict=True)):
            assert sub.done and s.text(sub) == f"message {i}"


def test_keyboard_interrupt_during_run_cancels_the_turn_and_reraises() -> None:
    with connect_in_memory(InProcessAgent("slow_cancel"), limits=FAST) as client:
        session = client.new_session(cwd="/tmp")

        interrupted: list[float] = []

        def interrupt_when_running() -> None:
            # Bounded readiness wait (generous: under load the turn starts late); the
            # time bound below is measured from the Ctrl-C, not from the prompt.
            if wait_for(lambda: "step 2" in session.text(), 15):
                interrupted.append(time.monotonic())
            _thread.interrupt_main()

        timer = threading.Thread(target=interrupt_when_running)
        timer.start()
        with pytest.raises(KeyboardInterrupt):
            session.run("long work")  # ~30 s unless cancelled
        timer.join()
        assert interrupted, "the turn never reached step 2"
        assert time.monotonic() - interrupted[0] < 5
        # The trio-side work was cancelled: session/cancel went out, and the agent's
        # confirming idle arrived before the KeyboardInterrupt reached us.
        sent = [e.json().get("method") for e in client.transcript if e.direction == "send"]
        assert "session/cancel" in sent
        assert session.state == "idle" and session.stop_reason == "cancelled"
        # The client is still usable afterwards.
        assert client.request("_acp_lite/ping") == {"echo": {}}


def test_keyboard_interrupt_during_a_held_run_withdraws_only_that_prompt() -> None:

    long_turn = {"steps": [{"type": "text", "text": "first"}, {"type": "sleep", "seconds": 30}]}
    script = {"while_busy": "hold", "turns": [long_turn]}
    with connect_in_memory(InProcessAgent(script=script), limits=FAST) as client:
        session = client.new_session(cwd="/tmp")
        first = session.prompt("first")  # inserted; its work runs for 30 s

        def sent() -> list[Any]:
            return [e.json() for e in client.transcript if e.direction == "send"]

        interrupted: list[float] = []

        def interrupt_when_held() -> None:
            if wait_for(lambda: [m.get("method") for m in sent()].count("session/prompt") == 2, 15):
                interrupted.append(time.monotonic())
            _thread.interrupt_main()

        timer = threading.Thread(target=interrupt_when_held)
        timer.start()
        with pytest.raises(KeyboardInterrupt):
            session.run("held")  # held by the agent behind the first prompt
        timer.join()
        assert interrupted, "the second prompt was never sent"
        assert time.monotonic() - interrupted[0] < 5
        held = session.model.submissions[1]
        assert held.status == "rejected"  # withdrawn in time: -32800
        methods = [m.get("method") for m in sent()]
        withdraw = {"requestId": held.request_id}
        assert {"jsonrpc": "2.0", "method": "$/cancel_request", "params": withdraw} in sent()
        assert "session/cancel" not in methods  # the first prompt's work goes on
        assert session.state == "running" and not first.done


@pytest.mark.parametrize(
    ("steps", "stop_message"),
    [
        ([{"type": "hang"}, {"type": "insert"}], "$/cancel_request"),  # never inserted
        ([{"type": "insert"}, {"type": "hang"}], "session/cancel"),  # never confirms
    ],
)
def test_keyboard_interrupt_waits_a_bounded_time_for_an_unresponsive_agent(
    steps: list[dict[str, Any]], stop_message: str
) -> None:
    # The bound is the point, not its default (2 s): a shorter one is waited out
    # sooner, and the check below still tells "waited the bound" from "did not wait".
    wait = 0.2
    agent = InProcessAgent(script={"turns": [{"steps": steps}]})
    with connect_in_memory(agent, limits=FAST) as client:
        session = client.new_session(cwd="/tmp")

        interrupted: list[float] = []

        def interrupt_when_hanging() -> None:
            if wait_for(lambda: any("hanging forever" in x for x in agent.stderr_tail()), 15):
                interrupted.append(time.monotonic())
            _thread.interrupt_main()

        timer = threading.Thread(target=interrupt_when_hanging)
        timer.start()
        with pytest.raises(KeyboardInterrupt):
            session.run("x", stop_on_cancel=wait)
        done = time.monotonic()
        timer.join()
        assert interrupted, "the agent never reported hanging"
        sent = [e.json().get("method") for e in client.transcript if e.direction == "send"]
        assert stop_message in sent
        # Measured from the Ctrl-C (how long the agent took to hang is not the point,
        # and grows under load): it waited for the agent, but only stop_on_cancel.
        elapsed = done - interrupted[0]
        assert wait / 2 <= elapsed < wait + 2.0


def test_sigint_in_a_real_script_stops_the_agent_and_exits() -> None:
    script = textwrap.dedent(
        """
        import json, sys
        import acp_lite.client as blocking
        from acp_lite.testing import agent_command

        client = blocking.connect(agent_command("slow_cancel"))
        session = client.new_session(cwd="/tmp")
        print(json.dumps({"pid": client.pid}), flush=True)

        def announce(event):  # the turn is under way: the test may send SIGINT
            if event.tag == "agent_message_chunk" and not announced:
                announced.append(event)
                print("running", flush=True)

        announced = []
        session.on_update(announce)
        session.run("long work")  # interrupted by SIGINT from the test
        """
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout is not None
        agent_pid = json.loads(proc.stdout.readline())["pid"]
        assert proc.stdout.readline() == "running\n"
        start = time.monotonic()
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert time.monotonic() - start < 10
    assert proc.returncode != 0
    assert "KeyboardInterrupt" in err
    assert_agent_gone(agent_pid)


def test_forgotten_client_is_closed_at_interpreter_exit() -> None:
    script = textwrap.dedent(
        """
        import json
        import acp_lite.client as blocking
        from acp_lite.testing import agent_command

        client = blocking.connect(agent_command("echo"))
        client.new_session(cwd="/tmp").run("hi")
        print(json.dumps({"pid": client.pid}), flush=True)
        # no close(): the atexit safety net must stop the agent
        """
    )
    proc = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=30
    )
    assert proc.returncode == 0, proc.stderr
    agent_pid = json.loads(proc.stdout.splitlines()[0])["pid"]
    assert_agent_gone(agent_pid)


def test_agent_ignoring_sigterm_is_killed_by_close() -> None:
    # Short graces: the ladder's steps are the point here, not their default lengths.
    limits = attrs.evolve(FAST, close_grace=0.05, terminate_grace=0.05)
    client = blocking.connect(agent_command("ignore_sigterm"), limits=limits)
    pid = client.pid
    assert pid is not None
    client.new_session(cwd="/tmp").run("hi")
    start = time.monotonic()
    client.close()
    assert time.monotonic() - start < limits.shutdown_timeout + 2
    assert process_gone(pid)
    assert client.returncode == -signal.SIGKILL
    assert not portal_threads()


def test_dropped_client_stops_its_thread() -> None:
    client = blocking.connect(agent_command("echo"), limits=FAST)
    pid = client.pid
    assert pid is not None
    del client
    assert wait_for(lambda: not portal_threads(), 10)
    assert wait_for(lambda: process_gone(pid), 5)


def test_keyboard_interrupt_while_connecting_leaves_nothing_behind() -> None:
    def interrupt_soon() -> None:
        # Once the agent runs (it never answers initialize), connect is waiting.
        wait_for(lambda: any("unresponsive" in c for c in child_processes()), 15)
        _thread.interrupt_main()

    timer = threading.Thread(target=interrupt_soon)
    timer.start()
    start = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        blocking.connect(agent_command("unresponsive"), limits=FAST)
    timer.join()
    assert time.monotonic() - start < 5
    assert wait_for(lambda: not portal_threads())
    assert wait_for(lambda: not [c for c in child_processes() if "unresponsive" in c]), (
        child_processes()
    )


def test_exit_while_a_close_runs_in_a_daemon_thread_still_stops_the_agent() -> None:
    script = textwrap.dedent(
        """
        import json, threading, time
        import acp_lite.client as blocking
        from acp_lite.limits import Limits
        from acp_lite.testing import agent_command

        # Short graces the agent waits out; the close is still in the first one when
        # the interpreter exits.
        limits = Limits(close_grace=0.15, terminate_grace=0.05, kill_grace=1.0)
        client = blocking.connect(agent_command("ignore_sigterm"), limits=limits)
        print(json.dumps({"pid": client.pid}), flush=True)
        threading.Thread(target=client.close, daemon=True).start()
        time.sleep(0.05)  # the close is under way when the interpreter exits
        """
    )
    proc = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=30
    )
    assert proc.returncode == 0, proc.stderr
    agent_pid = json.loads(proc.stdout.splitlines()[0])["pid"]
    # The agent ignores SIGTERM and EOF: only the finished shutdown ladder kills it.
    assert_agent_gone(agent_pid)


def test_one_thread_hop_per_call_not_per_notification() -> None:
    with connect_in_memory(InProcessAgent("flood", count=N), limits=FAST) as client:
        session = client.new_session(cwd="/tmp")
        with crossings(client) as posts:
            turn = session.run("go")
        assert _chunks(turn) == N
        assert len(posts) == 1  # the run itself: none for the N notifications


def test_agent_exit_fails_every_waiting_thread_promptly() -> None:
    # Each turn waits on a permission request; the callbacks answer once all three
    # sessions' requests arrived (every waiter is waiting), then the agent exits.
    steps = [
        {"type": "text", "text": "working"},
        {"type": "permission", "requires_action": False},
        {"type": "stderr", "text": "fatal: going down"},
        {"type": "exit", "code": 3},
    ]
    argv = [
        sys.executable,
        "-m",
        "acp_lite.testing.agent",
        "--script-json",
        json.dumps({"turns": [{"steps": steps}]}),
    ]
    all_asked = threading.Barrier(3, timeout=10)
    released: list[float] = []

    def answer_when_all_asked(request: Any, session: Any) -> str | None:
        if all_asked.wait() == 0:
            released.append(time.monotonic())
        return "allow"

    with blocking.connect(argv, limits=FAST, on_permission=answer_when_all_asked) as client:
        sessions = [client.new_session(cwd="/tmp") for _ in range(3)]
        failed: dict[str, tuple[float, BaseException]] = {}

        def wait(name: str, fn: Any) -> None:
            try:
                fn()
            except BaseException as exc:
                failed[name] = (time.monotonic(), exc)

        def submit_and_wait_quiet() -> None:
            sessions[2].submit("go")
            sessions[2].wait_quiet()

        waiters = {
            "run": lambda: sessions[0].run("go"),
            "run2": lambda: sessions[1].run("go"),
            "wait_quiet": submit_and_wait_quiet,
        }
        threads = [threading.Thread(target=wait, args=item) for item in waiters.items()]
        for t in threads:
            t.start()
        for t in threads:
            t.join(10)
        assert set(failed) == set(waiters)
        assert released, "the three permission requests never all arrived"
        # The agent exits as soon as the first turn has its answer.
        for name, (when, exc) in failed.items():
            assert type(exc).__name__ == "AgentExited", (name, exc)
            assert exc.returncode == 3, name  # type: ignore[attr-defined]
            assert "fatal: going down" in exc.stderr_tail, name  # type: ignore[attr-defined]
            # Promptly, not at a call's timeout (FAST: 10 s);
            # the bound is loose because a loaded 2-core machine stalls threads.
            assert when - released[0] < 4.0, (name, when - released[0])
