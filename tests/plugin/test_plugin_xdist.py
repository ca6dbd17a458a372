"""Under pytest-xdist each worker starts its own agents and snapshots do not depend
on the worker that wrote or checks them."""

from __future__ import annotations

import pytest

from .conftest import LEAN_XDIST, PYTHONPATH

SUITE = """
import os
import pytest


@pytest.mark.parametrize("text", ["one", "two words", "three little words", "four"])
def test_echo(acp_session, acp_snapshot, acp_transcript, text):
    turn = acp_session.run(text)
    assert turn.text == text
    assert turn.updates == acp_snapshot
    assert acp_transcript.violations() == []
    assert os.environ.get("PYTEST_XDIST_WORKER", "gw")[:2] == "gw"


@pytest.mark.acp_scope("module")
@pytest.mark.parametrize("n", range(2))
def test_shared_agent_per_worker(acp_session, acp_snapshot, n):
    assert acp_session.run("shared").updates == acp_snapshot(view="final")
"""


def test_two_workers(pytester: pytest.Pytester) -> None:
    # The reference agent behind a proxy giving its ids new random values, in each
    # worker's process: the workers are the processes that matter here.
    agent = "python:random_ids_agent:RandomIdsAgent"
    pytester.makeini(f"[pytest]\n{PYTHONPATH}\nacp_agent = {agent}\nacp_conformance = strict\n")
    pytester.makepyfile(test_suite=SUITE)
    # Written by one process (this one), checked by two workers (with other random ids).
    first = pytester.runpytest(*LEAN_XDIST, "--assert=plain", "--snapshot-update", "-n", "0")
    first.assert_outcomes(passed=6)
    first.stdout.fnmatch_lines(["*6 snapshots generated*"])
    # Each worker is a new interpreter: --assert=plain spares it rewriting the modules
    # of the installed plugins, which it cannot cache here (PYTHONDONTWRITEBYTECODE).
    second = pytester.runpytest(*LEAN_XDIST, "--assert=plain", "-n", "2")
    second.assert_outcomes(passed=6)
    second.stdout.fnmatch_lines(["*2 workers*", "*6 snapshots passed*"])
