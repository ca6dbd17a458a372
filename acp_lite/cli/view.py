"""``acp-lite view TRANSCRIPT [-o PAGE]``: a saved transcript or a cassette as one
self-contained HTML page (:mod:`acp_lite.view`), written next to it by default."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TextIO

from acp_lite.cli.base import EXIT_OK, EXIT_USAGE, CliError
from acp_lite.cli.paths import check_writable

__all__ = ["add_parser", "cmd_view", "default_target"]


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register the ``view`` subcommand."""
    view = sub.add_parser(
        "view",
        help="render a saved transcript or cassette as one HTML page",
        description="Read an NDJSON transcript (`acp-lite prompt --transcript`, "
        "--acp-transcripts, Transcript.save) or a cassette, of a v2 or v1 agent, and "
        "write it as one self-contained HTML page: the conversation's timeline "
        "(prompts, messages, thoughts, tool calls, plans, permission requests and "
        "their answers, states, errors), each item with its time, the gap before it "
        "and its raw wire lines. The page fetches nothing: open it in any browser.",
    )
    view.add_argument("transcript", metavar="TRANSCRIPT", help="the NDJSON transcript or cassette")
    view.add_argument(
        "-o",
        "--output",
        metavar="PAGE",
        default=None,
        help="the HTML file to write (default: TRANSCRIPT's name with .html, next to it)",
    )
    view.add_argument("--title", metavar="T", default=None, help="the page's title")


def default_target(source: str) -> Path:
    """``t.ndjson`` -> ``t.html``; ``c.acp.jsonl`` -> ``c.acp.html`` (next to it)."""
    return Path(source).with_suffix(".html")


def cmd_view(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Run ``acp-lite view``: write the page, print its path."""
    from acp_lite.errors import CassetteError
    from acp_lite.view import read_timelines
    from acp_lite.view.html import render_page

    source: str = args.transcript
    if not Path(source).is_file():
        what = "is a directory" if Path(source).is_dir() else "no such file"
        raise CliError(f"cannot read {source}: {what}", EXIT_USAGE)
    target = str(args.output) if args.output is not None else str(default_target(source))
    if Path(target).resolve() == Path(source).resolve():
        raise CliError(f"cannot write {target}: it is the transcript itself", EXIT_USAGE)
    check_writable(target, "the page")
    try:
        timelines = read_timelines(source)
    except CassetteError as exc:
        raise CliError(f"cannot read {source}: {exc}", EXIT_USAGE) from None
    except OSError as exc:
        raise CliError(f"cannot read {source}: {exc.strerror or exc}", EXIT_USAGE) from None
    if not any(t.items for t in timelines):
        raise CliError(f"{source} holds no transcript records", EXIT_USAGE)
    page = render_page(timelines, args.title if args.title is not None else Path(source).name)
    try:
        Path(target).write_bytes(page.encode("utf-8", errors="replace"))
    except OSError as exc:
        raise CliError(f"cannot write {target}: {exc.strerror or exc}", EXIT_USAGE) from None
    out.write(f"{target}\n")
    out.flush()
    return EXIT_OK
