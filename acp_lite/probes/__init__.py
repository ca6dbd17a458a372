"""Active conformance probes: provoke an agent, judge what it answers.

Each probe checks one requirement of the catalogue (:mod:`acp_lite.conformance`):
it drives the agent over raw JSON-RPC lines (:class:`Peer`), so it can send what
a polite client never would, and fails with the requirement id, a reason and the
lines that show it. :func:`run_probes` runs the suite the agent negotiates (v2
or v1) and returns the report; ``pytest --acp-probes`` runs it as one test per
requirement and ``acp-lite probe -- CMD`` from the command line.

    from acp_lite.probes import AgentCommand, run_probes
    report = run_probes(AgentCommand(["my-agent", "--acp"]))
    assert report.passed, report.failures()
"""

from __future__ import annotations

from acp_lite.probes._context import ProbeContext, ProbeFailed, ProbeSkipped
from acp_lite.probes._peer import Line, Peer, PeerClosed, ProbeTimeout
from acp_lite.probes._registry import ISOLATIONS, PROBES, Isolation, Probe, probe, suite_for
from acp_lite.probes._runner import (
    DEFAULT_TIMEOUT,
    NEGOTIATION,
    NegotiationFailed,
    ProbeRun,
    run_probes,
)
from acp_lite.probes._targets import AgentCommand, FdAgent, Target

__all__ = [
    "DEFAULT_TIMEOUT",
    "ISOLATIONS",
    "NEGOTIATION",
    "PROBES",
    "AgentCommand",
    "FdAgent",
    "Isolation",
    "Line",
    "NegotiationFailed",
    "Peer",
    "PeerClosed",
    "Probe",
    "ProbeContext",
    "ProbeFailed",
    "ProbeRun",
    "ProbeSkipped",
    "ProbeTimeout",
    "Target",
    "probe",
    "run_probes",
    "suite_for",
]
