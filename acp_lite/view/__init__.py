"""``acp-lite view``: a transcript (or a cassette) as one self-contained HTML page.

:func:`render_html` reads a saved transcript, a cassette or a
:class:`~acp_lite.transcript.Transcript` into a timeline per connection
(:mod:`acp_lite.view.timeline`: typed items, streams folded) and renders it
(:mod:`acp_lite.view.html`: inline CSS and script, nothing fetched, data escaped).
Plain Python: no trio, no client.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from acp_lite.view.html import render_page
from acp_lite.view.items import ViewFinding
from acp_lite.view.timeline import Timeline, build_timeline
from acp_lite.view.wire import connection_of, connections_of_file

if TYPE_CHECKING:
    from acp_lite.transcript import Transcript

__all__ = ["Timeline", "ViewFinding", "read_timelines", "render_html", "write_html"]


def read_timelines(
    source: Transcript | str | Path, findings: Sequence[ViewFinding] = ()
) -> list[Timeline]:
    """The timeline of each connection of ``source`` (a path or a Transcript).
    Raises :class:`~acp_lite.errors.CassetteError` on a malformed file, ``OSError``
    on an unreadable one."""
    if isinstance(source, str | Path):
        return [build_timeline(c, findings) for c in connections_of_file(source)]
    return [build_timeline(connection_of(source), findings)]


def render_html(
    source: Transcript | str | Path,
    *,
    title: str | None = None,
    findings: Sequence[ViewFinding] | None = None,
) -> str:
    """The HTML page of a transcript, cassette or Transcript; ``findings`` are shown
    at the wire lines they name. The title defaults to the file's name."""
    timelines = read_timelines(source, findings or ())
    if title is None:
        title = Path(source).name if isinstance(source, str | Path) else "ACP transcript"
    return render_page(timelines, title)


def write_html(
    source: Transcript | str | Path,
    target: str | Path,
    *,
    title: str | None = None,
    findings: Sequence[ViewFinding] | None = None,
) -> Path:
    """Write :func:`render_html` of ``source`` to ``target`` (UTF-8); returns the path."""
    page = render_html(source, title=title, findings=findings)
    out = Path(target)
    out.write_bytes(page.encode("utf-8", errors="replace"))
    return out
