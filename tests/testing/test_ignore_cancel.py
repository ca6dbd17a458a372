"""The ``ignore_cancel`` step (a broken agent, ``broken_cancel_not_confirmed``): it
reads ``session/cancel`` and goes on once it has answered a request sent after the
cancel, so its traffic proves that the cancel was read (issue 24 item 12)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from acp_lite.testing import IgnoreCancel, Script, Sleep, Text, Turn, load_script

from ._agentproc import RawAgent

Spawn = Callable[..., RawAgent]


def stop_of(update: dict[str, object]) -> bool:
    return "stopReason" in update


def test_it_goes_on_only_after_answering_a_request_sent_after_the_cancel(spawn: Spawn) -> None:
    script = Script(turns=[Turn(steps=[IgnoreCancel(), Text(text="went on")])])
    agent = spawn(script=script)
    sid = agent.start_session()
    agent.response(agent.prompt(sid, "work"))
    agent.notify("session/cancel", {"sessionId": sid})
    rid = agent.request("_acp_lite/sync", {})
    idle = agent.wait_for(lambda m: m.get("method") == "session/update"
                          and stop_of(m["params"]["update"]))  # fmt: skip
    assert idle["params"]["update"]["stopReason"] == "end_turn"  # as if not cancelled
    answered = next(i for i, m in enumerate(agent.messages) if m.get("id") == rid)
    assert answered < agent.messages.index(idle)  # the answer first: the proof
    assert "went on" in json.dumps(agent.updates(sid))


def test_without_a_later_request_it_goes_on_at_its_timeout(spawn: Spawn) -> None:
    script = Script(turns=[Turn(steps=[IgnoreCancel(timeout=0.01), Text(text="went on")])])
    agent = spawn(script=script)
    sid = agent.start_session()
    agent.response(agent.prompt(sid, "work"))
    idle = agent.wait_for(lambda m: m.get("method") == "session/update"
                          and stop_of(m["params"]["update"]))  # fmt: skip
    assert idle["params"]["update"]["stopReason"] == "end_turn"
    assert "went on" in json.dumps(agent.updates(sid))


def test_scripts_name_it_ignore_cancel(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    path.write_text(json.dumps({"turns": [{"steps": [{"type": "ignore_cancel", "timeout": 2}]}]}))
    (turn,) = load_script(path).turns
    assert turn.steps == [IgnoreCancel(timeout=2)]


def test_a_cancel_ends_no_step_before_it(spawn: Spawn) -> None:
    script = Script(turns=[Turn(steps=[Sleep(seconds=30), IgnoreCancel(), Text(text="went on")])])
    agent = spawn(script=script)
    sid = agent.start_session()
    agent.response(agent.prompt(sid, "work"))
    agent.notify("session/cancel", {"sessionId": sid})  # cuts the sleep short, no more
    agent.request("_acp_lite/sync", {})
    idle = agent.wait_for(lambda m: m.get("method") == "session/update"
                          and stop_of(m["params"]["update"]))  # fmt: skip
    assert idle["params"]["update"]["stopReason"] == "end_turn"
    assert "went on" in json.dumps(agent.updates(sid))
