"""``acp-lite info`` shows the capabilities as a table (one row per capability,
named by its path), not as indented JSON; ``--json`` keeps the object as received."""

from __future__ import annotations

import json

from acp_lite.cli import EXIT_OK
from acp_lite.cli.info import capability_table

from .conftest import RunCli


def test_the_reference_agents_capabilities_are_a_table(run_cli: RunCli) -> None:
    proc = run_cli("info")
    assert proc.returncode == EXIT_OK, proc.stderr
    start = proc.stdout.index("capabilities:\n")
    end = proc.stdout.index("auth methods:")
    assert proc.stdout[start:end] == (
        "capabilities:\n"
        "  session.prompt.embeddedContext  yes\n"
        "  session.delete                  yes\n"
        "  session.additionalDirectories   yes\n"
    )
    assert "{" not in proc.stdout


def test_values_read_as_words() -> None:
    caps = {
        "loadSession": True,
        "promptCapabilities": {"image": False, "embeddedContext": True},
        "mcpCapabilities": {},
        "limit": 3,
        "mode": "fast",
        "_meta": {"tags": ["a", "b"]},
    }
    lines = capability_table(caps)
    assert lines[0] == "capabilities:\n"
    rows = [line.rstrip("\n").split(maxsplit=1) for line in lines[1:]]
    assert rows == [
        ["loadSession", "yes"],
        ["promptCapabilities.image", "no"],
        ["promptCapabilities.embeddedContext", "yes"],
        ["mcpCapabilities", "yes"],
        ["limit", "3"],
        ["mode", "fast"],
        ["_meta.tags", '["a", "b"]'],
    ]
    # The values make one column: after the longest path and two spaces.
    column = len("  promptCapabilities.embeddedContext  ")
    assert {line.index(value) for line, (_, value) in zip(lines[1:], rows, strict=True)} == {column}


def test_none_and_agent_text() -> None:
    assert capability_table({}) == ["capabilities: none\n"]
    # A key with a newline must not forge a line of its own.
    assert capability_table({"a\nb": True}) == ["capabilities:\n", "  a\\nb  yes\n"]


def test_json_keeps_the_object(run_cli: RunCli) -> None:
    proc = run_cli("info", "--json")
    caps = json.loads(proc.stdout)["capabilities"]
    assert caps["session"]["prompt"] == {"embeddedContext": {}}
