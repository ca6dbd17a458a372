"""Probes of JSON-RPC 2.0 and extensibility, for v2 agents.

Written from JSON-RPC 2.0 (sections 4-6) and ``docs-v2-draft/extensibility.mdx``.
"""

from __future__ import annotations

from acp_lite.conformance.requirements import Requirement, Tier
from acp_lite.probes._context import ProbeContext
from acp_lite.probes._registry import probe

__all__: list[str] = []

_EXT = "docs-v2-draft/extensibility.mdx"
_RPC = "JSON-RPC 2.0"


def _req(
    rid: str, tier: Tier, summary: str, spec: str, capability: str | None = None
) -> Requirement:
    return Requirement(rid, tier, summary, spec, kind="probe", version="v2", capability=capability)


@probe(
    _req(
        "ACP-RPC-001",
        "mandatory",
        "A request for an unknown `_`-prefixed method is answered with error -32601 "
        "(method not found).",
        f"{_EXT} (Custom requests); {_RPC} section 5.1",
    )
)
def unknown_extension_method(ctx: ProbeContext) -> None:
    line = ctx.call("_acp_lite_probe/no_such_method", {"x": 1})
    error = line.obj.get("error")
    ctx.check(isinstance(error, dict), "the unknown method was not answered with an error", line)
    assert isinstance(error, dict)
    ctx.check(
        error.get("code") == -32601,
        f"the unknown method got error code {error.get('code')!r}, not -32601",
        line,
    )


@probe(
    _req(
        "ACP-RPC-002",
        "mandatory",
        "An unknown `_`-prefixed notification is ignored: no response, and the "
        "connection keeps working.",
        f"{_EXT} (Custom notifications: SHOULD ignore unrecognized notifications); "
        f"{_RPC} section 4.1",
    )
)
def unknown_extension_notification(ctx: ProbeContext) -> None:
    sent = ctx.peer.notify("_acp_lite_probe/no_such_notification", {"x": 1})
    after = ctx.call("_acp_lite_probe/no_such_method", {})
    for line in ctx.peer.received(sent.index):
        if line.is_response and line.obj.get("id") is None:
            ctx.fail("the agent answered a notification", sent, line)
    ctx.check(after.is_response, "the connection stopped answering after the notification", sent)
