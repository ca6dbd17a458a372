"""What every ``acp-lite`` command shares: exit codes, defaults, the error type, and
the agent options' helpers (argv, timeouts)."""

from __future__ import annotations

import argparse
import shlex
import sys
from collections.abc import Sequence
from typing import Any

from acp_lite._version import __version__
from acp_lite.limits import Limits

__all__ = [
    "DEFAULTS",
    "DEFAULT_TURN_TIMEOUT",
    "EXIT_AGENT_EXITED",
    "EXIT_AUTH",
    "EXIT_CODES",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_PROTOCOL",
    "EXIT_REQUEST_ERROR",
    "EXIT_START_FAILED",
    "EXIT_STOPPED",
    "EXIT_TIMEOUT",
    "EXIT_USAGE",
    "OWN_PYTHON",
    "PROG",
    "REFERENCE_AGENT",
    "STDERR_TAIL_SHOWN",
    "CliError",
    "agent_argv",
    "positive_float",
    "timeout_kwargs",
    "version",
]

EXIT_OK = 0
EXIT_STOPPED = 1
EXIT_USAGE = 2
EXIT_START_FAILED = 3
EXIT_AGENT_EXITED = 4
EXIT_PROTOCOL = 5
EXIT_TIMEOUT = 6
EXIT_REQUEST_ERROR = 7
EXIT_AUTH = 8
EXIT_INTERRUPTED = 130

#: Exit code -> meaning, as documented in ``acp-lite --help``.
EXIT_CODES: dict[int, str] = {
    EXIT_OK: "the turn ended with end_turn",
    EXIT_STOPPED: "the turn ended with another stop reason, or none",
    EXIT_USAGE: "bad command line",
    EXIT_START_FAILED: "the agent could not be started",
    EXIT_AGENT_EXITED: "the agent exited before the turn ended",
    EXIT_PROTOCOL: "protocol version mismatch or protocol error",
    EXIT_TIMEOUT: "timed out",
    EXIT_REQUEST_ERROR: "the agent answered a request with an error",
    EXIT_AUTH: "the agent needs authentication (the message says what to run or set)",
    EXIT_INTERRUPTED: "interrupted",
}

#: How long ``prompt`` waits for the turn when ``--timeout`` is not given (seconds):
#: long, because a real agent's turn may run many model calls and tools.
DEFAULT_TURN_TIMEOUT = 600.0
#: The library's default limits (the CLI's, unless ``--timeout`` is given).
DEFAULTS = Limits()

#: The embedded default agent: our reference agent, echoing the prompt back.
REFERENCE_AGENT = (sys.executable, "-m", "acp_lite.testing.agent")

#: The first words of ``--agent`` that run acp-lite's own interpreter
#: (``sys.executable``), not the ``python`` that PATH finds.
OWN_PYTHON = frozenset({"python", "python3"})

PROG = "acp-lite"
#: How many of the agent's last stderr lines an error report shows.
STDERR_TAIL_SHOWN = 5


class CliError(Exception):
    """A failure reported as one line on stderr with an exit code (no traceback)."""

    def __init__(self, message: str, code: int, details: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.details = tuple(details)


def version() -> str:
    """acp_lite's version, for ``--version``."""
    return __version__


def positive_float(value: str) -> float:
    """An argparse type: a number > 0."""
    try:
        number = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {value!r}") from None
    if not number > 0:
        raise argparse.ArgumentTypeError(f"must be > 0: {value!r}")
    return number


def agent_argv(args: argparse.Namespace) -> list[str]:
    """The agent's argv from ``--agent`` / ``--scenario`` (default: the reference
    agent); a bare ``python`` / ``python3`` first word is acp-lite's interpreter."""
    if args.scenario is not None:
        return [*REFERENCE_AGENT, "--scenario", args.scenario]
    if args.agent is None:
        return list(REFERENCE_AGENT)
    try:
        argv = shlex.split(args.agent)
    except ValueError as exc:
        raise CliError(f"cannot parse --agent {args.agent!r}: {exc}", EXIT_USAGE) from None
    if not argv:
        raise CliError("--agent is empty", EXIT_USAGE)
    if argv[0] in OWN_PYTHON:
        # `acp-lite` run as `.venv/bin/acp-lite` (no venv activated) would find
        # another `python` on PATH, one without acp_lite or the agent's packages:
        # a bare name means ours. A path (`./venv/bin/python`) is run as given.
        argv[0] = sys.executable
    return argv


def timeout_kwargs(timeout: float | None) -> dict[str, Any]:
    """``connect``'s keyword for ``--timeout`` (none when it is not given)."""
    return {} if timeout is None else {"timeout": timeout}
