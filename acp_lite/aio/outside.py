"""Running a request coroutine in a blocking caller's thread, outside trio.

What the blocking facade (``acp_lite.sync``) uses to run the coroutine of a method
declared :func:`outside_safe` in the caller's own thread while the trio thread is
parked (``acp_lite.sync._direct`` holds the gate that ensures it):

* :func:`step` runs the coroutine on an :class:`OutsideTrio` path (built around the
  caller's :class:`Driver`) to the :class:`Parked` it yields when it waits for a
  response;
* the driver makes itself the parked request's waiter, and may borrow the
  connection's :class:`AgentPipe` (``Parked.outside.pipe``) and feed what it reads
  to :meth:`OutsideReading.receive`.

See :mod:`acp_lite.aio._outside` for how the connection writes and waits on each path.
"""

from acp_lite.aio._outside import (
    Driver,
    OutsideReading,
    OutsideTrio,
    Parked,
    is_outside_safe,
    outside_safe,
    step,
)
from acp_lite.aio._pipe import AgentPipe

__all__ = [
    "AgentPipe",
    "Driver",
    "OutsideReading",
    "OutsideTrio",
    "Parked",
    "is_outside_safe",
    "outside_safe",
    "step",
]
