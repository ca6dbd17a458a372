"""Closing after a timeout does not wait the close grace again: the agent that did
not answer in time gets SIGTERM at once (after a moment to exit at end of input)."""

from __future__ import annotations

import sys
import time

import pytest

import acp_lite
from acp_lite.errors import Timeout
from acp_lite.limits import Limits

SILENT = [sys.executable, "-c", "import time; time.sleep(60)"]  # reads nothing, answers nothing


def test_a_handshake_timeout_closes_without_the_grace() -> None:
    limits = Limits(connect_timeout=0.1, close_grace=5.0, terminate_grace=5.0)
    started = time.monotonic()
    with pytest.raises(Timeout):
        acp_lite.connect(SILENT, limits=limits)
    # 0.1 s of timeout, the interpreter's start, 0.1 s, SIGTERM: far below the 5 s
    # grace the close would otherwise wait first.
    assert time.monotonic() - started < 4.5
