"""The ``acp-lite`` command line: the parser and the dispatch to each command's module."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from typing import NoReturn, TextIO

from acp_lite.cli import cassette, info, login, model, prompt, replay
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
            "`acp-lite-agent --list-scenarios` lists all of them)",
        )
        p.add_argument(
            "--timeout",
            metavar="S",
            type=positive_float,
            default=None,
            help="seconds to wait for the agent at each step (start, each request, the "
            "whole turn); default: 30 to start, 60 per request, 600 for the turn",
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
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``acp-lite`` command; returns the exit code (see the module docstring)."""
    parser = build_parser()
    args = parser.parse_args(argv)
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
    }
    try:
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
