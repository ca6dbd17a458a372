"""The blocking facade: ``connect`` -> :class:`Client` -> :class:`Session` -> ``Turn``.

::

    import acp_lite
    with acp_lite.connect(["my-agent", "--stdio"], timeout=30) as client:
        session = client.new_session(cwd="/abs/dir")
        turn = session.run("hello")

Every name mirrors :mod:`acp_lite.aio` (``Client`` / ``AsyncClient``, ``Session`` /
``AsyncSession``), httpx style. The package holds the whole thread crossing: the
trio thread (``_portal``), the one-line mirrors (``_mirror``), plain requests run in
the caller's thread with the agent's pipe borrowed (``_direct``), and the in-memory
entry point (``_memory``). ``acp_lite.client`` re-exports the public names.
"""

from __future__ import annotations

from acp_lite.sync._client import Client, ClientClosed, Session
from acp_lite.sync._connect import StreamPair, connect, connect_streams
from acp_lite.sync._memory import connect_in_memory

__all__ = [
    "Client",
    "ClientClosed",
    "Session",
    "StreamPair",
    "connect",
    "connect_in_memory",
    "connect_streams",
]
