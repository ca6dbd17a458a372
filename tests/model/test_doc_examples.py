"""The spec's own JSON examples, fed literally, in document order."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from acp_lite.model import SessionModel

from .helpers import decode

DOCS = Path(__file__).resolve().parents[1] / "data" / "spec" / "docs-v2-draft"


def session_updates(page: str) -> list[dict[str, Any]]:
    """The ``session/update`` notifications among the page's JSON code blocks."""
    text = (DOCS / page).read_text(encoding="utf-8")
    found = []
    for block in re.findall(r"```json[^\n]*\n(.*?)```", text, flags=re.S):
        msg = json.loads(block)
        if isinstance(msg, dict) and msg.get("method") == "session/update":
            found.append(msg["params"])
    return found


def feed_params(m: SessionModel, params: list[dict[str, Any]]) -> None:
    for p in params:
        m.apply(decode(p["update"]), raw=p["update"], session_id=p["sessionId"])


def test_prompt_lifecycle_examples_build_the_expected_picture() -> None:
    params = session_updates("prompt-lifecycle.mdx")
    assert len(params) == 14
    m = SessionModel("sess_abc123def456")
    m.submit(2, [{"type": "text", "text": "Can you analyze this code for potential issues?"}])
    m.prompt_accepted(2, "msg_user_8f7a1")  # v2: the response carries the messageId
    feed_params(m, params)
    assert [(e.kind, e.id) for e in m.timeline] == [
        ("user_message", "msg_user_8f7a1"),
        ("plan", "plan-1"),
        ("agent_message", "msg_agent_c42b9"),
        ("agent_thought", "msg_thought_a12"),
        ("tool_call", "call_001"),
        ("compaction", "cmp_001"),
    ]
    assert m.text() == (
        "I'll analyze your code for potential issues. Let me examine it... Let me examine it..."
    )
    assert m.entity("user_message", "msg_user_8f7a1").text.startswith("Can you analyze")
    assert [e.priority for e in m.entity("plan", "plan-1").entries] == [
        "high",
        "medium",
        "medium",
        "low",
    ]
    call = m.entity("tool_call", "call_001")
    assert call.status == "completed" and call.title == "Analyzing Python code"
    assert call.text.startswith("Analysis complete:") and len(call.content) == 1
    assert [n.update.title for n in m.notices] == ["MCP server unavailable"]
    assert m.entity("compaction", "cmp_001").status == "in_progress"
    assert m.usage is not None and (m.usage.used, m.usage.size) == (53000, 200000)
    assert (m.state, m.stop_reason, m.completions) == ("idle", "end_turn", 1)
    sub = m.submission(2)
    assert sub.done and sub.stop_reason == "end_turn"
    assert m.text(sub).startswith("I'll analyze")
    assert list(m.violations) == []
    assert [e.raw for e in m.events] == [p["update"] for p in params]


def test_tool_call_and_plan_page_examples_apply_cleanly() -> None:
    for page in ("tool-calls.mdx", "agent-plan.mdx", "session-setup.mdx"):
        params = session_updates(page)
        assert params, page
        m = SessionModel()
        feed_params(m, params)
        assert len(m.events) == len(params)
        assert m.timeline, page
        assert [v.rule for v in m.violations] == [], page
