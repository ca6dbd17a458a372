"""A minimal NDJSON JSON-RPC peer over a subprocess's pipes, for interop tests.

Deliberately independent of acp_lite: it proves the TypeScript agent on its own,
so a failure in acp_lite's client cannot hide (or cause) a failure here.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import queue
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
TS_AGENT = HERE / "ts_agent.mjs"
TS_CLIENT = HERE / "ts_client.mjs"

Message = dict[str, Any]


def node_executable() -> str:
    """Path of `node`; fails (never skips) when the toolchain is missing. Installs the
    pinned SDK first when it is missing (:func:`ensure_sdk`)."""
    node = shutil.which("node")
    assert node is not None, "node is not on PATH: install Node.js >= 20 to run tests/interop"
    ensure_sdk()
    return node


def _missing_packages() -> list[str]:
    """The dependencies of ``package.json`` not installed in ``node_modules`` (a
    checkout made before a package was added has the others only)."""
    wanted = json.loads((HERE / "package.json").read_text(encoding="utf-8"))["dependencies"]
    return [
        name for name in wanted if not (HERE / "node_modules" / name / "package.json").is_file()
    ]


def ensure_sdk() -> None:
    """``npm ci`` here (the committed lock file) once if a pinned package (the SDK, the
    real agents) is not installed, so the README's test command works on a fresh
    clone; .ci/run does it up front. A file lock keeps parallel pytest-xdist workers
    from installing at once."""
    if not _missing_packages():
        return
    npm = shutil.which("npm")
    assert npm is not None, (
        f"{_missing_packages()} missing in {HERE}/node_modules and npm is not on PATH: "
        f"run `npm ci` in {HERE}"
    )
    tag = hashlib.sha256(str(HERE).encode()).hexdigest()[:16]
    with open(Path(tempfile.gettempdir()) / f"acp-lite-npm-ci-{tag}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not _missing_packages():
            return  # another worker installed it meanwhile
        done = subprocess.run(
            [npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"],
            cwd=HERE,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
    assert done.returncode == 0, f"`npm ci` in {HERE} failed:\n{done.stderr[-2000:]}"
    missing = _missing_packages()
    assert not missing, f"`npm ci` in {HERE} did not install {missing}"


class _Conversation:
    """Request/response helpers over `send`, `request` and `recv`."""

    def send(self, message: Message) -> None:
        raise NotImplementedError

    def request(self, method: str, params: Message) -> int:
        raise NotImplementedError

    def recv(self, timeout: float = 5.0) -> Message:
        raise NotImplementedError

    def notify(self, method: str, params: Message) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def call(self, method: str, params: Message, timeout: float = 5.0) -> Message:
        """Request + wait for its response; anything received meanwhile is kept in `received`."""
        request_id = self.request(method, params)
        while True:
            message = self.recv(timeout)
            if message.get("id") == request_id and "method" not in message:
                return message

    def until(
        self,
        predicate: Callable[[Message], bool],
        timeout: float = 5.0,
        on_request: Callable[[Message], Message | None] | None = None,
    ) -> list[Message]:
        """Reads until `predicate(message)`; returns everything read, including the match.

        `on_request(message)` answers agent->client requests with a result dict
        (None: leave it unanswered).
        """
        seen: list[Message] = []
        while True:
            message = self.recv(timeout)
            seen.append(message)
            if on_request is not None and "method" in message and "id" in message:
                result = on_request(message)
                if result is not None:
                    self.send({"jsonrpc": "2.0", "id": message["id"], "result": result})
            if predicate(message):
                return seen


class RawPeer(_Conversation):
    """Speaks JSON lines to a child process; a reader thread queues what it says."""

    def __init__(self, argv: list[str], *, cwd: Path = HERE) -> None:
        self.proc = subprocess.Popen(
            argv,
            cwd=cwd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        self.inbox: queue.Queue[Message | None] = queue.Queue()
        self.received: list[Message] = []
        #: Which view owns a session / request id ("session", id) etc. (:class:`PeerView`).
        self.claims: dict[tuple[str, object], PeerView] = {}
        self._next_id = 1
        self._stderr: list[bytes] = []
        threading.Thread(target=self._read_stdout, daemon=True).start()
        threading.Thread(target=self._read_stderr, daemon=True).start()

    def _read_stdout(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.inbox.put(json.loads(line))
        self.inbox.put(None)

    def _read_stderr(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self._stderr.append(line)

    def stderr_text(self) -> str:
        return b"".join(self._stderr[-50:]).decode(errors="replace")

    def send(self, message: Message) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def request(self, method: str, params: Message) -> int:
        """Sends a request and returns its id (responses are read with `recv`)."""
        request_id = self._next_id
        self._next_id += 1
        self.send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        return request_id

    def recv(self, timeout: float = 5.0) -> Message:
        try:
            message = self.inbox.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(
                f"no message within {timeout}s; stderr:\n{self.stderr_text()}"
            ) from None
        if message is None:
            raise AssertionError(f"peer closed stdout; stderr:\n{self.stderr_text()}")
        self.received.append(message)
        return message

    def view(self) -> PeerView:
        """A new view for one test of several sharing this peer."""
        return PeerView(self)

    def close(self) -> int:
        """Closes stdin and waits; kills after 10 s so a test never leaks the process.
        Messages still queued are moved to `received`."""
        if self.proc.stdin is not None and not self.proc.stdin.closed:
            self.proc.stdin.close()
        try:
            code = self.proc.wait(timeout=10)  # only spent when the peer hangs
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise AssertionError("peer did not exit after stdin closed") from None
        while not self.inbox.empty():
            message = self.inbox.get_nowait()
            if message is not None:
                self.received.append(message)
        return code


class PeerView(_Conversation):
    """One test's side of a :class:`RawPeer` shared by several tests (one agent
    process, started once): it reads only its own messages. A message is another
    view's when its session (``params.sessionId``), the request it answers or the
    agent request a ``$/cancel_request`` withdraws belongs to another view;
    another view's messages (late updates of an earlier test's session) are
    skipped, but stay in the peer's `received`. Unclaimed ones are this view's."""

    def __init__(self, peer: RawPeer) -> None:
        self.peer = peer
        self.sessions: list[str] = []
        self.received: list[Message] = []

    def claim_session(self, session_id: str) -> None:
        self.sessions.append(session_id)
        self.peer.claims["session", session_id] = self

    def send(self, message: Message) -> None:
        self.peer.send(message)

    def request(self, method: str, params: Message) -> int:
        request_id = self.peer.request(method, params)
        self.peer.claims["request", request_id] = self
        return request_id

    def recv(self, timeout: float = 5.0) -> Message:
        while True:
            message = self.peer.recv(timeout)
            key = _claim_key(message)
            if key is None or self.peer.claims.setdefault(key, self) is self:
                if "method" in message and "id" in message:
                    self.peer.claims["agent request", message["id"]] = self
                self.received.append(message)
                return message


def _claim_key(message: Message) -> tuple[str, object] | None:
    if "method" not in message:
        return ("request", message.get("id"))
    params = message.get("params") or {}
    if "sessionId" in params:
        return ("session", params["sessionId"])
    if message["method"] == "$/cancel_request":
        return ("agent request", params.get("requestId"))
    return None


def update_of(message: Message) -> Message | None:
    """The `params.update` of a session/update notification, else None."""
    if message.get("method") == "session/update" and "id" not in message:
        update: Message = message["params"]["update"]
        return update
    return None


def is_idle(message: Message) -> bool:
    update = update_of(message)
    return bool(update and update["sessionUpdate"] == "state_update" and update["state"] == "idle")


_SCHEMA_PATH = HERE.parent / "data" / "schema" / "v2" / "schema.unstable.json"
_validators: dict[str, Any] = {}


def validate(definition: str, instance: object) -> None:
    """Validates `instance` against a `$defs` entry of the v2 (unstable) schema."""
    import jsonschema  # type: ignore[import-untyped]  # test-only dependency, no stubs

    validator = _validators.get(definition)
    if validator is None:
        schema = json.loads(_SCHEMA_PATH.read_text())
        wrapper = {"$ref": f"#/$defs/{definition}", "$defs": schema["$defs"]}
        validator = jsonschema.Draft202012Validator(wrapper)
        _validators[definition] = validator
    validator.validate(instance)
