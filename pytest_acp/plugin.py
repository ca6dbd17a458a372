"""The pytest plugin (entry point ``pytest11: acp``; disable with ``-p no:acp``).

Fixtures: ``acp_agent_command``, ``acp_timeout``, ``acp_permission_policy``,
``acp_elicitation_policy`` (configuration, overridable), ``acp_client``,
``acp_session``, ``acp_async_client``, ``acp_async_session`` (trio, with
pytest-trio), ``acp_snapshot``, ``acp_normalize``, ``acp_transcript``,
``acp_fake_agent`` (a scripted fake agent for testing clients, ``_fake_agent.py``),
``acp_cassette_command`` (a cassette's agent command, for code that starts its
agent itself, ``_cassette_command.py``) and ``acp_model`` (a scripted model
provider for agents, ``_model.py``).

Options (``pytest --help``, group "acp") and ini keys share names: ``--acp-agent`` /
``acp_agent`` ... A marker beats the command line, which beats the ini file.
Tests marked ``acp_cassette`` record their traffic in a cassette and replay it
without the agent (``--acp-record-mode``; :mod:`pytest_acp._cassettes`).
After each test that used an ACP client, its traffic is checked for conformance
(``--acp-conformance=off|warn|strict``); when such a test fails, its report shows
the wire transcript and the agent's stderr tail.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import AsyncIterator, Callable, Generator, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_acp import _settings as settings
from pytest_acp._cassette_command import acp_cassette_command as acp_cassette_command  # fixture
from pytest_acp._cassette_command import command_mismatch
from pytest_acp._cassettes import (
    CALL_FAILED,
    cassette_of,
    is_replay,
    mismatch_error,
    warn_if_unused,
)
from pytest_acp._clients import (
    Handshake,
    Policies,
    Pool,
    close_quietly,
    connect,
    connect_async,
)
from pytest_acp._diagnostics import (
    fail_test,
    hide_library_frames,
    render_stderr,
    render_transcript,
)
from pytest_acp._fake_agent import acp_fake_agent as acp_fake_agent  # a fixture
from pytest_acp._fake_agent import call_problems, failure_message
from pytest_acp._html_report import configure_html
from pytest_acp._model import acp_model as acp_model  # a fixture
from pytest_acp._model import model_command, refuse_shared_model_agent
from pytest_acp._options import MARKERS, add_options, check_markers, fail_bad_markers
from pytest_acp._probes import close_runs as close_probe_runs
from pytest_acp._probes import collect_probe_items
from pytest_acp._probes import generate as generate_probe_tests
from pytest_acp._report import configure_report, note_checked
from pytest_acp._tracking import (
    TRACKED,
    VIOLATIONS,
    TestTranscript,
    save_transcripts,
    track,
    tracked_violations,
    traffic_of,
)
from pytest_acp.hooks import AcpHookSpecs
from pytest_acp.normalize import Normalizer, normalize

if TYPE_CHECKING:  # acp_lite loads with the first ACP fixture, syrupy with acp_snapshot
    from acp_lite.aio import AsyncClient, AsyncSession, TerminalHandler
    from acp_lite.client import Client, Session
    from acp_lite.files import FileHandler
    from acp_lite.jsontypes import JsonObject
    from acp_lite.permissions import ElicitationPolicy, PermissionPolicy
    from pytest_acp.conformance import Violation
    from pytest_acp.snapshot import AcpSnapshotAssertion

__all__ = ["AcpConformanceError", "AcpConformanceWarning", "AgentCommand", "TestTranscript"]

AgentCommand = settings.AgentCommand


class AcpConformanceWarning(UserWarning):
    """The agent broke ACP rules during a test (``--acp-conformance=warn``)."""


class AcpConformanceError(AssertionError):
    """The agent broke ACP rules during a test (``--acp-conformance=strict``)."""

    def __init__(self, message: str, violations: list[Violation]) -> None:
        super().__init__(message)
        self.violations = violations


# --- registration ------------------------------------------------------------------


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    pluginmanager.add_hookspecs(AcpHookSpecs)


def pytest_addoption(parser: pytest.Parser) -> None:
    add_options(parser)


def pytest_configure(config: pytest.Config) -> None:
    for line in MARKERS:
        config.addinivalue_line("markers", line)
    config.stash[_POOLS] = {}
    configure_report(config)  # --acp-report-json
    configure_html(config)  # --acp-html


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    # First, so -k / -m / deselection see them: the --acp-probes tests.
    items.extend(collect_probe_items(session, config))
    # Before any test runs: a marker keyword nothing reads would let a test pass
    # with settings it did not ask for.
    check_markers(config, items)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    generate_probe_tests(metafunc)  # pytest_acp.probes.acp_probe_suite


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    fail_bad_markers(item)  # under xdist: see check_markers


def pytest_unconfigure(config: pytest.Config) -> None:
    close_probe_runs(config)
    # A safety net: module/session pools close through their fixtures' teardown.
    for pool in config.stash.get(_POOLS, {}).values():
        pool.close()


#: ACP fixtures that bring their own agent, or use none: the header's agent is not theirs.
_OWN_AGENT_FIXTURES = frozenset({"acp_fake_agent", "acp_model"})


#: The scripted model's options: they alone do not make a run an ACP one.
_MODEL_OPTIONS = frozenset({"acp_model_script", "acp_model_profile", "acp_model_record"})


def _uses_acp(config: pytest.Config, items: Sequence[pytest.Item]) -> bool:
    # Installed plugins load in every project: say nothing unless this run is an
    # ACP one (an ACP fixture or marker in a collected test, or an --acp option).
    # A run that only uses fake agents never starts the configured one.
    if any(
        value not in (None, False, "", [], ())
        for name, value in vars(config.option).items()
        if name.startswith("acp_") and name not in _MODEL_OPTIONS
    ):
        return True
    for item in items:
        names = getattr(item, "fixturenames", ())
        if any(n.startswith("acp_") and n not in _OWN_AGENT_FIXTURES for n in names):
            return True
        if any(m.name.startswith("acp_") and m.name != "acp_model" for m in item.iter_markers()):
            return True
    return False


def pytest_report_collectionfinish(
    config: pytest.Config, start_path: Path, items: Sequence[pytest.Item]
) -> str | list[str]:
    if not _uses_acp(config, items):
        return []
    configured = config.getoption("acp_agent", None) or config.getini("acp_agent")
    agent = configured or "reference agent (acp_lite.testing.agent)"
    mode = config.getoption("acp_conformance", None) or config.getini("acp_conformance") or "warn"
    return f"acp: agent={agent}, conformance={mode}"


# --- shared agents ---------------------------------------------------------------

_POOLS = pytest.StashKey[dict[str, Pool]]()


def _pool_fixture(scope: str) -> Callable[[pytest.FixtureRequest], Iterator[Pool]]:
    def fixture(request: pytest.FixtureRequest) -> Iterator[Pool]:
        pool = Pool()
        pools = request.config.stash[_POOLS]
        pools[f"{scope}:{id(pool)}"] = pool
        try:
            yield pool
        finally:
            pool.close()
            pools.pop(f"{scope}:{id(pool)}", None)

    fixture.__name__ = f"_acp_{scope}_pool"
    return fixture


_acp_module_pool = pytest.fixture(scope="module", name="_acp_module_pool")(_pool_fixture("module"))
_acp_session_pool = pytest.fixture(scope="session", name="_acp_session_pool")(
    _pool_fixture("session")
)


# --- configuration fixtures ----------------------------------------------------------


@pytest.fixture
def acp_agent_command(request: pytest.FixtureRequest) -> AgentCommand:
    """The agent under test (``acp_agent`` marker > ``--acp-agent`` > ini ``acp_agent`` >
    the reference agent). Override it to compute the command; an argv list or a
    command string is accepted too."""
    return settings.agent_command(request.node, request.config)


@pytest.fixture
def acp_timeout(request: pytest.FixtureRequest) -> float:
    """Default timeout of every ACP call (marker > ``--acp-timeout`` > ini > 30 s)."""
    return settings.timeout_of(request.node, request.config)


@pytest.fixture
def acp_permission_policy(request: pytest.FixtureRequest) -> PermissionPolicy:
    """How permission requests are answered (default: reject_once). Override to customise."""
    return settings.permission_policy(request.node, request.config)


@pytest.fixture
def acp_elicitation_policy(request: pytest.FixtureRequest) -> ElicitationPolicy:
    """How elicitation requests are answered (default: decline). Override to customise."""
    return settings.elicitation_policy(request.node, request.config)


@pytest.fixture
def acp_files(request: pytest.FixtureRequest) -> FileHandler | None:
    """What serves the agent's ``fs/*`` requests (v1): ``acp_lite.LocalFiles``, confined
    to the session's directories, with ``--acp-files``, ini ``acp_files`` or
    ``@pytest.mark.acp_serve(files=True)``; else ``None``. Override to serve your own."""
    handler: FileHandler | None = settings.served(request.node, request.config, "files")
    return handler


@pytest.fixture
def acp_terminals(request: pytest.FixtureRequest) -> TerminalHandler | None:
    """What serves the agent's ``terminal/*`` requests (v1): a new
    ``acp_lite.LocalTerminals`` (cwd confined to the session's directories) with
    ``--acp-terminals``, ini ``acp_terminals`` or ``@pytest.mark.acp_serve(terminals=True)``;
    else ``None``. Override to serve your own."""
    handler: TerminalHandler | None = settings.served(request.node, request.config, "terminals")
    return handler


# --- client fixtures -----------------------------------------------------------------


@pytest.fixture
def acp_client(
    request: pytest.FixtureRequest,
    acp_agent_command: object,
    acp_timeout: float,
    acp_permission_policy: PermissionPolicy,
    acp_elicitation_policy: ElicitationPolicy,
    acp_files: FileHandler | None,
    acp_terminals: TerminalHandler | None,
) -> Iterator[Client]:
    """A connected blocking ``acp_lite.Client``: a fresh agent process per test, or a
    shared one with ``--acp-scope`` / ``@pytest.mark.acp_scope``; it serves the
    agent's files and terminals with ``acp_files`` / ``acp_terminals``."""
    __tracebackhide__ = True
    # On the test's scripted model when it uses one (an overriding fixture's too).
    command = model_command(request, settings.as_agent_command(acp_agent_command))
    node: pytest.Item = request.node
    scope = settings.scope_of(node, request.config)
    handshake = Handshake(
        settings.protocol_of(node, request.config),
        settings.login_of(node, request.config),
        files=acp_files,
        terminals=acp_terminals,
        conformance=settings.conformance_mode(node, request.config) != "off",
    )
    if scope != "function" and node.get_closest_marker("acp_cassette") is not None:
        raise pytest.UsageError(
            f"{node.nodeid}: @pytest.mark.acp_cassette records one test's own connection: "
            f"it needs the 'function' acp scope, not {scope!r}"
        )
    if scope != "function":
        refuse_shared_model_agent(node, request.config, scope, command)
    cassette = cassette_of(node)
    if scope == "function":
        if cassette is not None:
            command = cassette.agent_for(command)
        client = connect(
            command,
            acp_timeout,
            Policies(acp_permission_policy, acp_elicitation_policy),
            handshake,
        )
        if cassette is not None:
            cassette.opened(client)
        track(node, client, fresh=True)
        try:
            yield client
        finally:
            close_quietly(client)
            if cassette is not None:
                cassette.closed(client)
        return
    pool: Pool = request.getfixturevalue(f"_acp_{scope}_pool")
    # A shared agent serves tests with checks on too: its traffic is always checked.
    handshake = handshake.checked()
    client, policies, check = pool.get(
        command, acp_timeout, Policies(acp_permission_policy, acp_elicitation_policy), handshake
    )
    policies.current_permission = acp_permission_policy
    policies.current_elicitation = acp_elicitation_policy
    track(node, client, check=check)
    yield client


@pytest.fixture
def acp_session(
    request: pytest.FixtureRequest, acp_client: Client, tmp_path: Path
) -> Iterator[Session]:
    """A new session on ``acp_client`` whose ``cwd`` is the test's ``tmp_path``."""
    session = acp_client.new_session(cwd=tmp_path)
    yield session
    if settings.scope_of(request.node, request.config) != "function":
        # A shared agent outlives the test: release the session (best effort).
        with contextlib.suppress(Exception):
            session.close()


@pytest.fixture
async def acp_async_client(
    request: pytest.FixtureRequest,
    acp_agent_command: object,
    acp_timeout: float,
    acp_permission_policy: PermissionPolicy,
    acp_elicitation_policy: ElicitationPolicy,
    acp_files: FileHandler | None,
    acp_terminals: TerminalHandler | None,
) -> AsyncIterator[AsyncClient]:
    """A connected ``acp_lite.aio.AsyncClient`` for trio tests (needs pytest-trio: mark
    the test ``@pytest.mark.trio`` or set ``trio_mode = true``). One agent per test."""
    # On the test's scripted model when it uses one (an overriding fixture's too).
    command = model_command(request, settings.as_agent_command(acp_agent_command))
    node: pytest.Item = request.node
    handshake = Handshake(
        settings.protocol_of(node, request.config),
        settings.login_of(node, request.config),
        files=acp_files,
        terminals=acp_terminals,
        conformance=settings.conformance_mode(node, request.config) != "off",
    )
    cassette = cassette_of(node)
    if cassette is not None:
        command = cassette.agent_for(command)
    async with connect_async(
        command, acp_timeout, acp_permission_policy, acp_elicitation_policy, handshake
    ) as client:
        if cassette is not None:
            cassette.opened(client)
        track(request.node, client, fresh=True)
        yield client
    if cassette is not None:
        cassette.closed(client)


@pytest.fixture
async def acp_async_session(acp_async_client: AsyncClient, tmp_path: Path) -> AsyncSession:
    """A new session on ``acp_async_client`` whose ``cwd`` is the test's ``tmp_path``."""
    return await acp_async_client.new_session(cwd=tmp_path)


# --- snapshots and normalisation -----------------------------------------------------


def _hook_normalizer(config: pytest.Config, view: str) -> Normalizer | None:
    """The project's ``pytest_acp_normalize`` hooks as one normaliser; None when no
    plugin implements the hook (a pluggy call per update is a tenth of a 10k-update
    snapshot assertion's time, for nothing)."""
    if not config.hook.pytest_acp_normalize.get_hookimpls():
        return None

    def run(update: dict[str, Any]) -> bool | None:
        results = config.hook.pytest_acp_normalize(update=update, view=view, config=config)
        return False if any(r is False for r in results) else None

    return run


@pytest.fixture
def acp_snapshot(request: pytest.FixtureRequest, tmp_path: Path) -> AcpSnapshotAssertion:
    """syrupy's ``snapshot`` for ACP update streams: ``assert turn.updates == acp_snapshot``.

    Per assertion: ``acp_snapshot(view="final", text=False, name="second")``.
    """
    # syrupy is imported only here: the plugin must load (and every other fixture
    # work) in a project that has pytest but not syrupy.
    try:
        from pytest_acp.snapshot import AcpSnapshotAssertion, SnapshotOptions
    except ImportError as exc:
        raise pytest.UsageError(
            f"acp_snapshot needs syrupy: pip install 'acp-lite[pytest]' ({exc})"
        ) from None
    snapshot = request.getfixturevalue("snapshot")
    view = request.config.getini("acp_snapshot_view") or "merged"
    options = SnapshotOptions(view=view, tmp_path=(str(tmp_path),))
    assertion = AcpSnapshotAssertion.from_snapshot(snapshot, options)
    config = request.config
    assertion.acp_hook = lambda v: _hook_normalizer(config, v)
    return assertion


@pytest.fixture
def acp_normalize(
    request: pytest.FixtureRequest, tmp_path: Path
) -> Callable[..., list[JsonObject]]:
    """:func:`pytest_acp.normalize.normalize` with this test's ``tmp_path`` and the
    project's ``pytest_acp_normalize`` hooks applied."""
    config = request.config

    def run(updates: object, view: str = "merged", **kwargs: Any) -> list[JsonObject]:
        kwargs.setdefault("tmp_path", tmp_path)
        extra = list(kwargs.pop("normalizers", ()))
        hook = _hook_normalizer(config, view)
        hooks = [*extra] if hook is None else [*extra, hook]
        return normalize(updates, view, normalizers=hooks, **kwargs)

    return run


@pytest.fixture
def acp_transcript(request: pytest.FixtureRequest) -> TestTranscript:
    """The wire transcript of this test so far (all its ACP clients, both directions)."""
    return TestTranscript(request.node)


# --- conformance, report sections, saved transcripts -------------------------------


def _violations(item: pytest.Item, error: BaseException | None) -> list[Violation]:
    waived = settings.waived_rules(item, item.config)
    found: list[Violation] = []
    for tracked in item.stash.get(TRACKED, []):
        # A test that gave up waiting (a timeout) or a closed connection ends the
        # traffic: work still running then never ended. Unless the agent process is
        # gone (it crashed, or the test closed the client): no update can report
        # that, clients detect it themselves (spec "Prompt Lifecycle", Failures).
        exited = getattr(tracked.client, "returncode", None) is not None
        ended = (
            exited
            or isinstance(error, TimeoutError)
            or bool(getattr(tracked.client, "closed", False))
        )
        checked = tracked_violations(tracked, ended=ended, agent_exited=exited)
        found.extend(v for v in checked if v.rule not in waived)
        note_checked(item, tracked, checked, waived)  # --acp-report-json
    return found


def _summary(violations: list[Violation]) -> str:
    from pytest_acp.conformance import format_violations

    rules = sorted({v.rule for v in violations})
    return (
        f"ACP conformance: {len(violations)} violation(s) of {', '.join(rules)}\n"
        f"{format_violations(violations)}\n"
        "(waive a rule with @pytest.mark.acp_waive('rule-id'); see --acp-conformance)"
    )


_FAKE_PROBLEMS = pytest.StashKey[list[str]]()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, None, None]:
    try:
        result = yield
    except BaseException as error:
        # The test's own failure is the report; the fake's problems join it (a
        # section, below), not a second report at teardown.
        item.stash[_FAKE_PROBLEMS] = call_problems(item)
        warn_if_unused(item)
        if item.stash.get(TRACKED, None) and settings.conformance_mode(item, item.config) != "off":
            item.stash[VIOLATIONS] = _violations(item, error)
        mismatch = mismatch_error(item, error) or command_mismatch(item, error)
        if mismatch is not None:
            # The client's lines left the recording: that is why the test failed.
            # The diff says it all; the client's error is its echo (not chained).
            __tracebackhide__ = True
            raise mismatch from None
        raise
    fake_problems = call_problems(item)
    if fake_problems:
        fail_test(failure_message(fake_problems))
    warn_if_unused(item)  # after the call: pytest-trio sets async fixtures up in it
    mismatch = mismatch_error(item, None) or command_mismatch(item, None)
    if mismatch is not None:
        __tracebackhide__ = True
        raise mismatch
    if not item.stash.get(TRACKED, None):
        return result
    mode = settings.conformance_mode(item, item.config)
    if mode == "off":
        return result
    found = _violations(item, None)
    item.stash[VIOLATIONS] = found
    # strict fails the test on MUST rules; SHOULD rules are recommendations, so
    # they stay warnings even then.
    failing = [v for v in found if v.level != "SHOULD"] if mode == "strict" else []
    warned = [v for v in found if v not in failing]
    if warned:
        path, lineno, _ = item.location
        warnings.warn_explicit(
            AcpConformanceWarning(_summary(warned)),
            AcpConformanceWarning,
            filename=str(item.config.rootpath / path),
            lineno=(lineno or 0) + 1,
        )
    if failing:
        __tracebackhide__ = True
        raise AcpConformanceError(_summary(failing), failing)
    return result


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    if call.excinfo is not None and not item.config.getoption("fulltrace", False):
        # Before the report renders it: the user's frames, not 10+ of acp_lite's.
        hide_library_frames(call.excinfo)
    report = yield
    if call.when == "call" and report.failed:
        item.stash[CALL_FAILED] = True
        fake_problems = item.stash.get(_FAKE_PROBLEMS, [])
        if fake_problems:
            report.sections.append(("acp_fake_agent", "\n".join(fake_problems)))
    tracked = item.stash.get(TRACKED, [])
    if tracked and report.failed:
        many = len(tracked) > 1
        for n, t in enumerate(tracked, 1):
            label = f" (client {n})" if many else ""
            entries, start = traffic_of(t)
            report.sections.append(
                (f"ACP transcript{label}", render_transcript(entries[start:], start=start))
            )
            if is_replay(item, t.client):
                continue  # a replay's "stderr" is its verdict, in the failure already
            try:
                tail = list(t.client.stderr_tail())
            except Exception as exc:  # a diagnostic must never hide the real failure
                tail = [f"(stderr unavailable: {exc!r})"]
            report.sections.append((f"ACP agent stderr{label}", render_stderr(tail)))
        found = item.stash.get(VIOLATIONS, [])
        if found and call.when == "call":
            from pytest_acp.conformance import format_violations

            report.sections.append(("ACP conformance", format_violations(found)))
    if call.when == "teardown":
        save_transcripts(item, tracked)
        if TRACKED in item.stash:
            del item.stash[TRACKED]  # release the clients
    return report
