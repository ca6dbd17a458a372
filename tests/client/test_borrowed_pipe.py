"""Direct calls borrow the agent's stdout pipe (``acp_lite.aio._pipe``).

A blocking direct call to an agent run as a process takes the pipe away from the
trio reader before it writes its request, reads its own response and gives the
pipe back. These tests spy on the borrower's steps (``AgentPipe.lend``,
``AgentPipe.read_lent``, ``OutsideReading.receive``) and on the trio reader
(``AgentPipe.receive_some``) to show the path is taken, and check that what the
borrower reads besides its response (updates, agent requests, trio waiters) is
handled by the trio thread exactly as when the trio thread reads it
(``_BORROW = False``).
"""

from __future__ import annotations

import bisect
import itertools
import os
import signal
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

import acp_lite
from acp_lite.aio.outside import AgentPipe, OutsideReading
from acp_lite.errors import AgentExited, ClientClosed, Timeout
from acp_lite.hookspec import hookimpl
from acp_lite.sync import _direct

from .conftest import FAST, run_threads, wait_for

# A stdlib agent. Every line it writes carries a number (``seq``) in write order:
# a response's result has it, an update's chunk text is it. Each line it reads is
# logged to stderr as ``got <method> <id>``.
AGENT = r"""
import json, sys, threading, time
lock = threading.Lock()
seq = [0]
stop = threading.Event()

def send(msg):
    with lock:
        n = seq[0]
        seq[0] += 1
        if "result" in msg:
            msg["result"]["seq"] = n
        elif msg.get("method") == "session/update":
            msg["params"]["update"]["content"]["text"] = str(n)
        sys.stdout.write(json.dumps(msg) + "\n")
        sys.stdout.flush()

def chunk(kind="agent_message_chunk"):
    body = {"sessionUpdate": kind, "messageId": "a1", "content": {"type": "text"}}
    send({"jsonrpc": "2.0", "method": "session/update",
          "params": {"sessionId": "s1", "update": body}})

def state(value):
    body = {"sessionUpdate": "state_update", "state": value}
    if value == "idle":
        body["stopReason"] = "end_turn"
    with lock:
        msg = {"jsonrpc": "2.0", "method": "session/update",
               "params": {"sessionId": "s1", "update": body}}
        sys.stdout.write(json.dumps(msg) + "\n")
        sys.stdout.flush()

def stream():
    while not stop.is_set():
        chunk()
        time.sleep(0.0005)

def reply(rid, result):
    send({"jsonrpc": "2.0", "id": rid, "result": result})

lines = iter(sys.stdin)
for line in lines:
    msg = json.loads(line)
    method, rid, params = msg.get("method"), msg.get("id"), msg.get("params")
    print("got", method, rid, file=sys.stderr, flush=True)
    if method == "initialize":
        reply(rid, {"protocolVersion": 2, "capabilities": {},
                    "info": {"name": "t", "version": "1"}})
    elif method == "session/new":
        reply(rid, {"sessionId": "s1"})
    elif method == "_t/echo":
        reply(rid, {"echo": params})
    elif method == "_t/updates":
        for _ in range(params["before"]):
            chunk()
        reply(rid, {})
        for _ in range(params["after"]):
            chunk()
    elif method == "_t/state":
        state(params)
        reply(rid, {})
    elif method == "_t/perm":
        options = [{"optionId": "yes", "name": "Yes", "kind": "allow_once"}]
        ask = {"jsonrpc": "2.0", "id": "p1", "method": "session/request_permission",
               "params": {"sessionId": "s1", "title": "may I?", "options": options}}
        with lock:
            sys.stdout.write(json.dumps(ask) + "\n")
            sys.stdout.flush()
        for answer in lines:
            answer = json.loads(answer)
            print("got", answer.get("method"), answer.get("id"), file=sys.stderr, flush=True)
            if answer.get("id") == "p1":
                break
        reply(rid, {"perm": answer.get("result")})
    elif method == "_t/big":
        letters = "abcdefghijklmnopqrstuvwxyz0123456789"
        reply(rid, {"big": (letters * (params // len(letters) + 1))[:params]})
    elif method == "_t/stream":
        stop.clear()
        threading.Thread(target=stream).start()
        reply(rid, {})
    elif method == "_t/stop":
        stop.set()
        for t in threading.enumerate():
            if t is not threading.main_thread():
                t.join()
        reply(rid, {})
    elif method == "_t/exit":
        sys.exit(4)
"""


@dataclass
class Spy:
    """What the borrowers and the trio reader did, per thread."""

    lends: list[int] = field(default_factory=list)  # the threads of successful lends
    owner: int | None = None  # the thread that has the pipe
    overlaps: int = 0  # lends while someone had it, feeds by someone who had not
    fed: list[tuple[int, bool, bytes]] = field(default_factory=list)  # OutsideReading.receive
    reads: list[bytes] = field(default_factory=list)  # read_lent results with data
    trio_reads: list[bytes] = field(default_factory=list)  # the trio reader's
    lock: threading.Lock = field(default_factory=threading.Lock)

    def clear(self) -> None:
        """Forget what was recorded so far (the handshake is a direct call too)."""
        with self.lock:
            self.lends.clear()
            self.fed.clear()
            self.reads.clear()
            self.trio_reads.clear()

    def borrowed(self) -> bytes:
        return b"".join(data for _, _, data in self.fed)

    def trio_read(self) -> bytes:
        return b"".join(self.trio_reads)


@pytest.fixture
def spy(monkeypatch: pytest.MonkeyPatch) -> Spy:
    # Installed before the client connects: the trio reader's first receive_some
    # must be the spied one.
    spy = Spy()
    lend, give_back = AgentPipe.lend, AgentPipe.give_back
    read_lent, receive_some = AgentPipe.read_lent, AgentPipe.receive_some
    receive = OutsideReading.receive

    def spy_lend(self: AgentPipe) -> bool:
        ok = lend(self)
        if ok:
            with spy.lock:
                spy.overlaps += spy.owner is not None
                spy.owner = threading.get_ident()
                spy.lends.append(spy.owner)
        return ok

    def spy_give_back(self: AgentPipe) -> None:
        if self.lent:
            with spy.lock:
                spy.owner = None
        give_back(self)

    def spy_read_lent(self: AgentPipe) -> bytes | None:
        data = read_lent(self)
        if data:
            spy.reads.append(data)
        return data

    async def spy_receive_some(self: AgentPipe, max_bytes: int | None = None) -> bytes:
        data = await receive_some(self, max_bytes)
        spy.trio_reads.append(bytes(data))
        return data

    def spy_receive(self: OutsideReading, data: bytes, driver: Any) -> None:
        assert self.pipe is not None
        spy.fed.append((threading.get_ident(), self.pipe.lent, bytes(data)))
        spy.overlaps += spy.owner != threading.get_ident()
        receive(self, data, driver)

    monkeypatch.setattr(AgentPipe, "lend", spy_lend)
    monkeypatch.setattr(AgentPipe, "give_back", spy_give_back)
    monkeypatch.setattr(AgentPipe, "read_lent", spy_read_lent)
    monkeypatch.setattr(AgentPipe, "receive_some", spy_receive_some)
    monkeypatch.setattr(OutsideReading, "receive", spy_receive)
    return spy


@pytest.fixture
def default_sigint() -> Iterator[None]:
    """Python's default SIGINT handler for the test (the main thread then borrows)."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def connect(spy: Spy | None = None, **kwargs: Any) -> acp_lite.Client:
    client = acp_lite.connect([sys.executable, "-c", AGENT], limits=FAST, **kwargs)
    if spy is not None:
        spy.clear()
    return client


def pipe_of(client: acp_lite.Client) -> AgentPipe:
    pipe = client.async_client._conn.outside.pipe
    assert isinstance(pipe, AgentPipe)
    return pipe


def recv(client: acp_lite.Client) -> list[dict[str, Any]]:
    return [e.json() for e in client.transcript if e.direction == "recv"]


def stderr_count(client: acp_lite.Client, text: str) -> int:
    return sum(text in line for line in client.stderr_tail())


def trio_call(client: acp_lite.Client, method: str, params: Any = None) -> Any:
    """A request made by a task on the trio thread (its reader reads the answer)."""
    return client._portal.call(client.async_client.request, method, params, timeout=20)


def in_thread(fn: Any) -> Any:
    """Run ``fn()`` in a new thread (not the main one); its result, or raise."""
    out: list[tuple[bool, Any]] = []

    def run() -> None:
        try:
            out.append((True, fn()))
        except BaseException as exc:
            out.append((False, exc))

    thread = threading.Thread(target=run)
    thread.start()
    thread.join(30)
    assert not thread.is_alive() and out
    ok, value = out[0]
    if not ok:
        raise value
    return value


def test_a_direct_call_reads_its_own_response_and_gives_the_pipe_back(
    spy: Spy, default_sigint: None
) -> None:
    with connect(spy) as client:
        pipe = pipe_of(client)
        assert not pipe.lent
        trio_before = len(spy.trio_reads)
        assert client.request("_t/echo", {"i": 1})["echo"] == {"i": 1}
        me = threading.get_ident()
        assert spy.lends == [me]
        assert spy.fed and all(t == me and lent for t, lent, _ in spy.fed)
        assert b'"echo": {"i": 1}' in spy.borrowed()
        assert spy.trio_reads[trio_before:] == []  # the trio reader never woke for it
        assert not pipe.lent
        # The trio reader has the pipe again: it reads an answer a trio task waits for.
        assert trio_call(client, "_t/echo", "trio")["echo"] == "trio"
        assert b'"echo": "trio"' in spy.trio_read()
        assert b'"echo": "trio"' not in spy.borrowed()
        assert len(spy.lends) == 1


def test_with_borrowing_off_the_trio_reader_reads_every_response(
    spy: Spy, monkeypatch: pytest.MonkeyPatch, default_sigint: None
) -> None:
    monkeypatch.setattr(_direct, "_BORROW", False)
    with connect(spy) as client:
        assert client.request("_t/echo", 2)["echo"] == 2
        assert in_thread(lambda: client.request("_t/echo", 3))["echo"] == 3
    assert spy.lends == [] and spy.fed == []
    assert b'"echo": 2' in spy.trio_read() and b'"echo": 3' in spy.trio_read()


class Hooked:
    """An acp_session_update plugin: the chunks' numbers and the threads it ran in."""

    def __init__(self) -> None:
        self.seqs: list[int] = []
        self.threads: set[str] = set()

    @hookimpl
    def acp_session_update(self, session: Any, event: Any) -> None:
        self.threads.add(threading.current_thread().name)
        raw = event.raw
        if raw.get("sessionUpdate") == "agent_message_chunk":
            self.seqs.append(int(raw["content"]["text"]))


def _updates_around_a_response(borrow: bool, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setattr(_direct, "_BORROW", borrow)
    hooked = Hooked()
    with connect(plugins=[hooked]) as client:
        session = client.new_session(cwd="/tmp")
        results = []
        for _ in range(5):
            results.append(client.request("_t/updates", {"before": 3, "after": 3})["seq"])
        assert wait_for(lambda: len(hooked.seqs) == 30, 20)
        raws = [e.raw for e in session.updates]
        wire = [m.get("params", m.get("result")) for m in recv(client)]
        assert session.text() == "".join(str(s) for s in hooked.seqs)
    return raws, hooked.seqs, wire, results, hooked.threads


def test_updates_around_a_borrowed_response_are_handled_as_the_trio_reader_would(
    spy: Spy, monkeypatch: pytest.MonkeyPatch, default_sigint: None
) -> None:
    borrowed = _updates_around_a_response(True, monkeypatch)
    fed = spy.borrowed()
    spy.fed.clear()
    plain = _updates_around_a_response(False, monkeypatch)
    assert spy.fed == []
    assert borrowed[:4] == plain[:4]  # model, hook order, wire, results: identical
    raws, seqs, _, results, threads = borrowed
    # Each call's updates: 3 before its response, 3 after, in the agent's order.
    assert seqs == sorted(seqs) and len(set(seqs)) == 30
    assert [int(r["content"]["text"]) for r in raws] == seqs
    for seq in results:
        assert {seq - 3, seq - 2, seq - 1, seq + 1, seq + 2, seq + 3} <= set(seqs)
    # The borrower read (at least) each call's leading updates and its response...
    for seq in results:
        assert f'"text": "{seq - 1}"'.encode() in fed
        assert f'"seq": {seq}'.encode() in fed
    # ...and the hook ran on the trio thread all the same.
    assert threading.current_thread().name not in threads
    assert all(name.startswith("acp-lite-") for name in threads), threads


def test_an_agent_request_read_by_the_borrower_is_answered_by_the_trio_side(
    spy: Spy,
) -> None:
    deciders: list[int] = []

    def approve(request: Any, session: Any) -> str:
        deciders.append(threading.get_ident())
        return "yes"

    with connect(spy, on_permission=approve) as client:
        client.new_session(cwd="/tmp")
        spy.clear()
        thread_ident: list[int] = []

        def ask() -> Any:
            thread_ident.append(threading.get_ident())
            return client.request("_t/perm", timeout=20)

        result = in_thread(ask)
        assert result["perm"] == {"outcome": {"outcome": "selected", "optionId": "yes"}}
        assert b"session/request_permission" in spy.borrowed()
        assert all(t == thread_ident[0] for t, _, _ in spy.fed)
        # Decided off the borrower's thread (by a worker the trio thread started).
        assert len(deciders) == 1 and deciders[0] not in (thread_ident[0], threading.get_ident())
        assert not pipe_of(client).lent


def test_a_trio_waiter_is_woken_by_what_the_borrower_read(spy: Spy) -> None:
    with connect(spy) as client:
        session = client.new_session(cwd="/tmp")
        client.request("_t/state", "running")
        assert session.state == "running"
        errors: list[BaseException] = []

        def wait_idle() -> None:
            try:
                session.wait_idle(timeout=20)
            except BaseException as exc:
                errors.append(exc)

        waiter = threading.Thread(target=wait_idle)
        waiter.start()
        waiters = client.async_client._conn.session_waiters
        assert wait_for(lambda: session.id in waiters, 10)
        fed = len(spy.fed)
        trio_before = len(spy.trio_reads)
        in_thread(lambda: client.request("_t/state", "idle"))
        waiter.join(20)
        assert not waiter.is_alive() and errors == []
        # The borrower read the idle state: the trio reader saw none of it.
        assert b'"state": "idle"' in b"".join(d for _, _, d in spy.fed[fed:])
        assert b'"state": "idle"' not in b"".join(spy.trio_reads[trio_before:])
        assert session.state == "idle"


def test_concurrent_direct_calls_borrow_one_at_a_time(spy: Spy) -> None:
    with connect(spy) as client:
        pipe = pipe_of(client)
        results: dict[tuple[int, int], Any] = {}

        def worker(n: int) -> None:
            for i in range(100):
                results[n, i] = client.request("_t/echo", [n, i])["echo"]

        assert run_threads(worker, 4) == []
        assert results == {(n, i): [n, i] for n in range(4) for i in range(100)}
        assert len(spy.lends) > 1 and spy.overlaps == 0
        assert all(lent for _, lent, _ in spy.fed)  # only a borrower feeds the core
        assert not pipe.lent
        assert trio_call(client, "_t/echo", "after")["echo"] == "after"


def test_a_large_response_read_in_several_borrowed_reads_is_intact(spy: Spy) -> None:
    size = 3 * 1024 * 1024
    letters = "abcdefghijklmnopqrstuvwxyz0123456789"
    with connect(spy) as client:
        big = in_thread(lambda: client.request("_t/big", size, timeout=20))["big"]
        assert big == (letters * (size // len(letters) + 1))[:size]
        assert len(spy.reads) > 1 and len(spy.fed) > 1
        assert sum(map(len, spy.reads)) > size
        assert not pipe_of(client).lent


def test_a_session_opened_by_a_borrowed_call_is_handled_in_the_callers_thread(
    spy: Spy, monkeypatch: pytest.MonkeyPatch
) -> None:
    posted: list[object] = []
    post = _direct._Driver.post

    def spy_post(self: Any, fn: Any) -> None:
        posted.append(fn)
        post(self, fn)

    monkeypatch.setattr(_direct._Driver, "post", spy_post)
    with connect(spy) as client:
        session = in_thread(lambda: client.new_session(cwd="/tmp"))
        assert session.id == "s1" and "s1" in client.sessions
        assert b'"sessionId": "s1"' in spy.borrowed()  # the borrower read the answer
        assert posted == []  # and nothing was left to the trio thread


def _eventfds() -> set[int]:
    fds = set()
    for name in os.listdir("/proc/self/fd"):
        try:
            if os.readlink(f"/proc/self/fd/{name}") == "anon_inode:[eventfd]":
                fds.add(int(name))
        except OSError:
            pass
    return fds


def test_an_agent_that_exits_fails_the_borrowed_call_and_leaks_no_eventfd(
    spy: Spy, monkeypatch: pytest.MonkeyPatch
) -> None:
    made: list[int] = []
    eventfd = os.eventfd

    def spy_eventfd(*args: Any) -> int:
        fd = eventfd(*args)
        made.append(fd)
        return fd

    monkeypatch.setattr(os, "eventfd", spy_eventfd)
    with connect(spy) as client:

        def exits() -> None:
            with pytest.raises(AgentExited) as info:
                client.request("_t/exit", timeout=30)
            assert info.value.returncode == 4
            # Closed before the call raised, not reused meanwhile by anyone else.
            assert made and not set(made) & _eventfds()

        in_thread(exits)
        assert len(spy.lends) == 1
        assert not pipe_of(client).lent
        with pytest.raises(AgentExited):
            client.request("_t/echo")


def test_a_timeout_while_borrowing_withdraws_the_request_and_gives_the_pipe_back(
    spy: Spy,
) -> None:
    with connect(spy) as client:
        with pytest.raises(Timeout, match="_t/never"):
            in_thread(lambda: client.request("_t/never", timeout=0.2))
        assert len(spy.lends) == 1
        assert not pipe_of(client).lent
        assert wait_for(lambda: stderr_count(client, "got $/cancel_request None"), 10)
        sent = [e.json() for e in client.transcript if e.direction == "send"]
        never = next(m for m in sent if m.get("method") == "_t/never")
        assert {"requestId": never["id"]} in [
            m.get("params") for m in sent if m.get("method") == "$/cancel_request"
        ]
        assert trio_call(client, "_t/echo", 1)["echo"] == 1  # the trio reader reads again
        assert in_thread(lambda: client.request("_t/echo", 2))["echo"] == 2
        assert len(spy.lends) == 2


def test_close_from_another_thread_cuts_a_borrowed_call_short(
    spy: Spy, default_sigint: None
) -> None:
    client = connect(spy)
    closer = threading.Thread(
        target=lambda: wait_for(lambda: stderr_count(client, "got _t/never"), 10) and client.close()
    )
    closer.start()
    try:
        with pytest.raises(ClientClosed):
            client.request("_t/never", timeout=30)
    finally:
        closer.join(20)
        client.close()
    assert not closer.is_alive()
    assert spy.lends == [threading.get_ident()]  # the main thread borrowed


def _stream_while_calling(spy: Spy, threads: int, calls: int) -> None:
    hooked = Hooked()
    with connect(spy, plugins=[hooked]) as client:
        session = client.new_session(cwd="/tmp")
        client.request("_t/stream")
        seen: list[tuple[int, int]] = []  # (the response's number, updates hooked then)
        errors: list[BaseException] = []

        def calling(n: int) -> None:
            try:
                for i in range(calls):
                    result = client.request("_t/echo", [n, i])
                    assert result["echo"] == [n, i]
                    seen.append((result["seq"], len(hooked.seqs)))
            except BaseException as exc:
                errors.append(exc)

        others = [threading.Thread(target=calling, args=(n,)) for n in range(1, threads)]
        for t in others:
            t.start()
        calling(0)  # the main thread too
        for t in others:
            t.join(30)
        assert errors == [] and len(seen) == threads * calls
        last = client.request("_t/stop")["seq"]  # the agent's last line
        numbers, updates = [], []
        for m in recv(client):
            if "result" in m:
                numbers.append(m["result"]["seq"])
            else:
                updates.append(int(m["params"]["update"]["content"]["text"]))
                numbers.append(updates[-1])
        # Every line the agent wrote, in its order, by the transcript...
        misplaced = [(a, b) for a, b in itertools.pairwise(numbers) if b != a + 1]
        assert misplaced == [], f"{len(numbers)} lines, out of order: {misplaced[:6]}"
        assert numbers == list(range(last + 1))
        assert wait_for(lambda: len(hooked.seqs) == len(updates), 20)
        chunks = [int(e.raw["content"]["text"]) for e in session.updates]
        # ...by the model and by the hook.
        assert hooked.seqs == chunks == updates
        assert len(chunks) > 0
        # A call returned only after the hook had seen every update sent before it
        # (the hook sees them in order, so: a prefix at least that long).
        late = [(seq, n) for seq, n in seen if bisect.bisect_left(chunks, seq) > n]
        assert late == [], f"returned before the hook saw earlier updates: {late[:6]}"
    assert b"session/update" in spy.borrowed()


def test_bytes_keep_their_order_with_several_borrowers_and_a_busy_trio_reader(
    spy: Spy, default_sigint: None
) -> None:
    # The trio reader often finds bytes already there; several callers wait for
    # the gate meanwhile. Two rounds: the interleaving that reorders is likely
    # but not certain in one.
    for _ in range(2):
        _stream_while_calling(spy, threads=4, calls=300)
