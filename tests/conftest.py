"""Suite-wide set-up: the Hypothesis profiles (see ``tests/hypothesis_budget.py``),
and a bytecode cache even where ``PYTHONDONTWRITEBYTECODE`` is set."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import hypothesis_budget

hypothesis_budget.load_profile_from_env()

# The suite starts many interpreters (agents, CLI runs, pytester subprocesses,
# xdist workers); without bytecode each one compiles acp_lite again (the
# generated protocol module alone is 600 kB). Where the environment forbids
# writing __pycache__ next to the sources, the cache goes to .pytest_cache instead,
# for this process and its children.
if sys.dont_write_bytecode or os.environ.get("PYTHONDONTWRITEBYTECODE"):
    _PREFIX = str(Path(__file__).resolve().parent.parent / ".pytest_cache" / "pycache")
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    os.environ["PYTHONPYCACHEPREFIX"] = _PREFIX
    sys.pycache_prefix = _PREFIX
    sys.dont_write_bytecode = False
