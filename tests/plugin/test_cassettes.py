"""@pytest.mark.acp_cassette and --acp-record-mode, the way users meet them:
pytester runs of small suites (in this process)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from pytest_acp._cassettes import _safe

from .conftest import IN_PROCESS, LEAN, LEAN_TRIO

ROOT = Path(__file__).resolve().parents[2]
SUITE = ROOT / "tests" / "cassettes" / "test_recorded_suite.py"


def _copy_suite(pytester: pytest.Pytester) -> Path:
    source = SUITE.read_text(encoding="utf-8")
    for folder in ("__cassettes__", "__snapshots__"):
        shutil.copytree(SUITE.parent / folder / SUITE.stem, pytester.path / folder / SUITE.stem)
    return pytester.makepyfile(**{SUITE.stem: source})


def test_the_recorded_suite_fails_readably_when_the_client_changes(
    pytester: pytest.Pytester,
) -> None:
    """The committed suite, with its client changed: a prompt's text, a permission
    answer, a cassette gone, a process started in replay."""
    path = _copy_suite(pytester)
    source = path.read_text(encoding="utf-8")
    source = source.replace('acp_session.run("hello")', 'acp_session.run("hello there")')
    rejected = "def test_ts_agent_permission_rejected"
    allowing = '@pytest.mark.acp_permission("allow_once")\n'
    source = source.replace(rejected, allowing + rejected)
    source += (
        "\n\n@reference()\ndef test_starts_a_process(acp_session):\n"
        "    subprocess.run(['true'])\n"
        "\n\n@reference()\ndef test_stops_early(acp_session):\n"
        "    acp_session.run('What is six times seven?')\n"
    )
    path.write_text(source, encoding="utf-8")
    (pytester.path / "__cassettes__" / SUITE.stem / "test_reference_v1_echo.acp.jsonl").unlink()
    # Two more tests on a recorded two-turn conversation: one starts a process (and
    # fails so), one sends only its first turn (an error at teardown).
    two_turns = SUITE.parent / "__cassettes__" / SUITE.stem / "test_reference_two_turns.acp.jsonl"
    for name in ("test_starts_a_process", "test_stops_early"):
        target = pytester.path / "__cassettes__" / SUITE.stem / f"{name}.acp.jsonl"
        target.write_bytes(two_turns.read_bytes())
    # --acp-env: an agent option of this run, which the recording command repeats.
    result = pytester.runpytest_inprocess(*LEAN, "-p", "no:randomly", "--acp-env=DEMO=1")
    out = result.stdout.str()
    # One-line failures are one line (no "All traceback entries are hidden" after them).
    assert "traceback entries are hidden" not in out
    # Failed: the changed prompt, the changed answer, the process. Errors: the
    # missing cassette (setup) and the unsent turn (teardown); the test that failed
    # (the process) gets no teardown error for what it did not send.
    result.assert_outcomes(passed=9, failed=3, errors=2)
    assert "ERROR at teardown of test_stops_early" in out
    assert (
        "cassette __cassettes__/test_recorded_suite/test_stops_early.acp.jsonl: the client did "
        "not send 1 recorded line(s):\n  request session/prompt (line 15)\n" in out
    )
    assert "ERROR at teardown of test_starts_a_process" not in out
    # The prompt: a diff naming the request and the cassette line.
    assert (
        "AcpCassetteMismatch: cassette __cassettes__/test_recorded_suite/test_ts_agent_echo"
        ".acp.jsonl: client line #3 (request session/prompt) does not match the recorded "
        "request session/prompt at line 6" in out
    )
    assert '-        "text": "hello",' in out and '+        "text": "hello there",' in out
    # ... raised at the test's call, without acp_lite's frames, the client's error it
    # caused, or the replay's "stderr" (the same diff again).
    call = '>       turn = acp_session.run("hello there")\n'
    assert call in out
    assert out.split(call)[1].split("\n")[1].startswith("E       pytest_acp.AcpCassetteMismatch: ")
    assert "_portal.py" not in out and "direct cause" not in out
    assert "ACP agent stderr" not in out
    # The answer to the agent's permission request.
    assert "(response to the agent's request id 0) does not match the recorded response" in out
    assert '-      "optionId": "reject",' in out
    assert '+      "optionId": "allow",' in out
    # A missing cassette names its file and the command that records it.
    assert (
        "no cassette "
        + str(pytester.path / "__cassettes__" / SUITE.stem)
        + "/test_reference_v1_echo.acp.jsonl (--acp-record-mode=none replays only); record it "
        "against the real agent with: pytest --acp-record-mode=once --acp-env=DEMO=1 "
        "test_recorded_suite.py::test_reference_v1_echo\n" in out
    )
    assert "AgentProcessStarted: replay started a process: ['true']" in out


AGENTS = """
import json
import os
from pathlib import Path

import pytest
from acp_lite.testing import InProcessAgent


def counted(scenario):
    # An agent in this process whose starts are counted (a file per start).
    def factory():
        if os.environ.get("NO_AGENT"):
            raise AssertionError("the agent started in replay")
        with open(Path(os.environ["STARTS"]), "a") as f:
            f.write(scenario + "\\n")
        return InProcessAgent(scenario)

    return pytest.mark.acp_agent(in_process=factory)


def pytest_acp_cassette_redact(message, direction, config):
    # Our build host's name is not for the cassette.
    fixed = json.loads(json.dumps(message).replace("build-42.internal", "<host>"))
    if isinstance(message, dict):
        message.clear()
        message.update(fixed)
"""

SUITE_SOURCE = """
import os
import pytest
from conftest import counted

pytestmark = pytest.mark.acp_cassette


@counted("plan")
def test_plan(acp_session, acp_snapshot):
    assert acp_session.run("Fix the bug").updates == acp_snapshot


@counted("echo")
@pytest.mark.acp_cassette("a name")
def test_named(acp_client, tmp_path, acp_snapshot):
    # Secrets the client sends: an MCP server's token, a credential-like variable's
    # value, a host name the conftest's hook redacts.
    server = {
        "name": "tools",
        "command": "tools-server",
        "args": ["--key", os.environ["DEMO_API_KEY"], "--host", "build-42.internal"],
        "env": [{"name": "GITHUB_TOKEN", "value": "ghp-from-a-vault"}],
    }
    session = acp_client.new_session(cwd=tmp_path, mcp_servers=[server])
    turn = session.run("hello")
    assert turn.text == "hello"
    assert turn.updates == acp_snapshot
"""


#: The marker's name "a name" is no plain file name: its file gets a hash suffix.
NAMED = f"{_safe('a name')}.acp.jsonl"


def _files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*.jsonl")}


def test_record_once_then_replay_gives_the_same_snapshots(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    starts = pytester.path / "starts.txt"
    monkeypatch.setenv("STARTS", str(starts))
    monkeypatch.setenv("DEMO_API_KEY", "sk-demo-0123456789")
    pytester.makeconftest(AGENTS)
    pytester.makepyfile(test_rec=SUITE_SOURCE)

    recorded = pytester.runpytest_inprocess(*LEAN, "--acp-record-mode=once", "--snapshot-update")
    recorded.assert_outcomes(passed=2)
    assert starts.read_text().split() == ["plan", "echo"]
    cassettes = pytester.path / "__cassettes__" / "test_rec"
    assert sorted(p.name for p in cassettes.iterdir()) == [
        NAMED,
        "test_plan.acp.jsonl",
    ]
    text = (cassettes / NAMED).read_text()
    header = json.loads(text.splitlines()[0])
    assert header["acpCassette"] == 1 and header["protocolVersion"] == 2
    assert header["agent"].startswith("in-process agent <function counted.<locals>.factory")
    assert header["recordedAt"].endswith("Z") and header["acpLite"]
    for secret in ("sk-demo-0123456789", "build-42.internal", "ghp-from-a-vault"):
        assert secret not in text
    assert '"args": ["--key", "<redacted:DEMO_API_KEY>", "--host", "<host>"]' in text
    assert '{"name": "GITHUB_TOKEN", "value": "<redacted:GITHUB_TOKEN>"}' in text
    committed = {**_files(cassettes), **_files(pytester.path / "__snapshots__")}

    # Replay: no agent, the same snapshots, nothing written.
    monkeypatch.setenv("NO_AGENT", "1")
    replayed = pytester.runpytest_inprocess(*LEAN)
    replayed.assert_outcomes(passed=2)
    assert "2 snapshots passed." in replayed.stdout.str()
    assert {**_files(cassettes), **_files(pytester.path / "__snapshots__")} == committed
    # once, with the cassettes there, replays too (here with the recorded timing,
    # a thousand times faster).
    fast = ("--acp-record-mode=once", "--acp-replay-speed=1000")
    pytester.runpytest_inprocess(*LEAN, *fast).assert_outcomes(passed=2)

    # all records again (the agent runs), new_episodes adds only what is missing.
    monkeypatch.delenv("NO_AGENT")
    again = pytester.runpytest_inprocess(*LEAN, "--acp-record-mode=all", "-k", "plan")
    again.assert_outcomes(passed=1)
    assert starts.read_text().split() == ["plan", "echo", "plan"]
    (cassettes / NAMED).unlink()
    episodes = pytester.runpytest_inprocess(*LEAN, "--acp-record-mode=new_episodes")
    episodes.assert_outcomes(passed=2)
    assert starts.read_text().split() == ["plan", "echo", "plan", "echo"]
    assert "2 snapshots passed." in episodes.stdout.str()


BAD = """
import pytest

@pytest.mark.acp_cassette(match_on=["method", "body"])
def test_match_on(acp_client):
    pass

@pytest.mark.acp_cassette
@pytest.mark.acp_scope("module")
def test_scope(acp_client):
    pass

@pytest.mark.acp_cassette
def test_plain(acp_client):
    pass

@pytest.mark.acp_cassette
def test_no_fixture():
    pass  # code that starts its agent itself: the marker cannot see it
"""

EXAMPLE = ROOT / "examples" / "test_with_cassettes.py"

NO_PROCESS = """
import subprocess

import pytest


@pytest.fixture(autouse=True)
def _no_process(monkeypatch):
    def refuse(self, args, *more, **options):
        raise AssertionError(f"replay started a process: {args!r}")

    monkeypatch.setattr(subprocess.Popen, "__init__", refuse)
"""


def test_the_cassette_example_replays_and_usage_errors(pytester: pytest.Pytester) -> None:
    # One run, two directories: the committed example with its cassettes (no process
    # may start), and markers used wrongly.
    committed = EXAMPLE.parent / "__cassettes__" / EXAMPLE.stem
    assert len(list(committed.iterdir())) == 3
    example = pytester.mkdir("example")
    (example / EXAMPLE.name).write_text(EXAMPLE.read_text(encoding="utf-8"))
    (example / "conftest.py").write_text(NO_PROCESS)
    copied = example / "__cassettes__" / EXAMPLE.stem
    shutil.copytree(committed, copied)
    (pytester.mkdir("bad") / "test_bad.py").write_text(BAD)
    result = pytester.runpytest_inprocess(*LEAN, "--acp-conformance=strict")
    reports = result.reprec.getreports("pytest_runtest_logreport")  # type: ignore[attr-defined]
    replayed = [r for r in reports if r.nodeid.startswith("example/") and r.when == "call"]
    assert [r.outcome for r in replayed] == ["passed"] * 3
    assert not [r for r in reports if r.nodeid.startswith("example/") and r.failed]
    assert _files(copied) == _files(committed)  # replayed, nothing written

    out = result.stdout.str()
    # A marker that records nothing says so (once: the test that used no fixture).
    assert out.count("this test used none, so nothing was recorded or replayed") == 1
    assert "bad/test_bad.py::test_no_fixture\n" in out  # the warning names its test
    assert "acp_cassette match_on: unknown ['body']; use ['method', 'params', 'meta', 'id']" in out
    speed = pytester.runpytest_inprocess(*LEAN, "--acp-replay-speed=-1", "-k", "plain")
    assert "acp replay speed must be positive, not -1.0" in speed.stdout.str()
    assert "@pytest.mark.acp_cassette records one test's own connection: it needs the " in out


def test_an_async_test_fails_with_the_diff(pytester: pytest.Pytester) -> None:
    """pytest-trio sets the async fixtures up and down inside the call, and reports
    the errors of both as one group: the mismatch still fails the test with its
    diff at the test's line, and the marker is not taken for unused."""
    pytester.makepyfile(
        conftest=IN_PROCESS,
        test_async="""
        import pytest
        from conftest import scenario

        PROMPT = "hello"

        @pytest.mark.trio
        @pytest.mark.acp_cassette
        @scenario("echo")
        async def test_echo(acp_async_session):
            turn = await acp_async_session.run(PROMPT)
            assert turn.stop_reason == "end_turn"
        """,
    )
    options = (*LEAN_TRIO, "-W", "error")
    pytester.runpytest_inprocess(*options, "--acp-record-mode=once").assert_outcomes(passed=1)
    source = pytester.path / "test_async.py"
    source.write_text(source.read_text().replace('PROMPT = "hello"', 'PROMPT = "hello you"'))
    result = pytester.runpytest_inprocess(*options)
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    call = ">       turn = await acp_async_session.run(PROMPT)\n"
    assert call in out, out
    assert out.split(call)[1].split("\n")[1].startswith("E       pytest_acp.AcpCassetteMismatch: ")
    assert '+        "text": "hello you",' in out and "ExceptionGroup" not in out
