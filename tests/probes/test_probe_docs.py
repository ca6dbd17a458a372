"""docs/probes.md lists exactly the registered probes (tools/gen_probe_docs.py)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_probe_docs_are_current() -> None:
    spec = importlib.util.spec_from_file_location(
        "gen_probe_docs", ROOT / "tools/gen_probe_docs.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert (ROOT / "docs/probes.md").read_text() == module.render(), (
        "docs/probes.md is stale: run python tools/gen_probe_docs.py"
    )
