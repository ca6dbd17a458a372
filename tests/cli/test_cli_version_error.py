"""``acp-lite`` on an agent whose ``initialize`` answer names a version it does not
speak: the message says what was wrong, as the library's error does."""

from __future__ import annotations

from acp_lite.cli import EXIT_PROTOCOL

from .conftest import RunCli, assert_clean_error


def test_wrong_protocol_version_names_the_shape(run_cli: RunCli) -> None:
    proc = run_cli("prompt", "--scenario", "wrong_protocol_version", "hi")
    assert_clean_error(
        proc,
        EXIT_PROTOCOL,
        "announced protocol version 1 but answered initialize in the v2 shape",
    )
    # Not the contradiction the issue reported: "speaks ACP protocol version 1".
    assert "speaks ACP protocol version 1" not in proc.stderr
    assert "acp-lite speaks versions 2 and 1" in proc.stderr
