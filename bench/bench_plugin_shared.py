"""pytest_acp with one shared agent: the cost of per-test conformance checks.

Runs a generated suite of N tests against one session-scoped reference agent
(``--acp-scope=session``), with conformance checks off and on (warn), and prints
the wall time of each run. The checks must add a per-test cost that does not grow
with the traffic of the earlier tests (they once replayed the whole transcript:
quadratic).

    .venv/bin/python bench/bench_plugin_shared.py [N]
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

SUITE = """
import pytest

@pytest.mark.parametrize("i", range({n}))
def test_many(acp_session, i):
    acp_session.run(f"hello number {{i}} " * 5)
"""


def run(directory: Path, mode: str) -> float:
    start = time.perf_counter()
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:trio",
         "-p", "no:hypothesispytest", "--acp-scope=session", f"--acp-conformance={mode}"],
        cwd=directory,
        capture_output=True,
        text=True,
    )  # fmt: skip
    elapsed = time.perf_counter() - start
    if result.returncode != 0:
        sys.exit(result.stdout[-2000:] + result.stderr[-2000:])
    return elapsed


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 400
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        (directory / "test_many.py").write_text(SUITE.format(n=n))
        for mode in ("off", "warn"):
            elapsed = run(directory, mode)
            print(f"{n} tests, one shared agent, conformance={mode}: {elapsed:.2f} s")


if __name__ == "__main__":
    main()
