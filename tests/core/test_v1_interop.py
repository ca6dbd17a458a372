"""v1 translator bugs found by the interop tests against the official SDKs
(``tests/interop/test_sdk_v1_agents.py``), each replayed here with the exact wire
lines the SDK agent wrote, bytes only."""

from __future__ import annotations

from tests.core.test_v1 import chunk, prompt, result, update, v1_conn


def test_second_turn_has_no_background_violation() -> None:
    """Every synthesized state carries ``background: []``: the first idle reported an
    (empty) background list, so a later ``running`` without one broke the spec's MUST
    ("include background on every state_update") and the model flagged every turn
    after the first with ``background-omitted``."""
    conn = v1_conn()
    for text in ("one", "two", "three"):
        entry, _, _ = prompt(conn, text)
        conn.receive_data(update("s1", chunk(text)) + result(entry.id, {"stopReason": "end_turn"}))
    model = conn.sessions["s1"].model
    assert model.completions == 3
    states = [e.raw for e in model.events if e.tag == "state_update"]
    assert [s["state"] for s in states] == ["running", "idle"] * 3
    assert all(s["background"] == [] for s in states)
    assert model.violations == []
