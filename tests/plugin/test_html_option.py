"""``pytest --acp-html FILE``: the failing tests' conversations as one HTML page."""

from __future__ import annotations

import re

import pytest

from .conftest import LEAN, LEAN_XDIST

SUITE = """
import functools
import pytest
from acp_lite.testing import InProcessAgent


@pytest.mark.acp_agent(in_process=functools.partial(InProcessAgent, scenario="streaming"))
def test_fails_after_a_turn(acp_session):
    turn = acp_session.run("please say hello")
    assert turn.text == "something else"


@pytest.mark.acp_agent(
    in_process=functools.partial(InProcessAgent, scenario="broken_bad_stop_reason")
)
def test_breaks_a_rule(acp_session):
    acp_session.run("stop oddly")
    assert False, "fails too"


@pytest.mark.acp_agent(in_process=functools.partial(InProcessAgent, scenario="streaming"))
def test_passes(acp_session):
    acp_session.run("not in the page")
"""


def _check_page(page: str) -> None:
    assert "test_suite.py::test_fails_after_a_turn" in page
    assert "test_suite.py::test_breaks_a_rule" in page
    assert "test_passes" not in page and "not in the page" not in page
    assert "please say hello" in page  # the prompt, in its timeline
    assert "unknown-stop-reason" in page  # the finding, at its line
    assert not re.search(r"""(?:src|href)=["']?https?:""", page)  # self-contained


@pytest.mark.parametrize("workers", [None, "2"])
def test_failing_tests_are_written_as_one_page(
    pytester: pytest.Pytester, workers: str | None
) -> None:
    pytester.makepyfile(test_suite=SUITE)
    page = pytester.path / "out" / "failures.html"
    args = [f"--acp-html={page}"]
    if workers:
        result = pytester.runpytest(*LEAN_XDIST, "-n", workers, *args)
    else:
        result = pytester.runpytest(*LEAN, *args)
    result.assert_outcomes(passed=1, failed=2)
    _check_page(page.read_text(encoding="utf-8"))
    if not workers:
        result.stdout.fnmatch_lines(["*ACP conversations of the failing tests: *failures.html"])


def test_no_failure_writes_no_page_and_removes_an_old_one(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_suite=SUITE.split("@pytest.mark.acp_agent")[0] + "\n\n"
                        "def test_ok():\n    pass\n")  # fmt: skip
    page = pytester.path / "failures.html"
    page.write_text("an older run's page")
    result = pytester.runpytest(*LEAN, f"--acp-html={page}")
    result.assert_outcomes(passed=1)
    assert not page.exists()
