#!/usr/bin/env python3
"""Bounded mode over a long session: RSS every 500,000 updates.

Two shapes of a long session, each against the reference agent's ``flood``
scenario (one-character ``agent_message_chunk`` texts):

* ``one``: a single turn of N chunks, all of one agent message (RSS is sampled by
  a thread while the turn runs);
* ``turns``: N / K short turns of K chunks each (a user message, an agent message,
  state updates, a submission per turn).

    python bench/bench_bounded.py                       # both, 5,000,000 updates, bounded
    python bench/bench_bounded.py --shape turns --per-turn 100
    python bench/bench_bounded.py --limits default      # the same without bounds

``--limits bounded`` is ``acp_lite.Limits.bounded()``. RSS is the process's resident
set; ``held`` is RSS minus RSS before the first prompt, per update so far.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import threading
import time

import acp_lite

STEP = 500_000


def _rss() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _report(n: int, rss0: int, start: float) -> None:
    rss = _rss()
    per = (rss - rss0) / n if n else 0.0
    print(f"  {n:>10,} updates  RSS {rss / 2**20:7.1f} MiB  held {per:6.1f} B/upd  "
          f"{time.perf_counter() - start:6.1f} s", flush=True)  # fmt: skip


def one_turn(n: int, limits: acp_lite.Limits | None) -> None:
    agent = [sys.executable, "-m", "acp_lite.testing.agent", "--scenario", "flood",
             "--count", str(n)]  # fmt: skip
    with acp_lite.connect(agent, limits=limits) as client:
        session = client.new_session(cwd="/tmp")
        gc.collect()
        rss0, start = _rss(), time.perf_counter()
        done = threading.Event()
        events = session.model.events

        def sample() -> None:
            mark = STEP
            while not done.wait(0.05):
                if len(events) >= mark:
                    _report(len(events), rss0, start)
                    mark += STEP

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        turn = session.run("go", timeout=3600)
        done.set()
        sampler.join()
        text = turn.text
        gc.collect()
        _report(len(events), rss0, start)
        message = session.model.timeline[-1]
        assert len(text) == n, (len(text), n)
        print(f"  text {len(text):,} chars intact; content {len(message.content):,} blocks "
              f"({getattr(message, 'merged', 0):,} joined away); events kept "
              f"{len(events) - events.dropped:,}; transcript kept "
              f"{len(client.transcript):,}")  # fmt: skip


def many_turns(n: int, per_turn: int, limits: acp_lite.Limits | None) -> None:
    agent = [sys.executable, "-m", "acp_lite.testing.agent", "--scenario", "flood",
             "--count", str(per_turn)]  # fmt: skip
    with acp_lite.connect(agent, limits=limits) as client:
        session = client.new_session(cwd="/tmp")
        gc.collect()
        rss0, start = _rss(), time.perf_counter()
        model = session.model
        mark, turns = STEP, 0
        while len(model.events) < n:
            turn = session.run("go", timeout=600)
            assert len(turn.text) == per_turn
            turns += 1
            if len(model.events) >= mark:
                _report(len(model.events), rss0, start)
                mark += STEP
        gc.collect()
        _report(len(model.events), rss0, start)
        print(f"  {turns:,} turns; entities kept {len(model.timeline):,} "
              f"({model.dropped_entities:,} let go); submissions kept "
              f"{len(model.submissions):,} ({model.dropped_submissions:,} let go)")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--updates", type=int, default=5_000_000)
    parser.add_argument("--shape", choices=["one", "turns", "both"], default="both")
    parser.add_argument("--per-turn", type=int, default=100)
    parser.add_argument("--limits", choices=["bounded", "default"], default="bounded")
    args = parser.parse_args()
    limits = acp_lite.Limits.bounded() if args.limits == "bounded" else None
    print(f"Python {sys.version.split()[0]}; limits: {args.limits}; "
          f"PYTHONDONTWRITEBYTECODE={os.environ.get('PYTHONDONTWRITEBYTECODE', '')!r}")  # fmt: skip
    if args.shape in ("one", "both"):
        print(f"one turn of {args.updates:,} chunks:")
        one_turn(args.updates, limits)
    if args.shape in ("turns", "both"):
        print(f"turns of {args.per_turn} chunks, {args.updates:,} updates in all:")
        many_turns(args.updates, args.per_turn, limits)


if __name__ == "__main__":
    main()
