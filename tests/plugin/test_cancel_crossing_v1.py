"""``v1-cancel-not-cancelled`` fires only on what the trace proves: an ``end_turn``
that arrives after ``session/cancel`` may have crossed it on the wire (issue 24 item
12: cancel sent at 1.06654 s, the answer read at 1.06694 s), however late it comes.
What proves that the agent read the cancel: tests/plugin/test_cancel_proof.py."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_acp.conformance import check_transcript


def _v1_records(cancel_at: float, answer_at: float) -> list[dict[str, Any]]:
    def rec(direction: str, t: float, msg: dict[str, Any]) -> dict[str, Any]:
        return {"dir": direction, "t": t, "msg": {"jsonrpc": "2.0", **msg}}

    prompt = {"method": "session/prompt", "params": {"sessionId": "s", "prompt": []}}
    return [
        rec("send", 0.0, {"id": 0, "method": "initialize", "params": {"protocolVersion": 1}}),
        rec("recv", 0.1, {"id": 0, "result": {"protocolVersion": 1, "agentCapabilities": {}}}),
        rec(
            "send",
            0.2,
            {"id": 1, "method": "session/new", "params": {"cwd": "/", "mcpServers": []}},
        ),
        rec("recv", 0.3, {"id": 1, "result": {"sessionId": "s"}}),
        rec("send", 1.0, {"id": 2, **prompt}),
        rec("send", cancel_at, {"method": "session/cancel", "params": {"sessionId": "s"}}),
        rec("recv", answer_at, {"id": 2, "result": {"stopReason": "end_turn"}}),  # 6
        # A later prompt, not cancelled, may end as it likes.
        rec("send", answer_at + 1, {"id": 3, **prompt}),
        rec("recv", answer_at + 5, {"id": 3, "result": {"stopReason": "end_turn"}}),
    ]


@pytest.mark.parametrize(
    ("cancel_at", "answer_at", "expected"),
    [
        (1.06654, 1.06694, []),  # crossed on the wire: end_turn is the truth
        (1.06654, 1.5, []),
        (1.06654, 3.0, []),  # late, but nothing shows that the agent had read the cancel
    ],
)
def test_no_time_proves_that_the_cancel_was_ignored(
    cancel_at: float, answer_at: float, expected: list[tuple[str, int]]
) -> None:
    found = check_transcript(_v1_records(cancel_at, answer_at), ended=True)
    assert [(v.rule, v.entry_index) for v in found] == expected
