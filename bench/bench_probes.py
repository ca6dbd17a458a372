"""The probe suites against the reference agent, as a process: wall time per suite.

Issue 27's speed target: the whole v2 probe suite against the reference agent runs
in under 20 s serially on a 2-core machine. Prints, for v2 and v1, the median wall
time over the repeats, the probes run, how many needed an agent process of their
own (isolation ``connection`` / ``fresh``), and the statuses; a floor in the same
run — starting the reference agent and answering one ``initialize`` — puts the
numbers in this machine's terms (the suite costs about ``own + 1`` such starts
plus the probes' own waits).

    python bench/bench_probes.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from acp_lite.probes import AgentCommand, ProbeRun, run_probes, suite_for

AGENT = [sys.executable, "-m", "acp_lite.testing.agent"]


def floor_seconds() -> float:
    """One agent start and one initialize, the unit of a probe's own process."""
    started = time.perf_counter()
    with ProbeRun(AgentCommand(AGENT)) as run:
        run.negotiate()
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    floor = statistics.median(floor_seconds() for _ in range(args.repeat))
    print(f"floor (agent start + initialize): {floor:.3f} s")
    for version, argv in ((2, AGENT), (1, [*AGENT, "--protocol", "1"])):
        times, report = [], None
        for _ in range(args.repeat):
            started = time.perf_counter()
            report = run_probes(AgentCommand(argv))
            times.append(time.perf_counter() - started)
        assert report is not None
        own = sum(1 for p in suite_for(version) if p.isolation != "shared")
        counts = Counter(r.status for r in report.results)
        wall = statistics.median(times)
        target = " (target < 20 s)" if version == 2 else ""
        print(
            f"v{version}: {len(report.results)} probes in {wall:.2f} s{target}, "
            f"{wall / floor:.1f}x the floor; {own} with an agent of their own; "
            + ", ".join(f"{n} {s}" for s, n in sorted(counts.items()))
        )


if __name__ == "__main__":
    main()
