"""Error lines keep the agent's own words: its auth advice, ``data.details``; and an
auth-required idle error (v2) is an auth error, exit 8 (issue 24 item 14)."""

from __future__ import annotations

import pytest

from acp_lite.cli import EXIT_AUTH, EXIT_REQUEST_ERROR
from acp_lite.cli.errors import agent_words

from .conftest import RunCli, assert_clean_error, fake_agent

ADVICE = "Please run `auggie login` to sign in, then try again."


@pytest.mark.parametrize(
    ("mode", "code", "fragments"),
    [
        ("auth-message", EXIT_AUTH, ["needs authentication for session/new", ADVICE]),
        (
            "details",
            EXIT_REQUEST_ERROR,
            ["Internal error", "Claude Code process exited with code 1"],
        ),
        (
            "idle-auth",
            EXIT_AUTH,
            ["needs authentication for session/prompt", "--login sso ", ADVICE],
        ),
    ],
)
def test_the_error_line_says_what_the_agent_said(
    run_cli: RunCli, mode: str, code: int, fragments: list[str]
) -> None:
    proc = run_cli("prompt", "--agent", fake_agent("wordy_error_agent.py", mode), "x")
    assert_clean_error(proc, code, fragments[0], only=False)
    line = next(x for x in proc.stderr.splitlines() if x.startswith("acp-lite: error: "))
    for fragment in fragments[1:]:
        assert fragment in line, line


def test_generic_words_are_not_repeated_and_long_ones_are_bounded() -> None:
    assert agent_words("Authentication required.", None) == ""
    assert agent_words("Auth required", {"details": "key  missing\n"}) == "key missing"
    assert len(agent_words("x" * 1000, None)) == 300
