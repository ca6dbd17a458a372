"""The reference ACP v2 agent: scripted, over stdio, for demos and tests.

Start it as a subprocess (``python -m acp_lite.testing.agent``, console script
``acp-lite-agent``); :func:`agent_command` builds the argv::

    from acp_lite.testing import agent_command, Script, Turn, Text
    argv = agent_command("tool_call_permission")
    argv = agent_command(script=Script(turns=[Turn(steps=[Text(text="hi")])]))

Scripts are documented in :mod:`acp_lite.testing.script`; the built-in
scenarios (``broken_*`` ones break one rule each, ``fault`` ones model a dying
or stuck process) in :mod:`acp_lite.testing.scenarios`. This package imports no trio and none of
the client, so the agent starts fast.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from acp_lite.testing._version import __version__ as __version__
from acp_lite.testing.scenarios import SCENARIOS
from acp_lite.testing.scenarios import get as scenario
from acp_lite.testing.script import (
    Background,
    Echo,
    Elicit,
    Exit,
    Fail,
    Flood,
    Hang,
    IgnoreCancel,
    IgnoreSigterm,
    Insert,
    Permission,
    Raw,
    Reject,
    Respond,
    Script,
    ScriptError,
    Sleep,
    Stderr,
    Step,
    Stop,
    Text,
    Turn,
    Update,
    WaitForCancel,
    WaitForPrompt,
    load_script,
)

if TYPE_CHECKING:
    from pathlib import Path  # annotations only: pathlib costs the agent's start-up time

    from acp_lite.testing.inprocess import InProcessAgent

__all__ = [
    "SCENARIOS",
    "Background",
    "Echo",
    "Elicit",
    "Exit",
    "Fail",
    "Flood",
    "Hang",
    "IgnoreCancel",
    "IgnoreSigterm",
    "InProcessAgent",
    "Insert",
    "Permission",
    "Raw",
    "Reject",
    "Respond",
    "Script",
    "ScriptError",
    "Sleep",
    "Stderr",
    "Step",
    "Stop",
    "Text",
    "Turn",
    "Update",
    "WaitForCancel",
    "WaitForPrompt",
    "agent_command",
    "load_script",
    "scenario",
]


def agent_command(
    scenario: str | None = None,
    *,
    script: Script | str | Path | None = None,
    count: int | None = None,
    args: Sequence[str] = (),
    python: str = sys.executable,
) -> list[str]:
    """The argv that starts the reference agent (no shell needed).

    ``scenario`` names a built-in scenario; ``script`` is a :class:`Script`
    (passed inline as JSON) or a path to a ``.json``/``.toml`` script; neither
    means the echo agent. ``count`` sizes a scenario; ``args`` are extra
    command-line options (``--page-size``, ``--linger``, ``--ignore-sigterm``).
    """
    argv = [python, "-m", "acp_lite.testing.agent"]
    if scenario is not None and script is not None:
        raise ValueError("pass either scenario or script, not both")
    if scenario is not None:
        argv += ["--scenario", scenario]
    elif isinstance(script, Script):
        argv += ["--script-json", script.to_json()]
    elif script is not None:
        argv += ["--script", str(script)]
    if count is not None:
        argv += ["--count", str(count)]
    return [*argv, *args]


def __getattr__(name: str) -> Any:
    # InProcessAgent is imported on first use: the agent process never needs it.
    if name == "InProcessAgent":
        from acp_lite.testing.inprocess import InProcessAgent

        return InProcessAgent
    raise AttributeError(f"module 'acp_lite.testing' has no attribute {name!r}")
