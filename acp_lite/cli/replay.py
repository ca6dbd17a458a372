"""``acp-lite replay CASSETTE``: a stdio ACP agent that plays the agent side of a
recorded connection, so a client in any language can be tested against it.

It reads the client's lines on stdin, writes the agent's on stdout, and reports on
stderr. Exit status 0 when the client sent every recorded line and nothing else,
1 when it did not (the report on stderr says where, with a diff), 2 for bad usage
or an unreadable cassette; a cassette that ends with the agent's exit (it crashed
while recorded) exits with the recorded status.
"""

from __future__ import annotations

import argparse
import math
from collections import Counter
from typing import TYPE_CHECKING, TextIO

from acp_lite.cli.base import EXIT_OK, EXIT_STOPPED, EXIT_USAGE, CliError
from acp_lite.cli.paths import check_writable

if TYPE_CHECKING:
    from acp_lite.cassettes import Recording, StreamedRecording

__all__ = ["ACTING_METHODS", "acting_requests", "add_parser", "cmd_replay"]

ACTING_METHODS = frozenset({"terminal/create", "fs/write_text_file"})
"""Agent requests that act on the client's machine: a replay sends them again."""


def acting_requests(recording: Recording | StreamedRecording) -> str | None:
    """What of ``recording``'s agent requests the client would carry out again
    (commands run, files written), as one line; ``None`` when there are none."""
    found: Counter[str] = Counter()
    for _, record in recording.numbered():
        message = record.message
        if record.direction == "recv" and isinstance(message, dict) and "id" in message:
            method = message.get("method")
            if method in ACTING_METHODS:
                found[str(method)] += 1
    if not found:
        return None
    listed = ", ".join(f"{n} {method}" for method, n in sorted(found.items()))
    return (
        f"holds agent requests that act on the client ({listed}): replaying it sends "
        "them again, and a client that serves them runs the commands / writes the files"
    )


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register the ``replay`` subcommand."""
    from acp_lite.cassettes import DEFAULT_MATCH_ON, MATCHERS

    replay = sub.add_parser(
        "replay",
        help="be a stdio ACP agent that replays a recorded cassette",
        description="Replay the agent side of CASSETTE on stdin/stdout: an ACP agent "
        "for testing a client in any language without the real agent. Exit status 0 when "
        "the client sent exactly the recorded lines, 1 otherwise (the diff on stderr).",
    )
    replay.add_argument("cassette", metavar="CASSETTE", help="a .acp.jsonl cassette file")
    replay.add_argument(
        "--match-on",
        metavar="WHAT",
        default=",".join(DEFAULT_MATCH_ON),
        help=f"comma-separated: what a client line must match ({', '.join(MATCHERS)}; "
        f"default {','.join(DEFAULT_MATCH_ON)})",
    )
    replay.add_argument(
        "--speed",
        metavar="FACTOR",
        type=float,
        default=None,
        help="replay the recorded timing, FACTOR times faster (default: no waiting)",
    )
    replay.add_argument(
        "--report",
        metavar="FILE",
        default=None,
        help="also write the outcome to FILE ('ok', or the report with its diff): for "
        "clients that swallow their agent's stderr",
    )
    replay.add_argument(
        "--mismatch-grace",
        metavar="SECONDS",
        type=float,
        default=None,
        help="after a mismatch, keep the connection this long (refusing requests) before "
        "ending it, for clients that drop what is unread when it closes (default 1)",
    )
    replay.add_argument(
        "--connection",
        metavar="N",
        type=int,
        default=1,
        help="which recorded connection of the cassette to play (default 1)",
    )


def cmd_replay(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Serve the cassette on stdio; the exit status says whether the client matched."""
    from acp_lite.cassettes import CassetteError, check_match_on, scan
    from acp_lite.cassettes.agent import STDIO_MISMATCH_GRACE, serve_stdio

    if args.report:
        check_writable(args.report, "the report")
    try:
        match_on = check_match_on(m.strip() for m in args.match_on.split(",") if m.strip())
        # Checked line by line here, then read again as the replay goes: a large
        # cassette is never held in memory.
        recordings = scan(args.cassette)
    except (OSError, CassetteError, ValueError) as exc:
        raise CliError(f"cannot replay {args.cassette}: {exc}", EXIT_USAGE) from None
    count = len(recordings)
    if not 1 <= args.connection <= count:
        raise CliError(
            f"{args.cassette} holds {count} connection(s), not {args.connection}", EXIT_USAGE
        )
    if args.speed is not None and not args.speed > 0:
        raise CliError(f"--speed must be positive, not {args.speed}", EXIT_USAGE)
    grace = STDIO_MISMATCH_GRACE if args.mismatch_grace is None else args.mismatch_grace
    if not 0 <= grace < math.inf:
        raise CliError(f"--mismatch-grace must be 0 or more seconds, not {grace}", EXIT_USAGE)
    recording = recordings[args.connection - 1]
    warning = acting_requests(recording)
    if warning:
        err.write(f"acp-lite replay: warning: {args.cassette} {warning}\n")
    out.flush()
    agent = serve_stdio(
        recording, match_on=match_on, speed=args.speed, name=args.cassette, mismatch_grace=grace
    )
    verdict = agent.replayer.verdict(ended=agent.input_ended or agent.replayer.exited)
    if args.report:
        try:
            with open(args.report, "w", encoding="utf-8") as f:
                f.write((verdict or "ok") + "\n")
        except OSError as exc:
            err.write(f"acp-lite replay: cannot write the report {args.report}: {exc}\n")
    if verdict:
        err.write(f"acp-lite replay: {verdict}\n")
        if agent.replayer.mismatches and "\n" in verdict:
            # Clients show the last lines of their agent's stderr: end with what
            # did not match, not with the middle of the diff.
            headline = verdict.splitlines()[0].rstrip(":")
            err.write(f"acp-lite replay: {headline} (the diff is above)\n")
        return EXIT_STOPPED
    if agent.replayer.exited and agent.replayer.returncode:
        return int(agent.replayer.returncode)  # the recorded agent's own exit status
    return EXIT_OK
