"""What users read when something is wrong (issue 25 items 5, 13, 15).

* an acp_lite error (``AgentExited``, ``Timeout``, ``PromptInvalidParams``) fails
  the test with the user's frames only, not acp_lite's, and the report keeps its
  transcript and stderr sections;
* a pytest_acp marker keyword nothing reads is a usage error naming the accepted
  ones; ``acp_agent(scenario=...)`` runs the reference agent's scenario;
* ``python -m pytest_acp --help`` reads as plain text; the plugin's exceptions
  are shown (and importable) under ``pytest_acp``.

One inner run for the reports, one for the usage error.
"""

from __future__ import annotations

import re
import traceback

import pytest

import pytest_acp
from pytest_acp.__main__ import main as check_main

from .conftest import IN_PROCESS, LEAN

REPORTS = (
    IN_PROCESS
    + """

@pytest.mark.acp_agent(scenario="crash")  # a process: the default agent would echo
def test_crash(acp_session):
    acp_session.run("hi")


@scenario("hang")
def test_hang(acp_session):
    acp_session.run("hi", timeout=0.01)  # expires: the agent never answers


def helper(session):
    return session.run([{"type": "bogus"}])


@scenario("echo")
def test_invalid(acp_session):
    helper(acp_session)


@pytest.mark.acp_timeout(seconds=7)
@pytest.mark.acp_protocol(version=2)
def test_keywords(acp_timeout, acp_agent_command):
    assert acp_timeout == 7
    assert acp_agent_command.argv[-2:] == ("-m", "acp_lite.testing.agent")
"""
)


def _block(out: str, name: str) -> str:
    """The failure report of test ``name`` (up to the next report or the summary)."""
    after = re.split(rf"^_+ {name} _+$", out, maxsplit=1, flags=re.M)[1]
    return re.split(r"^(?:_{3,} \w|={3,})", after, maxsplit=1, flags=re.M)[0]


def test_acp_lite_errors_show_the_users_frames_only(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_inner=REPORTS)
    result = pytester.runpytest_inprocess(*LEAN, "-q", "--tb=short", "-p", "no:randomly")
    out = result.stdout.str()
    result.assert_outcomes(passed=1, failed=3)
    expected = {
        "test_crash": ("AgentExited: the agent exited with code 3", ["test_crash"]),
        "test_hang": ("Timeout: ", ["test_hang"]),
        "test_invalid": ("PromptInvalidParams: ", ["test_invalid", "helper"]),
    }
    for name, (error, frames) in expected.items():
        block = _block(out, name)
        assert error in block, block
        # Every frame shown is the user's: the test's and its helper's, in order.
        shown = re.findall(r"^(\S+):\d+: in (\w+)$", block, flags=re.M)
        assert shown == [("test_inner.py", f) for f in frames], block
        assert "acp_lite" not in "".join(line for line in block.splitlines() if ": in " in line)
        assert "ACP transcript" in block and "ACP agent stderr" in block, block
    assert "fatal: simulated crash in the reference agent" in _block(out, "test_crash")


def test_full_trace_still_shows_every_frame(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_inner=IN_PROCESS
        + """
@scenario("echo")
def test_invalid(acp_session):
    acp_session.run([{"type": "bogus"}])
"""
    )
    result = pytester.runpytest_inprocess(*LEAN, "-q", "--full-trace", "-p", "no:randomly")
    result.assert_outcomes(failed=1)
    assert "acp_lite/aio/_session.py" in result.stdout.str()


BAD_MARKERS = """
import pytest


@pytest.mark.acp_agent(scenarios="crash")
def test_agent(acp_session):
    pass


@pytest.mark.acp_serve(file=True)
class TestServe:
    def test_one(self):
        pass

    def test_two(self):
        pass


@pytest.mark.acp_cassette(nmae="x", match_on=["method"])
def test_cassette():
    pass
"""


def test_unknown_marker_keywords_are_a_usage_error(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_inner=BAD_MARKERS)
    result = pytester.runpytest_inprocess(*LEAN, "-q")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    err = result.stderr.str()
    assert (
        "test_inner.py::test_agent: @pytest.mark.acp_agent takes no keyword 'scenarios'; "
        "its keywords: argv, env, cwd, in_process, scenario (scenario='name' runs the "
        "reference agent's built-in scenario)"
    ) in err, err
    assert "test_inner.py::TestServe::test_one: @pytest.mark.acp_serve takes no keyword " in err
    assert "'file'; its keywords: files, terminals" in err
    assert "@pytest.mark.acp_cassette takes no keyword 'nmae'; its keywords: name, match_on" in err


def test_in_an_xdist_worker_each_such_test_fails_at_setup(pytester: pytest.Pytester) -> None:
    # A worker's usage error would reach the controller as an INTERNALERROR: the
    # worker reports each test instead. (A worker is a config with workerinput.)
    pytester.makeconftest("def pytest_configure(config):\n    config.workerinput = {}\n")
    pytester.makepyfile(test_inner=BAD_MARKERS + "\n\ndef test_fine():\n    pass\n")
    result = pytester.runpytest_inprocess(*LEAN, "-q")
    result.assert_outcomes(passed=1, errors=4)
    out = result.stdout.str()
    assert "usage error: test_inner.py::test_agent: @pytest.mark.acp_agent takes no " in out


def test_a_marker_argument_given_twice_is_refused(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_inner="""
import pytest

@pytest.mark.acp_timeout(5, seconds=6)
def test_timeout(acp_timeout):
    pass

@pytest.mark.acp_agent(["agent"], scenario="crash")
def test_agent(acp_agent_command):
    pass
"""
    )
    result = pytester.runpytest_inprocess(*LEAN, "-q")
    result.assert_outcomes(errors=2)
    out = result.stdout.str()
    assert "@pytest.mark.acp_timeout takes one seconds, got two" in out
    assert "scenario= runs the reference agent; it takes no command too" in out


def test_check_help_is_plain_text(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        check_main(["--help"])
    out = capsys.readouterr().out
    assert "``" not in out
    assert "python -m pytest_acp check TRANSCRIPT.ndjson: the conformance checks" in out


def test_the_plugins_exceptions_have_public_names() -> None:
    from pytest_acp._cassettes import AcpCassetteMismatch
    from pytest_acp._fake_agent import FakeAgentError

    assert pytest_acp.AcpCassetteMismatch is AcpCassetteMismatch
    assert pytest_acp.FakeAgentError is FakeAgentError
    shown = traceback.format_exception_only(AcpCassetteMismatch("the diff"))
    assert shown == ["pytest_acp.AcpCassetteMismatch: the diff\n"]
    assert traceback.format_exception_only(FakeAgentError(["x"]))[0].startswith(
        "pytest_acp.FakeAgentError: "
    )
