"""Permission and elicitation policies: alone, and answering a real agent."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

import acp_lite.client as blocking
from acp_lite import connect_in_memory, permissions
from acp_lite.hookspec import hookimpl
from acp_lite.protocol import (
    CreateElicitationResponse,
    RequestPermissionRequest,
    converter,
)
from acp_lite.testing import InProcessAgent

from .conftest import FAST


def request(*kinds: str) -> RequestPermissionRequest:
    options = [{"optionId": f"opt-{k}", "name": k.title(), "kind": k} for k in kinds]
    return converter.structure(
        {"sessionId": "s1", "title": "Allow?", "options": options}, RequestPermissionRequest
    )


ALL = ("allow_once", "allow_always", "reject_once", "reject_always")


@pytest.mark.parametrize(
    ("policy", "kinds", "expected"),
    [
        (permissions.allow_once, ALL, "opt-allow_once"),
        (permissions.allow_once, ("allow_always", "reject_once"), None),  # never escalates
        (permissions.allow_always, ALL, "opt-allow_always"),
        (permissions.allow_always, ("allow_once", "reject_once"), "opt-allow_once"),
        (permissions.reject_once, ALL, "opt-reject_once"),
        (permissions.reject_always, ALL, "opt-reject_always"),
        (permissions.reject_always, ("allow_once", "reject_once"), "opt-reject_once"),
        (permissions.reject_always, ("allow_once",), None),
        (permissions.reject, ALL, "opt-reject_once"),
        (permissions.reject, ("allow_once", "reject_always"), "opt-reject_always"),
        (permissions.reject, ("allow_once",), None),
        (permissions.cancelled, ALL, None),
        (permissions.choose("_custom", "reject_once"), ("_custom", *ALL), "opt-_custom"),
    ],
)
def test_policies_pick_by_kind(policy: Any, kinds: tuple[str, ...], expected: str | None) -> None:
    assert policy(request(*kinds), None) == expected


def test_options_are_picked_by_kind_not_position() -> None:
    req = request("reject_always", "allow_once")
    assert permissions.allow_once(req, None) == "opt-allow_once"


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        (True, "opt-allow_once"),
        (False, "opt-reject_once"),
        (None, None),
        (permissions.CANCELLED, None),
        ("opt-allow_always", "opt-allow_always"),
        ("reject_always", "opt-reject_always"),
    ],
)
def test_ask_maps_answers(answer: object, expected: str | None) -> None:
    calls: list[tuple[object, object]] = []

    def question(req: object, session: object) -> object:
        calls.append((req, session))
        return answer

    req = request(*ALL)
    assert permissions.ask(question)(req, "the-session") == expected
    assert calls == [(req, "the-session")]


def test_ask_rejects_an_unknown_answer() -> None:
    policy = permissions.ask(lambda req, session: "yes please")
    with pytest.raises(ValueError, match=r"'yes please'.*opt-allow_once"):
        policy(request(*ALL), None)


def test_permission_outcome_wire_shapes() -> None:
    assert permissions.permission_outcome(None) == {"outcome": "cancelled"}
    assert permissions.permission_outcome(permissions.CANCELLED) == {"outcome": "cancelled"}
    assert permissions.permission_outcome("a") == {"outcome": "selected", "optionId": "a"}
    with pytest.raises(TypeError):
        permissions.permission_outcome(3)
    assert repr(permissions.CANCELLED) == "CANCELLED"


def test_elicitation_policies_return_typed_responses() -> None:
    declined = permissions.decline(None, None)
    assert isinstance(declined, CreateElicitationResponse)
    assert converter.unstructure(declined) == {"action": "decline"}
    assert converter.unstructure(permissions.cancel(None, None)) == {"action": "cancel"}
    accept = permissions.accept({"name": "Ada", "age": 36})
    assert converter.unstructure(accept(None, None)) == {
        "action": "accept",
        "content": {"name": "Ada", "age": 36},
    }
    assert converter.unstructure(permissions.accept()(None, None)) == {"action": "accept"}


# --- against the reference agent ------------------------------------------------------

ALLOWED = "Done: notes.txt is written."
REJECTED = "Okay, I did not write the file."


def _tool_call_turn(**kwargs: Any) -> Any:
    with connect_in_memory(InProcessAgent("tool_call_permission"), limits=FAST, **kwargs) as client:
        session = client.new_session(cwd="/tmp")
        turn = session.run("write the notes")
        return turn, session


@pytest.mark.parametrize(
    ("policy", "text", "status"),
    [
        (permissions.allow_once, ALLOWED, "completed"),
        (permissions.allow_always, ALLOWED, "completed"),
        (permissions.reject, REJECTED, "failed"),
        (permissions.ask(lambda request, session: True), ALLOWED, "completed"),
        (permissions.ask(lambda request, session: "reject_once"), REJECTED, "failed"),
    ],
)
def test_each_policy_answers_the_agent(policy: Any, text: str, status: str) -> None:
    turn, session = _tool_call_turn(on_permission=policy)
    assert text in turn.text
    assert session.model.entity("tool_call", "call-1").status == status


def test_cancelled_policy() -> None:
    turn, _ = _tool_call_turn(on_permission=permissions.cancelled)
    assert ALLOWED not in turn.text


def test_default_policy_rejects() -> None:
    turn, _ = _tool_call_turn()
    assert REJECTED in turn.text


def test_blocking_callable_runs_off_the_trio_thread_and_may_call_the_client() -> None:
    seen: dict[str, Any] = {}

    def on_permission(req: RequestPermissionRequest, session: blocking.Session) -> str | None:
        seen["thread"] = threading.current_thread().name
        seen["session"] = session
        seen["title"] = req.title
        time.sleep(0.05)  # a human thinking: must not stall the connection
        seen["state"] = session.state
        seen["echo"] = session.client.request("_acp_lite/ping", {"from": "callback"})
        return permissions.allow_once(req, session)

    turn, session = _tool_call_turn(on_permission=on_permission)
    assert ALLOWED in turn.text
    assert seen["session"] is session
    assert seen["title"] == "Allow writing notes.txt?"
    assert not seen["thread"].startswith("acp-lite-")
    assert seen["state"] in ("requires_action", "running")
    assert seen["echo"] == {"echo": {"from": "callback"}}


def test_plugin_hook_answers_when_no_callable() -> None:
    class Approve:
        @hookimpl
        def acp_permission_request(self, request: Any, session: Any) -> str | None:
            assert isinstance(session, blocking.Session)
            return permissions.allow_always(request, session)

    turn, _ = _tool_call_turn(plugins=[Approve()])
    assert ALLOWED in turn.text


def test_the_callable_decides_before_hooks() -> None:
    consulted: list[str] = []

    class Approve:
        @hookimpl
        def acp_permission_request(self, request: Any, session: Any) -> str | None:
            consulted.append("hook")
            return permissions.allow_once(request, session)

    turn, _ = _tool_call_turn(on_permission=permissions.reject, plugins=[Approve()])
    assert REJECTED in turn.text and consulted == []


def test_cancel_answers_a_pending_permission_cancelled() -> None:
    asked = threading.Event()
    release = threading.Event()

    def slow_human(req: Any, session: Any) -> str | None:
        asked.set()
        release.wait(5)
        return permissions.allow_once(req, session)

    with connect_in_memory(
        InProcessAgent("tool_call_permission"), limits=FAST, on_permission=slow_human
    ) as client:
        session = client.new_session(cwd="/tmp")
        submission = session.prompt("write the notes")
        assert asked.wait(5)
        session.cancel(wait=True, timeout=5)
        release.set()
        assert submission.done and session.stop_reason == "cancelled"
        assert ALLOWED not in session.text()
        answers = [
            e.json()
            for e in client.transcript
            if e.direction == "send" and "outcome" in e.json().get("result", {})
        ]
        assert answers == [
            {
                "jsonrpc": "2.0",
                "id": answers[0]["id"],
                "result": {"outcome": {"outcome": "cancelled"}},
            }
        ]


@pytest.mark.parametrize(
    ("policy", "text"),
    [
        (permissions.accept({"name": "Ada"}), "Thanks!"),
        (permissions.decline, "No problem."),
        (permissions.cancel, "Cancelled the form."),
        (None, "No problem."),  # default: decline
    ],
)
def test_elicitation_policies_answer_the_agent(policy: Any, text: str) -> None:
    with connect_in_memory(
        InProcessAgent("elicitation"), limits=FAST, on_elicitation=policy
    ) as client:
        turn = client.new_session(cwd="/tmp").run("form please")
        assert text in turn.text


def test_policies_by_name_and_alias() -> None:
    for name, policy in permissions.PERMISSION_POLICIES.items():
        assert permissions.permission_policy(name) is policy
    assert permissions.permission_policy("allow") is permissions.allow_once
    assert permissions.permission_policy("reject") is permissions.reject_once
    assert permissions.permission_policy("cancelled") is permissions.cancelled
    assert permissions.reject is permissions.reject_once
    with pytest.raises(ValueError, match=r"'maybe'.*allow_once, allow_always.*aliases: allow"):
        permissions.permission_policy("maybe")
    assert permissions.elicitation_policy("cancel") is permissions.cancel
    with pytest.raises(ValueError, match="decline, cancel, accept_defaults"):
        permissions.elicitation_policy("accept")


def test_accept_defaults_fills_in_the_schema_defaults() -> None:
    from acp_lite.protocol import CreateElicitationRequest

    def form(required: list[str]) -> Any:
        schema = {
            "type": "object",
            "properties": {
                "name": {"type": "string", "default": "Ada"},
                "age": {"type": "integer"},
                "ok": {"type": "boolean", "default": False},
            },
            "required": required,
        }
        params = {"mode": "form", "message": "m", "requestedSchema": schema}
        return converter.structure(params, CreateElicitationRequest)

    answer = permissions.accept_defaults(form(["name"]), None)
    assert (answer.action, answer.content) == ("accept", {"name": "Ada", "ok": False})
    assert permissions.accept_defaults(form(["name", "age"]), None).action == "decline"
    assert permissions.field_defaults(form([])) == {"name": "Ada", "ok": False}
