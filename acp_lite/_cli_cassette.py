"""``acp-lite replay`` and ``acp-lite cassette``: cassettes outside pytest.

* ``acp-lite replay CASSETTE`` is a stdio ACP agent that plays the agent side of a
  recorded connection, so a client in any language can be tested against it. It
  reads the client's lines on stdin, writes the agent's on stdout, and reports on
  stderr. Exit status 0 when the client sent every recorded line and nothing else,
  1 when it did not (the report on stderr says where, with a diff), 2 for bad
  usage or an unreadable cassette; a cassette that ends with the agent's exit
  (it crashed while recorded) exits with the recorded status.
* ``acp-lite cassette from-transcript IN OUT`` turns a saved transcript
  (``acp-lite prompt --transcript``, ``--acp-transcripts``, ``Transcript.save``) into
  a cassette: a header line added, secrets redacted.
* ``acp-lite cassette record OUT -- AGENT...`` records one for a client in any
  language: a stdio agent that runs AGENT, passes every line through both ways and,
  when the connection ends, writes what it saw as a cassette (redacted).
"""

from __future__ import annotations

import argparse
import math
from typing import TextIO

from acp_lite._cli_base import EXIT_OK, EXIT_STOPPED, EXIT_USAGE, CliError

__all__ = ["add_parsers", "cmd_cassette", "cmd_replay"]


def add_parsers(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register the ``replay`` and ``cassette`` subcommands."""
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
    cassette = sub.add_parser(
        "cassette",
        help="make cassettes (from-transcript, record)",
        description="Cassette tools.",
    )
    tools = cassette.add_subparsers(dest="cassette_command", metavar="TOOL", required=True)
    convert = tools.add_parser(
        "from-transcript",
        help="turn a saved NDJSON transcript into a cassette (secrets redacted)",
        description="Read a transcript saved by `acp-lite prompt --transcript`, "
        "--acp-transcripts or Transcript.save and write it as a cassette: a header line, "
        "secrets (credential-like environment variables of this shell, auth payloads) "
        "replaced by placeholders.",
    )
    convert.add_argument("source", metavar="IN", help="the NDJSON transcript")
    convert.add_argument("target", metavar="OUT", help="the cassette to write (.acp.jsonl)")
    convert.add_argument(
        "--agent", metavar="CMD", default="", help="the agent command, for the header"
    )
    record = tools.add_parser(
        "record",
        help="run AGENT and record the connection a client has with it through here",
        description="A stdio agent for any client: runs AGENT (no shell), passes each line "
        "through both ways, and writes the connection as a cassette to OUT when it ends "
        "(the client closed stdin, or AGENT exited). Exits with AGENT's exit status.",
    )
    record.add_argument("target", metavar="OUT", help="the cassette to write (.acp.jsonl)")
    record.add_argument("agent", nargs=argparse.REMAINDER, metavar="-- AGENT", help="the agent")


def cmd_replay(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Serve the cassette on stdio; the exit status says whether the client matched."""
    from acp_lite.cassettes import Cassette, CassetteError
    from acp_lite.cassettes._match import check_match_on
    from acp_lite.cassettes.agent import STDIO_MISMATCH_GRACE, serve_stdio

    try:
        match_on = check_match_on(m.strip() for m in args.match_on.split(",") if m.strip())
        loaded = Cassette.load(args.cassette)
    except (OSError, CassetteError, ValueError) as exc:
        raise CliError(f"cannot replay {args.cassette}: {exc}", EXIT_USAGE) from None
    count = len(loaded.recordings)
    if not 1 <= args.connection <= count:
        raise CliError(
            f"{args.cassette} holds {count} connection(s), not {args.connection}", EXIT_USAGE
        )
    if args.speed is not None and not args.speed > 0:
        raise CliError(f"--speed must be positive, not {args.speed}", EXIT_USAGE)
    grace = STDIO_MISMATCH_GRACE if args.mismatch_grace is None else args.mismatch_grace
    if not 0 <= grace < math.inf:
        raise CliError(f"--mismatch-grace must be 0 or more seconds, not {grace}", EXIT_USAGE)
    recording = loaded.recordings[args.connection - 1]
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


def cmd_cassette(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """``acp-lite cassette from-transcript IN OUT`` / ``record OUT -- AGENT``."""
    if args.cassette_command == "record":
        from acp_lite._cli_record import record

        argv = args.agent[1:] if args.agent[:1] == ["--"] else args.agent
        if not argv:
            raise CliError("cassette record needs the agent command after --", EXIT_USAGE)
        return record(args.target, argv, err)
    from acp_lite.cassettes import CassetteError, from_transcript

    try:
        cassette = from_transcript(args.source, agent=args.agent)
    except (OSError, CassetteError) as exc:
        raise CliError(f"cannot read {args.source}: {exc}", EXIT_USAGE) from None
    lines = sum(len(r.records) for r in cassette.recordings)
    if not lines:
        raise CliError(f"{args.source} holds no transcript records", EXIT_USAGE)
    try:
        cassette.save(args.target)
    except OSError as exc:
        raise CliError(f"cannot write {args.target}: {exc}", EXIT_USAGE) from None
    err.write(f"wrote {args.target}: {lines} lines, secrets redacted\n")
    return EXIT_OK
