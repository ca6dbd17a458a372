"""Cassettes: recorded ACP connections, replayed to a client without the agent.

The vocabulary is vcrpy's and pytest-recording's: a cassette holds what went over
the wire in a recorded session (the transcript NDJSON plus a header line, see
:mod:`acp_lite.cassettes._format`); replaying it plays the agent's side back to a
client, matching the client's lines to the recorded ones (``match_on``).

This package is plain Python (no trio): the file format, redaction, matching and
the replay engine (:class:`Replayer`). The trio driver, which plays a cassette over
a byte stream (in this process, or on stdio for ``acp-lite replay``), is
:mod:`acp_lite.cassettes.agent`; the pytest integration is pytest_acp's
``@pytest.mark.acp_cassette`` and ``--acp-record-mode``.

Names are imported lazily (PEP 562): ``acp-lite``'s argument parser reads the
matchers without loading the format, redaction and replay modules.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from acp_lite._lazy_names import lazy_names

if TYPE_CHECKING:
    from acp_lite.cassettes._convert import from_transcript, recording_of
    from acp_lite.cassettes._format import (
        FORMAT_VERSION,
        Cassette,
        CassetteError,
        Header,
        Record,
        Recording,
        StreamedRecording,
        nests_deeper,
        parse_line,
        scan,
    )
    from acp_lite.cassettes._match import DEFAULT_MATCH_ON, MATCHERS, check_match_on
    from acp_lite.cassettes._redact import (
        CREDENTIAL_PATTERNS,
        Redactor,
        looks_like_credential,
        redact_records,
        secrets_of,
    )
    from acp_lite.cassettes._replay import MISMATCH_CODE, Mismatch, Outgoing, Replayer

#: Public name -> the submodule that defines it.
_LAZY: dict[str, str] = {
    **dict.fromkeys(["from_transcript", "recording_of"], "_convert"),
    **dict.fromkeys(
        [
            "FORMAT_VERSION",
            "Cassette",
            "CassetteError",
            "Header",
            "Record",
            "Recording",
            "StreamedRecording",
            "nests_deeper",
            "parse_line",
            "scan",
        ],
        "_format",
    ),
    **dict.fromkeys(["DEFAULT_MATCH_ON", "MATCHERS", "check_match_on"], "_match"),
    **dict.fromkeys(
        [
            "CREDENTIAL_PATTERNS",
            "Redactor",
            "looks_like_credential",
            "redact_records",
            "secrets_of",
        ],
        "_redact",
    ),
    **dict.fromkeys(["MISMATCH_CODE", "Mismatch", "Outgoing", "Replayer"], "_replay"),
}

__all__ = [
    "CREDENTIAL_PATTERNS",
    "DEFAULT_MATCH_ON",
    "FORMAT_VERSION",
    "MATCHERS",
    "MISMATCH_CODE",
    "Cassette",
    "CassetteError",
    "Header",
    "Mismatch",
    "Outgoing",
    "Record",
    "Recording",
    "Redactor",
    "Replayer",
    "StreamedRecording",
    "check_match_on",
    "from_transcript",
    "looks_like_credential",
    "nests_deeper",
    "parse_line",
    "recording_of",
    "redact_records",
    "scan",
    "secrets_of",
]

if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_names(globals(), _LAZY)
