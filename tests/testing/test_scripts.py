"""Scripts: loading from JSON and TOML, errors, and running them in the agent."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from acp_lite.testing import (
    Exit,
    Fail,
    IgnoreSigterm,
    Insert,
    Permission,
    Raw,
    Reject,
    Script,
    ScriptError,
    Stderr,
    Step,
    Stop,
    Text,
    Turn,
    Update,
    WaitForCancel,
    WaitForPrompt,
    agent_command,
    load_script,
)
from acp_lite.testing.agent import main as agent_main
from acp_lite.testing.scenarios import SCENARIOS, kind

from ._agentproc import RawAgent, drive_turn
from ._gated import is_final_idle

Spawn = Callable[..., RawAgent]

TOML_SCRIPT = """
name = "toml-demo"
page_size = 2

[[turns]]
steps = [
  { type = "text", chunks = ["Hello", " from TOML"] },
  { type = "permission", title = "Run it?", branches.reject_once = [
      { type = "stop", stop_reason = "refusal" } ] },
]

[[turns]]
running = true
steps = [{ type = "fail", code = -32000, message = "login needed" }]
"""

JSON_SCRIPT = {
    "name": "json-demo",
    "turns": [
        [
            {"type": "update", "update": {"sessionUpdate": "notice", "severity": "info",
                                          "title": "turn {{turn}} of {{session_id}}"}},
            {"type": "echo", "prefix": "you said: "},
        ],
        {"steps": [{"type": "reject", "code": -32602, "message": "no more"}]},
    ],
}  # fmt: skip


def test_toml_script_loads_to_objects(tmp_path: Path) -> None:
    path = tmp_path / "demo.toml"
    path.write_text(TOML_SCRIPT)
    script = load_script(path)
    assert script.name == "toml-demo"
    assert script.page_size == 2
    first = script.turns[0].steps
    assert first[0] == Text(chunks=["Hello", " from TOML"])
    assert isinstance(first[1], Permission)
    assert first[1].branches == {"reject_once": [Stop(stop_reason="refusal")]}
    assert script.turns[1] == Turn(steps=[Fail(code=-32000, message="login needed")])


def test_toml_script_runs_in_the_agent(spawn: Spawn, tmp_path: Path) -> None:
    path = tmp_path / "demo.toml"
    path.write_text(TOML_SCRIPT)
    agent = spawn(script=path)
    sid = agent.start_session()
    agent.prompt(sid, "hi")
    request = agent.agent_request("session/request_permission")
    agent.send({"jsonrpc": "2.0", "id": request["id"], "result": {"outcome": {
        "outcome": "selected", "optionId": "reject"}}})  # fmt: skip
    assert agent.wait_idle(sid)["stopReason"] == "refusal"
    texts = [u["content"]["text"] for u in agent.updates(sid)
             if u["sessionUpdate"] == "agent_message_chunk"]  # fmt: skip
    assert texts == ["Hello", " from TOML"]
    since = len(agent.messages)
    agent.prompt(sid, "again")
    idle = agent.wait_for(
        lambda m: (
            m.get("method") == "session/update"
            and m["params"]["update"].get("stopReason") == "error"
        ),
        since=since,
    )
    assert idle["params"]["update"]["error"] == {"code": -32000, "message": "login needed"}


def test_json_script_runs_with_placeholders_and_rejects(spawn: Spawn, tmp_path: Path) -> None:
    path = tmp_path / "demo.json"
    path.write_text(json.dumps(JSON_SCRIPT))
    agent = spawn(script=path)
    sid = agent.start_session()
    drive_turn(agent, sid, "ping pong")
    updates = agent.updates(sid)
    assert updates[2]["title"] == f"turn 1 of {sid}"
    texts = [u["content"]["text"] for u in updates if u["sessionUpdate"] == "agent_message_chunk"]
    assert texts == ["you said: ", "ping ", "pong"]
    before = len(agent.updates(sid))
    rejected = agent.response(agent.prompt(sid, "again"))
    assert rejected["error"] == {"code": -32602, "message": "no more"}
    assert agent.call("_acp_lite/sync") == {"echo": {}}
    assert len(agent.updates(sid)) == before  # rejected first: no work, no state change


def test_script_object_passed_inline(spawn: Spawn) -> None:
    script = Script(
        turns=[
            Turn(
                steps=[
                    Insert(respond=False),
                    Update(update={"sessionUpdate": "usage_update", "used": 1, "size": 10}),
                    Reject(),  # after insertion this cannot reject: the work fails instead
                ]
            )
        ]
    )
    agent = spawn(script=script)
    sid = agent.start_session()
    rid = drive_turn(agent, sid, "x")
    assert agent.response(rid)["result"] == {"messageId": "user-1"}
    assert agent.updates(sid)[-1]["stopReason"] == "error"


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"turns": [[{"type": "dance"}]]}, "unknown step type 'dance'"),
        (
            {"turns": [[{"type": "text", "txt": "x"}]]},
            r"turns\[0\]\.steps\[0\] \(text\): unknown key\(s\) txt",
        ),
        ({"turns": [[{"type": "sleep"}]]}, "seconds"),
        ({"turns": [{"steps": [{"type": "permission", "branches": {"a": [{}]}}]}]}, "branches.a"),
        ({"turns": "x"}, "'turns' must be a list"),
        ({"while_busy": "later"}, "while_busy"),
        ({"colour": "red"}, "unknown key"),
    ],
)
def test_script_errors_say_where(data: dict[str, object], message: str) -> None:
    with pytest.raises(ScriptError, match=message):
        Script.from_dict(data)


def run_main(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """The agent's ``main`` on an ``agent_command`` argv, in this process: its exit
    code, stdout and stderr (argument and script errors end it before it serves)."""
    assert argv[:3] == [sys.executable, "-m", "acp_lite.testing.agent"]
    code = agent_main(argv[3:])
    out, err = capsys.readouterr()
    return code, out, err


def test_bad_script_file_exits_2_with_a_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "bad.toml"
    path.write_text("turns = [[{ type = 'nope' }]]")
    code, out, err = run_main(agent_command(script=path), capsys)
    assert code == 2
    assert "bad.toml" in err
    assert "unknown step type 'nope'" in err
    assert out == ""


def test_unknown_scenario_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_main(agent_command("nope"), capsys)
    assert code == 2
    assert "unknown scenario 'nope'" in err
    assert out == ""


def test_agent_command_rejects_two_sources() -> None:
    with pytest.raises(ValueError, match="either"):
        agent_command("echo", script=Script())


def test_wait_for_cancel_times_out_or_ends_cancelled(spawn: Spawn) -> None:
    script = Script(
        turns=[
            Turn(steps=[WaitForCancel(timeout=0.01), Text(text="timed out")]),
            Turn(steps=[WaitForCancel(), Text(text="never")]),
        ]
    )
    agent = spawn(script=script)
    sid = agent.start_session()
    drive_turn(agent, sid, "one")
    assert agent.updates(sid)[-2]["content"]["text"] == "timed out"
    since = len(agent.messages)
    agent.response(agent.prompt(sid, "two"))
    agent.notify("session/cancel", {"sessionId": sid})
    idle = agent.wait_for(lambda m: m.get("method") == "session/update"
                          and "stopReason" in m["params"]["update"], since=since)  # fmt: skip
    assert idle["params"]["update"]["stopReason"] == "cancelled"
    assert "never" not in json.dumps(agent.updates(sid))


def chunk_texts(agent: RawAgent, sid: str) -> list[str]:
    return [u["content"]["text"] for u in agent.updates(sid)
            if u["sessionUpdate"] == "agent_message_chunk"]  # fmt: skip


@pytest.mark.parametrize("while_busy", ["hold", "insert"])
def test_wait_for_prompt_holds_the_work_until_the_next_prompt(
    spawn: Spawn, while_busy: str
) -> None:
    script = Script(
        turns=[
            Turn(steps=[Text(text="waiting"), WaitForPrompt(), Text(text="go on")]),
            Turn(steps=[Text(text="next")]),
        ],
        while_busy=while_busy,
    )
    agent = spawn(script=script)
    sid = agent.start_session()
    agent.response(agent.prompt(sid, "one"))
    agent.wait_for(lambda _: chunk_texts(agent, sid) == ["waiting"])
    assert agent.call("_acp_lite/sync") == {"echo": {}}
    assert chunk_texts(agent, sid) == ["waiting"]  # still held
    assert not any(is_final_idle(m) for m in agent.messages)
    second = agent.prompt(sid, "two")
    agent.response(second)
    ends = 2 if while_busy == "hold" else 1  # "insert": the same work goes on
    agent.wait_for(lambda _: sum(map(is_final_idle, agent.messages)) == ends)
    assert agent.call("_acp_lite/sync") == {"echo": {}}
    assert chunk_texts(agent, sid) == ["waiting", "go on", "next"]
    assert sum(map(is_final_idle, agent.messages)) == ends


def test_wait_for_prompt_times_out_or_ends_cancelled(spawn: Spawn) -> None:
    script = Script(
        turns=[
            Turn(steps=[WaitForPrompt(timeout=0.01), Text(text="timed out")]),
            Turn(steps=[WaitForPrompt(), Text(text="never")]),
        ]
    )
    agent = spawn(script=script)
    sid = agent.start_session()
    drive_turn(agent, sid, "one")  # nobody prompts again: on after the timeout
    assert chunk_texts(agent, sid) == ["timed out"]
    since = len(agent.messages)
    agent.response(agent.prompt(sid, "two"))
    agent.notify("session/cancel", {"sessionId": sid})
    idle = agent.wait_for(is_final_idle, since=since)
    assert idle["params"]["update"]["stopReason"] == "cancelled"
    assert chunk_texts(agent, sid) == ["timed out"]


def test_ignore_sigterm_step(spawn: Spawn) -> None:
    agent = spawn(
        script=Script(turns=[Turn(steps=[IgnoreSigterm(), Text(text="armored")])]), process=True
    )
    sid = agent.start_session()
    drive_turn(agent, sid, "x")
    agent.proc.send_signal(signal.SIGTERM)
    # The handler runs in the agent's main thread; when the kernel delivers the
    # signal to another of its threads, the main thread only gets to it once its
    # read of stdin returns: the next request wakes it.
    assert agent.call("_acp_lite/sync") == {"echo": {}}
    agent.wait_stderr("ignoring SIGTERM")


def test_docstring_examples_agree() -> None:
    import textwrap
    import tomllib

    from acp_lite.testing import script as script_module

    doc = script_module.__doc__ or ""
    toml_block = doc.split("The same in TOML")[1].split("::\n")[1].split("\nand JSON")[0]
    from_toml = Script.from_dict(tomllib.loads(textwrap.dedent(toml_block)))
    refuse: list[Step] = [Stop(stop_reason="refusal")]
    assert from_toml == Script(
        turns=[
            Turn(
                steps=[
                    Text(chunks=["Hello", " world"]),
                    Permission(branches={"reject_once": refuse}),
                ]
            )
        ]
    )


def test_agent_startup_imports_neither_trio_nor_the_client() -> None:
    # Every test spawns the agent, so it must start fast: importing it must not pull
    # in trio, cattrs or the client (keep acp_lite/__init__.py's exports lazy).
    code = (
        "import sys, acp_lite.testing.agent\n"
        "heavy = ('trio', 'cattrs', 'acp_lite.client', 'acp_lite.aio', 'acp_lite.protocol')\n"
        "print(sorted(m for m in sys.modules if m.startswith(heavy)))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=30, check=True
    )
    assert done.stdout.strip() == "[]"


def test_raw_bytes_stderr_and_exit_steps(spawn: Spawn) -> None:
    steps: list[Step] = [
        Text(text="before"),
        Raw(hex="fffe00"),  # not UTF-8: raw bytes, exactly as given
        Stderr(text="going away"),
        Exit(code=7),
    ]
    agent = spawn(script=Script(turns=[Turn(steps=steps)]))
    agent.prompt(agent.start_session(), "hi")
    assert agent.wait_exit() == 7
    agent.wait_eof()
    assert b"\xff\xfe\x00\n" in agent.lines
    assert "going away" in agent.stderr_text()


def test_console_script_is_installed_and_lists_the_scenarios() -> None:
    binary = Path(sys.executable).parent / "acp-lite-agent"
    done = subprocess.run(
        [str(binary), "--list-scenarios"], capture_output=True, text=True, timeout=10, check=True
    )
    assert [line.split()[0] for line in done.stdout.splitlines()] == sorted(SCENARIOS)
    kinds = {line.split()[0]: line.split()[1] for line in done.stdout.splitlines()}
    assert kinds == {name: kind(name) for name in SCENARIOS}
    assert (kinds["echo"], kinds["broken_no_running"], kinds["crash"]) == (
        "conforming",
        "broken",
        "fault",
    )
