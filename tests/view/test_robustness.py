"""Whatever the lines hold, the timeline is built and the page rendered, escaped."""

from __future__ import annotations

from html.parser import HTMLParser
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis_budget import examples

from acp_lite.view.html import render_page
from acp_lite.view.timeline import build_timeline
from acp_lite.view.wire import WireLine

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12)
    | st.sampled_from(["<script>x</script>", "https://e.example/", "\ud800", '"><img onerror=1>']),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=8,
)
KINDS = [
    "agent_message_chunk",
    "agent_thought_chunk",
    "user_message_chunk",
    "user_message",
    "agent_message",
    "compaction_summary_chunk",
    "tool_call",
    "tool_call_update",
    "tool_call_content_chunk",
    "plan",
    "plan_update",
    "plan_removed",
    "state_update",
    "usage_update",
    "notice",
    "<b>odd</b>",
]
FIELDS = [
    "content",
    "messageId",
    "toolCallId",
    "status",
    "title",
    "kind",
    "entries",
    "plan",
    "planId",
    "state",
    "stopReason",
    "error",
    "background",
    "compactionId",
]
METHODS = [
    "initialize",
    "session/prompt",
    "session/request_permission",
    "elicitation/create",
    "session/cancel",
    "<i>m</i>",
]
ids = st.integers(0, 3) | st.sampled_from(["a", None])
updates = st.fixed_dictionaries(
    {"sessionUpdate": st.sampled_from(KINDS)},
    optional={k: json_values for k in FIELDS}
    | {
        "content": st.fixed_dictionaries({"type": st.just("text"), "text": st.text(max_size=8)})
        | json_values
    },
)
messages = st.one_of(
    st.builds(
        lambda u, s: {
            "jsonrpc": "2.0",
            "method": "session/update",
            "params": {"sessionId": s, "update": u},
        },
        updates,
        st.sampled_from(["s-1", "s-2"]) | json_values,
    ),
    st.builds(
        lambda i, m, p: {"jsonrpc": "2.0", "id": i, "method": m, "params": p},
        ids,
        st.sampled_from(METHODS),
        json_values,
    ),
    st.builds(lambda i, r: {"jsonrpc": "2.0", "id": i, "result": r}, ids, json_values),
    st.builds(lambda i, e: {"jsonrpc": "2.0", "id": i, "error": e}, ids, json_values),
    json_values,
)
lines = st.lists(
    st.tuples(st.sampled_from(["send", "recv"]), messages | st.lists(messages, max_size=3)),
    max_size=25,
)


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.attrs: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.attrs.extend(k for k, _ in attrs)


@settings(max_examples=examples(3))
@given(lines)
def test_any_lines_render(raw: list[tuple[str, Any]]) -> None:
    wire = [WireLine(i, d, i * 0.01, m) for i, (d, m) in enumerate(raw)]  # type: ignore[arg-type]
    timeline = build_timeline(wire)
    assert sum(1 for _ in timeline.items) >= 0
    page = render_page([timeline], "<t>")
    parser = _Tags()
    parser.feed(page)
    assert parser.tags.count("script") == 1
    assert "img" not in parser.tags and "b" not in parser.tags and "i" not in parser.tags
    assert not [a for a in parser.attrs if a.startswith("on")]
    page.encode("utf-8", errors="replace")
