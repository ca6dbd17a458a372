"""An ACP v1 agent written with the official Python SDK (``agent-client-protocol``
0.12.1, ``import acp``), used to check acp_lite's v1 translator against someone
else's v1 implementation. Everything on the wire is the SDK's serialization.

Run: ``python py_sdk_agent_v1.py HISTORY_DIR [--echo-version]`` (stdio).

The first word of the prompt text picks the behaviour (default: echo):

* ``think``      - a thought chunk, then a message chunk
* ``recap``      - echoes the prompt back as ``user_message_chunk`` first, then text
* ``permission`` - a ``tool_call`` (pending, edit), ``session/request_permission``
  with allow_once / reject_once; reports the outcome it received as text
  (``outcome: selected allow`` ...). Allowed: the tool goes in_progress then
  completed with a diff; rejected: failed; cancelled outcome: stop ``cancelled``
* ``ask``        - ``session/request_permission`` before anything else (the tool
  call, ``Run ls``, comes with it); allowed: completed, ``ran ls``
* ``slow``       - a tool call in progress and ``working...``, then waits for
  ``session/cancel`` (10 s cap): tool failed, stop ``cancelled``
* ``plan``       - a plan of three entries, then the same plan with progress
* ``mode``       - switches the session mode itself (``current_mode_update``)
* ``refuse``     - stop reason ``refusal``
* ``fail``       - a tool call that fails, then an error response (-32603)
* ``invalid``    - an error response (-32602) before any update
* anything else  - echo: ``echo: `` and the text, two chunks without messageId

Every session's history (the v1 updates it sent, the prompts as
``user_message_chunk``) is saved to ``HISTORY_DIR/<sessionId>.json``;
``session/load`` replays such a file, ``session/list`` lists them. The agent
advertises ``loadSession``, ``sessionCapabilities.list``, one auth method, two
modes (``ask``, ``code``) and a ``model`` select option (values in a group); each
new session gets an ``available_commands_update``.

``--echo-version`` answers ``initialize`` the way the SDK's own example echo agent
does, ``InitializeResponse(protocol_version=<the requested version>)``, which the
SDK serializes as ``{"protocolVersion": 2}`` when asked for 2.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import sys
from importlib.metadata import version
from pathlib import Path
from typing import Any

from acp import (
    PROTOCOL_VERSION,
    InitializeResponse,
    LoadSessionResponse,
    NewSessionResponse,
    PromptResponse,
    RequestError,
    SetSessionConfigOptionResponse,
    SetSessionModeResponse,
    plan_entry,
    run_agent,
    start_tool_call,
    text_block,
    tool_content,
    tool_diff_content,
    update_agent_message_text,
    update_agent_thought_text,
    update_plan,
    update_tool_call,
    update_user_message,
)
from acp.helpers import update_available_commands, update_current_mode
from acp.schema import (
    AgentCapabilities,
    AuthenticateResponse,
    AuthMethodAgent,
    AvailableCommand,
    Implementation,
    ListSessionsResponse,
    PermissionOption,
    SessionCapabilities,
    SessionConfigOptionSelect,
    SessionConfigSelectGroup,
    SessionConfigSelectOption,
    SessionInfo,
    SessionListCapabilities,
    SessionMode,
    SessionModeState,
    SessionNotification,
    ToolCallUpdate,
)

SLOW_LIMIT_S = 10.0
IDS = itertools.count(1)


def modes(current: str) -> SessionModeState:
    return SessionModeState(
        current_mode_id=current,
        available_modes=[
            SessionMode(id="ask", name="Ask", description="Ask before editing"),
            SessionMode(id="code", name="Code"),
        ],
    )


MODELS = {"fast": "Fast", "smart": "Smart"}


def config_options(model: str) -> list[SessionConfigOptionSelect]:
    """One select option, its values in groups (v1 groups are keyed ``group``)."""
    groups = [
        SessionConfigSelectGroup(
            group="house",
            name="House models",
            options=[SessionConfigSelectOption(value=v, name=n) for v, n in MODELS.items()],
        )
    ]
    return [
        SessionConfigOptionSelect(
            id="model",
            name="Model",
            category="model",
            type="select",
            current_value=model,
            options=groups,
        )
    ]


class Session:
    def __init__(self, sid: str, cwd: str) -> None:
        self.id = sid
        self.cwd = cwd
        self.mode = "ask"
        self.model = "fast"
        self.cancelled = asyncio.Event()
        #: The v1 updates sent for this session, as wire dicts (replayed by load).
        self.history: list[dict[str, Any]] = []

    def next_id(self, prefix: str) -> str:
        # Unique in the process, so a loaded copy of a history never reuses an id.
        return f"{prefix}-{next(IDS)}"


class SdkAgent:
    """The SDK's ``Agent`` protocol, implemented (the SDK routes by method name)."""

    def __init__(self, history_dir: Path, echo_version: bool) -> None:
        self.history_dir = history_dir
        self.echo_version = echo_version
        self.sessions: dict[str, Session] = {}
        self.authenticated: list[str] = []
        self.conn: Any = None

    def on_connect(self, conn: Any) -> None:
        self.conn = conn

    # ------------------------------------------------------------------ plumbing

    async def send(self, session: Session, update: Any, *, record: bool = True) -> None:
        await self.conn.session_update(session_id=session.id, update=update)
        if record:
            session.history.append(update.model_dump(mode="json", by_alias=True, exclude_none=True))

    async def say(self, session: Session, text: str) -> None:
        await self.send(session, update_agent_message_text(text))

    def save(self, session: Session) -> None:
        path = self.history_dir / f"{session.id}.json"
        data = {"cwd": session.cwd, "mode": session.mode, "model": session.model}
        data["history"] = session.history
        path.write_text(json.dumps(data))

    def session(self, sid: str) -> Session:
        session = self.sessions.get(sid)
        if session is None:
            raise RequestError.resource_not_found(sid)
        return session

    # ------------------------------------------------------------------ lifecycle

    async def initialize(self, protocol_version: int, **kwargs: Any) -> InitializeResponse:
        if self.echo_version:
            return InitializeResponse(protocol_version=protocol_version)
        return InitializeResponse(
            protocol_version=PROTOCOL_VERSION,
            agent_capabilities=AgentCapabilities(
                load_session=True,
                session_capabilities=SessionCapabilities(list=SessionListCapabilities()),
            ),
            agent_info=Implementation(
                name="py-sdk-v1-agent",
                title="Python SDK v1 interop agent",
                version=version("agent-client-protocol"),
            ),
            auth_methods=[AuthMethodAgent(id="demo-key", name="Demo key")],
        )

    async def authenticate(self, method_id: str, **kwargs: Any) -> AuthenticateResponse:
        self.authenticated.append(method_id)
        return AuthenticateResponse()

    async def new_session(self, cwd: str, **kwargs: Any) -> NewSessionResponse:
        sid = f"py-sess-{len(self.sessions) + 1}"
        session = self.sessions[sid] = Session(sid, cwd)
        commands = update_available_commands(
            [
                AvailableCommand(name="plan", description="Make a plan"),
                AvailableCommand(name="think", description="Think aloud"),
            ]
        )
        # Sent once the response is out, as many v1 agents do.
        asyncio.get_running_loop().call_soon(
            lambda: asyncio.ensure_future(self.send(session, commands, record=False))
        )
        return NewSessionResponse(
            session_id=sid, modes=modes(session.mode), config_options=config_options("fast")
        )

    async def load_session(
        self, cwd: str, session_id: str, **kwargs: Any
    ) -> LoadSessionResponse | None:
        path = self.history_dir / f"{session_id}.json"
        if not path.is_file():
            raise RequestError.resource_not_found(session_id)
        saved = json.loads(path.read_text())
        session = self.sessions[session_id] = Session(session_id, cwd)
        session.mode, session.model = saved["mode"], saved["model"]
        for item in saved["history"]:
            # The SDK's own model, rebuilt from what it serialized.
            note = SessionNotification.model_validate({"sessionId": session_id, "update": item})
            await self.send(session, note.update)
        return LoadSessionResponse(
            modes=modes(session.mode), config_options=config_options(session.model)
        )

    async def list_sessions(self, cwd: str | None = None, **kwargs: Any) -> ListSessionsResponse:
        infos = []
        for path in sorted(self.history_dir.glob("*.json")):
            saved = json.loads(path.read_text())
            if cwd is None or saved["cwd"] == cwd:
                infos.append(SessionInfo(session_id=path.stem, cwd=saved["cwd"]))
        return ListSessionsResponse(sessions=infos)

    async def set_session_mode(
        self, session_id: str, mode_id: str, **kwargs: Any
    ) -> SetSessionModeResponse:
        session = self.session(session_id)
        if mode_id not in ("ask", "code"):
            raise RequestError.invalid_params({"modeId": mode_id})
        session.mode = mode_id
        return SetSessionModeResponse()

    async def set_config_option(
        self, config_id: str, session_id: str, value: str | bool, **kwargs: Any
    ) -> SetSessionConfigOptionResponse:
        session = self.session(session_id)
        if config_id != "model" or value not in MODELS:
            raise RequestError.invalid_params({"configId": config_id, "value": value})
        session.model = str(value)
        return SetSessionConfigOptionResponse(config_options=config_options(session.model))

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        session = self.sessions.get(session_id)
        if session is not None:
            session.cancelled.set()

    # ------------------------------------------------------------------ the turn

    async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> PromptResponse:
        session = self.session(session_id)
        text = "".join(getattr(block, "text", "") for block in prompt)
        words = text.split()
        scenario = words[0].lower() if words else ""
        if scenario == "invalid":
            raise RequestError.invalid_params({"reason": "this prompt is refused up front"})
        session.cancelled = asyncio.Event()
        for block in prompt:
            session.history.append(
                update_user_message(block).model_dump(mode="json", by_alias=True, exclude_none=True)
            )
        try:
            runner = getattr(self, f"run_{scenario}", None) or self.run_echo
            stop = await runner(session, text, prompt)
        finally:
            self.save(session)
        return PromptResponse(stop_reason=stop)

    async def run_echo(self, session: Session, text: str, prompt: list[Any]) -> str:
        await self.say(session, "echo: ")
        await self.say(session, text)
        return "end_turn"

    async def run_think(self, session: Session, text: str, prompt: list[Any]) -> str:
        await self.send(session, update_agent_thought_text("thinking about it"))
        await self.say(session, "done thinking")
        return "end_turn"

    async def run_recap(self, session: Session, text: str, prompt: list[Any]) -> str:
        for block in prompt:  # the history has the prompt already
            await self.send(session, update_user_message(block), record=False)
        await self.say(session, "recapped")
        return "end_turn"

    async def run_permission(self, session: Session, text: str, prompt: list[Any]) -> str:
        tid = session.next_id("write")
        path = str(Path(session.cwd) / "greeting.txt")
        await self.send(
            session, start_tool_call(tid, "Write greeting.txt", kind="edit", status="pending")
        )
        response = await self.conn.request_permission(
            session_id=session.id,
            tool_call=ToolCallUpdate(tool_call_id=tid),
            options=[
                PermissionOption(option_id="allow", name="Allow once", kind="allow_once"),
                PermissionOption(option_id="reject", name="Reject", kind="reject_once"),
            ],
        )
        outcome = response.outcome
        if outcome.outcome == "cancelled":
            await self.send(session, update_tool_call(tid, status="failed"))
            return "cancelled"
        await self.say(session, f"outcome: selected {outcome.option_id}; ")
        if outcome.option_id != "allow":
            await self.send(session, update_tool_call(tid, status="failed"))
            await self.say(session, "permission rejected")
            return "end_turn"
        await self.send(session, update_tool_call(tid, status="in_progress"))
        diff = tool_diff_content(path, "hello\n", None)
        await self.send(
            session,
            update_tool_call(tid, status="completed", content=[diff], raw_output={"bytes": 6}),
        )
        await self.say(session, "permission granted")
        return "end_turn"

    async def run_ask(self, session: Session, text: str, prompt: list[Any]) -> str:
        # Asks first: the tool call comes with the request, nothing reported before.
        tid = session.next_id("shell")
        response = await self.conn.request_permission(
            session_id=session.id,
            tool_call=ToolCallUpdate(
                tool_call_id=tid, title="Run ls", kind="execute", raw_input={"command": "ls"}
            ),
            options=[
                PermissionOption(option_id="allow", name="Allow once", kind="allow_once"),
                PermissionOption(option_id="reject", name="Reject", kind="reject_once"),
            ],
        )
        outcome = response.outcome
        if outcome.outcome == "cancelled":
            return "cancelled"
        if outcome.option_id != "allow":
            await self.send(session, update_tool_call(tid, status="failed"))
            await self.say(session, "did not run ls")
            return "end_turn"
        await self.send(
            session, update_tool_call(tid, status="completed", raw_output={"files": ["a.txt"]})
        )
        await self.say(session, "ran ls")
        return "end_turn"

    async def run_slow(self, session: Session, text: str, prompt: list[Any]) -> str:
        tid = session.next_id("compute")
        await self.send(
            session,
            start_tool_call(tid, "Long computation", kind="think", status="in_progress"),
        )
        await self.say(session, "working...")
        try:
            await asyncio.wait_for(session.cancelled.wait(), SLOW_LIMIT_S)
        except TimeoutError:
            await self.send(session, update_tool_call(tid, status="completed"))
            return "end_turn"
        # v1 tool calls have no cancelled status: an interrupted one failed.
        await self.send(
            session,
            update_tool_call(
                tid, status="failed", content=[tool_content(text_block("interrupted"))]
            ),
        )
        return "cancelled"

    async def run_plan(self, session: Session, text: str, prompt: list[Any]) -> str:
        steps = ["Read the code", "Write the fix", "Run the tests"]
        await self.send(session, update_plan([plan_entry(s) for s in steps]))
        progress = [
            plan_entry(steps[0], priority="high", status="completed"),
            plan_entry(steps[1], priority="high", status="in_progress"),
            plan_entry(steps[2], priority="low", status="pending"),
        ]
        await self.send(session, update_plan(progress))
        await self.say(session, "planned")
        return "end_turn"

    async def run_mode(self, session: Session, text: str, prompt: list[Any]) -> str:
        session.mode = "code" if session.mode == "ask" else "ask"
        await self.send(session, update_current_mode(session.mode))
        await self.say(session, f"mode is now {session.mode}")
        return "end_turn"

    async def run_refuse(self, session: Session, text: str, prompt: list[Any]) -> str:
        await self.say(session, "I cannot help with that")
        return "refusal"

    async def run_fail(self, session: Session, text: str, prompt: list[Any]) -> str:
        tid = session.next_id("model")
        await self.send(
            session, start_tool_call(tid, "Call the model", kind="fetch", status="in_progress")
        )
        await self.send(session, update_tool_call(tid, status="failed"))
        raise RequestError.internal_error({"details": "simulated model failure"})


async def main() -> None:
    history_dir = Path(sys.argv[1])
    history_dir.mkdir(parents=True, exist_ok=True)
    await run_agent(SdkAgent(history_dir, "--echo-version" in sys.argv[2:]))


if __name__ == "__main__":
    asyncio.run(main())
