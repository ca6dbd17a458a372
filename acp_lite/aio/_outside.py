"""Running a request coroutine outside trio: what the connection needs to know.

The blocking facade runs the coroutine of a plain request method (for example
``AsyncClient.request``) in the *caller's* thread while the trio thread is parked
in its I/O wait (``acp_lite.sync._direct``: a gate the trio thread holds whenever it
runs, so no trio code runs meanwhile). The caller then writes the request to the
agent's pipe itself and reads the response itself from the borrowed pipe
(:mod:`acp_lite.aio._pipe`), or else waits for the trio thread to read it: no
thread crossing per call, or one, instead of three.

Such a coroutine must not call trio. The connection's two trio-dependent steps ask
:data:`OUTSIDE` first:

* ``Connection.flush`` tells the driver it is about to write
  (:meth:`Outside.sending`: it borrows the agent's pipe then, see
  :mod:`acp_lite.aio._pipe`), writes what the pipe takes at once and hands the
  rest to the trio thread with :meth:`Outside.post` (the trio thread's next flush
  writes it before anything newer, so the byte order is kept);
* ``Connection.wait_response`` yields a :class:`Parked` value instead of waiting
  on a trio event, and the driver becomes the request's ``waiter``. When the
  response arrives, the reader (the borrower, or the trio thread's) calls the
  waiter, which resumes the
  coroutine there (with :data:`OUTSIDE` set again, so a further request parks
  too); after the timeout, or on Ctrl-C, the caller's thread resumes it instead
  (holding the gate; Ctrl-C is thrown in).
"""

from __future__ import annotations

import types
from collections.abc import Callable, Generator
from contextvars import ContextVar
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from acp_lite.aio._connection import Connection
    from acp_lite.core import PendingRequest

__all__ = ["OUTSIDE", "Outside", "Parked", "park"]


class Outside(Protocol):
    """The driver of a coroutine running outside the trio thread."""

    def post(self, fn: Callable[[], object]) -> None:
        """Run ``fn()`` soon on the trio thread (never raises)."""

    def sending(self, connection: Connection) -> None:
        """The coroutine is about to write to ``connection``'s agent."""


OUTSIDE: ContextVar[Outside | None] = ContextVar("acp_lite_outside", default=None)
"""Set (in the caller's thread) while a driver runs a coroutine there."""


class Parked:
    """What a coroutine run outside trio yields: wait for ``entry`` to be answered.

    The driver makes itself the entry's ``waiter`` (its ``set()`` is called on the
    trio thread when the response arrives, or when the connection is lost) and
    resumes the coroutine when ``entry.done`` or after ``timeout`` seconds.
    """

    __slots__ = ("connection", "entry", "timeout")

    def __init__(self, entry: PendingRequest, timeout: float, connection: Connection) -> None:
        self.entry = entry
        self.timeout = timeout
        #: The connection that sent it (the driver may borrow its pipe meanwhile).
        self.connection = connection


@types.coroutine
def park(
    entry: PendingRequest, timeout: float, connection: Connection
) -> Generator[Parked, None, None]:
    """Await this (outside trio only) to hand the wait for ``entry`` to the driver."""
    yield Parked(entry, timeout, connection)
