"""``python -m pytest_acp check TRANSCRIPT.ndjson``: the conformance checks on a saved
transcript (``--acp-transcripts``, ``acp-lite prompt --transcript``, ``Transcript.save``).

Exit status: 0 when no rule is broken, 1 when one is, 2 for bad usage or input.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

from pytest_acp.conformance import check_transcript, format_violations, rule_info


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit status."""
    parser = argparse.ArgumentParser(prog="python -m pytest_acp", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    check = commands.add_parser("check", help="check a saved NDJSON transcript")
    check.add_argument("transcript", help="NDJSON file: one {dir, t, msg|raw} record a line")
    check.add_argument(
        "--live",
        action="store_true",
        help="the traffic may still be going on: do not report work that never ended",
    )
    check.add_argument(
        "--agent-exited",
        action="store_true",
        help="the agent process exited (crashed): work it left unfinished is not a violation",
    )
    explain = commands.add_parser("explain", help="describe a conformance rule")
    explain.add_argument("rule")
    args = parser.parse_args(argv)

    if args.command == "explain":
        rule = rule_info(args.rule)
        if rule is None:
            print(f"unknown rule {args.rule!r}", file=sys.stderr)
            return 2
        print(f"{rule.id} ({rule.level}): {rule.summary} [spec: {rule.spec}]")
        return 0

    try:
        with open(args.transcript, encoding="utf-8") as f:
            records = [json.loads(line) for line in f if line.strip()]
    except (OSError, ValueError) as exc:
        print(f"cannot read {args.transcript}: {exc}", file=sys.stderr)
        return 2
    found = check_transcript(records, ended=not args.live, agent_exited=args.agent_exited)
    if not found:
        print(f"{args.transcript}: no conformance violation in {len(records)} lines")
        return 0
    print(f"{args.transcript}: {len(found)} violation(s)")
    print(format_violations(found, limit=1000))
    return 1


if __name__ == "__main__":
    sys.exit(main())
