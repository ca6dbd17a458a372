"""pytest_acp is tested the way users meet it: pytester runs of small test suites.

Runs that start agents use ``runpytest_subprocess`` (threads and child processes
stay out of this process); the plugin loads through its ``pytest11`` entry point.
"""

from __future__ import annotations

import sys
from pathlib import Path

pytest_plugins = ["pytester"]

HERE = Path(__file__).resolve().parent
REFERENCE_AGENT = [sys.executable, "-m", "acp_lite.testing.agent"]
RANDOM_IDS_AGENT = [sys.executable, str(HERE / "random_ids_agent.py")]

#: Options for pytester subprocess runs that need neither pytest-trio nor hypothesis:
#: both import hypothesis, which costs seconds of start-up per run on a busy machine.
LEAN = ("-p", "no:cacheprovider", "-p", "no:trio", "-p", "no:hypothesispytest")
