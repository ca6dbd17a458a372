"""The blocking client's public names, where they have always been importable
(they live in :mod:`acp_lite.sync`)."""

from __future__ import annotations

from acp_lite.sync import Client, ClientClosed, Session, StreamPair, connect, connect_streams

__all__ = ["Client", "ClientClosed", "Session", "StreamPair", "connect", "connect_streams"]
