"""The agent's stdout pipe, read by the trio thread or lent to one blocking caller.

A blocking call run in the caller's thread (``acp_lite.sync._direct``) would otherwise
sleep until the trio thread has read the response and woken it: two thread
wake-ups in a row, each tens of microseconds on a virtual machine. Instead the
caller *borrows* the pipe: it waits on the pipe itself and reads the response, so
one thread wakes, as on the async path.

Only one thread may wait on the pipe at a time, or every response wakes both. So
the trio reader does not wait on the pipe directly but on a private epoll instance
that holds it (an epoll descriptor is itself pollable): lending takes the pipe out
of that instance, so the trio thread is not woken by what the borrower reads, and
giving it back puts it in again (level-triggered: what arrived meanwhile wakes
the trio reader at once). Both happen while the borrower holds the gate, that is,
while no trio code runs, and every read happens under the gate too, so the bytes
reach the sans-IO core in the order the agent wrote them, whoever reads them.

Linux only (epoll); elsewhere :func:`lendable` returns the stream unchanged and
blocking calls wait for the trio thread as before.
"""

from __future__ import annotations

import os
import select

import trio

__all__ = ["AgentPipe", "lendable"]

_EPOLL = getattr(select, "epoll", None)
_SUPPORTED = _EPOLL is not None and hasattr(os, "eventfd")
"""Lending needs epoll (to take the pipe away from the trio thread) and eventfd
(the borrower's wake-up, pollable with the pipe)."""


def lendable(stream: trio.abc.ReceiveStream) -> trio.abc.ReceiveStream:
    """``stream`` as an :class:`AgentPipe` when it is a pipe that can be lent."""
    if _SUPPORTED and isinstance(stream, trio.lowlevel.FdStream):
        return AgentPipe(stream)
    return stream


class AgentPipe(trio.abc.ReceiveStream):
    """A :class:`trio.lowlevel.FdStream` (non-blocking) whose reading can be lent.

    The trio side uses it as a receive stream. A borrower, holding the gate, calls
    :meth:`lend`, then waits until :meth:`fileno` is readable, takes the gate and
    calls :meth:`read_lent`, and finally :meth:`give_back` (holding the gate).
    """

    def __init__(self, stream: trio.lowlevel.FdStream) -> None:
        assert _EPOLL is not None
        self._stream = stream
        self._fd = stream.fileno()
        self._ready = _EPOLL()  # holds the pipe while the trio thread reads it
        self._ready.register(self._fd, select.EPOLLIN)
        #: Set (by the trio thread) once the pipe is closed: nobody reads it again.
        self.closed = False
        #: Whether a borrower has it (the trio thread is then never woken by it).
        self.lent = False
        self._owe_checkpoint = False

    def fileno(self) -> int:
        """The pipe's descriptor (a borrower polls it)."""
        return self._fd

    # --- the trio side ------------------------------------------------------------

    async def receive_some(self, max_bytes: int | None = None) -> bytes:
        # The schedule point comes *before* the read, never between a read and its
        # return: the gate opens at every scheduler pass, and a borrower that got in
        # there would feed the bytes after these ones to the core before these.
        if self._owe_checkpoint:
            self._owe_checkpoint = False
            await trio.lowlevel.checkpoint()
        else:
            await trio.lowlevel.checkpoint_if_cancelled()
        waited = False
        while True:
            if self.closed:
                raise trio.ClosedResourceError("the agent's pipe was closed")
            if not self.lent:  # a borrower took it at that schedule point: wait
                try:
                    data = os.read(self._fd, max_bytes or 65536)
                except BlockingIOError:
                    pass
                except OSError as exc:
                    raise trio.BrokenResourceError(f"reading the agent's pipe: {exc}") from exc
                else:
                    # Data at once, no wait: the next call yields first, so that a
                    # flood does not keep other tasks from running.
                    self._owe_checkpoint = not waited
                    return data
            # Raises ClosedResourceError if aclose() runs meanwhile.
            await trio.lowlevel.wait_readable(self._ready.fileno())
            waited = True

    async def aclose(self) -> None:
        if not self.closed:
            self.closed = True
            trio.lowlevel.notify_closing(self._ready.fileno())
            self._ready.close()
        await self._stream.aclose()

    # --- a borrower (holding the gate: no trio code runs meanwhile) ----------------

    def lend(self) -> bool:
        """Take the pipe away from the trio thread; whether it was free to lend."""
        if self.lent or self.closed:
            return False
        self._ready.unregister(self._fd)
        self.lent = True
        return True

    def read_lent(self) -> bytes | None:
        """What the pipe holds now (``b""`` at its end); ``None`` when nothing is there
        (or it was closed: then nothing is read from a descriptor no longer ours)."""
        if self.closed:
            return None
        try:
            return os.read(self._fd, 256 * 1024)
        except BlockingIOError:
            return None
        except OSError:
            return b""  # the trio reader meets the same error and reports it

    def give_back(self) -> None:
        """Let the trio thread read again (what arrived meanwhile wakes it at once)."""
        if not self.lent:
            return
        self.lent = False
        if not self.closed:
            self._ready.register(self._fd, select.EPOLLIN)
