"""The sans-IO core must not import trio (docs/architecture.md, "Layers")."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SANS_IO = ["acp_lite.protocol", "acp_lite.model", "acp_lite.core", "acp_lite.errors"]


def _existing(mod: str) -> bool:
    rel = Path(*mod.split("."))
    return (ROOT / rel).is_dir() or (ROOT / rel).with_suffix(".py").is_file()


@pytest.mark.parametrize("module", [m for m in SANS_IO if _existing(m)])
def test_sans_io_module_does_not_import_trio(module: str) -> None:
    code = (
        "import sys, importlib\n"
        f"importlib.import_module({module!r})\n"
        "bad = sorted(m for m in sys.modules if m == 'trio' or m.startswith('trio.'))\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    assert out.stdout.strip() == "", f"{module} imports trio: {out.stdout.strip()}"


def test_boundary_check_detects_trio() -> None:
    """Guard against a check that cannot fail: trio itself must be detected."""
    code = "import sys, trio\nprint('trio' in sys.modules)\n"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "True"
