"""The SIGINT handler that lets the main thread borrow the agent's pipe.

A borrower in the main thread feeds the bytes it read to the core there, so a
Ctrl-C must not land halfway (``acp_lite.sync._direct._HeldSigint``): the handler
stands in for Python's default one during a blocking call that borrows, holds
Ctrl-C off during a read, and the default is back when the call returns (so a
``trio.run`` later in the main thread installs trio's own); with another handler
installed the main thread does not borrow.
"""

from __future__ import annotations

import signal
import threading
from typing import Any

import pytest
import trio

from acp_lite.sync import _direct
from acp_lite.sync._direct import _HeldSigint

from .conftest import ctrl_c_when
from .test_borrowed_pipe import Spy, connect, default_sigint, in_thread, pipe_of, spy, stderr_count

__all__ = ["default_sigint", "spy"]  # fixtures used here


def _custom(signum: int, frame: Any) -> None:
    """A SIGINT handler of the program's own (not Python's default)."""
    raise KeyboardInterrupt


def test_held_sigint_raises_right_after_the_block() -> None:
    held = _HeldSigint()
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        assert held.install() and signal.getsignal(signal.SIGINT) is held
        reached = []
        with pytest.raises(KeyboardInterrupt), held.holding_off():
            signal.raise_signal(signal.SIGINT)
            reached.append("after the signal")  # held: the block goes on
        assert reached == ["after the signal"]
        with pytest.raises(KeyboardInterrupt):  # outside the block: raised at once
            signal.raise_signal(signal.SIGINT)
        with held.holding_off():
            pass  # nothing held: nothing raised
        held.uninstall()
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
        signal.signal(signal.SIGINT, _custom)
        assert not held.install() and signal.getsignal(signal.SIGINT) is _custom
        signal.signal(signal.SIGINT, held)
        signal.signal(signal.SIGINT, _custom)  # replaced by someone meanwhile: kept
        held.uninstall()
        assert signal.getsignal(signal.SIGINT) is _custom
    finally:
        signal.signal(signal.SIGINT, previous)


def test_ctrl_c_interrupts_a_borrowed_main_thread_call_and_the_handler_goes_back(
    spy: Spy, default_sigint: None
) -> None:
    handlers: list[Any] = []

    def asked() -> bool:
        handlers.append(signal.getsignal(signal.SIGINT))  # during the call
        return stderr_count(client, "got _t/never") > 0

    with connect(spy) as client:
        assert client.request("_t/echo", 0)["echo"] == 0
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # back
        before = len([e for e in client.transcript if e.direction == "send"])
        with ctrl_c_when(asked):
            client.request("_t/never", timeout=30)
        assert handlers and handlers[-1] is _direct._SIGINT  # in place to borrow
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
        assert not pipe_of(client).lent
        out = [e.json() for e in client.transcript if e.direction == "send"][before:]
        never = next(m for m in out if m.get("method") == "_t/never")
        assert {"requestId": never["id"]} in [
            m.get("params") for m in out if m.get("method") == "$/cancel_request"
        ]
        assert client.request("_t/echo", 1)["echo"] == 1
        me = threading.get_ident()
        assert spy.lends == [me] * 3
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_a_custom_sigint_handler_keeps_the_main_thread_from_borrowing(spy: Spy) -> None:
    previous = signal.signal(signal.SIGINT, _custom)
    try:
        with connect(spy) as client:
            assert client.request("_t/echo", 1)["echo"] == 1
            assert spy.lends == [] and spy.fed == []
            assert b'"echo": 1' in spy.trio_read()
            assert signal.getsignal(signal.SIGINT) is _custom
            assert in_thread(lambda: client.request("_t/echo", 2))["echo"] == 2
            assert len(spy.lends) == 1  # another thread still borrows
        assert signal.getsignal(signal.SIGINT) is _custom
    finally:
        signal.signal(signal.SIGINT, previous)


def test_trio_run_in_the_main_thread_after_a_blocking_call_keeps_its_ctrl_c(
    spy: Spy, default_sigint: None
) -> None:
    # trio installs its own SIGINT handler only over Python's default one; with
    # another in place a Ctrl-C raises in the middle of trio's run loop.
    seen: list[Any] = []

    async def main() -> None:
        seen.append(signal.getsignal(signal.SIGINT))
        signal.raise_signal(signal.SIGINT)
        await trio.sleep(30)  # trio delivers the Ctrl-C here, to the main task

    with connect(spy) as client:
        assert client.request("_t/echo", 1)["echo"] == 1
        assert len(spy.lends) == 1  # the main thread borrowed
        with pytest.raises(KeyboardInterrupt):
            trio.run(main)
        assert seen and seen[0] not in (signal.default_int_handler, _direct._SIGINT)
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
        assert client.request("_t/echo", 2)["echo"] == 2
        assert len(spy.lends) == 2
