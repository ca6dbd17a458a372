"""``prompt --permission`` / ``--elicitation``: one vocabulary with the library and
pytest_acp (``acp_lite.permissions``), and forms answered by policy off a terminal."""

from __future__ import annotations

import json
import shlex
import sys

from acp_lite import permissions
from acp_lite.cli import EXIT_OK, EXIT_STOPPED, EXIT_USAGE, prompt
from acp_lite.cli.form import ELICITATION_CHOICES

from .conftest import RunCli

TOOL = ("--scenario", "tool_call_permission", "go")


def test_the_names_are_the_library_names() -> None:
    assert tuple(permissions.PERMISSION_POLICIES) == prompt.PERMISSION_NAMES
    assert tuple(permissions.PERMISSION_ALIASES) == prompt.PERMISSION_ALIASES
    assert ("ask", *permissions.ELICITATION_POLICIES) == ELICITATION_CHOICES


def test_permission_policies_by_their_names(run_cli: RunCli) -> None:
    expected = {
        "allow_once": "Allow once [allow_once]",
        "allow_always": "Always allow [allow_always]",
        "reject_once": "Reject [reject_once]",
        "reject_always": "Reject [reject_once]",  # no reject_always offered: the nearest
        "cancel": "cancelled",
        "allow": "Allow once [allow_once]",  # the older spellings
        "reject": "Reject [reject_once]",
        "cancelled": "cancelled",
    }
    for name, shown in expected.items():
        proc = run_cli("prompt", "--permission", name, *TOOL)
        # The cancelled outcome ends this agent's turn "cancelled" (exit 1).
        assert proc.returncode == (EXIT_STOPPED if shown == "cancelled" else EXIT_OK)
        assert f"permission: Allow writing notes.txt? -> {shown}\n" in proc.stderr, name


def test_elicitation_declined_by_default_off_a_terminal(run_cli: RunCli) -> None:
    proc = run_cli("prompt", "--scenario", "elicitation", "hi")
    assert proc.returncode == EXIT_OK, proc.stderr
    assert "elicitation: What is your name? -> decline\n" in proc.stderr
    assert proc.stdout == "No problem.\n"

    proc = run_cli("prompt", "--elicitation", "cancel", "--scenario", "elicitation", "hi")
    assert "elicitation: What is your name? -> cancel\n" in proc.stderr
    assert proc.stdout == "Cancelled the form.\n"
    # No default for the required name: nothing honest to accept with.
    proc = run_cli("prompt", "--elicitation", "accept_defaults", "--scenario", "elicitation", "x")
    assert (
        "elicitation: What is your name? -> decline (no default for the required name)\n"
        in proc.stderr
    )


def test_accept_defaults_and_json_lines(run_cli: RunCli) -> None:
    schema = {
        "type": "object",
        "properties": {
            "name": {"type": "string", "default": "demo"},
            "size": {"type": "integer", "default": 3},
            "note": {"type": "string"},
        },
        "required": ["name"],
    }
    step = {"type": "elicit", "message": "Pick", "schema": schema,
            "branches": {"accept": [{"type": "text", "text": "ok"}]}}  # fmt: skip
    script = json.dumps({"turns": [{"steps": [step]}]})
    agent = shlex.join([sys.executable, "-m", "acp_lite.testing.agent", "--script-json", script])
    proc = run_cli("prompt", "--elicitation", "accept_defaults", "--agent", agent, "go")
    assert proc.returncode == EXIT_OK, proc.stderr
    assert "elicitation: Pick -> accept name='demo', size=3\n" in proc.stderr
    assert proc.stdout == "ok\n"

    proc = run_cli("prompt", "--json", "--elicitation", "accept_defaults", "--agent", agent, "go")
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    assert {"elicitation": {"message": "Pick", "mode": "form", "answer": "accept",
            "content": {"name": "demo", "size": 3}}} in lines  # fmt: skip


def test_ask_needs_a_terminal(run_cli: RunCli) -> None:
    for flag in ("--permission", "--elicitation"):
        proc = run_cli("prompt", flag, "ask", *TOOL)
        assert proc.returncode == EXIT_USAGE
        assert f"{flag} ask needs a terminal on stdin" in proc.stderr


def test_form_fields_parse_or_say_why() -> None:
    from acp_lite.cli.form import parse_field

    tags = {"type": "array", "items": {"enum": ["a", "b"]}, "maxItems": 1}
    cases = [
        ({"type": "integer", "minimum": 1}, "2", 2),
        ({"type": "integer", "minimum": 1}, "0", "must be at least 1"),
        ({"type": "integer"}, "2.5", "not an integer"),
        ({"type": "number", "maximum": 1}, "0.5", 0.5),
        ({"type": "boolean"}, "yes", True),
        ({"type": "boolean"}, "maybe", "answer y or n"),
        ({"type": "string", "oneOf": [{"const": "x", "title": "X"}]}, "1", "x"),
        ({"type": "string", "enum": ["x"]}, "2", "not a choice: '2' (1-1)"),
        (tags, "2", ["b"]),
        (tags, "1 2", "choose at most 1"),
        ({"type": "string", "maxLength": 2}, "abc", "takes at most 2 characters"),
        # The agent's schema may be anything: never an exception but ValueError.
        ({"type": ["odd"], "enum": [{"x": 1}], "enumNames": [1, 2]}, "1", {"x": 1}),
    ]
    for prop, text, expected in cases:
        try:
            value = parse_field(prop, text)
        except ValueError as exc:
            value = str(exc)
        assert value == expected, (prop, text)
