"""The ``acp_cassette_command`` fixture: cassettes for code that starts its own agent.

The fixture clients (``acp_client`` ...) record and replay in this process. Code
under test that launches its agent itself (a bot, a CLI, a client in another
language) takes this fixture's command instead, as vcrpy users hand a recorded
session to the code under test:

* replaying (``--acp-record-mode=none``, the default, or ``once`` /
  ``new_episodes`` when the cassette exists) it is ``acp-lite replay CASSETTE``
  (run by ``python -m pytest_acp._command_agent``, which marks its start),
  a stdio agent playing the recorded connection, no real agent and no credentials;
* recording (``all``, or ``once`` / ``new_episodes`` without a cassette) it is
  ``acp-lite cassette record OUT -- AGENT`` in front of the agent under test
  (``acp_agent_command``); the cassette is written when the test ends.

The cassette is the test's (``__cassettes__/<module>/<test>.acp.jsonl``, the
``acp_cassette`` marker's name and ``match_on`` if it has one) and holds one
connection: the command serves one agent start. A client line that does not match
the recording fails the test at its call with the diff; a client that sent fewer
lines than recorded fails it at teardown.
"""

from __future__ import annotations

import shutil
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import attrs
import pytest

from pytest_acp import _settings as settings
from pytest_acp._cassettes import CALL_FAILED, AcpCassetteMismatch, TestCassette, at_cause, load
from pytest_acp._diagnostics import fail_test

__all__ = ["REPORT_GRACE", "acp_cassette_command", "command_mismatch", "uses_command"]

REPORT_GRACE = 5.0
"""Seconds the teardown waits for the replay's report: the code under test may not
have waited for its agent to exit."""

#: At the end of a failed call: the replay ends at once on a mismatch (no grace is
#: asked for), so its report follows the client's error closely.
_FAILED_CALL_GRACE = 1.0

_FIXTURE_CLIENTS = ("acp_client", "acp_async_client", "acp_session", "acp_async_session")


@attrs.define
class _Command:
    cassette: TestCassette
    command: settings.AgentCommand
    replay: bool
    out: Path  # the replay's report, or the cassette being recorded
    started: Path  # written when the command starts
    reported: bool = False


_STASH = pytest.StashKey[_Command]()


def uses_command(item: pytest.Item) -> bool:
    """Whether ``item`` took ``acp_cassette_command`` (its cassette is not unused)."""
    return _STASH in item.stash


def _written(run: _Command, grace: float) -> bool:
    """Whether the command's outcome (``out``) is written, waiting up to ``grace``
    seconds for it when the command started (its process may still be ending)."""
    deadline = time.monotonic() + grace
    while not run.out.exists():
        if not run.started.exists() or time.monotonic() >= deadline:
            return False
        time.sleep(0.02)
    return True


def _verdict(run: _Command, grace: float) -> str | None:
    """The replay's report (``None``: not written within ``grace`` seconds)."""
    return run.out.read_text(encoding="utf-8").strip() if _written(run, grace) else None


def _is_missing_lines(run: _Command, verdict: str) -> bool:
    # Replayer.verdict's wording for a client that stopped early (not a mismatch).
    return verdict.startswith(f"{run.cassette.source}: the client did not send ")


def command_mismatch(item: pytest.Item, cause: BaseException | None) -> AcpCassetteMismatch | None:
    """At the end of ``item``'s call: the replay's mismatch, if the replay reported
    one, as the test's failure; with the ``cause`` the call raised (the client's
    error the mismatch made: the replay waits a moment for it), at its frames."""
    run = item.stash.get(_STASH, None)
    if run is None or not run.replay:
        return None
    verdict = _verdict(run, _FAILED_CALL_GRACE if cause is not None else 0.0)
    if verdict is None or verdict == "ok" or _is_missing_lines(run, verdict):
        return None
    run.reported = True
    return at_cause(AcpCassetteMismatch(verdict), cause)


def _agent(request: pytest.FixtureRequest, value: object) -> settings.AgentCommand:
    command = settings.as_agent_command(value)
    if command.in_process is not None:
        raise pytest.UsageError(
            f"{request.node.nodeid}: acp_cassette_command records an agent process; the agent "
            f"under test runs in this process ({command}): give --acp-agent a command"
        )
    return command


@pytest.fixture
def acp_cassette_command(
    request: pytest.FixtureRequest,
    acp_agent_command: object,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[settings.AgentCommand]:
    """The agent command for code that starts its agent itself: a replay of the
    test's cassette, or the agent under test behind a recorder (``--acp-record-mode``).
    Its ``argv`` (``str()``: the command line) is what to run, with ``env`` added to
    the environment when recording. The replay's mismatches fail the test."""
    __tracebackhide__ = True
    item: pytest.Item = request.node
    used = [name for name in _FIXTURE_CLIENTS if name in request.fixturenames]
    if used:
        raise pytest.UsageError(
            f"{item.nodeid}: acp_cassette_command and {used[0]} would share one cassette: "
            "a test records either its fixture clients or its own agent"
        )
    cassette = load(item, item.get_closest_marker("acp_cassette"))
    recorded = cassette.loaded.recordings if cassette.loaded is not None else ()
    replay = cassette.mode == "none" or (cassette.mode != "all" and cassette.loaded is not None)
    if replay and cassette.loaded is None:
        cassette.fail_missing()
    if replay and len(recorded) != 1:
        fail_test(
            f"cassette {cassette.source} holds {len(recorded)} connections; "
            f"acp_cassette_command replays one. Record it again: {cassette.record_command('all')}"
        )
    directory = tmp_path_factory.mktemp("acp-cassette-command")
    started = directory / "started"
    acp_lite = (sys.executable, "-m", "pytest_acp._command_agent", str(started))
    if replay:
        out = directory / "replay-report.txt"
        argv = [*acp_lite, "replay", str(cassette.source), "--report", str(out)]
        # No grace after a mismatch: the report is written, and the test fails, at once.
        argv += ["--match-on", ",".join(cassette.match_on), "--mismatch-grace", "0"]
        if cassette.speed is not None:
            argv += ["--speed", str(cassette.speed)]
        command = settings.AgentCommand(tuple(argv))
    else:
        agent = _agent(request, acp_agent_command)
        out = directory / cassette.path.name
        argv = [*acp_lite, "cassette", "record", str(out), "--", *agent.argv]
        command = settings.AgentCommand(
            tuple(argv), agent.env, agent.cwd, inherit_env=agent.inherit_env
        )
    run = _Command(cassette, command, replay, out, started)
    item.stash[_STASH] = run
    yield command
    _finish(item, run)


def _finish(item: pytest.Item, run: _Command) -> None:
    __tracebackhide__ = True
    call_failed = item.stash.get(CALL_FAILED, False)
    if not run.replay:
        if _written(run, REPORT_GRACE):
            run.cassette.path.parent.mkdir(parents=True, exist_ok=True)
            shutil.move(run.out, run.cassette.path)
        elif not call_failed:
            fail_test(
                f"acp_cassette_command was never run (or its agent never exited): nothing "
                f"was recorded in {run.cassette.path}"
            )
        return
    if run.reported or call_failed:
        return  # the call's failure told the story (or stopped the client early)
    verdict = _verdict(run, REPORT_GRACE)
    if verdict is None:
        fail_test(
            f"acp_cassette_command was never run (or its agent never exited): the client "
            f"did not replay cassette {run.cassette.source}"
        )
    if verdict != "ok":
        fail_test(verdict)
