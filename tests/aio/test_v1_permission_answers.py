"""What the client answers a v1 permission request (issue 24, item 9).

The option id a handler returns is checked against the request's options: a
bad one is the handler's bug (a ``callback_error``, logged with its traceback,
the agent answered -32603), never sent. Requests no handler can answer rightly
(after the turn, unknown session, no options) never reach ``on_permission``.
"""

from __future__ import annotations

from typing import Any

import pytest

from acp_lite import aio

from .conftest import FAST
from .fake_v1 import V1Agent

pytestmark = pytest.mark.trio

OPTIONS = [
    {"optionId": "yes", "name": "Yes", "kind": "allow_once"},
    {"optionId": "no", "name": "No", "kind": "reject_once"},
]


def ask(session_id: str, options: Any = OPTIONS) -> dict[str, Any]:
    return {"sessionId": session_id, "toolCall": {"toolCallId": "t1"}, "options": options}


async def test_an_option_id_not_offered_is_an_error_not_an_answer() -> None:
    answers: list[Any] = []

    async def on_prompt(agent: V1Agent, session_id: str) -> None:
        answers.append(await agent.call("session/request_permission", ask(session_id)))

    agent = V1Agent(on_prompt)
    async with aio.connect_in_memory(
        agent, limits=FAST, protocol_version=1, on_permission=lambda request, session: "maybe"
    ) as client:
        session = await client.new_session(cwd="/")
        await session.run("hi")
        (answer,) = answers
        assert "result" not in answer
        assert answer["error"]["code"] == -32603
        message = answer["error"]["message"]
        assert "on_permission returned option id 'maybe'" in message
        assert "did not offer (offered: 'yes', 'no')" in message
        (logged,) = [e for e in client.events if e.kind == "callback_error"]
        assert "maybe" in str(logged.error)


async def test_an_offered_option_id_is_sent() -> None:
    answers: list[Any] = []

    async def on_prompt(agent: V1Agent, session_id: str) -> None:
        answers.append(await agent.result("session/request_permission", ask(session_id)))

    agent = V1Agent(on_prompt)
    async with aio.connect_in_memory(
        agent, limits=FAST, protocol_version=1, on_permission=lambda request, session: "no"
    ) as client:
        session = await client.new_session(cwd="/")
        await session.run("hi")
        assert answers == [{"outcome": {"outcome": "selected", "optionId": "no"}}]


async def test_requests_outside_a_turn_never_reach_the_handler() -> None:
    asked: list[Any] = []
    agent = V1Agent()
    async with aio.connect_in_memory(
        agent,
        limits=FAST,
        protocol_version=1,
        on_permission=lambda request, session: asked.append(request) or "yes",
    ) as client:
        session = await client.new_session(cwd="/")
        after = await agent.result("session/request_permission", ask(session.id))
        assert after == {"outcome": {"outcome": "cancelled"}}
        unknown = await agent.error("session/request_permission", ask("nope"))
        assert unknown["code"] == -32002
        empty = await agent.error("session/request_permission", ask(session.id, []))
        assert empty["code"] == -32602
        assert asked == []
        refusals = [e for e in client.events if e.kind == "agent_request_refused"]
        assert len(refusals) == 3
