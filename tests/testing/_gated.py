"""The "while busy" scenarios with a deterministic window, for tests that send a
second prompt while the first one's work runs.

The named scenarios ``steering`` and ``queueing`` make each turn slow
(``Sleep(0.3)``) so that a person or a client can prompt again during it; a test
that relies on that window has to wait the sleeps out, and flakes when a loaded
machine needs longer than the window. :func:`gated` is the same script, except
that its first turn holds its work until the second prompt arrives
(``WaitForPrompt``) and later turns do not wait. The named scenarios themselves
(sleeps included) stay checked end to end in ``test_conformance.py``
(``test_conforming_scenario_has_no_violation[steering]`` / ``[queueing]``), and
``test_gated_is_the_named_scenario_but_the_wait`` pins what :func:`gated` changes.
"""

from __future__ import annotations

from typing import Any

import attrs

from acp_lite.testing import Script, Sleep, WaitForPrompt, scenario

from ._agentproc import RawAgent

#: The scenarios whose window :func:`gated` makes deterministic.
GATED = ("queueing", "steering")


def gated(name: str) -> Script:
    """The scenario ``name`` with its first turn's ``Sleep`` replaced by a
    ``WaitForPrompt`` and its later turns' sleeps dropped."""
    script = scenario(name)
    (turn,) = script.turns  # one turn, repeated for every prompt
    first = [WaitForPrompt() if isinstance(s, Sleep) else s for s in turn.steps]
    later = [s for s in turn.steps if not isinstance(s, Sleep)]
    turns = [attrs.evolve(turn, steps=first), attrs.evolve(turn, steps=later)]
    return attrs.evolve(script, turns=turns)


def is_final_idle(message: Any) -> bool:
    """An idle ``state_update`` that ends foreground work (it has a stop reason)."""
    if message.get("method") != "session/update":
        return False
    update = message["params"]["update"]
    return bool(update.get("state") == "idle" and "stopReason" in update)


def two_prompts(agent: RawAgent, sid: str, first: str = "first") -> int:
    """A second prompt while the first one's work runs; until the work of both ended.

    Returns the first prompt's request id.
    """
    rid = agent.prompt(sid, first)
    agent.response(rid)
    second = agent.response(agent.prompt(sid, "second"))
    agent.wait_for(is_final_idle, since=agent.messages.index(second))
    return rid
