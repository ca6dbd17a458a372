"""The reference ACP v2 agent: a scripted agent over stdio.

Run it with ``python -m acp_lite.testing.agent`` (or ``acp-lite-agent``)::

    acp-lite-agent                           # friendly echo agent
    acp-lite-agent --scenario streaming      # a built-in scenario
    acp-lite-agent --scenario flood --count 200000
    acp-lite-agent --script my_script.toml   # see acp_lite.testing.script
    acp-lite-agent --list-scenarios

Transport (spec ``transports``): JSON-RPC 2.0, UTF-8, one message per line on
stdin/stdout; stderr is free-form logging. The agent keeps reading stdin while
turns run (one worker thread per session), so cancels, permission answers and
prompts sent during active work are handled at once.

It is meant to be read as an example of a correct v2 agent: the methods are in
``_agent.py`` (and ``_sessions.py``), the foreground lifecycle of a turn in
``_turns.py``, scripts in ``script.py``, the named scenarios in ``scenarios.py``
and ``expect`` scripts (a fake agent checking its client, ``--report``) in
``_expect.py``. Comments cite the spec section (primary text: "Prompt
Lifecycle") or the schema description each subtle rule comes from. It
deliberately uses plain JSON dicts and no other acp_lite code, so it checks our
client independently.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import time
from collections.abc import Iterable
from typing import Any

import attrs

from acp_lite.testing import scenarios
from acp_lite.testing._agent import PROTOCOL_VERSION, Agent
from acp_lite.testing._wire import RpcError, Wire
from acp_lite.testing.script import Script, ScriptError, load_script

__all__ = ["PROTOCOL_VERSION", "Agent", "RpcError", "Wire", "build_parser", "main"]


def _install_sigterm_handler(agent: Agent) -> None:
    """SIGTERM kills the agent as usual, unless the script chose to ignore it."""

    def on_sigterm(signum: int, _frame: Any) -> None:
        if agent.link.ignore_sigterm:
            agent.link.log("ignoring SIGTERM (scripted)")
            return
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGTERM)

    signal.signal(signal.SIGTERM, on_sigterm)


def build_parser() -> argparse.ArgumentParser:
    """The command-line interface."""
    parser = argparse.ArgumentParser(
        prog="acp-lite-agent", description="A scripted ACP v2 agent over stdio."
    )
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--scenario", help="a built-in scenario (default: echo)")
    source.add_argument("--script", help="a script file (.json or .toml)")
    source.add_argument("--script-json", help="a script as inline JSON")
    parser.add_argument("--count", type=int, help="size parameter of the scenario (flood)")
    parser.add_argument("--page-size", type=int, help="sessions per session/list page")
    parser.add_argument("--ignore-sigterm", action="store_true", help="ignore SIGTERM")
    parser.add_argument(
        "--linger", type=float, help="seconds to stay alive after stdin closes (-1: forever)"
    )
    parser.add_argument(
        "--protocol",
        type=int,
        choices=(1, 2),
        default=2,
        help="ACP protocol version to speak (1: v1, translated at the wire; default 2)",
    )
    parser.add_argument(
        "--report",
        metavar="FILE",
        help="append the events of an expect script to FILE (NDJSON; see _expect.py)",
    )
    parser.add_argument(
        "--fault",
        action="append",
        default=[],
        metavar="NAME",
        help="break one rule on purpose (repeatable; --list-faults lists them)",
    )
    parser.add_argument(
        "--grade",
        metavar="SCENARIO",
        help="be the strict agent of `acp-lite grade-client` and play SCENARIO to the client",
    )
    parser.add_argument(
        "--grade-log", metavar="FILE", help="with --grade: append the wire log to FILE (NDJSON)"
    )
    parser.add_argument(
        "--grade-protocol",
        type=int,
        choices=(1, 2),
        help="with --grade: answer initialize with this version whatever the client asks",
    )
    parser.add_argument("--list-scenarios", action="store_true", help="list scenarios and exit")
    parser.add_argument("--list-faults", action="store_true", help="list faults and exit")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the agent until stdin closes; returns the exit code."""
    args = build_parser().parse_args(argv)
    if args.list_scenarios:
        for name in sorted(scenarios.SCENARIOS):
            print(f"{name:34} {scenarios.kind(name):11} {scenarios.describe(name)}")
        return 0
    if args.grade is not None:
        from acp_lite.testing import grade_scenarios

        return grade_scenarios.main(args.grade, args.grade_log or os.devnull, args.grade_protocol)
    if args.list_faults:
        from acp_lite.testing.faults import FAULTS

        for name in sorted(FAULTS):
            print(f"{name:44} {FAULTS[name].summary}")
        return 0
    try:
        if args.script:
            script = load_script(args.script)
        elif args.script_json:
            script = Script.from_dict(json.loads(args.script_json))
        else:
            script = scenarios.get(args.scenario or "echo", count=args.count)
    except KeyError:
        # One short line (not the ~40 names): the list is one option away.
        print(
            f"acp-lite-agent: unknown scenario {args.scenario!r} (--list-scenarios lists them)",
            file=sys.stderr,
        )
        return 2
    except (ScriptError, ValueError) as exc:
        print(f"acp-lite-agent: {exc}", file=sys.stderr)
        return 2
    overrides: dict[str, Any] = {}
    if args.page_size is not None:
        overrides["page_size"] = args.page_size
    if args.ignore_sigterm:
        overrides["ignore_sigterm"] = True
    if args.linger is not None:
        overrides["linger"] = args.linger
    if overrides:
        script = attrs.evolve(script, **overrides)

    events = None
    if args.report:
        from acp_lite.testing._expect import ReportFile

        events = ReportFile(args.report)
    agent = Agent(script, Wire(sys.stdout.buffer), events=events)
    stdin: Iterable[bytes] = sys.stdin.buffer
    if args.fault:
        from acp_lite.testing import faults

        try:
            wire = faults.FaultWire(agent.link.wire, faults.get(args.fault))
        except KeyError as exc:
            print(
                f"acp-lite-agent: unknown fault {exc} (--list-faults lists them)", file=sys.stderr
            )
            return 2
        agent.link.wire = wire
        stdin = wire.filter_lines(stdin)
    if args.protocol == 1:
        from acp_lite.testing._v1 import V1Wire

        agent.link.wire = V1Wire(agent.link.wire, agent.link.log)
    _install_sigterm_handler(agent)
    agent.link.log(f"ready: scenario {script.name!r}, pid {os.getpid()}, protocol {args.protocol}")
    try:
        if args.protocol == 1:
            from acp_lite.testing._v1 import serve_v1

            serve_v1(agent, stdin)
        else:
            agent.serve(stdin)
        if script.linger:
            agent.link.log("stdin closed; lingering (scripted)")
            deadline = None if script.linger < 0 else time.monotonic() + script.linger
            while deadline is None or time.monotonic() < deadline:
                time.sleep(0.05 if deadline is None else min(0.05, deadline - time.monotonic()))
    except KeyboardInterrupt:
        agent.link.wire.exit(130)
    # Daemon threads may still run turns: exit without waiting for them, after
    # the last complete line (os._exit avoids a shutdown race on stdout).
    agent.link.wire.exit(0)
    return 0  # not reached


if __name__ == "__main__":
    sys.exit(main())
