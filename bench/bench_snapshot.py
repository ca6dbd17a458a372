"""pytest_acp snapshots: the comparison of a big turn against the turn itself.

Runs a generated pytest suite (in a child ``pytest``) with the ``acp_session`` and
``acp_snapshot`` fixtures against the reference agent in this process (the
in-memory transport): each test runs one turn of ``--updates`` updates and asserts
``turn.updates == acp_snapshot`` (normalise, serialise, compare with the stored
``.acp.jsonl`` file, as any test does). A first run records the snapshots
(``--snapshot-update``), the timed run compares against them. Prints, per
scenario, the medians over the repeats of the turn's time, the assertion's time
and their ratio (target: assertion <= turn, ratio <= 1).

Scenarios: ``flood`` (the reference agent's flood: N ``agent_message_chunk``
updates of one message) and ``mixed`` (N updates of distinct texts: message and
thought chunks of many messages, tool calls with timestamps and ``tmp_path``
paths, usage updates), each in the default ``merged`` view.

    python bench/bench_snapshot.py [--updates 10000] [--repeat 5] [--profile]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

SUITE = """
import json, time
import pytest
from acp_lite.testing import InProcessAgent

N = {n}
OUT = {out!r}
PROFILE = {profile!r}


def mixed_script(n):
    lines = []
    for i in range(n):
        k = i % 10
        if k < 6:
            update = {{"sessionUpdate": "agent_message_chunk", "messageId": f"m{{i // 60}}",
                       "content": {{"type": "text", "text": f"word {{i}} of the answer "}}}}
        elif k < 8:
            update = {{"sessionUpdate": "agent_thought_chunk", "messageId": f"t{{i // 60}}",
                       "content": {{"type": "text", "text": f"thinking {{i}}"}}}}
        elif k == 8:
            update = {{"sessionUpdate": "tool_call_update", "toolCallId": f"call_{{i}}",
                       "status": "completed", "title": f"Read f{{i}}.py",
                       "updatedAt": "2026-01-01T00:00:00Z", "durationMs": i,
                       "locations": [{{"path": f"/tmp/x/f{{i}}.py", "line": i}}]}}
        else:
            update = {{"sessionUpdate": "usage_update", "used": i, "size": 200000}}
        msg = {{"jsonrpc": "2.0", "method": "session/update",
               "params": {{"sessionId": "SID", "update": update}}}}
        lines.append(json.dumps(msg))
    text = "\\n".join(lines).replace('"SID"', '"{{{{session_id}}}}"')
    return {{"name": "mixed", "turns": [{{"steps": [{{"type": "raw", "text": text}}]}}]}}


AGENTS = {{
    "flood": lambda: InProcessAgent("flood", count=N),
    "mixed": lambda: InProcessAgent(script=mixed_script(N)),
}}


@pytest.mark.parametrize("k", range({repeat}))
@pytest.mark.acp_agent(in_process=AGENTS[{scenario!r}])
def test_turn(acp_session, acp_snapshot, k):
    start = time.perf_counter()
    turn = acp_session.run("go")
    turned = time.perf_counter()
    if PROFILE:
        import cProfile, pstats
        profile = cProfile.Profile()
        profile.enable()
    assert turn.updates == acp_snapshot
    compared = time.perf_counter()
    if PROFILE:
        profile.disable()
        pstats.Stats(profile, stream=open(OUT + ".prof.txt", "a")).sort_stats(
            "cumulative").print_stats(30)
    assert len(turn.updates) >= N
    with open(OUT, "a") as f:
        f.write(json.dumps([turned - start, compared - turned]) + "\\n")
"""


def run(directory: Path, *extra: str) -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:trio",
         "-p", "no:hypothesispytest", "--acp-conformance=off", *extra],
        cwd=directory,
        capture_output=True,
        text=True,
        env=env,
    )  # fmt: skip
    if result.returncode != 0:
        sys.exit(result.stdout[-3000:] + result.stderr[-3000:])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--updates", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--scenario", action="append", choices=("flood", "mixed"))
    parser.add_argument("--profile", action="store_true", help="cProfile the assertion")
    args = parser.parse_args()
    for scenario in args.scenario or ["flood", "mixed"]:
        with tempfile.TemporaryDirectory() as tmp:
            directory = Path(tmp)
            out = directory / "times.jsonl"
            suite = SUITE.format(
                n=args.updates,
                out=str(out),
                repeat=args.repeat,
                scenario=scenario,
                profile=str(out) if args.profile else "",
            )
            (directory / "test_snapshot_bench.py").write_text(suite)
            run(directory, "--snapshot-update")
            out.unlink()
            run(directory)
            rows = [json.loads(line) for line in out.read_text().splitlines()]
            turn = statistics.median(r[0] for r in rows)
            compare = statistics.median(r[1] for r in rows)
            ratio = statistics.median(r[1] / r[0] for r in rows)
            print(
                f"{scenario}: {args.updates} updates, merged view: turn {turn:.3f} s, "
                f"snapshot assertion {compare:.3f} s, ratio {ratio:.2f} "
                f"(median of {len(rows)})"
            )
            if args.profile:
                print((directory / "times.jsonl.prof.txt").read_text()[:6000])


if __name__ == "__main__":
    main()
