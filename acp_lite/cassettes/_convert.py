"""Cassettes from transcripts: what ``acp-lite cassette from-transcript`` and the
pytest recorder do with the lines of a connection."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from acp_lite.cassettes._format import Cassette, Header, Record, Recording
from acp_lite.cassettes._redact import Redactor, redact_command, redact_records, secrets_of

__all__ = ["from_transcript", "protocol_version_of", "recording_of"]


def protocol_version_of(records: Sequence[Record]) -> int | None:
    """The protocol version the agent answered to ``initialize``, if it did."""
    init_ids = [
        r.message["id"]
        for r in records
        if r.direction == "send"
        and isinstance(r.message, dict)
        and r.message.get("method") == "initialize"
        and "id" in r.message
    ]
    for r in records:
        m = r.message
        if r.direction == "recv" and isinstance(m, dict) and "method" not in m:
            result = m.get("result")
            if m.get("id") in init_ids and isinstance(result, dict):
                version = result.get("protocolVersion")
                return version if isinstance(version, int) else None
    return None


def recording_of(
    records: Iterable[Record],
    *,
    agent: str = "",
    environ: Mapping[str, str] | None = None,
    redactors: Iterable[Redactor] = (),
) -> Recording:
    """One redacted recording of ``records`` (a connection's transcript records),
    with a header naming ``agent`` (redacted too). ``environ``: where the secrets
    to redact come from (default: this process's environment)."""
    # The agent's command line may carry secrets (``--api-key=...``): redacted in
    # the header, and by value in every line.
    agent_line, secrets = redact_command(agent, secrets_of(environ))
    kept = redact_records(records, secrets=secrets, redactors=redactors)
    header = Header(protocol_version=protocol_version_of(kept), agent=agent_line)
    return Recording(header, tuple(kept))


def from_transcript(
    source: str | Path,
    *,
    agent: str = "",
    environ: Mapping[str, str] | None = None,
    redactors: Iterable[Redactor] = (),
) -> Cassette:
    """A cassette of a saved transcript (``Transcript.save``, ``--acp-transcripts``,
    ``acp-lite prompt --transcript``), redacted. A file that is a cassette already
    keeps its connections and headers (and is redacted again)."""
    loaded = Cassette.load(source)
    recordings: list[Recording] = []
    for recording in loaded.recordings:
        fresh = recording_of(
            recording.records,
            agent=agent or recording.header.agent,
            environ=environ,
            redactors=redactors,
        )
        recordings.append(fresh)
    return Cassette(tuple(recordings))
