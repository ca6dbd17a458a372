"""``acp-lite probe [--json] -- CMD``: the conformance probes against an agent.

Runs the suite the agent negotiates (v2, or v1 for an agent that answers 1) and
prints one row per requirement, the failures with their evidence, and a verdict
per tier; ``--json`` prints the report instead (format ``acp-lite-report/1``).
Exit codes: 0 no mandatory requirement failed, 1 one did, 2 bad command line,
3 the agent could not be started or did not negotiate.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, TextIO, cast

from acp_lite.cli.base import EXIT_OK, EXIT_START_FAILED, EXIT_USAGE, CliError, positive_float

if TYPE_CHECKING:
    from acp_lite.conformance.report import Report
    from acp_lite.conformance.requirements import Tier

__all__ = ["add_parser", "cmd_probe", "format_report", "write_report"]

EXIT_MANDATORY_FAILED = 1

_MARK = {"pass": "ok  ", "fail": "FAIL", "skipped": "skip", "not-tested": "----"}


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register the ``probe`` subcommand."""
    p = sub.add_parser(
        "probe",
        help="run the conformance probes against an agent (exit 1: a mandatory one failed)",
        description="Provoke an agent with the conformance probes (one per requirement "
        "of the catalogue; ids like ACP-CANCEL-003) and report each requirement's status. "
        "The agent command follows `--` (default: the embedded reference agent). Exit "
        "0 when no mandatory requirement failed, 1 when one did, 3 when the agent could "
        "not be started or negotiated no protocol version.",
    )
    p.add_argument(
        "--tiers",
        default="mandatory,capability,advisory,informational",
        help="comma-separated tiers to run (default: all)",
    )
    p.add_argument(
        "--id", action="append", dest="ids", metavar="ID", help="run only this requirement"
    )
    p.add_argument(
        "--timeout",
        metavar="S",
        type=positive_float,
        default=5.0,
        help="seconds each probe waits for any one answer (default 5)",
    )
    p.add_argument("--json", action="store_true", help="print the report as JSON on stdout")
    p.add_argument("agent_command", nargs=argparse.REMAINDER, metavar="-- CMD ...")


def cmd_probe(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Run ``acp-lite probe``."""
    from acp_lite.conformance.requirements import TIERS
    from acp_lite.probes import AgentCommand, run_probes

    argv = list(args.agent_command)
    if argv and argv[0] == "--":
        argv = argv[1:]
    if not argv:
        argv = [sys.executable, "-m", "acp_lite.testing.agent"]
    tiers = cast("list[Tier]", [t.strip() for t in args.tiers.split(",") if t.strip()])
    unknown = [t for t in tiers if t not in TIERS]
    if unknown:
        raise CliError(f"unknown tier {unknown[0]!r} (tiers: {', '.join(TIERS)})", EXIT_USAGE)
    target = AgentCommand(argv)
    try:
        report = run_probes(target, tiers=tiers, ids=args.ids, timeout=args.timeout)
    except OSError as exc:
        message = f"cannot start the agent {target.description}: {exc}"
        raise CliError(message, EXIT_START_FAILED) from None
    write_report(report, out, as_json=args.json)
    if report.protocol_version is None:
        return EXIT_START_FAILED
    return EXIT_OK if report.passed else EXIT_MANDATORY_FAILED


def write_report(report: Report, out: TextIO, *, as_json: bool) -> None:
    """Print the report: the table, or its JSON (one line)."""
    if as_json:
        out.write(json.dumps(report.to_json(), ensure_ascii=False) + "\n")
    else:
        out.write(format_report(report))
    out.flush()


def format_report(report: Report) -> str:
    """The report as terminal text: a row per requirement, failures, verdicts."""
    what = "probes" if report.role == "agent" else "grading"
    lines = [f"{what}: {report.subject} (protocol {report.protocol_version})"]
    for r in report.results:
        q = r.requirement
        summary = q.summary if len(q.summary) <= 70 else q.summary[:69] + "…"
        lines.append(f"  {_MARK[r.status]} {q.id:20} {q.tier:13} {summary}")
        if r.status in ("skipped", "not-tested") and r.reason:
            lines.append(f"{'':8}{r.status}: {r.reason}")
    failures = report.failures()
    if failures:
        lines.append("")
        lines.append("failures:")
        for r in failures:
            q = r.requirement
            lines.append(f"  {q.id} [{q.tier}] {q.summary}")
            lines.append(f"    spec: {q.spec}")
            lines.append(f"    why:  {r.reason}")
            lines.extend(f"      {e.text}" for e in r.evidence)
    if report.stderr_tail and failures:
        lines.append(f"  {report.role} stderr (last lines):")
        lines.extend(f"    {s}" for s in report.stderr_tail[-10:])
    counts: dict[str, int] = {}
    for r in report.results:
        counts[r.status] = counts.get(r.status, 0) + 1
    verdicts = ", ".join(f"{tier} {v}" for tier, v in report.verdicts().items())
    tally = ", ".join(f"{n} {status}" for status, n in counts.items())
    lines.append("")
    lines.append(f"{'PASSED' if report.passed else 'FAILED'}: {tally} ({verdicts})")
    return "\n".join(lines) + "\n"
