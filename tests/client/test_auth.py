"""The login journey: typed auth methods (v1 and v2 shapes), auth errors that say
what to do, ``client.login``."""

from __future__ import annotations

import json
from typing import Any

import pytest
import trio

from acp_lite import connect_in_memory
from acp_lite.auth import AuthEnvVar, AuthMethod, auth_methods_from, login_hint, unsafe_env_names
from acp_lite.errors import AuthRequired, PromptRejected
from acp_lite.limits import Limits
from acp_lite.testing import InProcessAgent

FAST = Limits(default_timeout=5.0)


def test_v2_kinds() -> None:
    methods = auth_methods_from(
        [
            {"type": "agent", "methodId": "token", "name": "Token"},
            {
                "type": "terminal",
                "methodId": "tui",
                "name": "Log in",
                "args": ["--login"],
                "env": [{"name": "MODE", "value": "tui"}],
            },
            {
                "type": "env_var",
                "methodId": "azure",
                "name": "Azure",
                "vars": [
                    {"name": "AZURE_KEY", "label": "Key"},
                    {"name": "AZURE_URL", "secret": False},
                    {"name": "AZURE_ORG", "optional": True},
                ],
                "link": "https://example.test/keys",
            },
        ]
    )
    agent, terminal, env = methods
    assert (agent.kind, agent.method_id, agent.name) == ("agent", "token", "Token")
    assert terminal.kind == "terminal" and terminal.env == {"MODE": "tui"}
    assert terminal.terminal_command(["my-agent", "--acp"]) == ["my-agent", "--acp", "--login"]
    assert env.env_vars == (
        AuthEnvVar("AZURE_KEY", "Key", True, False),
        AuthEnvVar("AZURE_URL", None, False, False),
        AuthEnvVar("AZURE_ORG", None, True, True),
    )
    assert env.link == "https://example.test/keys"
    assert login_hint(methods) == "log in with 'token' or 'tui'; or set AZURE_KEY and AZURE_URL"


def test_v1_shapes_and_the_meta_terminal_form() -> None:
    methods = auth_methods_from(
        [
            {"id": "oauth", "name": "OAuth", "description": "browser"},  # v1: no type = agent
            {"id": "tui", "name": "TUI", "type": "terminal", "args": ["login"], "env": {"A": "1"}},
            {
                "id": "claude-login",
                "name": "Log in with Claude",
                "_meta": {"terminal-auth": {"command": "node", "args": ["cli.js", "/login"]}},
            },
            {"id": "key", "name": "Key", "type": "env_var", "varName": "OPENAI_API_KEY"},
            {"id": "qwen", "name": "Q", "_meta": {"type": "terminal", "args": ["--auth=q"]}},
            {"name": "no id"},
            "junk",
        ]
    )
    assert [(m.method_id, m.kind) for m in methods] == [
        ("oauth", "agent"),
        ("tui", "terminal"),
        ("claude-login", "terminal"),
        ("key", "env_var"),
        ("qwen", "terminal"),
    ]
    assert methods[4].terminal_command(["qwen", "--acp"]) == ["qwen", "--acp", "--auth=q"]
    assert methods[0].description == "browser"
    assert methods[1].env == {"A": "1"}
    assert methods[2].terminal_command(["ignored"]) == ["node", "cli.js", "/login"]
    assert methods[3].env_vars == (AuthEnvVar("OPENAI_API_KEY"),)
    assert methods[3].summary() == "key (env_var) Key: set OPENAI_API_KEY"
    assert auth_methods_from(None) == [] and auth_methods_from({"id": "x"}) == []
    assert login_hint([]).startswith("the agent advertised no auth method")


def test_v2_agent_auth_error_names_the_advertised_methods_and_login_works() -> None:
    with connect_in_memory(InProcessAgent("auth_required"), limits=FAST) as client:
        assert [m.method_id for m in client.auth_methods] == ["token"]
        assert isinstance(client.auth_methods[0], AuthMethod)
        with pytest.raises(AuthRequired) as info:
            client.new_session(cwd="/")
        # The error named no method: those of initialize are the ones to use.
        assert [m.method_id for m in info.value.auth_methods] == ["token"]
        assert "log in with 'token'" in str(info.value)
        assert "method=session/new" in str(info.value)
        client.login("token")
        assert client.new_session(cwd="/").run("hi").stop_reason == "end_turn"


def v1_agent_needing_auth() -> Any:
    """A trio-native v1 agent: -32000 with ``data.authMethods`` until ``authenticate``."""
    methods = [
        {"id": "gemini-api-key", "name": "Use a key", "type": "env_var", "varName": "GEMINI_KEY"},
        {"id": "oauth-personal", "name": "Log in with Google"},
    ]

    async def agent(stream: trio.abc.Stream) -> None:
        buf, authed = b"", False

        async def send(msg: dict[str, Any]) -> None:
            await stream.send_all(json.dumps({"jsonrpc": "2.0", **msg}).encode() + b"\n")

        while data := await stream.receive_some():
            buf += data
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                msg = json.loads(line)
                method, rid = msg.get("method"), msg.get("id")
                if method == "initialize":
                    result = {"protocolVersion": 1, "agentCapabilities": {}, "authMethods": methods}
                    await send({"id": rid, "result": result})
                elif method == "authenticate":
                    authed = msg["params"].get("methodId") == "oauth-personal"
                    await send({"id": rid, "result": {}})
                elif method == "session/new" and not authed:
                    error = {"code": -32000, "message": "Authentication required"}
                    await send({"id": rid, "error": {**error, "data": {"authMethods": methods}}})
                elif method == "session/new":
                    await send({"id": rid, "result": {"sessionId": "s"}})
                elif method == "session/prompt":
                    error = {"code": -32000, "message": "Authentication required"}
                    await send({"id": rid, "error": error})
                elif rid is not None:
                    await send({"id": rid, "error": {"code": -32601, "message": "nope"}})

    return agent


def test_v1_auth_error_names_its_methods_and_variables() -> None:
    with connect_in_memory(v1_agent_needing_auth(), limits=FAST) as client:
        assert client.protocol_version == 1
        assert [(m.method_id, m.kind) for m in client.auth_methods] == [
            ("gemini-api-key", "env_var"),
            ("oauth-personal", "agent"),
        ]
        with pytest.raises(AuthRequired) as info:
            client.new_session(cwd="/")
        text = str(info.value)
        assert "log in with 'oauth-personal'" in text and "set GEMINI_KEY" in text
        client.login("oauth-personal")  # v1: authenticate
        session = client.new_session(cwd="/")
        # A v1 prompt refused with -32000 and no data: the advertised methods are named.
        with pytest.raises(PromptRejected) as refused:
            session.run("hi")
        assert isinstance(refused.value, AuthRequired)
        assert [m.method_id for m in refused.value.auth_methods] == [
            "gemini-api-key",
            "oauth-personal",
        ]


def test_unsafe_env_names_are_the_loader_and_start_up_variables() -> None:
    env = {
        "LD_PRELOAD": "x",
        "ld_library_path": "x",
        "DYLD_INSERT_LIBRARIES": "x",
        "PYTHONPATH": "x",
        "NODE_OPTIONS": "x",
        "BASH_ENV": "x",
        "PATH": "x",
        "A=B": "x",
        "": "x",
        "QWEN_HOME": "x",
        "OLD_PRELOAD": "x",
        "TERM": "x",
    }
    assert unsafe_env_names(env) == list(env)[:9]
