"""``acp-lite cassette from-transcript`` / ``record`` and ``acp-lite replay``'s
usage errors. (``replay`` as the agent of another language's client:
tests/interop/test_ts_client.py.)"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import acp_lite
from acp_lite.cassettes import Cassette
from acp_lite.cassettes import agent as cassette_agent
from acp_lite.cassettes.agent import STDIO_MISMATCH_GRACE, ReplayAgent
from acp_lite.cli import main
from acp_lite.errors import AcpError

from .conftest import RunCli, cli_env


def test_a_prompt_transcript_becomes_a_cassette(
    run_cli: RunCli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SERVICE_TOKEN", "tok-0123456789")
    prompt = run_cli("prompt", "--transcript", "t.ndjson", "deploy with tok-0123456789")
    assert prompt.returncode == 0, prompt.stderr
    done = run_cli("cassette", "from-transcript", "t.ndjson", "c.acp.jsonl", "--agent", "ref")
    assert done.returncode == 0, done.stderr
    assert done.stderr.startswith("wrote c.acp.jsonl: "), done.stderr
    assert "of them with secrets replaced by placeholders" in done.stderr
    text = (tmp_path / "c.acp.jsonl").read_text()
    assert "tok-0123456789" not in text
    assert "deploy with <redacted:SERVICE_TOKEN>" in text
    (recording,) = Cassette.load(tmp_path / "c.acp.jsonl").recordings
    assert (recording.header.agent, recording.header.protocol_version) == ("ref", 2)
    methods = [r.message.get("method") for r in recording.records if r.direction == "send"]
    assert methods == ["initialize", "session/new", "session/prompt"]


def test_bad_input_is_a_usage_error(
    run_cli: RunCli, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "bad.ndjson").write_text('{"dir": "sideways"}\n')
    bad = run_cli("cassette", "from-transcript", "bad.ndjson", "out.acp.jsonl")
    assert bad.returncode == 2
    assert "cannot read bad.ndjson: bad.ndjson:1: not a transcript record" in bad.stderr
    missing = run_cli("replay", "nothing.acp.jsonl")
    assert missing.returncode == 2 and "cannot replay nothing.acp.jsonl" in missing.stderr
    (tmp_path / "c.acp.jsonl").write_text('{"acpCassette": 1}\n')
    wrong = run_cli("replay", "--connection", "2", "c.acp.jsonl")
    assert wrong.returncode == 2 and "holds 1 connection(s), not 2" in wrong.stderr
    unknown = run_cli("replay", "--match-on", "method,body", "c.acp.jsonl")
    assert unknown.returncode == 2 and "unknown match_on ['body']" in unknown.stderr
    grace = run_cli("replay", "--mismatch-grace", "-1", "c.acp.jsonl")
    assert grace.returncode == 2, grace.stderr
    assert "--mismatch-grace must be 0 or more seconds, not -1.0" in grace.stderr
    # The help's default is the engine's (the option is used: test_ts_client.py).
    with pytest.raises(SystemExit):
        main(["replay", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert f"(default {STDIO_MISMATCH_GRACE:g})" in help_text
    # An OUT that cannot be written: one line, not a traceback (nothing is started).
    (tmp_path / "t.ndjson").write_text('{"dir": "send", "t": 0, "msg": {"id": 1}}\n')
    unwritable = run_cli("cassette", "from-transcript", "t.ndjson", "t.ndjson/c.acp.jsonl")
    assert unwritable.returncode == 2, unwritable.stderr
    assert unwritable.stderr.startswith(
        "acp-lite: error: cannot write the cassette t.ndjson/c.acp.jsonl:"
    )
    record = run_cli("cassette", "record", str(tmp_path), "--", "no-such-agent")
    assert record.returncode == 2, record.stderr
    assert "cannot write the cassette" in record.stderr and "is a directory" in record.stderr


def test_replay_passes_its_mismatch_grace_on(
    run_cli: RunCli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--mismatch-grace`` reaches the replay engine; without it, the engine's
    default. (What the grace does: tests/cassettes; the option in use: the
    TypeScript client's batch, tests/interop/test_ts_client.py.)"""
    graces: list[float] = []

    def serve(recording: object, **options: Any) -> ReplayAgent:
        graces.append(options["mismatch_grace"])
        agent = ReplayAgent(Cassette.load(tmp_path / "c.acp.jsonl").recordings[0])
        agent.input_ended = True
        return agent

    monkeypatch.setattr(cassette_agent, "serve_stdio", serve)
    (tmp_path / "c.acp.jsonl").write_text('{"acpCassette": 1}\n')
    assert run_cli("replay", "--mismatch-grace", "0.25", "c.acp.jsonl").returncode == 0
    assert run_cli("replay", "c.acp.jsonl").returncode == 0
    assert graces == [0.25, STDIO_MISMATCH_GRACE]


def test_record_any_client_through_the_recording_agent(tmp_path: Path) -> None:
    """`acp-lite cassette record OUT -- AGENT` is the agent of any client: it passes
    the lines through and writes the cassette; the cassette then replays."""
    cassette = tmp_path / "c.acp.jsonl"
    agent = [sys.executable, "-m", "acp_lite.testing.agent", "--scenario", "thinking"]
    recorder = [sys.executable, "-m", "acp_lite", "cassette", "record", str(cassette), "--", *agent]
    with acp_lite.connect(recorder, env=cli_env(), timeout=30) as client:
        live = client.new_session(cwd=tmp_path).run("Think")
    (recording,) = Cassette.load(cassette).recordings
    assert recording.header.agent.endswith("-m acp_lite.testing.agent --scenario thinking")
    assert recording.records[-1].direction == "recv"  # the client ended it, not the agent
    replay = ReplayAgent(recording)
    with acp_lite.connect_in_memory(replay, timeout=10) as client:
        again = client.new_session(cwd=tmp_path / "other").run("Think")
    assert [e.raw for e in again.updates] == [e.raw for e in live.updates]
    assert replay.replayer.verdict() is None


def test_the_clients_end_is_noted_before_the_agents_input_closes() -> None:
    """The recorder tells "the client ended it" from "the agent ended it" by whether
    the client's input had ended when the agent's output did; closing the agent's
    input is what makes the agent stop, so the end is noted before that close (a
    check of the pump thread being alive raced with it on a loaded machine)."""
    import io
    import threading

    from acp_lite.cli.record import _Lines, _pump_client

    ended = threading.Event()
    seen_at_close: list[bool] = []

    class AgentInput(io.FileIO):
        def close(self) -> None:
            if not self.closed:
                seen_at_close.append(ended.is_set())
            super().close()

    client_out, client_in = os.pipe()
    os.write(client_in, b'{"a": 1}\n{"b": 2}')  # the last line unterminated
    os.close(client_in)
    agent_out, agent_in = os.pipe()
    lines = _Lines()
    try:
        _pump_client(client_out, AgentInput(agent_in, "wb"), lines, ended)
        assert os.read(agent_out, 100) == b'{"a": 1}\n{"b": 2}\n'
    finally:
        os.close(client_out)
        os.close(agent_out)
    assert seen_at_close == [True]
    assert [(d, line) for d, _, line in lines.entries] == [
        ("send", b'{"a": 1}'),
        ("send", b'{"b": 2}'),
    ]


CASSETTES = Path(__file__).resolve().parents[1] / "cassettes" / "__cassettes__"


def test_a_replay_mismatch_ends_the_agents_stderr_with_what_did_not_match(
    tmp_path: Path,
) -> None:
    """A client shows the last lines of its agent's stderr: with ``acp-lite replay``
    as the agent, they say which line did not match, after the diff."""
    cassette = CASSETTES / "test_recorded_suite" / "test_reference_two_turns.acp.jsonl"
    replay = [sys.executable, "-m", "acp_lite", "replay", str(cassette)]
    with acp_lite.connect(replay, env=cli_env(), timeout=30) as client:
        session = client.new_session(cwd=tmp_path)
        with pytest.raises(AcpError) as raised:
            session.run("What is six times eight?")
        client.close()
        tail = client.stderr_tail()
    assert "cassette mismatch" in str(raised.value)
    assert '+        "text": "What is six times eight?",' in tail
    assert tail[-1].startswith("acp-lite replay: ")
    assert tail[-1].endswith(
        ": client line #3 (request session/prompt) does not match the recorded request "
        "session/prompt at line 6 (match_on=['method', 'params']) (the diff is above)"
    ), tail


#: An agent that answers one request and then does not exit at end of input.
SLOW_TO_EXIT = (
    "import sys, time\n"
    "sys.stdin.readline()\n"
    'print(\'{"jsonrpc": "2.0", "id": 1, "result": {}}\', flush=True)\n'
    "time.sleep(60)\n"
)


def test_record_writes_the_cassette_when_the_client_stops_it(tmp_path: Path) -> None:
    """A client whose agent does not exit in time SIGTERMs it (acp_lite does, after
    its close grace): the recorder then writes what passed, and stops AGENT."""
    cassette = tmp_path / "c.acp.jsonl"
    agent = [sys.executable, "-c", SLOW_TO_EXIT]
    recorder = [sys.executable, "-m", "acp_lite", "cassette", "record", str(cassette), "--", *agent]
    proc = subprocess.Popen(
        recorder, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        env=cli_env(), start_new_session=True,
    )  # fmt: skip
    try:
        assert proc.stdin is not None and proc.stdout is not None
        request = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}
        proc.stdin.write(json.dumps(request).encode() + b"\n")
        proc.stdin.flush()
        assert json.loads(proc.stdout.readline()) == {"jsonrpc": "2.0", "id": 1, "result": {}}
        proc.stdin.close()
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)  # the agent too, had it been left behind
        proc.wait()
    assert proc.stderr is not None
    stderr = proc.stderr.read()
    assert proc.returncode == 128 + signal.SIGTERM, stderr
    (recording,) = Cassette.load(cassette).recordings
    assert [r.direction for r in recording.records] == ["send", "recv"]
