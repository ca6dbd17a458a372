"""docs/reference-agent.md carries the script format as the module documents it."""

from __future__ import annotations

from pathlib import Path

import acp_lite.testing.script as script

DOC = Path(__file__).resolve().parents[2] / "docs" / "reference-agent.md"


def test_the_script_format_in_the_docs_is_the_modules() -> None:
    text = DOC.read_text(encoding="utf-8")
    body = text.split("```rst\n", 1)[1].rsplit("\n```", 1)[0]
    assert script.__doc__ is not None
    assert body == script.__doc__.strip(), "regenerate docs/reference-agent.md from the docstring"
