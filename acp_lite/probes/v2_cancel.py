"""Probes of v2 cancellation: ``session/cancel`` confirmed by an idle ``cancelled``,
and ``$/cancel_request`` of a prompt not inserted yet.

Written from the newest Prompt Lifecycle text (``seeds/000``, "Cancellation",
which wins over the draft docs), ``docs-v2-draft/prompt-lifecycle.mdx`` and
``docs-v2-draft/cancellation.mdx``. Both probes need work that outlasts a cancel:
they ask for a long answer and accept that an agent may finish it first (then
there is nothing to judge, and the probe passes).
"""

from __future__ import annotations

from acp_lite.probes._context import ProbeContext
from acp_lite.probes._peer import Line
from acp_lite.probes._registry import probe, probe_requirement
from acp_lite.probes._v2_prompt_helpers import (
    ACTIVE,
    _is_state,
    _message_id,
    _response,
    _send_prompt,
    _session_updates,
    _update,
)

__all__: list[str] = []

_LC = "seeds/000 Prompt Lifecycle"
_DOC = "docs-v2-draft/prompt-lifecycle.mdx"
_CANCEL = "docs-v2-draft/cancellation.mdx"
REQUEST_CANCELLED = -32800
#: A request sent after the cancel: its answer shows the agent read the cancel.
AFTER_CANCEL = "_acp_lite_probe/after_cancel"
#: Asks for work long enough to be cancelled while it runs.
LONG_PROMPT = "Please count slowly from 1 to 500, one number per line, explaining each number."

_req = probe_requirement


def _idle_after(ctx: ProbeContext, sid: str, since: int) -> Line:
    """The first idle of ``sid`` from ``since`` on (waits for it)."""
    for line in _session_updates(ctx, sid, since):
        if _is_state(_update(line), "idle"):
            return line
    return ctx.wait_idle(sid, since=since)


@probe(
    _req(
        "ACP-CANCEL-001",
        "mandatory",
        "After session/cancel during foreground work, the Agent MUST send an idle "
        "state_update with the cancelled stop reason (not error, and not end_turn once "
        "it has read the cancel).",
        f"{_LC} (Cancellation); {_DOC} (Cancellation)",
    )
)
def cancel_confirmed_by_idle_cancelled(ctx: ProbeContext) -> None:
    sid = ctx.new_session()
    since = ctx.peer.mark
    request_id, _ = _send_prompt(ctx, sid, LONG_PROMPT)
    active = ctx.wait_update(
        sid, lambda u: _is_state(u, *ACTIVE), since=since, what="the work reported running"
    )
    cancel = ctx.peer.notify("session/cancel", {"sessionId": sid})
    # Messages are read in order: once the agent answers a request sent after the
    # cancel, it has read the cancel, and work still running then must end cancelled.
    read = ctx.call(AFTER_CANCEL, {})
    _response(ctx, request_id)
    idle = _idle_after(ctx, sid, active.index)
    reason = _update(idle).get("stopReason")
    if idle.index < read.index and reason == "end_turn":
        return  # the work finished before the agent read the cancel
    ctx.check(
        reason == "cancelled",
        f"the cancelled work ended with stopReason {reason!r}, not 'cancelled'",
        cancel,
        read,
        idle,
    )


@probe(
    _req(
        "ACP-CANCEL-002",
        "mandatory",
        "A `$/cancel_request` for a session/prompt not inserted yet gets exactly one "
        "response: error -32800 (Request Cancelled), or a success with its messageId "
        "if it was inserted first.",
        f"{_CANCEL} ($/cancel_request); {_LC} (Prompts that are never inserted)",
    )
)
def cancel_request_of_a_held_prompt(ctx: ProbeContext) -> None:
    sid = ctx.new_session()
    since = ctx.peer.mark
    first, _ = _send_prompt(ctx, sid, LONG_PROMPT)
    ctx.wait_update(
        sid, lambda u: _is_state(u, *ACTIVE), since=since, what="the work reported running"
    )
    second, sent = _send_prompt(ctx, sid, "a second prompt, to be withdrawn")
    withdraw = ctx.peer.notify("$/cancel_request", {"requestId": second})
    response = _response(ctx, second, "the withdrawn session/prompt")
    error = response.obj.get("error")
    if isinstance(error, dict):
        ctx.check(
            error.get("code") == REQUEST_CANCELLED,
            f"the withdrawn prompt got error code {error.get('code')!r}, not -32800",
            withdraw,
            response,
        )
    else:
        _message_id(ctx, response)
    ctx.peer.notify("session/cancel", {"sessionId": sid})
    _response(ctx, first)
    ctx.peer.settle(0.2, withdraw.index)  # time for a second answer, if one comes
    answers = [
        line
        for line in ctx.peer.received(sent.index)  # an answer may come before the withdrawal
        if line.is_response and line.obj.get("id") == second
    ]
    ctx.check(len(answers) == 1, f"the withdrawn prompt got {len(answers)} responses", *answers)
