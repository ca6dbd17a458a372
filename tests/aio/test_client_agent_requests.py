"""The agent's requests to an AsyncClient: permissions (policies, plugin hooks, blocking
callables, cancel), elicitations, callback errors, withdrawn requests, extension notifications."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
import trio

from acp_lite import aio, permissions
from acp_lite.hookspec import hookimpl

from .conftest import FAST, inproc, inproc_scripted, wire

pytestmark = pytest.mark.trio


PERMISSION = "session/request_permission"


@pytest.mark.parametrize(
    ("policy", "outcome", "text"),
    [
        (permissions.allow_once, {"outcome": "selected", "optionId": "allow"}, "Done"),
        (permissions.allow_always, {"outcome": "selected", "optionId": "allow_always"}, "Done"),
        (permissions.reject, {"outcome": "selected", "optionId": "reject"}, "did not"),
        (permissions.cancelled, {"outcome": "cancelled"}, ""),
    ],
)
async def test_permission_answered_by_policies(policy: Any, outcome: Any, text: str) -> None:
    async with aio.connect_in_memory(
        inproc("tool_call_permission"), limits=FAST, on_permission=policy
    ) as c:
        session = await c.new_session(cwd="/tmp")
        turn = await session.run("go")
        answers = [m for d, m in wire(c) if d == "send" and "result" in m]
        assert answers == [
            {"jsonrpc": "2.0", "id": answers[0]["id"], "result": {"outcome": outcome}}
        ]
        assert text in turn.text
        # The permission's tool call was applied to the model like a tool_call_update.
        assert session.model.entity("tool_call", "call-1") is not None


async def test_permission_default_policy_and_plugin_hooks() -> None:
    calls: list[str] = []

    class Plugin:
        @hookimpl
        def acp_permission_request(self, request: Any, session: Any) -> Any:
            calls.append(request.title)
            return permissions.option_of_kind(request, "allow_once")

        @hookimpl
        def acp_session_update(self, session: Any, event: Any) -> None:
            calls.append(event.tag)

    async with aio.connect_in_memory(
        inproc("tool_call_permission"), limits=FAST, plugins=[Plugin()]
    ) as c:
        turn = await (await c.new_session(cwd="/tmp")).run("go")
        assert "Done" in turn.text and "Allow writing notes.txt?" in calls
        assert "state_update" in calls
    async with aio.connect_in_memory(inproc("tool_call_permission"), limits=FAST) as c:
        turn = await (await c.new_session(cwd="/tmp")).run("go")
        assert "did not" in turn.text  # the default policy rejects


async def test_blocking_permission_callable_runs_off_the_trio_thread() -> None:
    trio_thread = threading.get_ident()
    seen: list[int] = []

    def ask_slowly(request: Any, session: Any) -> str | None:
        seen.append(threading.get_ident())
        time.sleep(0.05)  # blocks: must not stall the connection
        return permissions.allow_once(request, session)

    async with aio.connect_in_memory(
        inproc("tool_call_permission"), limits=FAST, on_permission=ask_slowly
    ) as c:
        session = await c.new_session(cwd="/tmp")
        turn = await session.run("go")
        assert "Done" in turn.text
        assert seen and seen[0] != trio_thread
        assert "requires_action" in [getattr(e.update, "state", None) for e in turn.updates]


async def test_cancel_answers_a_pending_permission_cancelled() -> None:
    release = threading.Event()
    try:
        async with aio.connect_in_memory(
            inproc("tool_call_permission"),
            limits=FAST,
            on_permission=lambda r, s: release.wait(10) and None,
        ) as client:
            session = await client.new_session(cwd="/tmp")
            sub = await session.prompt("go")
            with trio.fail_after(5):  # the permission request is in flight
                while not [
                    m
                    for _, m in wire(client)
                    if isinstance(m, dict) and m.get("method") == PERMISSION
                ]:
                    await trio.sleep(0.01)
            await session.cancel(wait=True, timeout=5)
            assert session.stop_reason == "cancelled" and sub.done
            sent = [m for d, m in wire(client) if d == "send"]
            cancel_at = sent.index(
                {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": session.id}}
            )
            assert sent[cancel_at + 1]["result"] == {"outcome": {"outcome": "cancelled"}}
    finally:
        release.set()


async def test_elicitation_default_decline_and_accept_callable() -> None:
    async with aio.connect_in_memory(inproc("elicitation"), limits=FAST) as client:
        turn = await (await client.new_session(cwd="/tmp")).run("x")
        assert turn.text == "No problem."
    accept = permissions.accept({"name": "Ada"})
    async with aio.connect_in_memory(
        inproc("elicitation"), limits=FAST, on_elicitation=accept
    ) as client:
        turn = await (await client.new_session(cwd="/tmp")).run("x")
        assert turn.text == "Thanks!"


async def test_callback_error_is_answered_and_logged() -> None:
    def broken(request: Any, session: Any) -> str:
        raise RuntimeError("oops")

    async with aio.connect_in_memory(
        inproc("tool_call_permission"), limits=FAST, on_permission=broken
    ) as c:
        session = await c.new_session(cwd="/tmp")
        await session.prompt("go")
        with trio.fail_after(5):
            while not [e for e in c.events if e.kind == "callback_error"]:
                await trio.sleep(0.01)
        errors = [m for d, m in wire(c) if d == "send" and "error" in m]
        assert errors and "oops" in errors[0]["error"]["message"]


async def test_extension_notification_reaches_hooks_and_log() -> None:
    got: list[Any] = []

    class Plugin:
        @hookimpl
        def acp_extension_notification(self, client: Any, method: str, params: Any) -> None:
            got.append((method, params))

    line = '{"jsonrpc":"2.0","method":"_acme/ping","params":{"n":1}}'
    script = {"turns": [{"steps": [{"type": "raw", "text": line}, {"type": "text", "text": "ok"}]}]}
    async with aio.connect_in_memory(
        inproc_scripted(script), limits=FAST, plugins=[Plugin()]
    ) as client:
        await (await client.new_session(cwd="/tmp")).run("x")
        assert got == [("_acme/ping", {"n": 1})]
        assert [e.method for e in client.events if e.kind == "extension_notification"] == [
            "_acme/ping"
        ]


async def test_agent_withdrawing_its_request_is_answered_32800() -> None:
    release = threading.Event()
    try:
        async with aio.connect_in_memory(
            inproc("elicitation"), limits=FAST, on_elicitation=lambda r, s: release.wait(10)
        ) as client:
            session = await client.new_session(cwd="/tmp")
            await session.prompt("x")
            with trio.fail_after(5):  # the elicitation is in flight, its callback blocked
                while not [e for _, e in wire(client) if isinstance(e, dict) and "id" in e
                           and e.get("method") == "elicitation/create"]:  # fmt: skip
                    await trio.sleep(0.01)
            await session.cancel(wait=True, timeout=5)  # the agent withdraws the elicitation
            with trio.fail_after(5):
                while not [e for e in client.events if e.kind == "agent_cancelled_request"]:
                    await trio.sleep(0.01)
            msgs = [(d, m) for d, m in wire(client) if isinstance(m, dict)]
            (request,) = [m for _, m in msgs if m.get("method") == "elicitation/create"]
            answers = [
                m
                for d, m in msgs
                if d == "send" and "method" not in m and m.get("id") == request["id"]
            ]
            assert [a["error"]["code"] for a in answers] == [-32800]  # answered once
    finally:
        release.set()


async def test_cancel_leaves_permission_requests_for_listed_background_work() -> None:
    import json

    background_request = {
        "jsonrpc": "2.0",
        "id": "perm-bg",
        "method": PERMISSION,
        "params": {
            "sessionId": "{{session_id}}",
            "title": "bg?",
            "subject": {"type": "tool_call", "toolCall": {"toolCallId": "bg-1"}},
            "options": [{"optionId": "allow", "name": "Allow", "kind": "allow_once"}],
        },
    }
    steps = [
        {"type": "insert"},
        {"type": "background", "id": "bg-1", "title": "indexing", "seconds": 10},
        {"type": "raw", "text": json.dumps(background_request)},
        {"type": "permission", "title": "fg?"},  # foreground work
    ]
    release = threading.Event()
    try:
        async with aio.connect_in_memory(
            inproc_scripted({"turns": [{"steps": steps}]}),
            limits=FAST,
            on_permission=lambda r, s: release.wait(10) and permissions.allow_once(r, s),
        ) as client:
            session = await client.new_session(cwd="/tmp")
            await session.prompt("go")
            with trio.fail_after(5):  # both permission requests are in flight
                while len([m for _, m in wire(client) if isinstance(m, dict)
                           and m.get("method") == PERMISSION]) < 2:  # fmt: skip
                    await trio.sleep(0.01)
            assert [b.tool_call_id for b in session.model.background or ()] == ["bg-1"]
            await session.cancel(wait=True, timeout=5)
            answers = {
                m["id"]: m["result"] for d, m in wire(client) if d == "send" and "result" in m
            }
            assert list(answers.values()) == [{"outcome": {"outcome": "cancelled"}}]
            assert "perm-bg" not in answers  # background work: still the user's to decide
            release.set()
            with trio.fail_after(5):
                while "perm-bg" not in answers:
                    await trio.sleep(0.01)
                    answers = {m["id"]: m["result"] for d, m in wire(client)
                               if d == "send" and "result" in m}  # fmt: skip
            assert answers["perm-bg"] == {"outcome": {"outcome": "selected", "optionId": "allow"}}
    finally:
        release.set()
