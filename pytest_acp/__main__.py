"""``python -m pytest_acp check TRANSCRIPT.ndjson``: the conformance checks on a saved
transcript (``--acp-transcripts``, ``acp-lite prompt --transcript``, ``Transcript.save``)
or on each connection of a cassette (``.acp.jsonl``).

``python -m pytest_acp rules`` lists the rules (with their requirement ids);
``explain RULE`` describes one.
A transcript that ends with an ``{"dir": "exit"}`` record (the agent exited on its
own) is checked as ``--agent-exited``. Needs no pytest.

Exit status: 0 when no rule is broken, 1 when one is, 2 for bad usage or input.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Sequence
from typing import Any

from acp_lite.conformance.passive import for_rule
from pytest_acp.conformance import RULES, Rule, check_transcript, format_violations, rule_info

_DIRS = ("send", "recv", "exit")


def read_connections(path: str) -> list[list[dict[str, Any]]]:
    """The records of an NDJSON transcript, or of each connection of a cassette
    (each starts with a header line: ``{"acpCassette": ...}``); ``ValueError``
    naming the line of the first one that is not JSON or not a record."""
    connections: list[list[dict[str, Any]]] = []
    records: list[dict[str, Any]] = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except ValueError as exc:
                raise ValueError(f"line {n}: not JSON: {exc}") from None
            if isinstance(record, dict) and "acpCassette" in record:
                if records:
                    connections.append(records)
                records = []
                continue
            direction = record.get("dir") if isinstance(record, dict) else None
            if direction not in _DIRS:
                raise ValueError(
                    f"line {n}: not a transcript record of this format: 'dir' is "
                    f"{direction!r}, not 'send' or 'recv' (the NDJSON that "
                    "Transcript.save, --acp-transcripts and acp-lite --transcript write)"
                )
            records.append(record)
    return [*connections, records]


def all_rules() -> list[Rule]:
    """Every rule: the connection rules, the v1 ones, the session model's."""
    from acp_lite.model.rules import RULES as MODEL_RULES
    from pytest_acp._conformance_v1 import V1_RULES

    return [*RULES.values(), *V1_RULES.values(), *MODEL_RULES.values()]


def _plain(text: str) -> str:
    """``text`` (reStructuredText, as in a docstring) as a terminal shows it: without
    the double backticks of inline literals."""
    return re.sub(r"``(.+?)``", r"\1", text, flags=re.DOTALL)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit status."""
    parser = argparse.ArgumentParser(
        prog="python -m pytest_acp",
        description=_plain(__doc__ or ""),
        # The docstring's paragraphs, as written (argparse would run them together).
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
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
    commands.add_parser("rules", help="list the conformance rules (ids for explain and waivers)")
    args = parser.parse_args(argv)

    if args.command == "rules":
        try:
            for each in all_rules():
                print(f"{_requirement_id(each.id):18} {each.id:42} {each.level:6} {each.summary}")
        except BrokenPipeError:  # piped into `head`
            sys.stderr.close()
        return 0
    if args.command == "explain":
        rule = rule_info(args.rule)
        if rule is None:
            print(f"unknown rule {args.rule!r}", file=sys.stderr)
            return 2
        req = for_rule(rule.id)
        tier = f"{req.id} [{req.tier}] " if req is not None else ""
        print(f"{tier}{rule.id} ({rule.level}): {rule.summary} [spec: {rule.spec}]")
        return 0

    try:
        connections = read_connections(args.transcript)
    except (OSError, ValueError) as exc:
        print(f"cannot read {args.transcript}: {exc}", file=sys.stderr)
        return 2
    status = 0
    for number, records in enumerate(connections, 1):
        # A cassette of several connections: each is a transcript of its own.
        name = args.transcript + (f" (connection {number})" if len(connections) > 1 else "")
        exited = args.agent_exited or any(r["dir"] == "exit" for r in records)
        records = [r for r in records if r["dir"] != "exit"]
        found = check_transcript(records, ended=not args.live, agent_exited=exited)
        if not found:
            print(f"{name}: no conformance violation in {len(records)} lines")
            continue
        print(f"{name}: {len(found)} violation(s)")
        print(format_violations(found, limit=1000))
        status = 1
    return status


def _requirement_id(rule_id: str) -> str:
    found = for_rule(rule_id)
    return found.id if found is not None else "-"


if __name__ == "__main__":
    sys.exit(main())
