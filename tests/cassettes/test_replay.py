"""The replay engine (acp_lite.cassettes): what a client meets when it talks to a
cassette instead of the agent. In this process, over the in-memory transport."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import attrs
import pytest
import trio
import trio.testing

import acp_lite
from acp_lite import permissions
from acp_lite.aio import connect_in_memory as aio_connect_in_memory
from acp_lite.cassettes import (
    MISMATCH_CODE,
    Cassette,
    CassetteError,
    Header,
    Record,
    Recording,
    Replayer,
    redact_records,
    secrets_of,
)
from acp_lite.cassettes._convert import recording_of
from acp_lite.cassettes.agent import ReplayAgent
from acp_lite.errors import AgentExited, RequestError
from acp_lite.testing import InProcessAgent


def _record(client: Any) -> Recording:
    entries = client.transcript.entries()
    t0 = entries[0].time
    return recording_of([Record.from_json(e.to_record(t0)) for e in entries], agent="test")


def _drive(client: Any, cwd: Path, prompts: list[str]) -> list[Any]:
    session = client.new_session(cwd=cwd)
    return [[e.raw for e in session.run(p).updates] for p in prompts]


# Each kind of traffic once (the recorded suite covers more, from committed cassettes).
SCENARIOS = [
    ("echo", 2, ["Hello", "again"]),
    ("tool_call_permission", 2, ["Write"]),
    ("updates_before_response", 2, ["Go"]),
    ("updates_before_session_response", 2, ["Go"]),
    ("failure", 2, ["Call"]),
    ("streaming", 2, ["Stream"]),
    ("echo", 1, ["Hello v1"]),
    ("plan", 1, ["Fix it"]),
]


@pytest.mark.parametrize(("scenario", "protocol", "prompts"), SCENARIOS)
def test_a_recorded_connection_replays_the_same(
    tmp_path: Path, scenario: str, protocol: int, prompts: list[str]
) -> None:
    """Record the reference agent, replay the recording to the same client code in
    another directory: the same updates, every recorded line played, nothing else."""
    options: dict[str, Any] = {"on_permission": permissions.allow_once, "timeout": 10}
    with acp_lite.connect_in_memory(InProcessAgent(scenario, protocol=protocol), **options) as c:
        live = _drive(c, tmp_path / "rec", prompts)
    recording = _record(c)
    assert recording.header.protocol_version == protocol
    agent = ReplayAgent(recording)
    with acp_lite.connect_in_memory(agent, **options) as replayed:
        assert replayed.protocol_version == protocol
        again = _drive(replayed, tmp_path / "play", prompts)
    assert again == live
    assert agent.input_ended
    assert agent.replayer.verdict() is None
    recv = [e.line for e in c.transcript.entries() if e.direction == "recv"]
    assert len([e for e in replayed.transcript.entries() if e.direction == "recv"]) == len(recv)


def _msg(**fields: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", **fields}


def _rec(direction: str, t: float = 0.0, **fields: Any) -> Record:
    return Record(direction, t, _msg(**fields))  # type: ignore[arg-type]


def _lines(replayer: Replayer) -> list[Any]:
    return [json.loads(o.line) for o in replayer.take()]


def _send(replayer: Replayer, **fields: Any) -> None:
    replayer.receive_line(json.dumps(_msg(**fields)).encode())


def test_ids_are_the_clients_and_a_burst_may_come_in_any_order() -> None:
    records = [
        _rec("send", id=1, method="session/prompt", params={"sessionId": "s1", "prompt": []}),
        _rec("recv", method="session/update", params={"sessionId": "s1", "update": {}}),
        _rec("send", method="_note/a", params={}),
        _rec("send", method="_note/b", params={}),
        _rec("recv", id=1, result={"messageId": "m1"}),
        _rec("recv", method="$/cancel_request", params={"requestId": 1}),
    ]
    replayer = Replayer(Recording(Header(), tuple(records)), secrets={})
    assert replayer.take() == []  # the agent waits for the client
    _send(replayer, id=7, method="session/prompt", params={"sessionId": "s1", "prompt": []})
    assert [m["method"] for m in _lines(replayer)] == ["session/update"]
    _send(replayer, method="_note/b", params={})
    assert replayer.take() == []  # _note/a is still missing
    _send(replayer, method="_note/a", params={})
    response, cancel = _lines(replayer)
    assert response["id"] == 7  # the id the client used now
    assert cancel["params"]["requestId"] == 7
    assert replayer.verdict() is None


def test_match_on_id_compares_the_raw_request_ids() -> None:
    records = [_rec("send", id=1, method="session/list", params={})]
    strict = Replayer(Recording(Header(), tuple(records)), match_on=["method", "id"], secrets={})
    _send(strict, id=2, method="session/list", params={"cursor": "x"})  # params not compared
    assert strict.broken
    assert '-  "id": 1,' in strict.verdict()  # type: ignore[operator]
    loose = Replayer(Recording(Header(), tuple(records)), match_on=["method"], secrets={})
    _send(loose, id=2, method="session/list", params={"cursor": "x"})
    assert loose.verdict() is None


def test_normalised_cwd_timestamps_and_meta() -> None:
    new = {"cwd": "/rec/dir", "mcpServers": [], "_meta": {"trace": "a"}}
    read = {"sessionId": "s1", "path": "/rec/dir/notes.txt", "at": "2026-01-01T00:00:00Z"}
    records = [
        _rec("send", id=0, method="session/new", params=new),
        _rec("recv", id=0, result={"sessionId": "s1"}),
        _rec("recv", id=5, method="fs/read_text_file", params=read),
        _rec("send", id=5, result={"content": "text of /rec/dir/notes.txt"}),
        _rec("send", method="_ping", params={"timestamp": 1, "when": "2026-01-01T00:00:00Z"}),
    ]
    replayer = Replayer(Recording(Header(), tuple(records)), secrets={})
    live_new = {"cwd": "/live/x", "mcpServers": [], "_meta": {"trace": "b"}}
    _send(replayer, id=3, method="session/new", params=live_new)
    response, request = _lines(replayer)
    assert response == _msg(id=3, result={"sessionId": "s1"})
    # The agent asks for the file in this run's directory.
    assert request["params"]["path"] == "/live/x/notes.txt"
    _send(replayer, id=5, result={"content": "text of /live/x/notes.txt"})
    _send(replayer, method="_ping", params={"timestamp": 2, "when": "2027-02-02T10:00:00+01:00"})
    assert replayer.verdict() is None
    with_meta = Replayer(Recording(Header(), tuple(records)), match_on=["method", "params", "meta"])
    _send(with_meta, id=3, method="session/new", params=live_new)
    assert with_meta.broken
    assert '"trace": "b"' in with_meta.verdict()  # type: ignore[operator]


def test_a_wrong_answer_to_an_agent_request_is_a_diff() -> None:
    options = {"sessionId": "s1", "options": [], "toolCall": {"toolCallId": "t"}}
    records = [
        _rec("recv", id=0, method="session/request_permission", params=options),
        _rec("send", id=0, result={"outcome": {"outcome": "selected", "optionId": "allow"}}),
    ]
    replayer = Replayer(Recording(Header(), tuple(records), (2, 3)), secrets={}, name="c.jsonl")
    assert [m["method"] for m in _lines(replayer)] == ["session/request_permission"]
    _send(replayer, id=0, result={"outcome": {"outcome": "selected", "optionId": "reject"}})
    report = replayer.verdict()
    assert report is not None
    assert report.startswith(
        "c.jsonl: client line #1 (response to the agent's request id 0) does not match the "
        "recorded response to the agent's request id 0 at line 3"
    )
    assert '-      "optionId": "allow",' in report
    assert '+      "optionId": "reject",' in report
    assert replayer.take() == []  # a response gets no answer


def test_after_a_mismatch_requests_get_errors_and_unplayed_lines_are_listed() -> None:
    records = [
        _rec("send", id=1, method="initialize", params={"protocolVersion": 2}),
        _rec("recv", id=1, result={"protocolVersion": 2}),
        _rec("send", id=2, method="session/new", params={"cwd": "/a", "mcpServers": []}),
    ]
    done = Replayer(Recording(Header(), tuple(records)), secrets={})
    _send(done, id=1, method="initialize", params={"protocolVersion": 2})
    assert done.verdict(ended=False) is None
    assert done.verdict() == (
        "the cassette: the client did not send 1 recorded line(s):\n  request session/new"
    )
    _send(done, id=9, method="session/list", params={})
    (_, refused) = _lines(done)
    assert refused["id"] == 9 and refused["error"]["code"] == MISMATCH_CODE
    assert "does not match the recorded request session/new" in refused["error"]["message"]
    _send(done, id=10, method="session/list", params={})
    assert _lines(done)[0]["error"]["code"] == MISMATCH_CODE
    assert "(1 later client line(s) refused too)" in done.verdict()  # type: ignore[operator]


def test_raw_lines_exit_and_secrets() -> None:
    records = [
        _rec("send", id=1, method="initialize", params={"token": "<redacted:MY_TOKEN>"}),
        Record("recv", 0.1, raw="not json from the agent"),
        Record("exit", 0.2, returncode=3),
    ]
    replayer = Replayer(
        Recording(Header(), tuple(records)), secrets={"s3cr3t": "<redacted:MY_TOKEN>"}
    )
    _send(replayer, id=1, method="initialize", params={"token": "s3cr3t"})
    assert [o.line for o in replayer.take()] == [b"not json from the agent"]
    assert (replayer.exited, replayer.returncode) == (True, 3)
    _send(replayer, id=2, method="session/new", params={})
    assert "the recording has no more client lines here (the recorded agent exited)" in str(
        replayer.mismatches[0]
    )


def test_replay_speed_waits_the_recorded_gaps(tmp_path: Path) -> None:
    """On trio's MockClock: no waiting by default, the recorded gaps at speed 2.0."""
    with acp_lite.connect_in_memory(InProcessAgent("echo"), timeout=10) as live:
        _drive(live, tmp_path, ["Hi"])
    stretched = [attrs.evolve(r, time=i * 10.0) for i, r in enumerate(_record(live).records)]
    recording = Recording(Header(), tuple(stretched))

    async def play(speed: float | None) -> float:
        start = trio.current_time()
        async with aio_connect_in_memory(ReplayAgent(recording, speed=speed)) as client:
            session = await client.new_session(cwd=str(tmp_path))
            await session.run("Hi", timeout=1000)
        return trio.current_time() - start

    def run(speed: float | None) -> float:
        clock = trio.testing.MockClock(autojump_threshold=0)
        return trio.run(play, speed, clock=clock)

    assert run(None) == 0
    # Each agent line waits the recorded gap after the line before it (10 s), halved.
    recv = [r for r in stretched if r.direction == "recv"]
    assert run(2.0) == pytest.approx(len(recv) * 10.0 / 2)


def test_the_client_sees_a_mismatch_as_an_error_and_the_connection_ends(tmp_path: Path) -> None:
    with acp_lite.connect_in_memory(InProcessAgent("echo"), timeout=10) as live:
        _drive(live, tmp_path, ["Hi"])
    agent = ReplayAgent(_record(live))
    with acp_lite.connect_in_memory(agent, timeout=10) as client:
        session = client.new_session(cwd=tmp_path)
        with pytest.raises(RequestError) as refused:
            session.prompt("Bye")
        assert "cassette mismatch" in str(refused.value)
        with pytest.raises(AgentExited):
            session.prompt("Hi")
    assert agent.returncode == 1
    assert '+        "text": "Bye",' in "\n".join(agent.stderr_tail())


def test_cassette_files_round_trip_and_bad_lines_are_named(tmp_path: Path) -> None:
    one = Recording(Header(agent="a"), (_rec("send", id=1, method="x", params={}),))
    two = Recording(Header(agent="b", protocol_version=1), (Record("recv", 1.5, raw="\udcff"),))
    path = tmp_path / "c.acp.jsonl"
    Cassette((one, two)).save(path)
    loaded = Cassette.load(path)
    assert [r.header for r in loaded.recordings] == [one.header, two.header]
    assert [r.records for r in loaded.recordings] == [one.records, two.records]
    assert loaded.recordings[1].line_of(0) == 4
    # A plain transcript (no header) is one connection.
    plain = Cassette.loads('{"dir": "send", "t": 0, "msg": {"id": 1}}\n')
    assert plain.recordings[0].records[0].message == {"id": 1}
    with pytest.raises(CassetteError, match=r"^x\.jsonl:2: not a transcript record"):
        Cassette.loads('{"dir": "send", "t": 0, "msg": 1}\n{"dir": "up"}\n', "x.jsonl")
    with pytest.raises(CassetteError, match=r"^x\.jsonl:1: not JSON"):
        Cassette.loads("{", "x.jsonl")
    # Numbers of the wrong JSON type name their line too (not a bare TypeError).
    with pytest.raises(CassetteError, match=r"^x\.jsonl:1: 't' is \[1\], not a number"):
        Cassette.loads('{"dir": "send", "t": [1], "msg": 1}\n', "x.jsonl")
    with pytest.raises(CassetteError, match=r"^x\.jsonl:1: 'acpCassette' is \{\}, not a number"):
        Cassette.loads('{"acpCassette": {}}\n', "x.jsonl")


def test_auth_payloads_and_mcp_secrets_are_redacted() -> None:
    login = _msg(id=1, method="auth/login", params={"methodId": "token", "token": "t-1"})
    v1 = _msg(id=2, method="authenticate", params={"methodId": "key", "_meta": {"k": "v"}})
    server = {
        "name": "s",
        "command": "srv",
        "args": [],
        "env": [{"name": "DB_PASSWORD", "value": "pw"}, {"name": "MODE", "value": "fast"}],
        "headers": [{"name": "X-Api-Key", "value": "hk"}],
    }
    new = _msg(id=3, method="session/new", params={"cwd": "/a", "mcpServers": [server]})
    out = redact_records([Record("send", 0.0, m) for m in (login, v1, new)], secrets={})
    assert out[0].message["params"] == {"methodId": "token", "token": "<redacted:auth>"}
    assert out[1].message["params"] == {"methodId": "key", "_meta": "<redacted:auth>"}
    (redacted,) = out[2].message["params"]["mcpServers"]
    assert redacted["env"] == [
        {"name": "DB_PASSWORD", "value": "<redacted:DB_PASSWORD>"},
        {"name": "MODE", "value": "fast"},
    ]
    assert redacted["headers"] == [{"name": "X-Api-Key", "value": "<redacted:X-Api-Key>"}]
    assert secrets_of({"OPENAI_API_KEY": "sk-123", "PATH": "/bin", "A_TOKEN": "x"}) == {
        "sk-123": "<redacted:OPENAI_API_KEY>"  # (too short to redact: "x")
    }


def test_a_batch_line_is_compared_whole() -> None:
    batch = [_msg(method="_a", params={}), _msg(method="_b", params={})]
    records = [Record("send", 0.0, batch), Record("send", 0.1, _msg(method="_c", params={}))]
    ok = Replayer(Recording(Header(), tuple(records)), secrets={})
    ok.receive_line(json.dumps(batch).encode())
    assert not ok.broken
    bad = Replayer(Recording(Header(), tuple(records)), secrets={})
    bad.receive_line(json.dumps(batch[::-1]).encode())
    assert bad.mismatches[0].report.startswith(
        "the cassette: client line #1 (line) does not match the recorded line"
    )


def test_a_v1_agents_file_and_terminal_requests_replay_in_the_new_directory(
    tmp_path: Path,
) -> None:
    """A v1 agent that reads and writes a file of the session and runs a command in
    a terminal (tests/aio/fake_v1.py): replayed to a client in another directory,
    the agent's requests name that directory and the client's answers match."""
    from aio.fake_v1 import V1Agent

    async def work(agent: Any, session_id: str) -> None:
        (cwd,) = [m["params"]["cwd"] for m in agent.received if m.get("method") == "session/new"]
        notes = {"sessionId": session_id, "path": f"{cwd}/notes.txt"}
        text = (await agent.result("fs/read_text_file", notes))["content"]
        await agent.result("fs/write_text_file", {**notes, "content": text.upper()})
        run = {"sessionId": session_id, "command": sys.executable, "args": ["-c", "print(6*7)"]}
        term = (await agent.result("terminal/create", run))["terminalId"]
        ids = {"sessionId": session_id, "terminalId": term}
        await agent.result("terminal/wait_for_exit", ids)
        assert (await agent.result("terminal/output", ids))["output"] == "42\n"
        await agent.result("terminal/release", ids)

    def run(agent: Any, cwd: Path) -> Any:
        cwd.mkdir()
        (cwd / "notes.txt").write_text("remember the milk")
        handlers = {"files": acp_lite.LocalFiles(), "terminals": acp_lite.LocalTerminals()}
        with acp_lite.connect_in_memory(agent, timeout=10, **handlers) as client:
            assert client.protocol_version == 1
            assert client.new_session(cwd=cwd).run("Work").stop_reason == "end_turn"
        assert (cwd / "notes.txt").read_text() == "REMEMBER THE MILK"
        return client

    recording = _record(run(V1Agent(on_prompt=work), tmp_path / "recorded"))
    methods = [r.message.get("method") for r in recording.records if r.direction == "recv"]
    assert {"fs/read_text_file", "fs/write_text_file", "terminal/create"} <= set(methods)
    replay = ReplayAgent(recording)
    run(replay, tmp_path / "replayed")
    assert replay.replayer.verdict() is None
