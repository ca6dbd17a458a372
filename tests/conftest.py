"""Suite-wide set-up: the Hypothesis profiles (see ``tests/hypothesis_budget.py``),
and a bytecode cache even where ``PYTHONDONTWRITEBYTECODE`` is set."""

from __future__ import annotations

import os
import sys

import hypothesis_budget

hypothesis_budget.load_profile_from_env()

# The suite starts many interpreters (agents, CLI runs, pytester subprocesses,
# xdist workers); without bytecode each one compiles acp_lite again (the
# generated protocol module alone is 700 kB). Where the environment says not to
# write bytecode, this process and its children write it anyway, where Python
# does by default (``__pycache__`` next to the sources, ignored by git). Not to a
# ``PYTHONPYCACHEPREFIX``: that hides the standard library's and the installed
# packages' own ``__pycache__``, and on a fresh checkout every child started by
# the suite then compiled them again (about 9 s of a run).
if sys.dont_write_bytecode or os.environ.get("PYTHONDONTWRITEBYTECODE"):
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    sys.dont_write_bytecode = False
