"""A Ctrl-C while close() waits on the shutdown ladder kills the agent at once."""

from __future__ import annotations

import os
import signal
import sys
import threading
import time

import pytest

import acp_lite
from acp_lite.limits import Limits

from .conftest import process_gone, wait_for

# Ignores SIGTERM and stays alive after its stdin closes: only SIGKILL stops it.
STUBBORN = [
    sys.executable,
    "-m",
    "acp_lite.testing.agent",
    "--ignore-sigterm",
    "--linger",
    "-1",
]


def test_ctrl_c_during_close_skips_the_graces() -> None:
    limits = Limits(close_grace=4.0, terminate_grace=4.0, kill_grace=1.0)
    client = acp_lite.connect(STUBBORN, limits=limits, timeout=20)
    client.new_session("/").run("hi")
    pid = client.pid
    assert pid is not None
    # Starts with close(): the ladder's first grace alone outlasts the timer 40 times.
    timer = threading.Timer(0.1, os.kill, (os.getpid(), signal.SIGINT))
    started = time.monotonic()
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        client.close()  # the graceful ladder would take 8 s
    elapsed = time.monotonic() - started
    timer.join()
    assert elapsed < 3.5, elapsed
    assert wait_for(lambda: process_gone(pid), 5.0)
