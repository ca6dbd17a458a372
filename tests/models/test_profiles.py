"""Agent profiles: rendering each one, recognising agents from their command lines."""

from __future__ import annotations

import json
import shlex
import tempfile
import tomllib
from pathlib import Path

import pytest

from acp_lite.errors import ModelScriptError
from acp_lite.models import profiles
from acp_lite.models.home import prepare_home, temporary_home
from acp_lite.models.profiles import (
    CONFIG_DIR_VARS,
    GENERIC,
    PROFILES,
    AgentProfile,
    AgentSetup,
    profile_named,
    recognise,
    render,
)
from acp_lite.models.script import APIS

URL = "http://127.0.0.1:4567"
HOME = "/tmp/acp-home-x"
ISSUE_NAMES = ("qwen", "opencode", "codex", "claude", "gemini", "fast-agent", "kimi", "vibe")


def test_every_named_agent_has_a_profile() -> None:
    assert set(PROFILES) == {*ISSUE_NAMES, "copilot", "generic"}
    assert PROFILES["generic"] is GENERIC
    assert all(p.api in APIS and p.description for p in PROFILES.values())


@pytest.mark.parametrize("name", sorted(PROFILES))
def test_setup_keeps_the_agent_in_its_temporary_home(name: str) -> None:
    setup = profile_named(name).setup(url=URL, home=HOME, model="m-1")
    env = setup.env
    assert env["HOME"] == HOME
    for var in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME"):
        assert env[var].startswith(HOME + "/"), var
    # A variable that moves an agent's configuration is set into the home or removed.
    for var in CONFIG_DIR_VARS:
        assert var in setup.unset or env[var].startswith(HOME + "/"), var
    for path in setup.files:
        assert not path.startswith("/") and ".." not in path.split("/"), path
    # Every placeholder was replaced.
    rendered = [*env.values(), *setup.files.values(), *setup.args]
    assert not any(f"{{{p}}}" in text for text in rendered for p in profiles.PLACEHOLDERS)
    # The model endpoint is named somewhere: env, a file, or an argument.
    assert any(URL in text for text in rendered), name


@pytest.mark.parametrize("name", sorted(PROFILES))
def test_generated_files_parse(name: str) -> None:
    setup = profile_named(name).setup(url=URL, home=HOME, model="m-1")
    for path, text in setup.files.items():
        if path.endswith(".json"):
            json.loads(text)
        elif path.endswith(".toml"):
            tomllib.loads(text)
        elif path.endswith((".yaml", ".yml")):
            # No YAML parser in the test dependencies: a simple mapping, "key: value".
            for line in text.splitlines():
                assert not line.strip() or ":" in line, line
        else:
            pytest.fail(f"{name}: {path}: a file of no known format")


def test_the_profiles_follow_the_trial() -> None:
    """What each agent was measured to need (docs/models.md, "Agent profiles")."""
    get = lambda n: profile_named(n).setup(url=URL, home=HOME, model="m-1")  # noqa: E731
    qwen = get("qwen")
    assert qwen.env["OPENAI_BASE_URL"] == f"{URL}/v1" and qwen.env["OPENAI_MODEL"] == "m-1"
    assert qwen.args == ("--approval-mode", "default")

    codex = get("codex")
    assert codex.env["CODEX_HOME"] == f"{HOME}/.codex"
    assert codex.env["INITIAL_AGENT_MODE"] == "read-only"
    config = tomllib.loads(codex.files[".codex/config.toml"])
    provider = config["model_providers"][config["model_provider"]]
    assert provider["wire_api"] == "responses" and provider["base_url"] == f"{URL}/v1"
    assert codex.env[provider["env_key"]] == "dummy" and config["model"] == "m-1"

    claude = get("claude")
    assert claude.env["ANTHROPIC_BASE_URL"] == URL
    assert "IS_SANDBOX" in claude.unset and "IS_SANDBOX" not in claude.env
    settings = json.loads(claude.files[".claude/settings.json"])
    assert settings["permissions"]["defaultMode"] == "default"
    assert claude.environ({"IS_SANDBOX": "yes", "PATH": "/bin"})["PATH"] == "/bin"
    assert "IS_SANDBOX" not in claude.environ({"IS_SANDBOX": "yes"})

    gemini = get("gemini")
    assert gemini.env["GOOGLE_GEMINI_BASE_URL"] == URL and gemini.env["GEMINI_API_KEY"]

    opencode = json.loads(get("opencode").files[".config/opencode/opencode.json"])
    assert opencode["autoupdate"] is False and opencode["model"] == "scripted/m-1"
    assert opencode["permission"] == {"bash": "ask", "edit": "ask"}
    assert opencode["provider"]["scripted"]["options"]["baseURL"] == f"{URL}/v1"
    assert get("opencode").env["OPENCODE_DISABLE_MODELS_FETCH"] == "1"

    fast = get("fast-agent")
    config_path = fast.args[fast.args.index("--config-path") + 1]
    assert config_path == f"{HOME}/.fast-agent/fastagent.config.yaml"
    assert config_path.removeprefix(HOME + "/") in fast.files
    assert fast.args[:2] == ("--model", "generic.m-1") and "-x" in fast.args

    kimi = get("kimi")
    assert tomllib.loads(kimi.files[".kimi/config.toml"])["default_model"] == "scripted"
    token = json.loads(kimi.files[".kimi/credentials/kimi-code.json"])
    assert {"access_token", "refresh_token", "expires_at", "scope", "token_type"} <= set(token)

    vibe = get("vibe")
    config = tomllib.loads(vibe.files[".vibe/config.toml"])
    assert vibe.env["VIBE_HOME"] == f"{HOME}/.vibe"
    assert config["providers"][0]["api_base"] == f"{URL}/v1"
    assert vibe.env[config["providers"][0]["api_key_env_var"]] == "dummy"


def test_render_replaces_only_the_placeholders() -> None:
    values = {"url": "U", "openai_url": "U/v1", "home": "H", "model": "M", "key": "K"}
    assert render('{"a": {url}, "{model}": {}} {other}', values) == '{"a": U, "M": {}} {other}'


def test_a_user_profile() -> None:
    mine = AgentProfile(
        name="mine",
        api="anthropic",
        commands=["my-agent"],
        env={"MY_URL": "{url}/x"},
        files={"conf/my.json": '{"k": "{key}"}'},
        args=["--url", "{url}"],
        unset=["MY_TOKEN"],
    )
    setup = mine.setup(url=URL + "/", home=HOME, key="k2")
    assert setup.env["MY_URL"] == f"{URL}/x" and setup.args == ("--url", URL)
    assert setup.files == {"conf/my.json": '{"k": "k2"}'}
    assert "MY_TOKEN" in setup.unset
    assert recognise(["my-agent"], {"mine": mine}) is mine
    assert recognise(["my-agent"]) is GENERIC


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("api", "openai", "api must be one of"),
        ("files", {"/etc/passwd": ""}, "relative path"),
        ("files", {"a/../../x": ""}, "relative path"),
        ("files", {"C:/x": ""}, "relative path"),
        ("env", {"NOT A NAME": ""}, "not an environment variable name"),
        ("commands", "qwen", "a list of strings"),
    ],
)
def test_a_malformed_profile_is_refused(field: str, value: object, message: str) -> None:
    kwargs: dict[str, object] = {"name": "bad", "api": "openai_chat", field: value}
    with pytest.raises(ModelScriptError, match=message):
        AgentProfile(**kwargs)  # type: ignore[arg-type]


def test_an_unknown_name_lists_the_known_ones() -> None:
    with pytest.raises(ModelScriptError, match="no agent profile 'qwne'; known: qwen, opencode"):
        profile_named("qwne")


@pytest.mark.parametrize(
    ("command", "name"),
    [
        ("qwen --acp", "qwen"),
        ("npx @qwen-code/qwen-code --acp", "qwen"),
        ("npx -y @qwen-code/qwen-code@0.24.0 --acp", "qwen"),
        ("node /opt/lib/node_modules/@qwen-code/qwen-code/dist/cli.js --acp", "qwen"),
        ("codex-acp", "codex"),
        ("npx @agentclientprotocol/codex-acp", "codex"),
        ("/usr/bin/gemini --acp", "gemini"),
        ("gemini --experimental-acp", "gemini"),
        ("uvx fast-agent-acp", "fast-agent"),
        ("uvx --from fast-agent-mcp fast-agent-acp --model x", "fast-agent"),
        ("uv tool run --python 3.12 fast-agent-acp", "fast-agent"),
        ("python -m fast_agent.cli acp", "fast-agent"),
        ("kimi acp", "kimi"),
        ("vibe-acp", "vibe"),
        ("claude-agent-acp", "claude"),
        ("npx -y @agentclientprotocol/claude-agent-acp@0.101.0", "claude"),
        ("opencode acp", "opencode"),
        ("copilot --acp", "copilot"),
        ("env FOO=1 qwen --acp", "qwen"),
        ("C:\\tools\\gemini.cmd --acp", "gemini"),
        ("python tests/cli/agents/model_agent.py", "generic"),
        ("npx some-agent --model qwen", "generic"),
        ("my-agent", "generic"),
        ("npx", "generic"),
    ],
)
def test_recognise(command: str, name: str) -> None:
    argv = shlex.split(command, posix="\\" not in command)
    assert recognise(argv).name == name


def test_recognise_nothing() -> None:
    assert recognise([]) is GENERIC


# -- writing a home (acp_lite.models.home) -----------------------------------------


def test_prepare_home_writes_the_files_and_returns_the_environment(tmp_path: Path) -> None:
    setup = profile_named("kimi").setup(url=URL, home=str(tmp_path))
    env = prepare_home(setup, tmp_path, {"PATH": "/bin", "KIMI_SHARE_DIR": "/mine", "HOME": "/me"})
    assert env["PATH"] == "/bin" and env["HOME"] == str(tmp_path)
    assert env["KIMI_SHARE_DIR"] == f"{tmp_path}/.kimi"
    written = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*") if p.is_file())
    assert written == [".kimi/config.toml", ".kimi/credentials/kimi-code.json"]
    assert tomllib.loads((tmp_path / ".kimi/config.toml").read_text())["default_model"]


def test_prepare_home_refuses_a_file_outside_the_home(tmp_path: Path) -> None:
    setup = AgentSetup(env={}, files={"../escaped": "x"}, args=())
    with pytest.raises(ModelScriptError, match="outside the home"):
        prepare_home(setup, tmp_path / "home")
    assert not (tmp_path / "escaped").exists()


def test_temporary_home_is_removed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    with temporary_home(profile_named("codex"), url=URL, environ={"CODEX_HOME": "/mine"}) as run:
        assert run.home.parent == tmp_path.resolve() and run.home.name.startswith("acp-lite-home-")
        assert (run.home / ".codex/config.toml").is_file()
        assert run.env["CODEX_HOME"] == f"{run.home}/.codex" and run.env["HOME"] == str(run.home)
        assert run.argv(["codex-acp"]) == ["codex-acp"]
        (run.home / "agent-wrote-this").write_text("x")
    assert list(tmp_path.iterdir()) == []
    with temporary_home(profile_named("qwen"), url=URL, environ={}) as run:
        assert run.argv(["qwen", "--acp"]) == ["qwen", "--acp", "--approval-mode", "default"]
