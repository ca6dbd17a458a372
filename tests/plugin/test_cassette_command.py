"""``acp_cassette_command``: cassettes for code that starts its own agent (issue 25
item 7).

The code under test is a bot that launches its agent from a command. One run
records (``--acp-record-mode=once``: ``acp-lite cassette record`` in front of the
reference agent); a second replays the recording (``acp-lite replay``) with a
real agent that cannot start, to four tests of the same cassette: one matching,
one sending another prompt (fails at its call with the diff), one stopping
early (fails at teardown) and one never starting the agent; and a test without a
cassette fails with the command that records it. These are processes because
starting one is the point.
"""

from __future__ import annotations

import json
import re

import pytest

from .conftest import LEAN

SUITE = """
import os

import pytest

import acp_lite


def bot(command, text):
    # Code under test that starts its agent itself.
    with acp_lite.connect(command.argv, env=command.env, timeout=20) as client:
        return client.new_session(cwd="/tmp").run(text).text


shared = pytest.mark.acp_cassette("shared")


@shared
def test_match(acp_cassette_command):
    assert bot(acp_cassette_command, "hello") == "hello"


if os.environ["PHASE"] == "replay":

    @shared
    def test_mismatch(acp_cassette_command):
        bot(acp_cassette_command, "hullo")


    @shared
    def test_early(acp_cassette_command):
        with acp_lite.connect(acp_cassette_command.argv, timeout=20):
            pass


    @shared
    def test_never_started(acp_cassette_command):
        pass


    def test_no_cassette(acp_cassette_command):
        pass
"""


def _block(out: str, header: str) -> str:
    after = out.split(header, 1)[1]
    return re.split(r"^(?:_{3,} |={3,})", after, maxsplit=1, flags=re.M)[0]


def test_record_then_replay(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    pytester.makepyfile(test_bot=SUITE)
    monkeypatch.setenv("PHASE", "record")
    recorded = pytester.runpytest_inprocess(*LEAN, "-q", "--acp-record-mode=once")
    recorded.assert_outcomes(passed=1)
    assert "this test used none" not in recorded.stdout.str()
    cassette = pytester.path / "__cassettes__" / "test_bot" / "shared.acp.jsonl"
    header = json.loads(cassette.read_text(encoding="utf-8").splitlines()[0])
    assert "acp_lite.testing.agent" in json.dumps(header)

    monkeypatch.setenv("PHASE", "replay")
    result = pytester.runpytest_inprocess(
        *LEAN, "-q", "-p", "no:randomly", "--tb=short", "--acp-agent=/nonexistent/agent"
    )
    out = result.stdout.str()
    # test_early and test_never_started pass their call, then fail at teardown.
    result.assert_outcomes(passed=3, failed=1, errors=3)
    mismatch = _block(out, "_ test_mismatch _")
    assert "E   pytest_acp.AcpCassetteMismatch: " in mismatch, mismatch
    assert '-        "text": "hello",' in mismatch and '+        "text": "hullo",' in mismatch
    assert re.search(r"^test_bot\.py:\d+: in test_mismatch$", mismatch, flags=re.M), mismatch
    early = _block(out, "ERROR at teardown of test_early")
    assert "shared.acp.jsonl: the client did not send 2 recorded line(s):" in early, early
    assert "request session/prompt" in early
    assert "acp_cassette_command was never run" in _block(
        out, "ERROR at teardown of test_never_started"
    )
    missing = _block(out, "ERROR at setup of test_no_cassette")
    assert "no cassette " in missing and "pytest --acp-record-mode=once" in missing, missing
    assert "test_bot.py::test_no_cassette" in missing
    assert "ERROR at teardown of test_mismatch" not in out  # reported once


def test_refused_beside_the_fixture_clients(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_both="""
def test_both(acp_cassette_command, acp_client):
    pass
"""
    )
    result = pytester.runpytest_inprocess(*LEAN, "-q")
    result.assert_outcomes(errors=1)
    assert "acp_cassette_command and acp_client would share one cassette" in result.stdout.str()
