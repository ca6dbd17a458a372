"""``--acp-conformance=off`` connects a plain client (``conformance=False``): the test
pays nothing for checks it never reads. A test that turns them on by marker, and a
shared agent (which serves such tests too), still get a checked client."""

from __future__ import annotations

import pytest

from .conftest import LEAN

CONFTEST = """
import pytest_acp._inprocess as inprocess

SEEN = []
_real = inprocess.connect_in_process

def _spy(agent, **options):
    SEEN.append(options.get("conformance"))
    return _real(agent, **options)

inprocess.connect_in_process = _spy
"""

SUITE = """
import pytest
from conftest import SEEN

def test_off(acp_client):
    assert SEEN == [False]

@pytest.mark.acp_conformance("warn")
def test_on_by_marker(acp_client):
    assert SEEN == [False, True]

@pytest.mark.acp_scope("module")
def test_shared(acp_client):
    assert SEEN == [False, True, True]
"""


def test_off_connects_a_plain_client(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    import pytest_acp._inprocess as inprocess

    # The inner conftest replaces it in this process: put it back afterwards.
    monkeypatch.setattr(inprocess, "connect_in_process", inprocess.connect_in_process)
    pytester.makeini("[pytest]\nacp_agent = python:acp_lite.testing:InProcessAgent\n")
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_suite=SUITE)
    result = pytester.runpytest(*LEAN, "--acp-conformance=off", "-p", "no:randomly")
    result.assert_outcomes(passed=3)
