"""``--timeout`` and the documented limits: the prompt's answer within the
per-request limit, the turn within the turn limit; each timeout message names the
limit that fired and its value."""

from __future__ import annotations

from acp_lite.cli import DEFAULT_TURN_TIMEOUT, EXIT_TIMEOUT
from acp_lite.cli.errors import explain as _explain
from acp_lite.cli.errors import limit_of as _limit_of
from acp_lite.errors import Timeout
from acp_lite.limits import Limits

from .conftest import RunCli, assert_clean_error


def test_an_unanswered_prompt_hits_the_per_request_limit(run_cli: RunCli) -> None:
    proc = run_cli("prompt", "--scenario", "hang", "--timeout", "0.3", "x")
    assert_clean_error(
        proc,
        EXIT_TIMEOUT,
        "timed out after 0.3s (the per-request limit) waiting for response to session/prompt",
        only=False,
    )


def test_work_that_never_ends_hits_the_turn_limit(run_cli: RunCli) -> None:
    proc = run_cli("prompt", "--scenario", "broken_no_idle", "--timeout", "0.3", "x")
    assert_clean_error(
        proc, EXIT_TIMEOUT, "timed out after 0.3s (the turn limit) waiting for the idle", only=False
    )


def test_the_default_limits_are_named_with_their_values() -> None:
    defaults = Limits()
    request = Timeout("no response", awaited="response to session/prompt request 3")
    turn = Timeout("timed out", awaited="the idle ending the work of message 'u1'")
    start = Timeout("no response", awaited="response to initialize", method="initialize")
    assert _limit_of(request, None) == (defaults.default_timeout, "the per-request limit")
    assert _limit_of(turn, None) == (DEFAULT_TURN_TIMEOUT, "the turn limit")
    assert _limit_of(start, None) == (defaults.connect_timeout, "the start-up limit")
    assert _limit_of(turn, 5.0) == (5.0, "the turn limit")
    message = _explain(request, ["agent"], None).message
    assert message.startswith("timed out after 60s (the per-request limit; --timeout sets it)")
