"""Closing while an on_update callback runs: a batch about to finish is let finish
(no warning); one that keeps blocking is abandoned in its thread, with a warning."""

from __future__ import annotations

import logging
import threading
import time

import pytest

from acp_lite import connect_in_memory
from acp_lite.aio import _session
from acp_lite.testing import InProcessAgent

WARNING = "was still running when it was stopped"


def close_during_callback(seconds: float, caplog: pytest.LogCaptureFixture) -> bool:
    started, finished = threading.Event(), threading.Event()

    def slow(event: object) -> None:
        if started.is_set():
            return
        started.set()
        time.sleep(seconds)  # only the first event's call is slow
        finished.set()

    with (
        caplog.at_level(logging.WARNING, logger="acp_lite.session"),
        connect_in_memory(InProcessAgent()) as client,
    ):
        session = client.new_session(cwd="/tmp")
        session.on_update(slow)
        session.run("hi")
        assert started.wait(10)
    # Closed while the callback ran.
    return finished.is_set()


def test_a_callback_in_flight_finishes_without_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    assert close_during_callback(0.05, caplog)
    assert WARNING not in caplog.text


def test_a_blocking_callback_is_abandoned_with_a_warning(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The grace it gets (0.25 s) is waited out: a shorter one shows the same.
    monkeypatch.setattr(_session, "_CALLBACK_GRACE", 0.05)
    assert not close_during_callback(3.0, caplog)
    assert WARNING in caplog.text
