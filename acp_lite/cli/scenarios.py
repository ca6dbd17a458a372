"""``acp-lite scenarios``: the reference agent's built-in scenarios (``--scenario``)."""

from __future__ import annotations

import argparse
import difflib
from typing import TextIO

from acp_lite.cli.base import EXIT_OK, EXIT_USAGE, PROG, CliError

__all__ = ["add_parser", "check_scenario", "cmd_scenarios"]


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register the ``scenarios`` subcommand."""
    sub.add_parser(
        "scenarios",
        help="list the reference agent's built-in scenarios (for --scenario)",
        description="List the embedded reference agent's built-in scenarios, for "
        "`--scenario NAME`: each one's name, kind (conforming; broken: breaks one "
        "conformance rule on purpose; fault: crashes, hangs, never answers ...) and "
        "what it does.",
    )


def cmd_scenarios(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Run ``acp-lite scenarios``: one line per scenario (as ``acp-lite-agent
    --list-scenarios`` prints them)."""
    from acp_lite.testing import scenarios

    for name in sorted(scenarios.SCENARIOS):
        out.write(f"{name:34} {scenarios.kind(name):11} {scenarios.describe(name)}\n")
    out.flush()
    return EXIT_OK


def check_scenario(name: str) -> None:
    """A usage error for an unknown ``--scenario`` name, before any agent starts:
    one short line naming it, the closest names, and where the list is."""
    from acp_lite.testing import scenarios

    if name in scenarios.SCENARIOS:
        return
    close = difflib.get_close_matches(name, sorted(scenarios.SCENARIOS), n=3)
    maybe = f"; did you mean {', '.join(close)}?" if close else ""
    raise CliError(
        f"unknown --scenario {name!r}{maybe} (`{PROG} scenarios` lists them)", EXIT_USAGE
    )
