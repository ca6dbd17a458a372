"""Grading ACP clients: ``acp-lite grade-client -- CLIENT_CMD``.

The client under test is run once per scenario against a strict agent
(``acp-lite-agent --grade SCENARIO``, in :mod:`acp_lite.testing.grade_agent`), which
plays the scenario and logs the wire; :mod:`.judge` reads the log and the client's
output against the ``ACP-CLIENT-*`` requirements (:mod:`.requirements`) and gives
the same :class:`~acp_lite.conformance.report.Report` as the agent probes.

The client's side of the contract (docs/grading.md): start the agent given as
``{agent}`` / ``$ACP_AGENT`` / ``$ACP_AGENT_ARGV``, initialize, open a session in the
current directory, send one prompt, answer the agent's requests by its own policy,
print the agent's reply as it holds it when the turn ends (only that) on stdout,
and exit 0; interrupted (SIGINT) mid-turn, cancel the turn.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor

from acp_lite.conformance.report import Report
from acp_lite.grading.judge import judge
from acp_lite.grading.requirements import CLIENT_REQUIREMENTS
from acp_lite.grading.runs import ScenarioRun, run_scenario
from acp_lite.testing.grade_scenarios import SCENARIOS

V2_ONLY = frozenset({"patches"})
"""Scenarios only a v2 client is graded on (skipped once the first run shows v1)."""

__all__ = ["CLIENT_REQUIREMENTS", "SCENARIOS", "ScenarioRun", "grade_client", "judge"]


def grade_client(
    command: Sequence[str],
    *,
    scenarios: Iterable[str] | None = None,
    timeout: float = 30.0,
    subject: str | None = None,
    jobs: int = 4,
    protocol: int | None = None,
) -> Report:
    """Run ``command`` (with ``{agent}`` in it, or reading ``$ACP_AGENT``) once per
    scenario and judge it; ``timeout`` bounds each run (then its processes are killed).

    ``protocol`` makes the agent answer that version whatever the client asks (a
    client that asks for 2 is then graded on its v1 path); by default it answers 1
    to a client that asks for 1, else 2. Up to ``jobs`` scenarios run at once (each
    is its own client and agent). Raises ``OSError`` when the client cannot be started at all."""
    names = list(SCENARIOS) if scenarios is None else list(scenarios)
    unknown = [n for n in names if n not in SCENARIOS]
    if unknown:
        raise ValueError(f"unknown grading scenario(s): {', '.join(unknown)}")
    first = run_scenario(command, names[0], timeout=timeout, protocol=protocol)
    if not first.started:  # the command does not exist: no scenario would do better
        raise OSError(first.error)
    runs = {names[0]: first}
    rest = names[1:]
    if judge("", runs).protocol_version == 1:
        rest = [n for n in rest if n not in V2_ONLY]  # they would play a plain v1 turn
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        later = pool.map(
            lambda n: run_scenario(command, n, timeout=timeout, protocol=protocol), rest
        )
        runs.update(zip(rest, later, strict=True))
    return judge(subject or " ".join(command), runs)
