"""Record and replay for the fixtures: ``@pytest.mark.acp_cassette`` and
``--acp-record-mode`` (pytest-recording's vocabulary).

A test (or module) marked ``acp_cassette`` has a cassette beside it, like a
snapshot: ``__cassettes__/<module>/<test>.acp.jsonl`` (the marker's optional name
replaces ``<test>``). Per connection the test opens:

* ``none`` (default): replay only. The client talks to a replay agent in this
  process (no agent process, no credentials); a missing cassette fails the test
  with the file and the command that records it;
* ``once``: replay when the cassette exists, else run the real agent and record;
* ``new_episodes``: replay the connections the cassette holds; connections it
  does not hold (a client the test opens beyond them) run the real agent and
  are appended;
* ``all``: always run the real agent and record, overwriting the cassette.

The replay fails the test when the client's lines do not match the recorded ones
(a diff naming the line), or, once the client closed, when it did not send every
recorded line.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import sys
import types
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs
import pytest

from pytest_acp._diagnostics import fail_test, library_dirs
from pytest_acp._settings import AgentCommand

# The cassette engine (and trio, under the replay agent) loads when a test uses a
# cassette: the plugin is imported by every pytest run, ACP or not.
if TYPE_CHECKING:
    from acp_lite.cassettes import Cassette, Record, Recording
    from acp_lite.cassettes.agent import ReplayAgent

__all__ = [
    "CALL_FAILED",
    "CASSETTE_SUFFIX",
    "RECORD_MODES",
    "AcpCassetteMismatch",
    "TestCassette",
    "cassette_of",
    "cassette_path",
    "is_replay",
    "mismatch_error",
    "warn_if_unused",
]

RECORD_MODES = ("none", "once", "new_episodes", "all")
CASSETTE_SUFFIX = ".acp.jsonl"
CASSETTE_DIR = "__cassettes__"

#: The command-line options a recording run must repeat (flag, option dest).
_AGENT_OPTIONS = (
    ("--acp-agent", "acp_agent"),
    ("--acp-env", "acp_env"),
    ("--acp-protocol", "acp_protocol"),
    ("--acp-login", "acp_login"),
)

_STASH = pytest.StashKey["TestCassette | None"]()
CALL_FAILED = pytest.StashKey[bool]()
"""Set by the plugin once the test's call phase failed (read at teardown)."""


class AcpCassetteMismatch(AssertionError):
    """The client did not send what the cassette recorded (a diff says where)."""


# Shown (and importable) where users look for it: pytest prints an exception's
# module, and this one's home is private.
AcpCassetteMismatch.__module__ = "pytest_acp"


#: The longest cassette file stem kept as it is (file names stop at 255 bytes).
MAX_STEM = 120


def _legacy(name: str) -> str:
    """The stem earlier versions gave ``name`` (not unique, not bounded)."""
    return re.sub(r"[^A-Za-z0-9_.\-\[\]]+", "_", name).strip("_") or "test"


def _safe(name: str) -> str:
    """A file stem for the test (or marker) ``name``: the name itself when it is a
    plain one (what earlier versions wrote, so committed cassettes still replay);
    else the name made safe, cut to :data:`MAX_STEM`, plus a hash of the whole
    name: ``[a/b]``, ``[a b]`` and ``[a_b]`` get three files, and a 300-character
    parameter id one of a valid length."""
    safe = _legacy(name).lstrip(".") or "test"
    if safe == name and len(name) <= MAX_STEM:
        return name
    digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:10]
    return f"{safe[:MAX_STEM]}-{digest}"


def _name_of(item: pytest.Item, name: str | None) -> str:
    # Class::method[param] -> Class.method[param]: unique within the module.
    return name if name is not None else ".".join(item.nodeid.split("::")[1:]) or item.name


def cassette_path(item: pytest.Item, name: str | None = None) -> Path:
    """Where ``item``'s cassette lives: beside its file, in
    ``__cassettes__/<module>/<name or test>.acp.jsonl`` (a name that is not a plain
    file name gets a hash suffix, see :func:`_safe`)."""
    path = Path(str(item.path))
    return (
        path.parent / CASSETTE_DIR / path.stem / f"{_safe(_name_of(item, name))}{CASSETTE_SUFFIX}"
    )


def _legacy_path(item: pytest.Item, name: str | None, path: Path) -> Path:
    """``path``, or the cassette an earlier version recorded for the test under its
    old name when only that one exists: committed cassettes still replay (recording
    writes the new name)."""
    old = path.with_name(f"{_legacy(_name_of(item, name))}{CASSETTE_SUFFIX}")
    if old == path or len(old.name.encode("utf-8", "surrogatepass")) > 255:
        return path
    try:
        return old if not path.exists() and old.is_file() else path
    except OSError:
        return path


def _option(config: pytest.Config, name: str) -> Any:
    value = config.getoption(name, None)
    return value if value not in (None, "") else config.getini(name)


def record_mode(config: pytest.Config) -> str:
    """``--acp-record-mode`` > ini ``acp_record_mode`` > ``none``."""
    mode = _option(config, "acp_record_mode") or "none"
    if mode not in RECORD_MODES:
        raise pytest.UsageError(f"acp record mode must be one of {', '.join(RECORD_MODES)}")
    return str(mode)


def replay_speed(config: pytest.Config) -> float | None:
    """``--acp-replay-speed`` (``None``: as fast as the client reads)."""
    value = _option(config, "acp_replay_speed")
    if value in (None, ""):
        return None
    try:
        speed = float(value)
    except (TypeError, ValueError):
        raise pytest.UsageError(f"acp replay speed must be a number, not {value!r}") from None
    if not speed > 0:
        raise pytest.UsageError(f"acp replay speed must be positive, not {speed}")
    return speed


@attrs.define
class _Connection:
    replay: ReplayAgent | None = None
    client: Any = None
    command: AgentCommand | None = None


@attrs.define
class TestCassette:
    """The cassette of one test and what its connections do with it."""

    __test__ = False

    item: pytest.Item
    path: Path
    mode: str
    match_on: tuple[str, ...]
    speed: float | None
    loaded: Cassette | None
    connections: list[_Connection] = attrs.field(factory=list)
    #: The file ``loaded`` was read from: ``path``, or the name an earlier version gave it.
    source: Path | None = None

    def _recorded(self) -> tuple[Recording, ...]:
        return self.loaded.recordings if self.loaded is not None else ()

    def agent_for(self, command: AgentCommand) -> AgentCommand:
        """The agent of the test's next connection: a replay of the cassette's next
        recorded connection, or ``command`` itself when this one is recorded."""
        __tracebackhide__ = True
        n = len(self.connections)
        recorded = self._recorded()
        replay = self.mode == "none" or (
            self.mode in ("once", "new_episodes") and self.loaded is not None
        )
        if replay and n < len(recorded):
            from acp_lite.cassettes.agent import ReplayAgent

            agent = ReplayAgent(
                recorded[n],
                match_on=self.match_on,
                speed=self.speed,
                name=f"cassette {_shown(self.path, self.item.config)}",
                redactors=[_hook_redactor(self.item.config)],
            )
            self.connections.append(_Connection(replay=agent))
            return AgentCommand((), in_process=_factory(agent, self.path, n))
        if self.mode == "none" or (self.mode == "once" and self.loaded is not None):
            self._fail(
                f"cassette {self.path} holds {len(recorded)} connection(s); this test "
                f"opens another. Record it again: {self.record_command('all')}"
            )
        self.connections.append(_Connection(command=command))
        return command

    def opened(self, client: Any) -> None:
        """The client of the connection :meth:`agent_for` just chose."""
        self.connections[-1].client = client

    def replays(self, client: object) -> bool:
        """Whether ``client`` is connected to a replay of this cassette."""
        return any(c.client is client and c.replay is not None for c in self.connections)

    def mismatch(self) -> str | None:
        """The first replay mismatch of the test, if any."""
        for connection in self.connections:
            if connection.replay is not None and connection.replay.replayer.mismatches:
                return connection.replay.replayer.verdict()
        return None

    def closed(self, client: Any) -> None:
        """``client`` was closed: save what it recorded, check what it replayed."""
        __tracebackhide__ = True
        for connection in self.connections:
            if connection.client is not client:
                continue
            if connection.replay is not None:
                verdict = connection.replay.replayer.verdict(ended=connection.replay.input_ended)
                # A test whose call failed was told (a mismatch fails the call) or
                # stopped early: the lines it did not send are no news. A mismatch
                # after its call (in a fixture's teardown) fails it here.
                if verdict and not self.item.stash.get(CALL_FAILED, False):
                    self._fail(verdict)
            else:
                self._save()

    def _save(self) -> None:
        from acp_lite.cassettes import Cassette

        recordings: list[Recording] = []
        if self.mode == "new_episodes":
            recordings.extend(self._recorded())
        config = self.item.config
        for connection in self.connections:
            if connection.replay is not None or connection.client is None:
                continue
            assert connection.command is not None
            recordings.append(_record(connection.client, connection.command, config))
        Cassette(tuple(recordings)).save(self.path)

    def record_command(self, mode: str) -> str:
        """The pytest command line that records this test's cassette in ``mode``."""
        # The options of this run that choose the agent and its handshake, so that
        # the command records the agent meant, not the default one.
        config = self.item.config
        options = [f"--acp-record-mode={mode}"]
        for flag, dest in _AGENT_OPTIONS:
            value = config.getoption(dest, None)
            for one in value if isinstance(value, list) else [value]:
                if one not in (None, ""):
                    options.append(f"{flag}={shlex.quote(str(one))}")
        return f"pytest {' '.join(options)} {shlex.quote(self.item.nodeid)}"

    def fail_missing(self) -> None:
        """Fail the test: replay only, and there is no cassette to replay."""
        __tracebackhide__ = True
        self._fail(
            f"no cassette {self.path} (--acp-record-mode=none replays only); record it "
            f"against the real agent with: {self.record_command('once')}"
        )

    def _fail(self, message: str) -> None:
        __tracebackhide__ = True
        fail_test(message)


def _factory(agent: ReplayAgent, path: Path, n: int) -> Callable[[], ReplayAgent]:
    def replay() -> ReplayAgent:
        return agent

    replay.__qualname__ = f"replay[{path.name}#{n + 1}]"
    return replay


def _record(client: Any, command: AgentCommand, config: pytest.Config) -> Recording:
    from acp_lite.cassettes import Record, recording_of

    entries = list(client.transcript.entries())
    t0 = entries[0].time if entries else 0.0
    records = [Record.from_json(e.to_record(t0)) for e in entries]
    if getattr(client.transcript, "exited", False):
        last = records[-1].time if records else 0.0
        records.append(Record("exit", last, returncode=client.transcript.agent_exit))
    environ = {**os.environ, **command.env}
    redactors = [_hook_redactor(config)]
    # The header is informational: "python", not this machine's interpreter, and
    # paths in the project relative to its root.
    root = str(config.rootpath) + os.sep
    argv = [
        "python" if a == sys.executable else a[len(root) :] if a.startswith(root) else a
        for a in command.argv
    ]
    agent = shlex.join(argv) if argv else str(command)
    return recording_of(records, agent=agent, environ=environ, redactors=redactors)


def _hook_redactor(config: pytest.Config) -> Callable[[Record], Record | None]:
    """The ``pytest_acp_cassette_redact`` hooks, as a redactor: applied to the lines
    recorded, and to the client's lines in replay before they are compared."""

    def hook(record: Record) -> Record | None:
        if not isinstance(record.message, dict | list):
            return None
        message = json.loads(json.dumps(record.message))  # the hook's own copy
        config.hook.pytest_acp_cassette_redact(
            message=message, direction=record.direction, config=config
        )
        return attrs.evolve(record, message=message)

    return hook


def _shown(path: Path, config: pytest.Config) -> str:
    """``path`` relative to the rootdir when it is inside it."""
    try:
        return str(path.relative_to(config.rootpath))
    except ValueError:
        return str(path)


def load(item: pytest.Item, marker: pytest.Mark | None) -> TestCassette:
    """``item``'s cassette as its ``acp_cassette`` marker (if any) and the record
    mode say, its recordings loaded unless they are recorded again."""
    __tracebackhide__ = True
    from acp_lite.cassettes import DEFAULT_MATCH_ON, MATCHERS, Cassette, CassetteError

    name = match_on = None
    if marker is not None:
        name = marker.args[0] if marker.args else marker.kwargs.get("name")
        match_on = marker.kwargs.get("match_on")
    if name is not None and not isinstance(name, str):
        raise pytest.UsageError(f"@pytest.mark.acp_cassette(name) takes a string ({item.nodeid})")
    if match_on is None:
        match_on = item.config.getini("acp_match_on") or DEFAULT_MATCH_ON
    chosen = tuple(str(m) for m in match_on)
    unknown = [m for m in chosen if m not in MATCHERS]
    if unknown:
        raise pytest.UsageError(f"acp_cassette match_on: unknown {unknown}; use {list(MATCHERS)}")
    config = item.config
    mode = record_mode(config)
    path = cassette_path(item, name)
    loaded: Cassette | None = None
    if mode != "all":
        read = _legacy_path(item, name, path)
        try:
            loaded = Cassette.load(read)
        except FileNotFoundError:
            loaded = None
        except (OSError, CassetteError) as exc:
            fail_test(f"cannot read cassette {read}: {exc}")
    cassette = TestCassette(item, path, mode, chosen, replay_speed(config), loaded)
    if loaded is not None:
        cassette.source = read
    return cassette


def cassette_of(item: pytest.Item) -> TestCassette | None:
    """The cassette of ``item`` (``None`` when it is not marked ``acp_cassette``);
    loaded once per test. A missing cassette in replay-only mode fails the test."""
    __tracebackhide__ = True
    if _STASH in item.stash:
        return item.stash[_STASH]
    marker = item.get_closest_marker("acp_cassette")
    if marker is None:
        item.stash[_STASH] = None
        return None
    cassette = load(item, marker)
    item.stash[_STASH] = cassette
    if cassette.loaded is None and cassette.mode == "none":
        cassette.fail_missing()
    return cassette


def _user_traceback(tb: types.TracebackType | None) -> types.TracebackType | None:
    """``tb`` cut after its last frame outside acp_lite, pytest_acp and trio: the
    call in the test (or the code under test) that the mismatch answered."""
    last = None
    entry = tb
    while entry is not None:
        if not entry.tb_frame.f_code.co_filename.startswith(library_dirs()):
            last = entry
        entry = entry.tb_next
    if last is not None:
        last.tb_next = None
    return tb


def mismatch_error(item: pytest.Item, cause: BaseException | None) -> AcpCassetteMismatch | None:
    """The test's first replay mismatch as an error (``None``: there is none). With
    the ``cause`` the client raised because of it (the error answer of a request the
    cassette does not hold, the connection the replay ended), it carries the
    cause's traceback up to the user's call, not through acp_lite's internals."""
    cassette = stashed(item)
    found = cassette.mismatch() if cassette is not None else None
    if found is None or _interrupted(cause):
        return None
    return at_cause(AcpCassetteMismatch(found), cause)


def at_cause(error: AcpCassetteMismatch, cause: BaseException | None) -> AcpCassetteMismatch:
    """``error`` with the traceback of the ``cause`` it explains (if any), up to the
    user's call, not through acp_lite's internals."""
    if isinstance(cause, BaseExceptionGroup):
        # pytest-trio's group of the test's and its fixtures' errors: the client's
        # own error (not the fixtures' pytest.fail) has the test's frames.
        cause = next((e for e in _leaves(cause) if isinstance(e, Exception)), None)
    if cause is not None:
        error = error.with_traceback(_user_traceback(cause.__traceback__))
    return error


def _leaves(error: BaseException) -> Iterator[BaseException]:
    """The exceptions of a (nested) exception group, or ``error`` itself."""
    if isinstance(error, BaseExceptionGroup):
        for inner in error.exceptions:
            yield from _leaves(inner)
    else:
        yield error


def _interrupted(cause: BaseException | None) -> bool:
    """Whether ``cause`` is (or holds) an interruption, which must go on as it is."""
    leaves = _leaves(cause) if cause is not None else iter(())
    return any(isinstance(e, KeyboardInterrupt | SystemExit) for e in leaves)


def warn_if_unused(item: pytest.Item) -> None:
    """Warn when ``item`` is marked ``acp_cassette`` but opened no connection through
    the fixtures: nothing was recorded or replayed (its code may start its agent
    itself, which the marker cannot see)."""
    if _STASH in item.stash or item.get_closest_marker("acp_cassette") is None:
        return
    if "acp_cassette_command" in getattr(item, "fixturenames", ()):
        return  # its code's own agent used the cassette
    path, lineno, _ = item.location
    warnings.warn_explicit(
        pytest.PytestWarning(
            "@pytest.mark.acp_cassette records and replays the "
            "connections of pytest_acp's fixtures (acp_client, acp_session ...); this "
            "test used none, so nothing was recorded or replayed. Code that starts "
            "its agent itself takes the acp_cassette_command fixture as its agent "
            "command (a replay of the cassette, or the agent behind a recorder)."
        ),
        pytest.PytestWarning,
        filename=str(item.config.rootpath / path),
        lineno=(lineno or 0) + 1,
    )


def is_replay(item: pytest.Item, client: object) -> bool:
    """Whether ``client``, a client of ``item``, talks to a cassette's replay (not
    to a real agent): the test's cassette chose the agent of each connection."""
    cassette = stashed(item)
    return cassette is not None and cassette.replays(client)


def stashed(item: pytest.Item) -> TestCassette | None:
    """The cassette :func:`cassette_of` loaded for ``item``, if any (no loading)."""
    return item.stash.get(_STASH, None)
