"""Faults of the reference agent: one broken rule each (see :mod:`._base`).

``acp-lite-agent --fault NAME`` (repeatable) and ``InProcessAgent(faults=[NAME])``
apply them; ``acp-lite-agent --list-faults`` lists them. The modules below hold the
faults by area, each named after the requirement it breaks.
"""

from __future__ import annotations

from acp_lite.testing.faults import v1, v2_init, v2_prompt, v2_rpc, v2_session  # noqa: F401
from acp_lite.testing.faults._base import FAULTS, Fault, FaultState, FaultWire, fault, get

__all__ = ["FAULTS", "Fault", "FaultState", "FaultWire", "fault", "get"]
