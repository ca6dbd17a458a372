"""The ``acp:`` report line shows only in runs that use ACP: the plugin is loaded in
every project once installed, and unrelated suites should not mention it."""

from __future__ import annotations

import pytest

from .conftest import LEAN_HEADER


def test_no_header_in_an_unrelated_project_nor_for_fake_agents(
    pytester: pytest.Pytester,
) -> None:
    # A test of its own and one with the fake agent, which is its own agent: naming the
    # configured one would mislead. The line shows if any test of the run uses ACP.
    pytester.makepyfile(
        test_plain="def test_plain():\n    assert True\n",
        test_bot="def test_bot(acp_fake_agent):\n    pass\n",
    )
    result = pytester.runpytest(*LEAN_HEADER, "--collect-only", "-q")
    assert "test_plain.py::test_plain" in result.stdout.str()
    assert "test_bot.py::test_bot" in result.stdout.str()
    assert "acp:" not in result.stdout.str()


def test_header_when_a_test_uses_an_acp_fixture_or_marker(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        "import pytest\n"
        "def test_uses(acp_client):\n    pass\n"
        "@pytest.mark.acp_timeout(5)\n"
        "def test_marked():\n    pass\n"
    )
    result = pytester.runpytest(*LEAN_HEADER, "--collect-only", "-q", "-k", "uses")
    result.stdout.fnmatch_lines(["acp: agent=reference agent*, conformance=warn"])
    marked = pytester.runpytest(*LEAN_HEADER, "--collect-only", "-q", "-k", "marked")
    marked.stdout.fnmatch_lines(["acp: agent=*"])


def test_header_when_an_acp_option_is_given(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_plain():\n    assert True\n")
    result = pytester.runpytest(*LEAN_HEADER, "--collect-only", "-q", "--acp-timeout", "5")
    result.stdout.fnmatch_lines(["acp: agent=*"])
