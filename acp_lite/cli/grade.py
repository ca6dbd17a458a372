"""``acp-lite grade-client [--json] -- CLIENT_CMD``: grade an ACP client.

Runs the client once per grading scenario against a strict agent (``acp-lite-agent
--grade``), then prints one row per ``ACP-CLIENT-*`` requirement, the failures with
their evidence, and a verdict per tier; ``--json`` prints the report (format
``acp-lite-report/1``, role ``client``). The client gets the agent's command line as
``{agent}`` in its arguments, ``$ACP_AGENT`` and ``$ACP_AGENT_ARGV`` (docs/grading.md
says what else it must do). Exit codes: 0 no mandatory requirement failed, 1 one
did, 2 bad command line, 3 the client could not be started.
"""

from __future__ import annotations

import argparse
from typing import TextIO

from acp_lite.cli.base import EXIT_OK, EXIT_START_FAILED, EXIT_USAGE, CliError, positive_float
from acp_lite.cli.probe import EXIT_MANDATORY_FAILED, write_report

__all__ = ["add_parser", "cmd_grade_client"]


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register the ``grade-client`` subcommand."""
    p = sub.add_parser(
        "grade-client",
        help="grade an ACP client against a strict scripted agent (exit 1: a mandatory "
        "requirement failed)",
        description="Run CLIENT_CMD once per grading scenario against a strict agent "
        "and judge the client's side (ids like ACP-CLIENT-050). The client finds the "
        "agent's command line in `{agent}` (replaced in its arguments), $ACP_AGENT and "
        "$ACP_AGENT_ARGV (JSON); it must open a session, send one prompt, print only "
        "the agent's reply on stdout when the turn ends, and cancel the turn on SIGINT "
        "(docs/grading.md). Exit 0 when no mandatory requirement failed, 1 when one "
        "did, 3 when the client could not be started.",
    )
    p.add_argument(
        "--scenario",
        action="append",
        dest="scenarios",
        metavar="NAME",
        help="run only this scenario (repeatable; --list shows them)",
    )
    p.add_argument(
        "--timeout",
        metavar="S",
        type=positive_float,
        default=30.0,
        help="seconds one scenario's client run may take before it is killed (default 30)",
    )
    p.add_argument(
        "--jobs",
        metavar="N",
        type=int,
        default=4,
        help="scenarios run at once, each its own client and agent (default 4)",
    )
    p.add_argument(
        "--protocol",
        type=int,
        choices=(1, 2),
        help="the version the agent answers whatever the client asks (default: 1 when "
        "asked for 1, else 2); --protocol 1 grades a client's v1 path",
    )
    p.add_argument("--list", action="store_true", help="list the scenarios and exit")
    p.add_argument("--json", action="store_true", help="print the report as JSON on stdout")
    p.add_argument("client_command", nargs=argparse.REMAINDER, metavar="-- CLIENT_CMD ...")


def cmd_grade_client(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Run ``acp-lite grade-client``."""
    from acp_lite.grading import SCENARIOS, grade_client

    if args.list:
        for name, what in SCENARIOS.items():
            out.write(f"{name:10} {what}\n")
        return EXIT_OK
    argv = list(args.client_command)
    if argv and argv[0] == "--":
        argv = argv[1:]
    if not argv:
        raise CliError("give the client's command after `--`", EXIT_USAGE)
    unknown = [s for s in args.scenarios or () if s not in SCENARIOS]
    if unknown:
        names = ", ".join(SCENARIOS)
        raise CliError(f"unknown scenario {unknown[0]!r} (scenarios: {names})", EXIT_USAGE)
    try:
        report = grade_client(
            argv,
            scenarios=args.scenarios,
            timeout=args.timeout,
            jobs=args.jobs,
            protocol=args.protocol,
        )
    except OSError as exc:
        raise CliError(f"the client {argv[0]!r} {exc}", EXIT_START_FAILED) from None
    write_report(report, out, as_json=args.json)
    if report.protocol_version is None:
        err.write(f"acp-lite grade-client: the client never initialized ({argv[0]})\n")
        return EXIT_START_FAILED
    return EXIT_OK if report.passed else EXIT_MANDATORY_FAILED
