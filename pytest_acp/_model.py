"""The ``acp_model`` fixture: a scripted model provider for this test (issue 23).

It serves :class:`acp_lite.models.ScriptedModel` over HTTP on ``127.0.0.1`` (a free
port) from a background thread (:func:`acp_lite.models.server.run_in_thread`) for
the test, then stops it and checks what it got: a request no step matched, or a
body that is not JSON, is an error of the test at teardown, the request shown (as
pytest-httpserver reports what it did not expect). The script comes from the
``acp_model`` marker's ``script=``, else ``--acp-model-script`` / ini
``acp_model_script``, else it is empty until the test calls
:meth:`ModelFixture.script`. A test given no script replays its model cassette, or
records one from ``--acp-model-record=URL`` (:mod:`pytest_acp._model_cassette`).

Agent profiles (:mod:`acp_lite.models.profiles`) point a real agent at the server:
:meth:`ModelFixture.env_for` gives the environment (and a temporary home with the
profile's files) for an agent the test starts itself, and :func:`model_command`
launches the agent under test (``acp_agent_command``, configured or overridden,
when ``acp_client`` / ``acp_async_client`` start it) that way whenever the test uses
the scripted model: the fixture,
the marker, or one of the ``--acp-model-*`` options. Its profile: the marker's
``profile=`` > ``--acp-model-profile`` > ini ``acp_model_profile`` > recognised from
the agent's command line (``qwen --acp`` -> ``qwen``; unknown: ``generic``).

acp_lite.models, trio and h11 load when a test uses the fixture, not before (the
plugin loads in every pytest run).
"""

from __future__ import annotations

import importlib
import os
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, TypeAlias

import attrs
import pytest

from pytest_acp import _model_cassette
from pytest_acp._settings import AgentCommand

if TYPE_CHECKING:  # acp_lite.models loads with the fixture
    from collections.abc import Awaitable

    from acp_lite.jsontypes import JsonValue
    from acp_lite.models import (
        Answer,
        CheckedModel,
        HttpRequest,
        ModelScript,
        RecordedRequest,
    )
    from acp_lite.models.home import PreparedAgent
    from acp_lite.models.profiles import AgentProfile

    #: What :meth:`ModelFixture.script` and the marker take: a script, a whole script
    #: as a dict, its list of step dicts, or the path of a ``.json`` / ``.toml`` file.
    ScriptSource: TypeAlias = (
        ModelScript
        | Mapping[str, JsonValue]
        | Sequence[Mapping[str, JsonValue]]
        | str
        | os.PathLike[str]
    )

__all__ = [
    "MARKER",
    "ModelFixture",
    "acp_model",
    "add_options",
    "model_command",
    "refuse_shared_model_agent",
]

MARKER = (
    "acp_model(script=None, *, profile=None): run this test on the acp_model fixture's "
    "scripted model provider. script: a dict (a whole script), a list of step dicts, an "
    "acp_lite.models.ModelScript, or the path of a .json / .toml script relative to "
    "the test file; profile: the agent profile (a name such as 'qwen', or an "
    "acp_lite.models.profiles.AgentProfile) the agent under test is launched with "
    "(default: recognised from its command)."
)

#: What names an agent profile: a built-in profile's name or a profile itself.
ProfileSource: TypeAlias = "str | AgentProfile"


def add_options(parser: pytest.Parser, group: pytest.OptionGroup) -> None:
    """Register ``--acp-model-script`` / ``--acp-model-profile`` and their ini keys."""
    parser.addini(
        "acp_model_script",
        "script of the acp_model fixture (.json / .toml, relative to the ini file) for "
        "tests whose acp_model marker names none",
        type="string",
        default="",
    )
    group.addoption(
        "--acp-model-script",
        dest="acp_model_script",
        metavar="FILE",
        help="script of the acp_model fixture's scripted model provider (.json / .toml) "
        "for tests whose acp_model marker names none (default: an empty script); the "
        "agent under test is launched on it",
    )
    parser.addini(
        "acp_model_profile",
        "agent profile the agent under test is launched with on the scripted model "
        "(default: recognised from its command)",
        type="string",
        default="",
    )
    group.addoption(
        "--acp-model-profile",
        dest="acp_model_profile",
        metavar="NAME",
        help="launch the agent under test on the acp_model scripted model with this agent "
        "profile (qwen, opencode, codex, claude, gemini, fast-agent, kimi, vibe, copilot, "
        "generic; default: recognised from the agent command)",
    )


def _models() -> ModuleType:
    """``acp_lite.models.server``, or a failure naming the extra that installs h11."""
    # import_module, not `from acp_lite.models import server`: that finds a module
    # attribute left by an import that sys.modules no longer holds.
    try:
        return importlib.import_module("acp_lite.models.server")
    except ImportError as exc:
        missing = str(exc)
    pytest.fail(
        f"the acp_model fixture needs h11: pip install 'acp-lite[models]' ({missing})",
        pytrace=False,
    )


def _as_script(value: ScriptSource, base: Path, name: str) -> ModelScript:
    """A :class:`ModelScript` from what a test gives: a script, a dict, a list of
    steps (named ``name``) or a path (relative to ``base``)."""
    from acp_lite.models import ModelScript, load_model_script

    if isinstance(value, ModelScript):
        return value
    if isinstance(value, str | os.PathLike):
        return load_model_script(base / Path(value))
    if isinstance(value, Mapping):
        return ModelScript.from_dict(value)
    if isinstance(value, Sequence):
        return ModelScript.from_dict({"name": name, "steps": list(value)})
    raise TypeError(
        f"a model script is a ModelScript, a dict, a list of step dicts or a path, not {value!r}"
    )


class _Switch:
    """The server's handler: the :class:`ScriptedModel` of the current script (or the
    test's model cassette), which :meth:`ModelFixture.script` replaces while the
    server runs (its thread calls this)."""

    def __init__(self, model: CheckedModel) -> None:
        self.lock = threading.Lock()
        self.models = [model]

    @property
    def current(self) -> CheckedModel:
        with self.lock:
            return self.models[-1]

    def replace(self, model: CheckedModel) -> None:
        with self.lock:
            self.models.append(model)

    def __call__(self, request: HttpRequest) -> Answer | Awaitable[Answer]:
        return self.current(request)


@attrs.define(eq=False, repr=False)
class ModelFixture:
    """The ``acp_model`` fixture: a scripted model provider serving this test.

    Point a provider client at :attr:`url` (OpenAI's at :attr:`openai_base_url`);
    :meth:`script` sets what it answers; :attr:`requests` is what it got.
    """

    #: ``http://127.0.0.1:PORT``: the base URL of Anthropic's and Gemini's clients.
    url: str
    port: int
    _switch: _Switch = attrs.field(alias="switch")
    _base: Path = attrs.field(alias="base")
    #: Where the first script came from (named in teardown failures).
    origin: str = "an empty script"
    #: Makes the temporary homes of :meth:`prepare` (the test's tmp dirs).
    _make_home: Callable[[str], Path] | None = attrs.field(default=None, alias="make_home")
    _prepared: dict[tuple[str, str], PreparedAgent] = attrs.field(factory=dict, init=False)

    @property
    def openai_base_url(self) -> str:
        """``http://127.0.0.1:PORT/v1``: what OpenAI's clients take as ``base_url``."""
        return f"{self.url}/v1"

    @property
    def model(self) -> CheckedModel:
        """The model answering now: the scripted model of the last script set (or the
        test's model cassette's replay or recorder)."""
        return self._switch.current

    @property
    def requests(self) -> tuple[RecordedRequest, ...]:
        """Every request so far, under every script of this test, in order
        (``index`` counts across scripts; secrets redacted)."""
        with self._switch.lock:
            models = list(self._switch.models)
        found = [r for model in models for r in model.requests]
        return tuple(attrs.evolve(r, index=i) for i, r in enumerate(found))

    @property
    def unmatched(self) -> tuple[RecordedRequest, ...]:
        """The requests no step matched (under every script of this test)."""
        with self._switch.lock:
            models = list(self._switch.models)
        return tuple(r for model in models for r in model.unmatched)

    def script(self, script: ScriptSource) -> None:
        """Answer what follows from ``script`` (the steps of the one before are
        dropped): a list of step dicts, a whole script as a dict, a
        :class:`~acp_lite.models.ModelScript`, or the path of a ``.json`` / ``.toml``
        script relative to the test file. A malformed one raises
        ``ModelScriptError``."""
        from acp_lite.models import ScriptedModel

        self._switch.replace(ScriptedModel(_as_script(script, self._base, "acp_model script")))

    def reply(self, text: str, *, repeat: bool = False) -> None:
        """Shorthand for ``script([{"type": "reply", "text": text}])``: the next
        request gets ``text`` (with ``repeat=True``, every request)."""
        self.script([{"type": "reply", "text": text, "repeat": repeat}])

    def check(self, *, all_steps_used: bool = False) -> None:
        """Raise ``AssertionError`` with every request no step matched (or whose body
        was not JSON), each shown, under every script so far; with
        ``all_steps_used``, also the current script's steps no request used. The
        fixture runs it (without ``all_steps_used``) at teardown."""
        __tracebackhide__ = True
        problems = self.problems(all_steps_used=all_steps_used)
        if problems:
            raise AssertionError(problems)

    def problems(self, *, all_steps_used: bool = False) -> str:
        """What :meth:`check` would raise with (``""``: nothing wrong)."""
        with self._switch.lock:
            models = list(self._switch.models)
        problems: list[str] = []
        for model in models:
            try:
                model.check(all_steps_used=all_steps_used and model is models[-1])
            except AssertionError as exc:
                problems.append(str(exc))
        if not problems:
            return ""
        return "\n\n".join([f"acp_model (first script: {self.origin}):", *problems])

    def prepare(
        self, profile: ProfileSource = "generic", *, model: str | None = None
    ) -> PreparedAgent:
        """``profile`` rendered for this server, its files written in a temporary home
        (one per profile and model in a test, kept with the test's tmp dirs so that
        what the agent wrote there can be read after a failure): ``.env``, ``.home``,
        ``.setup.args`` and ``.argv(command)``."""
        from acp_lite.models.home import PreparedAgent, prepare_home
        from acp_lite.models.profiles import DEFAULT_MODEL, AgentProfile, profile_named

        chosen = profile if isinstance(profile, AgentProfile) else profile_named(profile)
        model = DEFAULT_MODEL if model is None else model
        key = (chosen.name, model)
        if key not in self._prepared:
            home = self._home(chosen.name)
            setup = chosen.setup(url=self.url, home=str(home), model=model)
            env = prepare_home(setup, home)
            self._prepared[key] = PreparedAgent(home=home, setup=setup, env=env)
        return self._prepared[key]

    def env_for(
        self, profile: ProfileSource = "generic", *, model: str | None = None
    ) -> dict[str, str]:
        """The whole environment to start an agent with so that it calls this server:
        this process's, without the variables that would point the agent elsewhere,
        with ``profile``'s (``HOME`` and the XDG directories in a temporary home that
        holds the profile's files). Pass it whole (``subprocess.Popen(env=...)``, or
        ``acp_lite.connect(..., env=..., inherit_env=False)``); the profile's extra
        arguments are in ``prepare(profile).setup.args``."""
        return dict(self.prepare(profile, model=model).env)

    def _home(self, name: str) -> Path:
        if self._make_home is not None:
            return self._make_home(name)
        import tempfile

        return Path(tempfile.mkdtemp(prefix=f"acp-lite-home-{name}-")).resolve()

    def __repr__(self) -> str:
        return f"<ModelFixture {self.url} script {self.model.name!r}>"


_EMPTY = "an empty script"


def _initial(request: pytest.FixtureRequest) -> tuple[ModelScript, str]:
    """The test's first script and where it came from: the marker's, else the
    option's / ini key's, else an empty one."""
    from acp_lite.errors import ModelScriptError
    from acp_lite.models import ModelScript

    node = request.node
    config = request.config
    marker = node.get_closest_marker("acp_model")
    where = f"@pytest.mark.acp_model ({node.nodeid})"
    value: ScriptSource | None = None
    base = Path(request.path).parent
    if marker is not None:
        unknown = sorted(set(marker.kwargs) - {"script", "profile"})
        if unknown or len(marker.args) > 1 or (marker.args and "script" in marker.kwargs):
            pytest.fail(f"{where}: takes one script (script=...), got {marker}", pytrace=False)
        value = marker.kwargs.get("script", marker.args[0] if marker.args else None)
        try:
            _check_profile(marker.kwargs.get("profile"), where)
        except pytest.UsageError as exc:
            problem = str(exc)
        else:
            problem = ""
        if problem:  # failed out of the except block: the message is the whole story
            pytest.fail(problem, pytrace=False)
    if value is None:
        option = config.getoption("acp_model_script", None)
        if option:
            value, base, where = option, config.invocation_params.dir, "--acp-model-script"
        elif ini := config.getini("acp_model_script"):
            base = config.inipath.parent if config.inipath is not None else config.rootpath
            value, where = ini, "ini acp_model_script"
    if value is None:
        return ModelScript(name="empty acp_model script"), _EMPTY
    try:
        script = _as_script(value, base, "acp_model marker script")
    except (ModelScriptError, TypeError) as exc:
        error = f"{where}: {exc}"
    else:
        error = ""
    if error:  # failed out of the except block: the message is the whole story
        pytest.fail(error, pytrace=False)
    shown = f" {os.fspath(value)!r}" if isinstance(value, str | os.PathLike) else ""
    return script, f"{where}{shown}"


@pytest.fixture
def acp_model(request: pytest.FixtureRequest) -> Iterator[ModelFixture]:
    """A scripted model provider (:class:`ModelFixture`) on ``127.0.0.1`` for this test.

    Its script: ``@pytest.mark.acp_model(script=...)`` > ``--acp-model-script`` > ini
    ``acp_model_script`` > empty; :meth:`ModelFixture.script` replaces it. At teardown
    the server is stopped and a request no step matched fails the test (an error at
    teardown, each such request shown).
    """
    server = _models()
    from acp_lite.models import ScriptedModel

    script, origin = _initial(request)
    factory: pytest.TempPathFactory = request.getfixturevalue("tmp_path_factory")
    tape = _model_cassette.tape_for(request, scripted=origin != _EMPTY)
    if tape is not None:
        origin = tape.origin
    switch = _Switch(tape.handler if tape is not None else ScriptedModel(script))
    with server.run_in_thread(switch) as running:
        fixture = ModelFixture(
            running.url,
            running.port,
            switch=switch,
            base=Path(request.path).parent,
            origin=origin,
            make_home=lambda name: factory.mktemp(f"acp-lite-home-{name}").resolve(),
        )
        yield fixture
    if tape is not None:
        tape.finish()  # the server stopped: every stream is recorded
    problems = fixture.problems()
    if problems:
        pytest.fail(problems, pytrace=False)


def uses_model(node: pytest.Item, config: pytest.Config) -> bool:
    """Whether ``node`` runs on the scripted model: it uses the ``acp_model``
    fixture or marker, or a ``--acp-model-*`` option / ini key is set."""
    if "acp_model" in getattr(node, "fixturenames", ()):
        return True
    if node.get_closest_marker("acp_model") is not None:
        return True
    options = ("acp_model_script", "acp_model_profile", "acp_model_record")
    return any(config.getoption(o, None) or config.getini(o) for o in options)


def _check_profile(value: object, where: str) -> AgentProfile | None:
    """The profile ``value`` names (``None``: none given); a usage error naming
    ``where`` it came from if it names none."""
    from acp_lite.errors import ModelScriptError
    from acp_lite.models.profiles import AgentProfile, profile_named

    if value is None or value == "":
        return None
    if isinstance(value, AgentProfile):
        return value
    if not isinstance(value, str):
        raise pytest.UsageError(f"{where}: a profile is a name or an AgentProfile, not {value!r}")
    try:
        return profile_named(value)
    except ModelScriptError as exc:
        error = f"{where}: {exc}"
    raise pytest.UsageError(error)


def _profile_of(request: pytest.FixtureRequest, command: AgentCommand) -> AgentProfile:
    """The agent profile: the marker's > ``--acp-model-profile`` > ini > recognised."""
    from acp_lite.models.profiles import recognise

    node, config = request.node, request.config
    marker = node.get_closest_marker("acp_model")
    sources: list[tuple[str, object]] = []
    if marker is not None:
        sources.append((f"@pytest.mark.acp_model ({node.nodeid})", marker.kwargs.get("profile")))
    sources.append(("--acp-model-profile", config.getoption("acp_model_profile", None)))
    sources.append(("ini acp_model_profile", config.getini("acp_model_profile")))
    for where, value in sources:
        profile = _check_profile(value, where)
        if profile is not None:
            return profile
    return recognise(command.argv)


def model_command(request: pytest.FixtureRequest, command: AgentCommand) -> AgentCommand:
    """``command`` launched on this test's scripted model when the test uses one (see
    :func:`uses_model`): its profile's arguments appended, its environment set (the
    command's own ``env``, from the marker or ``--acp-env``, wins), the variables
    that would point it elsewhere removed. An agent in this process is left as it is."""
    if command.in_process is not None or not uses_model(request.node, request.config):
        return command
    fixture: ModelFixture = request.getfixturevalue("acp_model")
    prepared = fixture.prepare(_profile_of(request, command))
    # The profile's whole environment (this process's, without what would point the
    # agent elsewhere), as env_for gives it; the command's own env on top.
    return AgentCommand(
        tuple(prepared.argv(command.argv)),
        {**prepared.env, **command.env},
        command.cwd,
        inherit_env=False,
    )


def refuse_shared_model_agent(
    node: pytest.Item, config: pytest.Config, scope: str, command: AgentCommand
) -> None:
    """Fail ``node`` if its shared (``scope``) agent would run on its scripted model,
    which lives for one test."""
    if command.in_process is None and uses_model(node, config):
        pytest.fail(
            f"{node.nodeid}: the agent runs on this test's scripted model (acp_model), "
            f"which lives for one test: it needs the 'function' acp scope, not {scope!r}",
            pytrace=False,
        )
