"""A blocking on_update callback does not hold close() past its bound."""

from __future__ import annotations

import logging
import sys
import threading
import time

import pytest

import acp_lite
from acp_lite.aio import _session
from acp_lite.limits import Limits

AGENT = [sys.executable, "-m", "acp_lite.testing.agent"]


def test_close_abandons_a_blocked_on_update_callback(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The callback blocks for good: the grace it gets (0.25 s) is waited out, so a
    # shorter one is enough to show it is abandoned.
    monkeypatch.setattr(_session, "_CALLBACK_GRACE", 0.05)
    limits = Limits(close_grace=1.0, terminate_grace=0.5, kill_grace=0.5)
    release = threading.Event()
    entered = threading.Event()

    def stuck(event: object) -> None:
        entered.set()
        release.wait(30)

    try:
        client = acp_lite.connect(AGENT, limits=limits, timeout=20)
        session = client.new_session("/")
        session.on_update(stuck)
        session.run("hi")
        assert entered.wait(10)
        started = time.monotonic()
        with caplog.at_level(logging.WARNING, logger="acp_lite.session"):
            client.close()
        elapsed = time.monotonic() - started
    finally:
        release.set()
    assert elapsed < limits.shutdown_timeout + 1.0, elapsed
    assert any("stuck" in r.getMessage() and "abandoned" in r.getMessage() for r in caplog.records)
