"""Agent profiles: how to point a real agent at the scripted model (issue 23).

An :class:`AgentProfile` is a small declared record: the provider API the agent
calls, the commands that recognise it, and the environment variables, generated
files and extra arguments that aim it at a local model server instead of its
provider. :meth:`AgentProfile.setup` renders them for one run (pure: nothing is
written); :func:`acp_lite.models.home.prepare_home` writes the files.

Templates (env values, file texts, args) may hold these placeholders, replaced
verbatim (any other ``{...}``, e.g. a JSON brace, is left as it is):

================ ==============================================================
``{url}``        the server's root, ``http://127.0.0.1:PORT``
``{openai_url}`` ``{url}/v1``, what OpenAI-style clients take as their base URL
``{home}``       the agent's temporary home directory (absolute)
``{model}``      the model name the agent is told to use
``{key}``        a dummy API key (the server takes any key)
================ ==============================================================

Every setup runs the agent in its own temporary home, never the user's: ``HOME``
and the XDG base directories point into it, and the variables that would move an
agent's configuration elsewhere (``CODEX_HOME``, ``CLAUDE_CONFIG_DIR``, ...) are
removed from the inherited environment (:data:`CONFIG_DIR_VARS`) unless the
profile sets them into the home. Each built-in profile puts its agent in the mode
where it asks permission before running a tool. The facts behind them come from
running each agent by hand (``docs/models.md``, "Agent profiles").

Files are paths relative to the home, ``/``-separated, never absolute and never
with ``..``: a profile cannot write outside the home.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Mapping, Sequence

import attrs

from acp_lite.errors import ModelScriptError
from acp_lite.models.script import APIS

__all__ = [
    "CONFIG_DIR_VARS",
    "DEFAULT_MODEL",
    "DUMMY_KEY",
    "GENERIC",
    "PLACEHOLDERS",
    "PROFILES",
    "AgentProfile",
    "AgentSetup",
    "profile_named",
    "recognise",
    "render",
]

#: The model name agents are told to use unless the caller picks another.
DEFAULT_MODEL = "scripted-model"
#: The API key agents are given: the scripted server accepts any.
DUMMY_KEY = "dummy"
#: The placeholders a template may use (see the module docs).
PLACEHOLDERS = ("url", "openai_url", "home", "model", "key")

_PLACEHOLDER = re.compile(r"\{(" + "|".join(PLACEHOLDERS) + r")\}")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

#: Variables that move a known agent's configuration (or credentials) out of
#: ``HOME``: removed from the inherited environment, so that no run reads the
#: user's own configuration. A profile that needs one sets it into the home.
CONFIG_DIR_VARS = (
    "CLAUDE_CONFIG_DIR",
    "CODEX_HOME",
    "FAST_AGENT_HOME",
    "GEMINI_CLI_HOME",
    "KIMI_SHARE_DIR",
    "OPENCODE_CONFIG",
    "OPENCODE_CONFIG_CONTENT",
    "OPENCODE_CONFIG_DIR",
    "VIBE_HOME",
)


def render(template: str, values: Mapping[str, str]) -> str:
    """``template`` with each ``{placeholder}`` of :data:`PLACEHOLDERS` replaced by
    its value; other braces are kept (so JSON and TOML templates need no escaping)."""
    return _PLACEHOLDER.sub(lambda m: values[m[1]], template)


def _check_file_path(path: str) -> None:
    parts = path.split("/")
    if (
        not path
        or path.startswith("/")
        or "\\" in path
        or ":" in parts[0]
        or any(part in ("", ".", "..") for part in parts)
    ):
        raise ModelScriptError(
            f"agent profile file {path!r}: must be a relative path under the home, "
            "'/'-separated, without '.', '..' or empty parts"
        )


def _frozen_map(value: Mapping[str, str]) -> Mapping[str, str]:
    return dict(value)


def _strings(value: Iterable[str]) -> tuple[str, ...]:
    # A bare string would become a tuple of its characters.
    if isinstance(value, str):
        raise ModelScriptError(f"agent profile: expected a list of strings, not {value!r}")
    return tuple(value)


def _check_profile(profile: AgentProfile) -> None:
    where = f"agent profile {profile.name!r}"
    if not profile.name:
        raise ModelScriptError("agent profile: name must not be empty")
    if profile.api not in APIS:
        raise ModelScriptError(f"{where}: api must be one of {list(APIS)}, not {profile.api!r}")
    for name in (*profile.env, *profile.unset):
        if not _ENV_NAME.fullmatch(name):
            raise ModelScriptError(f"{where}: {name!r} is not an environment variable name")
    for path in profile.files:
        _check_file_path(path)


@attrs.frozen(kw_only=True)
class AgentSetup:
    """One run's rendering of a profile: what to set, write and pass (no IO done)."""

    #: Variables to set over the inherited environment (``HOME``, XDG dirs included).
    env: Mapping[str, str]
    #: Path relative to the home -> file text, to write before the agent starts.
    files: Mapping[str, str]
    #: Arguments to append to the agent's command line.
    args: tuple[str, ...]
    #: Variables to remove from the inherited environment (before ``env`` is set).
    unset: tuple[str, ...] = ()

    def environ(self, base: Mapping[str, str]) -> dict[str, str]:
        """The agent's whole environment: ``base`` without :attr:`unset`, then :attr:`env`."""
        merged = {k: v for k, v in base.items() if k not in self.unset}
        merged.update(self.env)
        return merged


@attrs.frozen(kw_only=True)
class AgentProfile:
    """How to point one agent at the scripted model (see the module docs).

    ``api`` is the provider API it calls (one of the script's ``APIS``);
    ``commands`` are the executable, package or module names that
    :func:`recognise` maps to it; ``env``, ``files`` (path under the home -> text)
    and ``args`` are templates; ``unset`` names variables removed from the
    inherited environment (beyond :data:`CONFIG_DIR_VARS`).
    """

    name: str
    api: str
    commands: tuple[str, ...] = attrs.field(default=(), converter=_strings)
    env: Mapping[str, str] = attrs.field(factory=dict, converter=_frozen_map)
    files: Mapping[str, str] = attrs.field(factory=dict, converter=_frozen_map)
    args: tuple[str, ...] = attrs.field(default=(), converter=_strings)
    unset: tuple[str, ...] = attrs.field(default=(), converter=_strings)
    description: str = ""

    def __attrs_post_init__(self) -> None:
        _check_profile(self)

    def setup(
        self, *, url: str, home: str, model: str = DEFAULT_MODEL, key: str = DUMMY_KEY
    ) -> AgentSetup:
        """Render this profile for a server at ``url`` (``http://HOST:PORT``) and an
        agent home ``home`` (an absolute path): pure, nothing is written."""
        url = url.rstrip("/")
        home = home.rstrip("/") or "/"
        values = {"url": url, "openai_url": f"{url}/v1", "home": home, "model": model, "key": key}
        env = {
            "HOME": home,
            "XDG_CONFIG_HOME": f"{home}/.config",
            "XDG_DATA_HOME": f"{home}/.local/share",
            "XDG_CACHE_HOME": f"{home}/.cache",
            "XDG_STATE_HOME": f"{home}/.local/state",
            # The common opt-out of telemetry (several CLIs honour it).
            "DO_NOT_TRACK": "1",
        }
        env.update({name: render(value, values) for name, value in self.env.items()})
        unset = tuple(dict.fromkeys(v for v in (*CONFIG_DIR_VARS, *self.unset) if v not in env))
        return AgentSetup(
            env=env,
            files={path: render(text, values) for path, text in self.files.items()},
            args=tuple(render(arg, values) for arg in self.args),
            unset=unset,
        )


# -- the built-in profiles ---------------------------------------------------------

_OPENAI_ENV = {
    "OPENAI_BASE_URL": "{openai_url}",
    "OPENAI_API_KEY": "{key}",
    "OPENAI_MODEL": "{model}",
}

QWEN = AgentProfile(
    name="qwen",
    api="openai_chat",
    commands=("qwen", "qwen-code", "@qwen-code/qwen-code"),
    env=_OPENAI_ENV,
    # Without these, every turn is followed by two side requests on the same model
    # (a memory extraction and follow-up suggestions) that would take script steps.
    files={
        ".qwen/settings.json": '{"memory": {"enableManagedAutoMemory": false}, '
        '"ui": {"enableFollowupSuggestions": false}}\n'
    },
    # The default, "auto", runs tools unasked.
    args=("--approval-mode", "default"),
    description="Qwen Code (`qwen --acp`): OPENAI_BASE_URL/OPENAI_API_KEY/OPENAI_MODEL; "
    "`--approval-mode default` so that it asks before tools (a read-only command such "
    "as echo still runs unasked); ~/.qwen/settings.json turns off its memory and "
    "suggestion side requests. It sends a non-standard craft/drainMidTurnQueue ACP "
    "request.",
)

OPENCODE = AgentProfile(
    name="opencode",
    api="openai_chat",
    commands=("opencode", "opencode-ai"),
    env={"OPENCODE_DISABLE_AUTOUPDATE": "1", "OPENCODE_DISABLE_MODELS_FETCH": "1"},
    files={
        ".config/opencode/opencode.json": """{
  "provider": {
    "scripted": {
      "npm": "@ai-sdk/openai-compatible",
      "name": "scripted",
      "options": {"baseURL": "{openai_url}", "apiKey": "{key}"},
      "models": {"{model}": {}, "{model}-small": {}}
    }
  },
  "model": "scripted/{model}",
  "small_model": "scripted/{model}-small",
  "autoupdate": false,
  "share": "disabled",
  "permission": {"bash": "ask", "edit": "ask"}
}
""",
    },
    description="OpenCode (`opencode acp`): an @ai-sdk/openai-compatible provider in "
    "~/.config/opencode/opencode.json (autoupdate off, permission ask for bash and edit), "
    "OPENCODE_DISABLE_AUTOUPDATE, OPENCODE_DISABLE_MODELS_FETCH. It fetches the provider "
    "package from the npm registry on first use. Its title request, sent alongside the "
    "turn, asks for the model MODEL-small: a script tells it apart with "
    '`when = {model_contains = "-small"}` (no setting turns it off).',
)

CODEX = AgentProfile(
    name="codex",
    api="openai_responses",
    commands=("codex-acp", "@agentclientprotocol/codex-acp", "@zed-industries/codex-acp"),
    env={
        "CODEX_HOME": "{home}/.codex",
        "SCRIPTED_API_KEY": "{key}",
        # read-only asks before running a command (approval_policy = "untrusted"
        # makes codex-acp exit).
        "INITIAL_AGENT_MODE": "read-only",
    },
    files={
        ".codex/config.toml": """model = "{model}"
model_provider = "scripted"

[model_providers.scripted]
name = "scripted"
base_url = "{openai_url}"
env_key = "SCRIPTED_API_KEY"
wire_api = "responses"
""",
    },
    description="Codex (`codex-acp`, ACP v2): a `scripted` model provider in "
    "CODEX_HOME/config.toml (wire_api = responses, no login needed); "
    "INITIAL_AGENT_MODE=read-only: a command runs in its read-only sandbox unasked, and "
    "asks (a permission request) when the call requests escalation (exec_command with "
    'sandbox_permissions = "require_escalated"); the model metadata warning is harmless.',
)

CLAUDE = AgentProfile(
    name="claude",
    api="anthropic",
    commands=(
        "claude-agent-acp",
        "@agentclientprotocol/claude-agent-acp",
        "claude-code-acp",
        "@zed-industries/claude-code-acp",
    ),
    env={
        "ANTHROPIC_BASE_URL": "{url}",
        "ANTHROPIC_API_KEY": "{key}",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_ERROR_REPORTING": "1",
    },
    files={".claude/settings.json": '{"permissions": {"defaultMode": "default"}}\n'},
    # IS_SANDBOX=yes (root in a container) makes session creation fail; the others
    # would send the turn to another provider or account.
    unset=(
        "IS_SANDBOX",
        "ANTHROPIC_AUTH_TOKEN",
        "CLAUDE_CODE_OAUTH_TOKEN",
        "CLAUDE_CODE_USE_BEDROCK",
        "CLAUDE_CODE_USE_VERTEX",
    ),
    description="Claude (`claude-agent-acp`, ACP v2): ANTHROPIC_BASE_URL/ANTHROPIC_API_KEY, "
    "non-essential traffic and telemetry off, ~/.claude/settings.json defaultMode "
    "'default' (asks); IS_SANDBOX removed. A title request precedes the turn.",
)

GEMINI = AgentProfile(
    name="gemini",
    api="gemini",
    commands=("gemini", "gemini-cli", "@google/gemini-cli"),
    env={
        "GEMINI_API_KEY": "{key}",
        "GOOGLE_GEMINI_BASE_URL": "{url}",
        "GEMINI_TELEMETRY_ENABLED": "false",
        # It otherwise restarts itself with a bigger heap (~0.7 s).
        "GEMINI_CLI_NO_RELAUNCH": "true",
    },
    # No usage statistics, telemetry or update checks: nothing but the model is called.
    files={
        ".gemini/settings.json": '{"privacy": {"usageStatisticsEnabled": false}, '
        '"telemetry": {"enabled": false}, '
        '"general": {"disableAutoUpdate": true, "disableUpdateNag": true}}\n'
    },
    # Any of these would send the turn to Vertex AI / Code Assist instead.
    unset=(
        "GOOGLE_API_KEY",
        "GOOGLE_GENAI_USE_VERTEXAI",
        "GOOGLE_GENAI_USE_GCA",
        "GOOGLE_CLOUD_PROJECT",
        "GOOGLE_APPLICATION_CREDENTIALS",
    ),
    description="Gemini CLI (`gemini --acp`): GEMINI_API_KEY, GOOGLE_GEMINI_BASE_URL; its "
    "default mode asks (a command it deems read-only, such as echo, runs unasked). Its "
    "model router first sends a generateContent request with a "
    "response schema (answered without a script step).",
)

FAST_AGENT = AgentProfile(
    name="fast-agent",
    api="openai_chat",
    commands=("fast-agent-acp", "fast-agent", "fast-agent-mcp"),
    # FAST_AGENT_HOME is searched before the working directory and --config-path
    # names the file outright: no fastagent.config.yaml in the cwd is needed or read.
    env={"FAST_AGENT_HOME": "{home}/.fast-agent"},
    files={
        ".fast-agent/fastagent.config.yaml": """default_model: generic.{model}
generic:
  api_key: "{key}"
  base_url: "{openai_url}"
""",
    },
    # -x: the shell tool (without it the agent has no tool to call); permission
    # requests are on by default (--no-permissions turns them off).
    args=(
        "--model",
        "generic.{model}",
        "--config-path",
        "{home}/.fast-agent/fastagent.config.yaml",
        "-x",
    ),
    description="fast-agent (`fast-agent-acp`): a `generic` provider in "
    "FAST_AGENT_HOME/fastagent.config.yaml, named by --config-path; `--model "
    "generic.MODEL -x` (the shell tool). With no terminal/fs client capability it sent "
    "a tool_call but no permission request.",
)

KIMI = AgentProfile(
    name="kimi",
    api="openai_chat",
    commands=("kimi", "kimi-cli"),
    env={"KIMI_SHARE_DIR": "{home}/.kimi"},
    files={
        ".kimi/config.toml": """default_model = "scripted"

[providers.scripted]
type = "openai_legacy"
base_url = "{openai_url}"
api_key = "{key}"

[models.scripted]
provider = "scripted"
model = "{model}"
max_context_size = 131072
""",
        # Its ACP server demands a login token file whatever the provider: a
        # placeholder lets it start (never sent anywhere: the provider has a key).
        ".kimi/credentials/kimi-code.json": """{
  "access_token": "placeholder",
  "refresh_token": "placeholder",
  "expires_at": 4102444800.0,
  "scope": "kimi-code",
  "token_type": "bearer"
}
""",
    },
    description="Kimi CLI (`kimi acp`): an openai_legacy provider in ~/.kimi/config.toml "
    "and a placeholder ~/.kimi/credentials/kimi-code.json (its ACP server demands a "
    "login token file); asks by default.",
)

VIBE = AgentProfile(
    name="vibe",
    api="openai_chat",
    commands=("vibe-acp", "vibe", "mistral-vibe"),
    env={"VIBE_HOME": "{home}/.vibe", "SCRIPTED_API_KEY": "{key}"},
    files={
        ".vibe/config.toml": """active_model = "scripted"

[[providers]]
name = "scripted"
api_base = "{openai_url}"
api_key_env_var = "SCRIPTED_API_KEY"
api_style = "openai"

[[models]]
name = "{model}"
provider = "scripted"
alias = "scripted"

[session_logging]
generate_titles = false
""",
    },
    description="Mistral Vibe (`vibe-acp`): an openai-style provider in "
    "VIBE_HOME/config.toml, its key in SCRIPTED_API_KEY, session titles off (a title "
    "request would follow the first turn); asks by default.",
)

COPILOT = AgentProfile(
    name="copilot",
    api="openai_chat",
    commands=("copilot", "@github/copilot"),
    env={
        "COPILOT_PROVIDER_BASE_URL": "{openai_url}",
        "COPILOT_PROVIDER_TYPE": "openai",
        "COPILOT_PROVIDER_API_KEY": "{key}",
        "COPILOT_PROVIDER_WIRE_API": "completions",
        "COPILOT_MODEL": "{model}",
        "COPILOT_OFFLINE": "true",
    },
    description="GitHub Copilot CLI (`copilot --acp`; npm @github/copilot, Node 22): its "
    "bring-your-own-key variables (COPILOT_PROVIDER_BASE_URL, _TYPE, _API_KEY, _WIRE_API, "
    "COPILOT_MODEL) and COPILOT_OFFLINE=true, which spares it a GitHub login. Tried once "
    "by hand (1.0.102): a full turn, and a bash tool call with a permission request "
    "(its default mode asks).",
)

GENERIC = AgentProfile(
    name="generic",
    api="openai_chat",
    env={
        **_OPENAI_ENV,
        "ANTHROPIC_BASE_URL": "{url}",
        "ANTHROPIC_API_KEY": "{key}",
        "GOOGLE_GEMINI_BASE_URL": "{url}",
        "GEMINI_API_KEY": "{key}",
        "GOOGLE_API_KEY": "{key}",
    },
    description="Any other agent: the common OpenAI, Anthropic and Gemini base-URL and "
    "key variables (which API it calls is up to the agent).",
)
"""The profile of an agent :func:`recognise` does not know."""

#: The built-in profiles by name (``generic`` included).
PROFILES: Mapping[str, AgentProfile] = {
    p.name: p for p in (QWEN, OPENCODE, CODEX, CLAUDE, GEMINI, FAST_AGENT, KIMI, VIBE, COPILOT)
} | {GENERIC.name: GENERIC}


def profile_named(name: str) -> AgentProfile:
    """The built-in profile ``name``; :class:`ModelScriptError` lists the names if unknown."""
    try:
        return PROFILES[name]
    except KeyError:
        raise ModelScriptError(f"no agent profile {name!r}; known: {', '.join(PROFILES)}") from None


# -- recognising an agent from its command line -------------------------------------

#: Commands that run another program named by a later word.
_LAUNCHERS = frozenset(
    {"npx", "pnpx", "bunx", "npm", "pnpm", "yarn", "bun", "node", "nodejs", "deno"}
    | {"uvx", "uv", "pipx", "python", "python3", "py", "pypy3", "env", "exec"}
)
_PYTHON = re.compile(r"(python|pypy)(\d+(\.\d+)?)?|py")
#: Subcommand words of the launchers (``npm exec``, ``uv tool run``, ...).
_VERBS = frozenset({"exec", "dlx", "x", "run", "tool", "--"})
#: Launcher options that take a value in the next word.
_VALUE_OPTIONS = frozenset(
    {"-p", "--package", "--from", "--with", "--python", "--spec", "-r", "--require"}
    | {"--import", "--node-options", "--index-url", "--registry", "--cwd", "-C", "-c"}
)
_EXTENSIONS = (".exe", ".cmd", ".bat", ".ps1", ".js", ".mjs", ".cjs", ".py")


def _names_of(word: str) -> list[str]:
    """The names a word of a command line may be known by: itself without a version
    (``@scope/pkg@1.2`` -> ``@scope/pkg``, ``pkg==1.2`` -> ``pkg``), its file name
    without extension, and each package named in a path (``.../@scope/pkg/cli.js``)."""
    word = word.strip().lower()
    names: list[str] = []
    plain = re.split(r"==|>=|<=|~=|\[", word, maxsplit=1)[0]
    if plain.startswith("@"):
        scope, _, rest = plain.partition("/")
        plain = f"{scope}/{rest.split('@', 1)[0]}" if rest else scope
    else:
        plain = plain.split("@", 1)[0] if "/" not in plain else plain
    names.append(plain)
    parts = [p for p in re.split(r"[/\\]", plain) if p]
    if parts:
        base = parts[-1]
        for ext in _EXTENSIONS:
            base = base.removesuffix(ext)
        names.append(base)
        names.extend(parts)
        names.extend(f"{a}/{b}" for a, b in itertools.pairwise(parts) if a[0] == "@")
    # A Python module: fast_agent.acp -> fast-agent.
    names.extend(n.split(".", 1)[0].replace("_", "-") for n in list(names))
    return names


def _match(word: str, profiles: Mapping[str, AgentProfile]) -> AgentProfile | None:
    names = _names_of(word)
    for profile in profiles.values():
        if any(n in profile.commands for n in names):
            return profile
    return None


def _launcher(word: str) -> bool:
    names = _names_of(word)
    base = names[1] if len(names) > 1 else names[0]
    return base in _LAUNCHERS or bool(_PYTHON.fullmatch(base))


def recognise(argv: Sequence[str], profiles: Mapping[str, AgentProfile] = PROFILES) -> AgentProfile:
    """The profile of the agent that ``argv`` starts: by the program's name, or for
    a launcher (``npx``, ``node``, ``uvx``, ``python -m``, ``env``, ...) by the package,
    script or module it runs, looked up in the ``commands`` of ``profiles`` (the
    built-in ones by default; pass your own to add to them). An agent it does not
    know gets :data:`GENERIC`."""
    words = list(argv)
    if not words:
        return GENERIC
    found = _match(words[0], profiles)
    if found is not None or not _launcher(words[0]):
        return found or GENERIC
    value_next = False
    for word in words[1:]:
        if value_next:
            value_next = False
            found = _match(word, profiles)  # npx -p PKG, uvx --from PKG: the package itself
            if found is not None:
                return found
            continue
        if word in _VERBS or ("=" in word and not word.startswith("-")):
            continue  # a subcommand, or env's NAME=VALUE
        if word.startswith("-"):
            value_next = word in _VALUE_OPTIONS or word == "-m"
            continue
        if _launcher(word):
            continue  # env python -m ..., npx node ...
        return _match(word, profiles) or GENERIC  # the program, package or script it runs
    return GENERIC
