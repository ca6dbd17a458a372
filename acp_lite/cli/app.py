"""The ``acp-lite`` command line: the parser and the dispatch to each command's module."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from typing import NoReturn, TextIO

from acp_lite.cli import (
    cassette,
    grade,
    info,
    login,
    model,
    probe,
    prompt,
    replay,
    scenarios,
    view,
)
from acp_lite.cli.base import (
    EXIT_CODES,
    EXIT_INTERRUPTED,
    EXIT_STOPPED,
    PROG,
    CliError,
    positive_float,
    version,
)
from acp_lite.cli.errors import report
from acp_lite.cli.ui import silence_stdout

__all__ = ["build_parser", "main", "run"]


def build_parser() -> argparse.ArgumentParser:
    """The ``acp-lite`` argument parser: each command module adds its subcommand."""
    epilog = "exit codes:\n" + "\n".join(f"  {k:<4} {v}" for k, v in EXIT_CODES.items())
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Drive an Agent Client Protocol (ACP) v2 agent from the terminal.",
        epilog=epilog,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    def agent_options(p: argparse.ArgumentParser) -> None:
        group = p.add_mutually_exclusive_group()
        group.add_argument(
            "--agent",
            metavar="CMD",
            help="agent command line, split like a shell would (no shell is used); "
            "default: the embedded reference agent",
        )
        group.add_argument(
            "--scenario",
            metavar="NAME",
            help="run the embedded reference agent with this built-in scenario "
            "(e.g. streaming, thinking, tool_call_permission, plan, failure; "
            f"`{PROG} scenarios` lists all of them)",
        )
        # Only `prompt` runs a turn: the other commands' --timeout has no turn limit.
        turn = p.prog.split()[-1] == "prompt"
        p.add_argument(
            "--timeout",
            metavar="S",
            type=positive_float,
            default=None,
            help="seconds to wait for the agent at each step (start, each request, the "
            "whole turn); default: 30 to start, 60 per request, 600 for the turn"
            if turn
            else "seconds to wait for the agent at each step (start, each request); "
            "default: 30 to start, 60 per request",
        )
        p.add_argument(
            "--json", action="store_true", help="print machine-readable JSON (one line each)"
        )

    prompt.add_parser(sub, agent_options, epilog)
    info.add_parser(sub, agent_options)
    login.add_parser(sub, agent_options)
    replay.add_parser(sub)
    cassette.add_parser(sub)
    model.add_parser(sub)
    scenarios.add_parser(sub)
    probe.add_parser(sub)
    grade.add_parser(sub)
    view.add_parser(sub)
    _own_usage(parser)
    return parser


def _own_usage(parser: argparse.ArgumentParser) -> None:
    """Make each (sub)command the one that reports arguments it does not know, with
    its own usage (argparse leaves them to the top-level parser; see :func:`main`)."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in action.choices.values():
                child.set_defaults(usage_parser=child)
                _own_usage(child)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``acp-lite`` command; returns the exit code (see the module docstring)."""
    parser = build_parser()
    args, unknown = parser.parse_known_args(argv)
    if unknown:
        # Reported by the command given, so the usage shown is the command's own.
        owner: argparse.ArgumentParser = getattr(args, "usage_parser", parser)
        owner.error(f"unrecognized arguments: {' '.join(unknown)}")
    # As typed: a hint may name the same command with an option added (prompt --login).
    args.argv = list(sys.argv[1:] if argv is None else argv)
    out, err = sys.stdout, sys.stderr
    commands: dict[str, Callable[[argparse.Namespace, TextIO, TextIO], int]] = {
        "prompt": prompt.cmd_prompt,
        "info": info.cmd_info,
        "login": login.cmd_login,
        "replay": replay.cmd_replay,
        "cassette": cassette.cmd_cassette,
        "model": model.cmd_model,
        "scenarios": scenarios.cmd_scenarios,
        "probe": probe.cmd_probe,
        "grade-client": grade.cmd_grade_client,
        "view": view.cmd_view,
    }
    try:
        if getattr(args, "scenario", None) is not None:
            scenarios.check_scenario(args.scenario)  # a usage error, before an agent starts
        return commands[args.command](args, out, err)
    except CliError as exc:
        report(exc, err)
        return exc.code
    except KeyboardInterrupt:
        err.write(f"\n{PROG}: interrupted\n")
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # stdout was closed early (e.g. piped into `head`): not worth a traceback.
        silence_stdout()
        return EXIT_STOPPED


def run() -> NoReturn:
    """``sys.exit(main())``: the console script and ``python -m acp_lite.cli``."""
    sys.exit(main())
