"""Start ``py_sdk_agent_v1.py`` without paying the Python SDK's import each time.

Importing the official SDK costs a second or more of CPU (pydantic builds its ~280
models), more than everything the tests then do with the agent. ``serve`` imports the
agent module once and forks a child per agent start; ``launch`` is the command a
client starts instead of ``python py_sdk_agent_v1.py ARGS``: it hands its stdin,
stdout and stderr to the server (``SCM_RIGHTS``), so the forked agent reads and writes
the client's own pipes with the SDK's own stdio code, as if the client had started
it. The launcher closes its copies (the client sees the agent's end of output, not
the launcher's), forwards the signals a client sends (SIGTERM, SIGINT, SIGHUP) and
exits with the agent's exit status.

    python py_sdk_fork.py serve SOCKET   # prints "ready PID"; ends at stdin EOF
    python py_sdk_fork.py launch SOCKET ARGS...  # the agent's ARGS (HISTORY_DIR ...)

Stdlib only besides the agent module; the server runs no thread (it forks).
"""

from __future__ import annotations

import array
import contextlib
import gc
import json
import os
import selectors
import signal
import socket
import sys
import traceback
from pathlib import Path

FORWARDED = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


def _recv_fds(conn: socket.socket) -> tuple[dict[str, object], list[int]]:
    fds = array.array("i")
    data, ancdata, _flags, _addr = conn.recvmsg(65536, socket.CMSG_SPACE(3 * fds.itemsize))
    for level, kind, payload in ancdata:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds.frombytes(payload[: len(payload) - len(payload) % fds.itemsize])
    return json.loads(data.decode()), list(fds)


def _run_agent(request: dict[str, object], fds: list[int]) -> int:
    """In the forked child: become ``python py_sdk_agent_v1.py ARGS`` on the fds, in
    a session of its own like an agent a client starts (``start_new_session``)."""
    os.setsid()
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
    for fd in fds:
        if fd > 2:
            os.close(fd)
    for sig in (signal.SIGCHLD, *FORWARDED):
        signal.signal(sig, signal.SIG_DFL)
    signal.set_wakeup_fd(-1)
    os.chdir(str(request["cwd"]))
    # The interpreter's stdio objects still wrap fds 0-2: now the client's pipes.
    sys.stdin = open(0, closefd=False)  # noqa: SIM115 - lives as long as the process
    sys.stdout = open(1, "w", closefd=False)  # noqa: SIM115
    sys.stderr = open(2, "w", closefd=False)  # noqa: SIM115
    import asyncio

    import py_sdk_agent_v1

    sys.argv = [py_sdk_agent_v1.__file__, *map(str, request["args"])]  # type: ignore
    try:
        asyncio.run(py_sdk_agent_v1.main())
    except SystemExit as exit_:
        return exit_.code if isinstance(exit_.code, int) else 1
    except BaseException:
        traceback.print_exc()
        return 1
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
    return 0


def serve(path: str) -> None:
    # Not a child of the test process: its leak checks count that process's
    # children, and this server outlives tests on purpose (it stops at the end of
    # its input, i.e. when the test session ends or dies).
    if os.fork() != 0:
        os._exit(0)
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import py_sdk_agent_v1  # noqa: F401 - the import every agent then shares

    # What the import built lives as long as every agent: out of their cyclic GC's
    # walks (a full collection over the SDK's pydantic models costs ~0.1 s of an
    # agent's turn), and its pages stay shared with the forks.
    gc.freeze()

    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        listener.bind(path)
    except FileNotFoundError:  # its directory is gone: the test session already ended
        os._exit(0)
    listener.listen(16)
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)  # only to wake the selector
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ)
    selector.register(wake_r, selectors.EVENT_READ)
    selector.register(sys.stdin.fileno(), selectors.EVENT_READ)
    waiting: dict[int, socket.socket] = {}  # agent pid -> its launcher's connection
    print(f"ready {os.getpid()}", flush=True)
    while True:
        for key, _ in selector.select():
            if key.fileobj == sys.stdin.fileno():
                return  # the test session ended (or died): stop; running agents go on
            if key.fileobj == wake_r:
                os.read(wake_r, 512)
            elif key.fileobj is listener:
                conn, _ = listener.accept()
                try:
                    request, fds = _recv_fds(conn)
                except (OSError, ValueError):
                    conn.close()
                    continue
                pid = os.fork()
                if pid == 0:
                    selector.close()
                    os.close(wake_r)
                    os.close(wake_w)
                    listener.close()
                    conn.close()
                    for other in waiting.values():
                        other.close()
                    os._exit(_run_agent(request, fds))
                for fd in fds:
                    os.close(fd)
                waiting[pid] = conn
                conn.sendall(f"pid {pid}\n".encode())
        while waiting:
            pid, status = os.waitpid(-1, os.WNOHANG)
            if pid == 0:
                break
            conn = waiting.pop(pid, None)
            if conn is not None:
                with contextlib.suppress(OSError):  # (the launcher is gone)
                    conn.sendall(f"status {os.waitstatus_to_exitcode(status)}\n".encode())
                conn.close()


def launch(path: str, args: list[str]) -> int:
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    conn.settimeout(30)
    try:
        conn.connect(path)
        request = json.dumps({"args": args, "cwd": os.getcwd()}).encode()
        conn.sendmsg(
            [request], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [0, 1, 2]))]
        )
        reader = conn.makefile("r")
        line = reader.readline()
    except OSError as error:
        print(f"py_sdk_fork: no agent server at {path}: {error}", file=sys.stderr)
        return 3
    if not line.startswith("pid "):
        print(f"py_sdk_fork: the agent server did not start the agent ({line!r})", file=sys.stderr)
        return 3
    pid = int(line.split()[1])
    for sig in FORWARDED:
        signal.signal(sig, lambda sig, _frame: os.kill(pid, sig))
    # The agent has the client's pipes: let go of ours, so that the client's end of
    # input reaches the agent and the agent's end of output reaches the client.
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    conn.settimeout(None)
    line = reader.readline()  # (a forwarded signal interrupts it; Python retries)
    if not line.startswith("status "):
        print("py_sdk_fork: lost the agent server before the agent's exit", file=sys.stderr)
        return 1
    code = int(line.split()[1])
    if code < 0:  # killed by a signal: end the same way
        signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    return code


if __name__ == "__main__":
    if sys.argv[1:2] == ["serve"]:
        serve(sys.argv[2])
    elif sys.argv[1:2] == ["launch"]:
        sys.exit(launch(sys.argv[2], sys.argv[3:]))
    else:
        sys.exit("usage: py_sdk_fork.py serve SOCKET | launch SOCKET ARGS...")
