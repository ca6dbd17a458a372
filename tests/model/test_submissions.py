"""Submissions vs user messages (spec 000: "Prompt accepted", "Insertion and ordering")."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence

import pytest

from acp_lite.model import SessionModel

from .helpers import chunk, feed, idle, message, rules, state

Step = Callable[[SessionModel], None]


def respond(m: SessionModel) -> None:
    m.prompt_accepted(7, "u1")


STEPS: dict[str, Step] = {
    "response": respond,
    "user_message": lambda m: feed(m, message("u1", ["hello"], kind="user_message")),
    "running": lambda m: feed(m, state("running")),
    "idle": lambda m: feed(m, idle("end_turn")),
}


def run(order: Sequence[str]) -> SessionModel:
    m = SessionModel("s")
    m.submit(7, [{"type": "text", "text": "hello"}])
    for name in order:
        STEPS[name](m)
    return m


def expected_done(order: Sequence[str]) -> bool:
    """Done iff the idle (which ends work: it carries a new stop reason) follows the user
    message, or -- the fallback for a missing echo -- follows the response."""
    pos = {name: i for i, name in enumerate(order)}
    return pos["user_message"] < pos["idle"] or pos["response"] < pos["idle"]


def check_reconciled(m: SessionModel, order: Sequence[str]) -> None:
    sub = m.submission(7)
    # The same final picture whatever the order: one user message, linked, inserted.
    assert (sub.status, sub.message_id) == ("inserted", "u1")
    assert sub.user_message is m.entity("user_message", "u1")
    assert m.entities("user_message") == [m.entity("user_message", "u1")]
    assert sub.first_event_index is not None
    assert sub.done is expected_done(order)
    if sub.done:
        assert sub.stop_reason == "end_turn"
        idles = [e.index for e in m.events if getattr(e.update, "state", None) == "idle"]
        assert sub.end_event_index == idles[0]
    # The echo came in every order (possibly after the idle, which the spec allows):
    # nothing to report, not even at the end of the session.
    assert rules(m) == []
    assert m.finish() == [] and rules(m) == []


ORDERS = list(itertools.permutations(STEPS))


@pytest.mark.parametrize("order", ORDERS, ids=["-".join(o) for o in ORDERS])
def test_every_order_of_response_message_running_idle_reconciles(order: tuple[str, ...]) -> None:
    check_reconciled(run(order), order)


@pytest.mark.parametrize("noise", range(4))
def test_orders_with_noise_reconcile_identically(noise: int) -> None:
    """Agent output and repeated snapshots anywhere do not change the reconciliation.

    Every order (24) for each amount of noise: the space is small enough to cover whole."""
    for order in ORDERS:
        m = SessionModel("s")
        m.submit(7, None)
        for i, name in enumerate(order):
            if i < noise:
                noise_updates = (
                    chunk(f"a{i}", "out"),
                    {"sessionUpdate": "usage_update", "used": i, "size": 9},
                )
                feed(m, *noise_updates)
            STEPS[name](m)
        try:
            check_reconciled(m, order)
        except AssertionError as exc:
            raise AssertionError(f"order {'-'.join(order)}: {exc}") from exc


def test_done_is_judged_from_events_already_received_when_response_lands() -> None:
    m = SessionModel("s")
    sub = m.submit(1, None)
    feed(m, state("running"), message("u1", ["hi"], kind="user_message"), chunk("a", "answer"))
    feed(m, idle("end_turn"))
    assert sub.status == "pending" and not sub.done
    m.prompt_accepted(1, "u1")
    assert sub.done and sub.stop_reason == "end_turn" and sub.end_event_index == 3
    assert m.text(sub) == "answer" and m.text(1) == "answer"


def test_idle_before_the_user_message_does_not_finish_the_submission() -> None:
    m = SessionModel("s")
    sub = m.submit(1, None)
    feed(m, state("running"), idle("end_turn"), message("u1", ["hi"], kind="user_message"))
    m.prompt_accepted(1, "u1")
    assert not sub.done
    feed(m, state("running"), chunk("a", "reply"), idle("max_tokens"))
    assert sub.done and sub.stop_reason == "max_tokens"
    assert m.text(sub) == "reply"


def test_idle_without_stop_reason_while_idle_does_not_end_work() -> None:
    m = SessionModel("s")
    sub = m.submit(1, None)
    m.prompt_accepted(1, "u1")
    feed(m, message("u1", ["hi"], kind="user_message"), idle())
    assert not sub.done
    feed(m, state("requires_action"), idle())
    assert sub.done and sub.stop_reason is None


def test_repeated_idle_after_insertion_is_not_the_end_of_its_work() -> None:
    m = SessionModel("s")
    sub = m.submit(1, None)
    feed(m, state("running"), idle("end_turn", background=[]))
    feed(m, message("u1", ["next"], kind="user_message"), idle("end_turn", background=[]))
    m.prompt_accepted(1, "u1")
    assert not sub.done  # the repeated snapshot carried the old stop reason for context
    feed(m, state("running"), idle("end_turn", background=[]))
    assert sub.done


def test_two_submissions_reconcile_by_message_id_not_arrival_order() -> None:
    m = SessionModel("s")
    first, second = m.submit("a", None), m.submit("b", None)
    feed(
        m,
        state("running"),
        message("u2", ["same text"], kind="user_message"),
        message("u1", ["same text"], kind="user_message"),
        chunk("r", "reply"),
        idle("end_turn"),
    )
    m.prompt_accepted("b", "u1")
    m.prompt_accepted("a", "u2")
    assert first.user_message is m.entity("user_message", "u2")
    assert second.user_message is m.entity("user_message", "u1")
    assert first.done and second.done
    assert len(m.entities("user_message")) == 2


def test_rejected_submission_is_not_inserted() -> None:
    m = SessionModel("s")
    sub = m.submit(3, None)
    m.prompt_rejected(3, {"code": -32602, "message": "empty prompt"})
    assert (sub.status, sub.message_id, sub.done) == ("rejected", None, False)
    assert sub.error == {"code": -32602, "message": "empty prompt"}
    feed(m, state("running"), idle("end_turn"))
    assert not sub.done and m.text(sub) == ""


def test_pending_submission_has_no_receipt() -> None:
    m = SessionModel("s")
    sub = m.submit(1, "content")
    feed(m, state("running"), message("u1", ["x"], kind="user_message"), idle("end_turn"))
    assert (sub.status, sub.done, sub.user_message, sub.content) == (
        "pending",
        False,
        None,
        "content",
    )
    assert m.submissions == [sub]
    with pytest.raises(KeyError, match="no session/prompt request 2"):
        m.submission(2)


def test_agent_that_never_echoes_falls_back_to_first_idle_after_response() -> None:
    m = SessionModel("s")
    sub = m.submit(1, None)
    feed(m, state("running"), chunk("early", "before"), idle("end_turn"))  # earlier work
    m.prompt_accepted(1, "u1")
    assert not sub.done
    feed(m, state("running"), chunk("a", "after"), idle("end_turn"))
    assert sub.done and rules(m) == []  # the echo may still come: judged at the end
    assert [v.rule for v in m.finish()] == ["user-message-not-echoed"]
    assert m.violations[0].event_index == 5
    assert m.text(sub) == "before\nafter"  # fallback window: everything since the send


def test_text_of_a_submission_stops_at_its_ending_idle() -> None:
    m = SessionModel("s")
    sub = m.submit(1, None)
    m.prompt_accepted(1, "u1")
    feed(m, chunk("pre", "earlier"), message("u1", ["q"], kind="user_message"), state("running"))
    feed(m, chunk("a1", "one"), chunk("a2", "two"), idle("end_turn"))
    feed(m, state("running"), chunk("later", "not mine"), idle("end_turn"))
    assert m.text(sub) == "one\ntwo"
    assert m.text(sub, sep="") == "onetwo"
    assert m.text() == "earlier\none\ntwo\nnot mine"
