"""``acp-lite cassette``: make cassettes outside pytest.

* ``acp-lite cassette from-transcript IN OUT`` turns a saved transcript
  (``acp-lite prompt --transcript``, ``--acp-transcripts``, ``Transcript.save``) into
  a cassette: a header line added, secrets redacted by the rules of recording
  (:mod:`acp_lite.cassettes`); it says how many lines it redacted, and names the
  agent the transcript's ``initialize`` answer names when ``--agent`` is not given.
* ``acp-lite cassette record OUT -- AGENT...`` records one for a client in any
  language: a stdio agent that runs AGENT, passes every line through both ways and,
  when the connection ends, writes what it saw as a cassette (redacted;
  :mod:`acp_lite.cli.record`).
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, TextIO

import attrs

from acp_lite.cli.base import EXIT_OK, EXIT_USAGE, CliError
from acp_lite.cli.paths import check_writable

if TYPE_CHECKING:
    from acp_lite.cassettes import Recording

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
        help="turn a saved NDJSON transcript into a cassette (secrets it recognises redacted)",
        description="Read a transcript saved by `acp-lite prompt --transcript`, "
        "--acp-transcripts or Transcript.save and write it as a cassette: a header line, "
        "and the secrets recording recognises replaced by placeholders wherever they "
        "occur (auth payloads, credential-like MCP server env and header values, flags "
        "and URLs, values shaped like well-known keys, the values of this shell's "
        "credential-like variables). Read it before you share it: a secret none of "
        "these finds is left as it is.",
    )
    convert.add_argument("source", metavar="IN", help="the NDJSON transcript")
    convert.add_argument("target", metavar="OUT", help="the cassette to write (.acp.jsonl)")
    convert.add_argument(
        "--agent",
        metavar="CMD",
        default="",
        help="the agent command, for the header (default: the agent the transcript's "
        "initialize answer names, else 'unknown')",
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
    from acp_lite.cassettes import Cassette, CassetteError, from_transcript

    check_writable(args.target, "the cassette", makes_dirs=True)
    try:
        original = Cassette.load(args.source)
        cassette = from_transcript(args.source, agent=args.agent)
    except (OSError, CassetteError) as exc:
        raise CliError(f"cannot read {args.source}: {exc}", EXIT_USAGE) from None
    lines = sum(len(r.records) for r in cassette.recordings)
    if not lines:
        raise CliError(f"{args.source} holds no transcript records", EXIT_USAGE)
    cassette = Cassette(tuple(_named(r) for r in cassette.recordings))
    # Counted, not assumed: what the message claims is what was done.
    redacted = sum(
        a != b
        for before, after in zip(original.recordings, cassette.recordings, strict=False)
        for a, b in zip(before.records, after.records, strict=False)
    )
    try:
        cassette.save(args.target)
    except OSError as exc:
        raise CliError(f"cannot write {args.target}: {exc}", EXIT_USAGE) from None
    found = (
        f"{redacted} of them with secrets replaced by placeholders"
        if redacted
        else "no secret found to redact"
    )
    err.write(
        f"wrote {args.target}: {lines} lines, {found} (the ones recording recognises: "
        "read it before you share it)\n"
    )
    return EXIT_OK


def _named(recording: Recording) -> Recording:
    """``recording`` with an agent in its header: as given, else the one its
    ``initialize`` answer names (the command is then unknown), else ``unknown``."""
    if recording.header.agent:
        return recording
    agent = "unknown"
    initialize = {
        repr(r.message.get("id"))
        for r in recording.records
        if r.direction == "send"
        and isinstance(r.message, dict)
        and r.message.get("method") == "initialize"
    }
    for record in recording.records:
        message = record.message
        if record.direction != "recv" or not isinstance(message, dict):
            continue
        result = message.get("result")
        if repr(message.get("id")) in initialize and isinstance(result, dict):
            info = result.get("info") or result.get("agentInfo")  # v2, v1
            if isinstance(info, dict) and isinstance(info.get("name"), str):
                words = [info["name"], info.get("version")]
                named = " ".join(str(w) for w in words if isinstance(w, str) and w)
                agent = f"{named} (named by its initialize answer; command unknown)"
            break
    return attrs.evolve(recording, header=attrs.evolve(recording.header, agent=agent))
