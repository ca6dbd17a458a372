"""Suite-wide set-up: the Hypothesis profiles (see ``tests/hypothesis_budget.py``),
a bytecode cache even where ``PYTHONDONTWRITEBYTECODE`` is set, and the cyclic
GC of the pytest process tuned for a long run."""

from __future__ import annotations

import gc
import getpass
import os
import shutil
import signal
import sys
import tempfile
from pathlib import Path

import hypothesis_budget
import pytest
from _pytest.unraisableexception import gc_collect_iterations_key

hypothesis_budget.load_profile_from_env()

# The Ctrl-C tests need Python's own SIGINT handler (``_thread.interrupt_main`` and
# real signals raise KeyboardInterrupt through it). A run started with SIGINT
# ignored (a background job of a non-interactive shell, nohup) inherits SIG_IGN,
# which Python then leaves in place, and 15 of them would fail for want of it.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

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
    if not {"PYTEST_XDIST_WORKER", "PYTEST_CURRENT_TEST"} & set(os.environ):
        # (The outermost run only.) The bytecode of earlier runs' temporary test
        # files (pytester's, under pytest-of-<user>): their directories are new
        # each run, so it is never read again and would only pile up.
        _temp = Path(tempfile.gettempdir()).resolve() / f"pytest-of-{getpass.getuser()}"
        shutil.rmtree(Path(_PREFIX + str(_temp)), ignore_errors=True)


# The cyclic GC of the pytest process: with the default thresholds it ran ~3,500
# times in a serial run, 7.5 s of the ~90 (5.4 s in full collections, each
# walking every module, test item and Hypothesis strategy). What exists once the
# tests are collected lives to the end, so it is frozen out of the collections,
# and the youngest generation collects every 10,000 allocations instead of 700:
# ~300 collections, 3 s (no test depends on when the GC runs). A full collection
# walks all that the tests built since (the official provider clients' pydantic
# validators make it cost ~0.5 s): it may come only after 100 collections of the
# middle generation, not 10 (so at most once or twice a run).
gc.set_threshold(10_000, 10, 100)
# Collecting, the GC does not run at all: it would only walk what is about to be
# frozen (the official provider clients' pydantic models make each full
# collection cost ~0.3 s; collecting ran ~130 collections, 1-2 s of CPU). The
# cycles that collecting leaves behind are frozen with the rest, not freed:
# ~5 MB more for the session.
gc.disable()


def pytest_collection_finish(session: object) -> None:
    gc.freeze()
    gc.enable()


def pytest_configure(config: pytest.Config) -> None:
    # At the session's end pytest's unraisable-exception plugin runs two full
    # collections (to report a __del__ that raises in a cycle left over by the last
    # tests): ~0.5 s each, walking all that the run built (the official clients'
    # pydantic validators). pytester turns them off for its inner runs the same way.
    config.stash[gc_collect_iterations_key] = 0
