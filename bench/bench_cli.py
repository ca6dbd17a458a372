"""``acp-lite prompt`` rendering cost: streamed text vs ``--json``, per decade of chunks.

Runs the CLI against the reference agent's ``flood`` scenario (N text chunks),
stdout to /dev/null, and prints wall time for the rendered text and for
``--json`` at each N, with their ratio. Rendering must stay linear (the time per
chunk flat across N) and within 1.5x of ``--json``.

    python bench/bench_cli.py [--counts 10000,40000,100000] [--repeat 2]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time


def run(count: int, json_mode: bool) -> float:
    agent = f"{sys.executable} -m acp_lite.testing.agent --scenario flood --count {count}"
    argv = [sys.executable, "-m", "acp_lite", "prompt", "--agent", agent, "--timeout", "600"]
    if json_mode:
        argv.append("--json")
    argv.append("go")
    started = time.perf_counter()
    with open(os.devnull, "wb") as sink:
        subprocess.run(argv, stdout=sink, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--counts", default="10000,40000,100000")
    parser.add_argument("--repeat", type=int, default=2, help="best of R runs per cell")
    args = parser.parse_args()
    print(f"{'chunks':>8} {'text s':>8} {'json s':>8} {'text/json':>9} {'text us/chunk':>13}")
    for count in (int(c) for c in args.counts.split(",")):
        text = min(run(count, False) for _ in range(args.repeat))
        as_json = min(run(count, True) for _ in range(args.repeat))
        print(
            f"{count:>8,} {text:>8.2f} {as_json:>8.2f} {text / as_json:>9.2f}"
            f" {text / count * 1e6:>13.1f}"
        )


if __name__ == "__main__":
    main()
