"""The committed generated module must match what tools/gen_protocol.py makes of the schema."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent.parent


def _load_generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "gen_protocol", ROOT / "tools" / "gen_protocol.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("gen_protocol", module)
    spec.loader.exec_module(module)
    return module


def test_generated_module_is_fresh() -> None:
    gen = _load_generator()
    committed = (ROOT / "acp_lite" / "protocol" / "_generated.py").read_text(encoding="utf-8")
    assert gen.generate() == committed, "stale: run `python tools/gen_protocol.py`"


def test_staleness_check_can_fail() -> None:
    """A changed schema must change the output (guards a check that cannot fail)."""
    import json

    gen = _load_generator()
    schema = json.loads(gen.SCHEMA.read_text(encoding="utf-8"))
    schema["$defs"]["PromptResponse"]["properties"]["newField"] = {"type": "string"}
    changed = gen.generate(schema)
    assert "new_field: str | Unset = UNSET" in changed
    committed = (ROOT / "acp_lite" / "protocol" / "_generated.py").read_text(encoding="utf-8")
    assert changed != committed
