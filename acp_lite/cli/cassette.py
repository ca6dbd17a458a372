"""``acp-lite cassette``: make cassettes outside pytest.

* ``acp-lite cassette from-transcript IN OUT`` turns a saved transcript
  (``acp-lite prompt --transcript``, ``--acp-transcripts``, ``Transcript.save``) into
  a cassette: a header line added, secrets redacted.
* ``acp-lite cassette record OUT -- AGENT...`` records one for a client in any
  language: a stdio agent that runs AGENT, passes every line through both ways and,
  when the connection ends, writes what it saw as a cassette (redacted;
  :mod:`acp_lite.cli.record`).
"""

from __future__ import annotations

import argparse
from typing import TextIO

from acp_lite.cli.base import EXIT_OK, EXIT_USAGE, CliError

__all__ = ["add_parser", "cmd_cassette"]


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register the ``cassette`` subcommand (``from-transcript``, ``record``)."""
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


def cmd_cassette(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """``acp-lite cassette from-transcript IN OUT`` / ``record OUT -- AGENT``."""
    if args.cassette_command == "record":
        from acp_lite.cli.record import record

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
