"""Hostile-output fuzz: mutated real v2 and v1 agent output through the plugin's
checks, views and transcript writer and through the CLI renderer (in-process,
hypothesis), then once end to end through pytester (strict conformance,
``--acp-transcripts``) and once through the ``acp-lite prompt`` command."""

from __future__ import annotations

import io
import json
import shlex
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis_budget import examples

from acp_lite import cli
from acp_lite.cli.render import Renderer
from acp_lite.transcript import Transcript
from pytest_acp import normalize
from pytest_acp._incremental import IncrementalCheck
from pytest_acp.conformance import check_transcript

from .conftest import LEAN
from .hostile_corpus import mutated_lines


def _transcript(lines: list[str]) -> Transcript:
    t = Transcript()
    t.record("send", b'{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/"}}')
    t.record("recv", b'{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s1"}}')
    t.record(
        "send",
        b'{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":'
        b'{"sessionId":"s1","prompt":[{"type":"text","text":"go"}]}}',
    )
    for line in lines:
        t.record("recv", line.replace("{{session_id}}", "s1").encode("utf-8", "surrogatepass"))
    return t


@settings(max_examples=examples(0.6), deadline=None)
@given(seed=st.integers(0, 2**32 - 1), count=st.integers(1, 40))
def test_mutated_output_never_raises_in_process(
    seed: int, count: int, tmp_path_factory: pytest.TempPathFactory
) -> None:
    t = _transcript(mutated_lines(seed, count))
    check_transcript(t, ended=True)
    check_transcript(t, ended=True, agent_exited=True)
    inc = IncrementalCheck()
    inc.feed_from(t)
    inc.violations(start=0)
    for view in ("raw", "merged", "final"):
        normalize(t, view=view)
    path = tmp_path_factory.mktemp("t") / "t.ndjson"
    t.save(path)
    again = Transcript.load(path)
    assert len(again) == len(t)
    renderer = Renderer(io.StringIO(), io.StringIO(), color=True, shared=True)
    for entry in t:
        try:
            value = json.loads(entry.line)
        except (ValueError, RecursionError):
            continue
        params = value.get("params") if isinstance(value, dict) else None
        update = params.get("update") if isinstance(params, dict) else None
        if isinstance(update, dict):
            renderer.update(update)
    renderer.finish()


SEED = 20261201


def _agent(lines: list[str]) -> list[str]:
    script = json.dumps(_script(lines))
    return [sys.executable, "-m", "acp_lite.testing.agent", "--script-json", script]


SUITE = """
import functools
import pytest
from acp_lite.testing import InProcessAgent
from pytest_acp import normalize

SCRIPT = {script!r}

@pytest.mark.acp_agent(in_process=functools.partial(InProcessAgent, script=SCRIPT))
def test_turn(acp_session, acp_snapshot):
    turn = acp_session.run("go")
    normalize(turn.updates, view="final")

def test_after():
    pass
"""


def _script(lines: list[str]) -> dict[str, object]:
    steps = [{"type": "raw", "text": line} for line in lines]
    return {"turns": [{"steps": steps, "stop_reason": "end_turn"}]}


def test_mutated_output_through_the_plugin(pytester: pytest.Pytester) -> None:
    # The agent runs in this process: what it prints is the point, not the process.
    script = _script(mutated_lines(SEED, 150))
    pytester.makepyfile(test_suite=SUITE.format(script=script))
    transcripts = pytester.path / "transcripts"
    result = pytester.runpytest(
        *LEAN,
        "--acp-conformance=strict",
        f"--acp-transcripts={transcripts}",
        "--acp-timeout=20",
    )
    out = result.stdout.str() + result.stderr.str()
    assert "INTERNALERROR" not in out, out
    assert result.ret in (0, 1), out
    outcomes = result.parseoutcomes()
    assert outcomes.get("passed", 0) + outcomes.get("failed", 0) == 2, outcomes
    saved = list(transcripts.glob("*.ndjson"))
    assert saved
    for path in saved:
        for line in path.read_text(encoding="utf-8").splitlines():
            json.loads(line, parse_constant=_no_constant)


def test_mutated_output_through_the_cli(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # `acp-lite prompt` run in this process (its agent is a process): what it shows
    # of hostile output and how it ends, with no traceback.
    monkeypatch.chdir(tmp_path)
    agent = shlex.join(_agent(mutated_lines(SEED + 1, 150)))
    argv = ["prompt", "--timeout", "20", "--agent", agent, "--transcript", "t.ndjson", "go"]
    code = cli.main(argv)
    err = capsys.readouterr().err
    assert "Traceback" not in err, err
    assert code in (0, 1, 5, 7), err  # the turn's outcome or a protocol error
    for line in (tmp_path / "t.ndjson").read_text(encoding="utf-8").splitlines():
        json.loads(line, parse_constant=_no_constant)


def _no_constant(name: str) -> object:
    raise AssertionError(f"{name} in a saved transcript: not JSON")
