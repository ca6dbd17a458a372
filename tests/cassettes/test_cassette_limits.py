"""Cassettes at their limits (issue 24, items 7 and 8): malformed files give one
clear error naming the file and line; replay is linear in the session ids and a
large file replays in bounded memory. All in this process, no IO but tmp files."""

from __future__ import annotations

import json
import sys
import tracemalloc
from pathlib import Path

import pytest

from acp_lite.cassettes import Cassette, CassetteError, Replayer, scan
from acp_lite.cli import main

HEADER = '{"acpCassette": 1, "protocolVersion": 2}\n'

MALFORMED = {
    "null-format": ('{"acpCassette": null}\n', 1, "'acpCassette' is None"),
    "huge-format": ('{"acpCassette": 1e400}\n', 1, "not a finite number"),
    "newer-format": ('{"acpCassette": 99}\n', 1, "cassette format 99"),
    "huge-time": (HEADER + '{"dir": "recv", "t": 1e400, "msg": {}}\n', 2, "'t' is inf"),
    "nan-time": (HEADER + '{"dir": "recv", "t": "nan", "msg": {}}\n', 2, "finite"),
    "null-time": (HEADER + '{"dir": "recv", "t": null, "msg": {}}\n', 2, "'t' is None"),
    "list": (HEADER + "[1]\n", 2, "not a transcript record"),
    "deep": (HEADER + "[" * 100_000 + "]" * 100_000 + "\n", 2, "nested"),
    "deep-msg": (
        HEADER + '{"dir": "send", "t": 0, "msg": ' + "[" * 400 + "]" * 400 + "}\n",
        2,
        "nested deeper than",
    ),
    "not-utf8": (HEADER + '{"dir": "recv", "t": 0, "raw": "\xff"}\n', 2, "not UTF-8"),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_a_malformed_cassette_is_one_error_naming_the_file_and_line(
    case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text, line, words = MALFORMED[case]
    path = tmp_path / "bad.acp.jsonl"
    path.write_bytes(text.encode("latin-1") if case == "not-utf8" else text.encode())
    for read in (Cassette.load, scan):
        with pytest.raises(CassetteError) as info:
            read(path)
        assert str(info.value).startswith(f"{path}:{line}: ") and words in str(info.value)
    # acp-lite replay checks the file before it serves: usage error, no traceback.
    assert main(["replay", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"cannot replay {path}: {path}:{line}: " in err and "Traceback" not in err


def _sessions_cassette(path: Path, n: int, *, text: str = "") -> None:
    """A recorded connection with ``n`` sessions, one prompt each (with ``text``
    streamed back as an update)."""
    with path.open("w", encoding="utf-8") as f:
        f.write(HEADER)
        t = 0.0
        for i in range(n):
            sid = f"sess-{i}"
            lines = [
                ("send", {"jsonrpc": "2.0", "id": 2 * i, "method": "session/new",
                          "params": {"cwd": f"/rec/{i}", "mcpServers": []}}),
                ("recv", {"jsonrpc": "2.0", "id": 2 * i, "result": {"sessionId": sid}}),
                ("send", {"jsonrpc": "2.0", "id": 2 * i + 1, "method": "session/prompt",
                          "params": {"sessionId": sid, "prompt": []}}),
                ("recv", {"jsonrpc": "2.0", "method": "session/update", "params": {
                    "sessionId": sid, "update": {"sessionUpdate": "agent_message_chunk",
                                                 "content": {"type": "text", "text": text}}}}),
                ("recv", {"jsonrpc": "2.0", "id": 2 * i + 1, "result": {"stopReason": "end_turn"}}),
            ]  # fmt: skip
            for direction, msg in lines:
                t += 0.001
                f.write(json.dumps({"dir": direction, "t": t, "msg": msg}) + "\n")


def _replay(path: Path, n: int, *, streamed: bool = True) -> Replayer:
    """The client's side of :func:`_sessions_cassette`, sans IO."""
    (recording,) = scan(path) if streamed else Cassette.load(path).recordings
    replayer = Replayer(recording, secrets={})
    for i in range(n):
        new = {"jsonrpc": "2.0", "id": 2 * i, "method": "session/new",
               "params": {"cwd": f"/live/{i}", "mcpServers": []}}  # fmt: skip
        replayer.receive_line(json.dumps(new).encode())
        (answer,) = replayer.take()
        sid = json.loads(answer.line)["result"]["sessionId"]
        prompt = {"jsonrpc": "2.0", "id": 2 * i + 1, "method": "session/prompt",
                  "params": {"sessionId": sid, "prompt": []}}  # fmt: skip
        replayer.receive_line(json.dumps(prompt).encode())
        assert len(replayer.take()) == 2
    assert replayer.verdict() is None
    return replayer


def _calls(path: Path, n: int) -> int:
    """How many function calls (Python and C) the replay of ``path`` makes: a
    measure of its work that does not depend on the machine's load."""
    count = 0

    def counter(frame: object, event: str, arg: object) -> None:
        nonlocal count
        if event in ("call", "c_call"):
            count += 1

    sys.setprofile(counter)
    try:
        _replay(path, n, streamed=False)
    finally:
        sys.setprofile(None)
    return count


def test_replay_work_grows_linearly_with_the_session_ids(tmp_path: Path) -> None:
    # Two sizes in one run, 8x apart, each session in its own directory: linear is
    # ~8x the work; the old matcher (a copy of every id seen per candidate line,
    # every directory tried on every string) made ~46x.
    small, large = 25, 200
    counts = []
    for n in (small, large):
        path = tmp_path / f"{n}.acp.jsonl"
        _sessions_cassette(path, n)
        counts.append(_calls(path, n))
    ratio = counts[1] / counts[0]
    assert ratio < 10, f"{small} sessions: {counts[0]} calls, {large}: {counts[1]} calls"


def test_a_large_cassette_replays_in_bounded_memory(tmp_path: Path) -> None:
    # ~4 MB of recorded text: the streamed replay holds a few lines at a time, not
    # the file (the old load held every parsed record: several times its size).
    n = 200
    path = tmp_path / "large.acp.jsonl"
    _sessions_cassette(path, n, text="x" * 20_000)
    size = path.stat().st_size
    tracemalloc.start()
    try:
        _replay(path, n)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < size / 8, f"peak {peak} bytes for a {size}-byte cassette"
