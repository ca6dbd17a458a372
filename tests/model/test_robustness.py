"""Whatever an agent sends, applying it never raises and nothing is lost."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis_budget import examples

from acp_lite.model import SessionModel

from .helpers import decode

TAGS = [
    "user_message_chunk", "user_message", "agent_message_chunk", "agent_message",
    "agent_thought_chunk", "agent_thought", "state_update", "tool_call_content_chunk",
    "tool_call_update", "terminal_update", "terminal_output_chunk", "plan_update",
    "plan_removed", "available_commands_update", "config_option_update",
    "session_info_update", "usage_update", "notice", "compaction_update",
    "compaction_summary_chunk", "subagent_update", "session_message",
    "session_message_chunk", "_custom",
]  # fmt: skip
KEYS = [
    "messageId", "content", "_meta", "state", "stopReason", "background", "error",
    "toolCallId", "terminalId", "status", "title", "kind", "data", "output", "exitStatus",
    "plan", "planId", "compactionId", "summary", "sessionId", "type", "text", "used", "size",
    "cost", "usage", "senderSessionId", "entries",
]  # fmt: skip

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.sampled_from(["", "a", "idle", "running", "text", "terminal", "tool_call", "end_turn",
                     "error", "completed", "_x", "aGk="]),
)  # fmt: skip
json_values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(st.sampled_from(KEYS), inner, max_size=4),
    ),
    max_leaves=12,
)
ids = st.sampled_from(["a", "b"])
blocks = st.one_of(
    st.builds(lambda t: {"type": "text", "text": t}, st.sampled_from(["x", "y"])),
    st.just({"type": "image", "data": "AA==", "mimeType": "image/png"}),
    st.just({"type": "_custom", "v": 1}),
)
tool_items = st.one_of(
    st.builds(lambda b: {"type": "content", "content": b}, blocks),
    st.builds(lambda i: {"type": "terminal", "terminalId": i}, ids),
)
bg_items = st.one_of(
    st.builds(lambda i: {"type": "terminal", "terminalId": i}, ids),
    st.builds(lambda i: {"type": "tool_call", "toolCallId": i}, ids),
    st.builds(lambda i: {"type": "subagent", "sessionId": i}, ids),
    st.just({"type": "_cron"}),
)
b64 = st.sampled_from(["aGk=", "", "!!"])
STATES = ["idle", "running", "requires_action", "unknown", "_x", "weird"]
REASONS = ["end_turn", "cancelled", "error", "_mine", "odd"]


def shaped(tag: str, required: dict[str, Any], **optional: Any) -> Any:
    """A well-formed update of ``tag`` with some optional fields."""
    return st.builds(
        lambda req, opt: {"sessionUpdate": tag, **req, **opt},
        st.fixed_dictionaries(required),
        st.fixed_dictionaries({}, optional=optional),
    )


message_tags = ["user_message", "agent_message", "agent_thought", "session_message"]
well_formed = st.one_of(
    *[shaped(f"{t}_chunk", {"messageId": ids, "content": blocks}) for t in message_tags],
    *[
        shaped(t, {"messageId": ids}, content=st.one_of(st.none(), st.lists(blocks, max_size=2)),
               _meta=st.one_of(st.none(), st.just({"k": 1})))
        for t in message_tags
    ],
    shaped("state_update", {"state": st.sampled_from(STATES)},
           stopReason=st.one_of(st.none(), st.sampled_from(REASONS)),
           background=st.one_of(st.none(), st.lists(bg_items, max_size=3), st.just("bad")),
           error=st.just({"code": 1, "message": "m"})),
    shaped("tool_call_update", {"toolCallId": ids},
           status=st.one_of(st.none(), st.sampled_from(["pending", "in_progress", "completed",
                                                        "failed", "_s"])),
           content=st.one_of(st.none(), st.lists(tool_items, max_size=2)), title=st.just("t")),
    shaped("tool_call_content_chunk", {"toolCallId": ids, "content": tool_items}),
    shaped("terminal_update", {"terminalId": ids},
           output=st.one_of(st.none(), st.builds(lambda d: {"data": d}, b64)),
           exitStatus=st.one_of(st.none(), st.just({"exitCode": 1}))),
    shaped("terminal_output_chunk", {"terminalId": ids, "data": b64}),
    shaped("plan_update", {"plan": st.one_of(
        st.builds(lambda i: {"type": "items", "planId": i, "entries": []}, ids),
        st.builds(lambda i: {"type": "_x", "planId": i}, ids),
        st.just({"type": "_x"}),
    )}),
    shaped("plan_removed", {"planId": ids}),
    shaped("compaction_update", {"compactionId": ids, "status": st.sampled_from(
        ["in_progress", "completed", "_z"])}, summary=st.one_of(st.none(), st.lists(blocks))),
    shaped("compaction_summary_chunk", {"compactionId": ids, "content": blocks}),
    shaped("subagent_update", {"sessionId": ids},
           state=st.one_of(st.none(), st.builds(lambda s: {"state": s}, st.sampled_from(STATES)))),
    shaped("usage_update", {"used": st.integers(0, 9), "size": st.integers(0, 9)},
           cost=st.one_of(st.none(), st.just({"amount": 1.5, "currency": "USD"}))),
    shaped("notice", {"severity": st.sampled_from(["info", "_loud"]), "title": st.just("T")}),
)  # fmt: skip
noise = st.builds(
    lambda tag, fields: {**fields, "sessionUpdate": tag},
    st.sampled_from(TAGS),
    st.dictionaries(st.sampled_from(KEYS), json_values, max_size=5),
)
updates = st.one_of(well_formed, well_formed, well_formed, noise)


@settings(max_examples=examples(4))
@given(st.lists(updates, max_size=12), st.lists(st.booleans(), max_size=12))
def test_arbitrary_updates_never_raise_and_are_all_logged(
    payloads: list[dict[str, Any]], flags: list[bool]
) -> None:
    m = SessionModel("s")
    m.submit(1, None)
    for i, d in enumerate(payloads):
        m.apply(decode(d), raw=d, replayed=flags[i] if i < len(flags) else False)
        if i == 2:
            m.prompt_accepted(1, "a")
            m.cancel_sent()
    assert [e.raw for e in m.events] == payloads
    m.finish()
    # Every read works on whatever was built.
    m.text()
    for ent in m.timeline:
        getattr(ent, "text", None)
        getattr(ent, "output", None)
    m.abandoned()
    m.live_entities()
    assert m.is_quiet in (True, False)
    for v in m.violations:
        assert v.event_index is None or 0 <= v.event_index < len(payloads)
