"""The conformance report: one result per requirement, and a verdict per tier.

The same report comes out of ``pytest --acp-report-json FILE`` (passive rules and
probes), ``acp-lite probe --json`` and ``acp-lite grade-client --json``.
:meth:`Report.to_json` gives its JSON form (format ``acp-lite-report/1``)::

    {"format": "acp-lite-report/1", "subject": "...", "role": "agent",
     "protocolVersion": 2,
     "verdict": {"mandatory": "pass", "capability": "fail", ...}, "passed": true,
     "counts": {"pass": 61, "fail": 1, "skipped": 3, "not-tested": 7},
     "requirements": [{"id": "ACP-CANCEL-003", "tier": "mandatory", "kind": "probe",
                       "summary": "...", "spec": "...", "status": "fail",
                       "reason": "...", "evidence": [{"line": 12, "text": "..."}]}],
     "stderrTail": ["..."]}

``passed`` is true when no mandatory requirement failed (capability failures are
listed and fail their tier's verdict, but a peer that advertises a capability it
breaks is still graded by the mandatory tier: the exit code of the commands).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from acp_lite import _lazy_attrs as lazy_attrs
from acp_lite.conformance.requirements import TIERS, Requirement, Tier
from acp_lite.jsontypes import JsonObject, JsonValue

Status = Literal["pass", "fail", "skipped", "not-tested"]
Verdict = Literal["pass", "fail", "not-tested"]

FORMAT = "acp-lite-report/1"
"""The ``format`` tag of the JSON report."""


@lazy_attrs.frozen
class Evidence:
    """A transcript line behind a result: its index in the transcript and its text."""

    line: int | None
    text: str


@lazy_attrs.frozen
class Result:
    """The outcome of one requirement: its status, why, and the lines that show it."""

    requirement: Requirement
    status: Status
    reason: str = ""
    evidence: tuple[Evidence, ...] = ()


@lazy_attrs.frozen
class Report:
    """What was checked of one peer (an agent or a client), and how it fared.

    ``results`` holds at most one result per requirement; :meth:`complete` adds
    ``not-tested`` for the catalogue's requirements that have none.
    """

    subject: str
    role: Literal["agent", "client"]
    results: tuple[Result, ...]
    protocol_version: int | None = None
    stderr_tail: tuple[str, ...] = ()

    def verdicts(self) -> dict[Tier, Verdict]:
        """Per tier: ``fail`` if any of its results failed, ``pass`` if any passed."""
        out: dict[Tier, Verdict] = {}
        for tier in TIERS:
            statuses = {r.status for r in self.results if r.requirement.tier == tier}
            out[tier] = (
                "fail" if "fail" in statuses else "pass" if "pass" in statuses else "not-tested"
            )
        return out

    @property
    def passed(self) -> bool:
        """True when no mandatory requirement failed."""
        return not any(
            r.status == "fail" and r.requirement.tier == "mandatory" for r in self.results
        )

    def failures(self) -> list[Result]:
        """The failed results, strictest tier first."""
        order = {tier: i for i, tier in enumerate(TIERS)}
        failed = [r for r in self.results if r.status == "fail"]
        return sorted(failed, key=lambda r: (order[r.requirement.tier], r.requirement.id))

    def complete(self, requirements: Iterable[Requirement]) -> Report:
        """This report plus a ``not-tested`` result for each requirement it lacks."""
        seen = {r.requirement.id for r in self.results}
        extra = tuple(Result(q, "not-tested") for q in requirements if q.id not in seen)
        return Report(
            self.subject, self.role, self.results + extra, self.protocol_version, self.stderr_tail
        )

    def to_json(self) -> JsonObject:
        """The report as JSON (format :data:`FORMAT`; see the module docstring)."""
        counts: dict[str, int] = {"pass": 0, "fail": 0, "skipped": 0, "not-tested": 0}
        rows: list[JsonValue] = []
        for r in self.results:
            counts[r.status] += 1
            q = r.requirement
            row: JsonObject = {
                "id": q.id,
                "tier": q.tier,
                "kind": q.kind,
                "version": q.version,
                "summary": q.summary,
                "spec": q.spec,
                "status": r.status,
                "reason": r.reason,
                "evidence": [{"line": e.line, "text": e.text} for e in r.evidence],
            }
            if q.capability is not None:
                row["capability"] = q.capability
            if q.rule is not None:
                row["rule"] = q.rule
            rows.append(row)
        verdict: JsonObject = {tier: v for tier, v in self.verdicts().items()}
        return {
            "format": FORMAT,
            "subject": self.subject,
            "role": self.role,
            "protocolVersion": self.protocol_version,
            "verdict": verdict,
            "passed": self.passed,
            "counts": {k: v for k, v in counts.items()},
            "requirements": rows,
            "stderrTail": list(self.stderr_tail),
        }


__all__ = ["FORMAT", "Evidence", "Report", "Result", "Status", "Verdict"]
