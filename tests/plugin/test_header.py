"""The ``acp:`` report line shows only in runs that use ACP: the plugin is loaded in
every project once installed, and unrelated suites should not mention it."""

from __future__ import annotations

import pytest

pytest_plugins = ["pytester"]


def test_no_header_in_an_unrelated_project(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_plain():\n    assert True\n")
    result = pytester.runpytest("--collect-only", "-q")
    assert "acp:" not in result.stdout.str()


def test_no_header_when_only_fake_agents_are_used(pytester: pytest.Pytester) -> None:
    # The fake agent is its own agent: naming the configured one would mislead.
    pytester.makepyfile("def test_bot(acp_fake_agent):\n    pass\n")
    result = pytester.runpytest("--collect-only", "-q")
    assert "acp:" not in result.stdout.str()


def test_header_when_a_test_uses_an_acp_fixture_or_marker(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        "import pytest\n"
        "def test_uses(acp_client):\n    pass\n"
        "@pytest.mark.acp_timeout(5)\n"
        "def test_marked():\n    pass\n"
    )
    result = pytester.runpytest("--collect-only", "-q", "-k", "uses")
    result.stdout.fnmatch_lines(["acp: agent=reference agent*, conformance=warn"])
    marked = pytester.runpytest("--collect-only", "-q", "-k", "marked")
    marked.stdout.fnmatch_lines(["acp: agent=*"])


def test_header_when_an_acp_option_is_given(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_plain():\n    assert True\n")
    result = pytester.runpytest("--collect-only", "-q", "--acp-timeout", "5")
    result.stdout.fnmatch_lines(["acp: agent=*"])
