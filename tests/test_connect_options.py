"""One :class:`ConnectOptions` behind every way of connecting.

The six entry points (``acp_lite.connect``, ``connect_streams``,
``connect_in_memory`` and their ``acp_lite.aio`` twins) take the same keywords
(the stream and in-memory ones without the process's ``cwd`` / ``env`` /
``inherit_env``; the blocking stream ones with the thread's ``name``), map them to
the same :class:`ConnectOptions`, and refuse a bad value at the call, before a
thread or an agent starts.
"""

from __future__ import annotations

import inspect
import os
import sys
import threading
import typing
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import attrs
import pytest
import trio

import acp_lite
from acp_lite import aio
from acp_lite.aio._connection import Connection
from acp_lite.aio.memory import memory_stream_pair
from acp_lite.limits import Limits
from acp_lite.options import PROCESS_OPTIONS, ConnectOptions
from acp_lite.sync import Client
from acp_lite.testing import InProcessAgent, agent_command

FIELDS = frozenset(f.name for f in attrs.fields(ConnectOptions))
#: The blocking stream entry points name their client's trio thread.
BLOCKING_STREAM_ONLY = frozenset({"name"})


def _keywords_of_typed_dict(function: Callable[..., Any]) -> dict[str, Any]:
    """The keywords a ``**kwargs: Unpack[SomeTypedDict]`` function takes."""
    (kwargs,) = [
        name
        for name, p in inspect.signature(function).parameters.items()
        if p.kind is inspect.Parameter.VAR_KEYWORD
    ]
    (typed_dict,) = typing.get_args(typing.get_type_hints(function)[kwargs])
    return typing.get_type_hints(typed_dict)


def _keyword_only(function: Callable[..., Any]) -> dict[str, inspect.Parameter]:
    return {
        name: p
        for name, p in inspect.signature(function).parameters.items()
        if p.kind is inspect.Parameter.KEYWORD_ONLY
    }


#: Entry point -> the keywords it takes (signature, or its TypedDict of keywords).
ENTRY_KEYWORDS: dict[str, frozenset[str]] = {
    "acp_lite.connect": frozenset(_keyword_only(acp_lite.connect)),
    "acp_lite.connect_streams": frozenset(_keyword_only(acp_lite.connect_streams)),
    "acp_lite.connect_in_memory": frozenset(_keywords_of_typed_dict(acp_lite.connect_in_memory)),
    "acp_lite.aio.connect": frozenset(_keyword_only(aio.connect)),
    "acp_lite.aio.connect_streams": frozenset(_keyword_only(aio.connect_streams)),
    "acp_lite.aio.connect_in_memory": frozenset(_keywords_of_typed_dict(aio.connect_in_memory)),
}

EXPECTED_KEYWORDS: dict[str, frozenset[str]] = {
    "acp_lite.connect": FIELDS,
    "acp_lite.connect_streams": (FIELDS - PROCESS_OPTIONS) | BLOCKING_STREAM_ONLY,
    "acp_lite.connect_in_memory": (FIELDS - PROCESS_OPTIONS) | BLOCKING_STREAM_ONLY,
    "acp_lite.aio.connect": FIELDS,
    "acp_lite.aio.connect_streams": FIELDS - PROCESS_OPTIONS,
    "acp_lite.aio.connect_in_memory": FIELDS - PROCESS_OPTIONS,
}


@pytest.mark.parametrize("entry", sorted(ENTRY_KEYWORDS))
def test_every_entry_point_takes_the_options_keywords(entry: str) -> None:
    got, expected = ENTRY_KEYWORDS[entry], EXPECTED_KEYWORDS[entry]
    assert got == expected, (
        f"{entry}: keywords not in ConnectOptions / the other entry points: "
        f"{sorted(got - expected)}; missing: {sorted(expected - got)} "
        "(a new option is a ConnectOptions field and a keyword of every entry point)"
    )


@pytest.mark.parametrize(
    "entry", [acp_lite.connect, acp_lite.connect_streams, aio.connect, aio.connect_streams]
)
def test_the_keywords_defaults_are_the_options_defaults(entry: Callable[..., Any]) -> None:
    defaults = {f.name: f.default for f in attrs.fields(ConnectOptions)}
    for name, parameter in _keyword_only(entry).items():
        if name in defaults:
            assert parameter.default == defaults[name], (entry.__qualname__, name)


@pytest.mark.parametrize(
    ("first", "second"),
    [(aio.connect, aio.connect_streams), (acp_lite.connect, acp_lite.connect_streams)],
)
def test_process_and_stream_entry_points_type_the_keywords_alike(
    first: Callable[..., Any], second: Callable[..., Any]
) -> None:
    a, b = _keyword_only(first), _keyword_only(second)
    for name in (a.keys() & b.keys()) & FIELDS:
        assert a[name].annotation == b[name].annotation, name


# --- the same keywords give the same ConnectOptions ---------------------------------


def _on_permission(request: object, session: object) -> None:
    return None


def _on_elicitation(request: object, session: object) -> None:
    return None


class _Plugin:
    """A plugin without hooks (registering it is all the test needs)."""


LIMITS = Limits(default_timeout=9.0, close_grace=1.0, terminate_grace=0.5, kill_grace=1.0)


def _stream_keywords() -> dict[str, Any]:
    """A value other than the default for every option an agent on streams takes."""
    return {
        "timeout": 8.0,
        "client_info": {"name": "options-test", "version": "1"},
        "capabilities": {},
        "on_permission": _on_permission,
        "on_elicitation": _on_elicitation,
        "files": acp_lite.LocalFiles(),
        "terminals": aio.LocalTerminals(),
        "plugins": [_Plugin()],
        "limits": LIMITS,
        "protocol_version": 2,
        "conformance": True,
    }


def _process_keywords(tmp_path: Path) -> dict[str, Any]:
    return {
        **_stream_keywords(),
        "cwd": str(tmp_path),
        # The whole environment, given rather than inherited (the agent needs PATH...).
        "env": {**os.environ, "ACP_LITE_OPTIONS_TEST": "1"},
        "inherit_env": False,
    }


def test_the_keywords_cover_every_option_away_from_its_default(tmp_path: Path) -> None:
    keywords = _process_keywords(tmp_path)
    assert keywords.keys() == FIELDS
    default = ConnectOptions()
    for name, value in keywords.items():
        assert getattr(ConnectOptions(**{name: value}), name) != getattr(default, name), name


def _pipes_agent() -> tuple[InProcessAgent, trio.lowlevel.FdStream, trio.lowlevel.FdStream]:
    agent = InProcessAgent()
    write_fd, read_fd = agent.start()
    return agent, trio.lowlevel.FdStream(write_fd), trio.lowlevel.FdStream(read_fd)


def _blocking_connection(client: Client) -> Connection:
    connection = client._async._conn
    # The facade's substitutes reached the connection (the plugin needs the client).
    assert connection.session_view is client._weak_session_view
    assert connection.hook_client is client
    return connection


def _aio_connection(client: aio.AsyncClient) -> Connection:
    connection = client._conn
    assert connection.session_view is None
    assert connection.hook_client is client
    return connection


def via_blocking_connect(keywords: dict[str, Any]) -> Connection:
    with acp_lite.connect(agent_command(), **keywords) as client:
        return _blocking_connection(client)


def via_blocking_connect_streams(keywords: dict[str, Any]) -> Connection:
    agent, send, receive = _pipes_agent()
    try:
        with acp_lite.connect_streams(lambda: (send, receive), **keywords) as client:
            return _blocking_connection(client)
    finally:
        agent.close()


def via_blocking_connect_in_memory(keywords: dict[str, Any]) -> Connection:
    with acp_lite.connect_in_memory(InProcessAgent(), **keywords) as client:
        return _blocking_connection(client)


def via_aio_connect(keywords: dict[str, Any]) -> Connection:
    async def main() -> Connection:
        async with aio.connect(agent_command(), **keywords) as client:
            return _aio_connection(client)

    return trio.run(main)


def via_aio_connect_streams(keywords: dict[str, Any]) -> Connection:
    async def main() -> Connection:
        agent, send, receive = _pipes_agent()
        try:
            async with aio.connect_streams(send, receive, **keywords) as client:
                return _aio_connection(client)
        finally:
            await send.aclose()
            await receive.aclose()
            await trio.to_thread.run_sync(agent.close)

    return trio.run(main)


def via_aio_connect_in_memory(keywords: dict[str, Any]) -> Connection:
    async def main() -> Connection:
        async with aio.connect_in_memory(InProcessAgent(), **keywords) as client:
            return _aio_connection(client)

    return trio.run(main)


PROCESS_ENTRIES = [via_blocking_connect, via_aio_connect]
STREAM_ENTRIES = [
    via_blocking_connect_streams,
    via_blocking_connect_in_memory,
    via_aio_connect_streams,
    via_aio_connect_in_memory,
]


@pytest.mark.parametrize("via", PROCESS_ENTRIES + STREAM_ENTRIES, ids=lambda f: f.__name__[4:])
def test_every_entry_point_maps_its_keywords_to_the_same_options(
    via: Callable[[dict[str, Any]], Connection], tmp_path: Path
) -> None:
    keywords = _process_keywords(tmp_path) if via in PROCESS_ENTRIES else _stream_keywords()
    connection = via(keywords)
    assert connection.options == ConnectOptions(**keywords)
    # ... and the connection runs with them.
    assert connection.limits == attrs.evolve(LIMITS, default_timeout=8.0, connect_timeout=8.0)
    assert connection.requested_version == 2
    assert connection.client_requests is not None
    assert connection.pm is not None


# --- a bad value fails at the call ---------------------------------------------------

BAD_VALUES: list[tuple[str, object, type[Exception], str]] = [
    ("timeout", -1, ValueError, r"timeout= must be a positive number of seconds, not -1"),
    ("timeout", "5", TypeError, r"timeout= must be a number of seconds or None, not '5'"),
    ("protocol_version", 3, ValueError, r"protocol_version= must be 1, 2 or 'auto', not 3"),
    ("protocol_version", True, ValueError, r"protocol_version= must be 1, 2 or 'auto'"),
    ("plugins", _Plugin(), TypeError, r"plugins= takes an iterable of plugin objects"),
    ("on_permission", "allow", TypeError, r"on_permission= must be a callable or None"),
    ("files", acp_lite.LocalFiles, TypeError, r"files= takes a handler object .* not the class"),
    ("terminals", object(), TypeError, r"terminals= must be a handler with a create\(\)"),
    ("limits", {"default_timeout": 5}, TypeError, r"limits= must be an acp_lite.Limits"),
    ("client_info", "my-ide", TypeError, r"client_info= must be a mapping, a protocol object"),
    ("conformance", "yes", TypeError, r"conformance= must be True or False, not 'yes'"),
]
PROCESS_BAD_VALUES: list[tuple[str, object, type[Exception], str]] = [
    ("cwd", 3, TypeError, r"cwd= must be a path"),
    ("env", {"DEBUG": 1}, TypeError, r"env= must map str to str, not 'DEBUG' to 1"),
    ("env", ["DEBUG=1"], TypeError, r"env= must be a mapping of str to str"),
    ("inherit_env", None, TypeError, r"inherit_env= must be True or False, not None"),
]


@pytest.fixture
def nothing_started(tmp_path: Path) -> Iterator[tuple[list[str], Path]]:
    """An agent command that leaves a file when it runs; afterwards no client thread
    is left and the command did not run."""
    marker = tmp_path / "started"
    command = [sys.executable, "-c", f"open({str(marker)!r}, 'w')"]
    before = set(threading.enumerate())
    yield command, marker
    assert not marker.exists(), "the agent was started"
    new = [t.name for t in threading.enumerate() if t not in before]
    assert not [name for name in new if name.startswith("acp-lite-")], new


class _RecordingAgent:
    """A pipe agent that records whether it was started."""

    started = False

    def start(self) -> tuple[int, int]:
        self.started = True
        raise AssertionError("started")

    def close(self) -> None:
        pass


def _call(entry: str, command: list[str], keywords: Mapping[str, object]) -> None:
    """Call one entry point the way a user does."""
    kw: dict[str, Any] = dict(keywords)
    agent = _RecordingAgent()
    try:
        if entry == "acp_lite.connect":
            acp_lite.connect(command, **kw)
        elif entry == "acp_lite.connect_streams":
            acp_lite.connect_streams(lambda: pytest.fail("streams opened"), **kw)
        elif entry == "acp_lite.connect_in_memory":
            acp_lite.connect_in_memory(agent, **kw)
        else:

            async def main() -> None:
                if entry == "acp_lite.aio.connect":
                    opened = aio.connect(command, **kw)
                elif entry == "acp_lite.aio.connect_streams":
                    client_side, _ = memory_stream_pair()
                    opened = aio.connect_streams(client_side, client_side, **kw)
                else:
                    opened = aio.connect_in_memory(agent, **kw)
                async with opened:
                    pytest.fail("connected")

            trio.run(main)
    finally:
        assert not agent.started


def _shown(value: object) -> str:
    # Test ids must be the same in every xdist worker: no object addresses.
    plain = isinstance(value, bool | int | str | dict | list | type | None)
    return repr(value) if plain else type(value).__name__


#: Every entry point with every bad value of a keyword it takes.
BAD_CALLS = [
    pytest.param(entry, *bad, id=f"{entry}-{bad[0]}={_shown(bad[1])}")
    for entry in sorted(ENTRY_KEYWORDS)
    for bad in BAD_VALUES + PROCESS_BAD_VALUES
    if bad[0] in ENTRY_KEYWORDS[entry]
]


def test_the_bad_values_reach_every_entry_point() -> None:
    assert len(BAD_CALLS) == 6 * len(BAD_VALUES) + 2 * len(PROCESS_BAD_VALUES)


@pytest.mark.parametrize(("entry", "name", "value", "error", "message"), BAD_CALLS)
def test_a_bad_value_fails_at_the_entry_point(
    entry: str,
    name: str,
    value: object,
    error: type[Exception],
    message: str,
    nothing_started: tuple[list[str], Path],
) -> None:
    command, _ = nothing_started
    with pytest.raises(error, match=message):
        _call(entry, command, {name: value})


def test_a_typo_in_an_in_memory_keyword_names_it(nothing_started: Any) -> None:
    with pytest.raises(TypeError, match="timout"):
        _call("acp_lite.connect_in_memory", [], {"timout": 5})
    with pytest.raises(TypeError, match="timout"):
        _call("acp_lite.aio.connect_in_memory", [], {"timout": 5})


# --- ConnectOptions itself -----------------------------------------------------------


def test_effective_limits_apply_the_timeout() -> None:
    assert ConnectOptions().effective_limits == Limits()
    given = ConnectOptions(limits=LIMITS, timeout=3.0)
    assert given.limits is LIMITS and given.timeout == 3.0
    assert given.effective_limits == attrs.evolve(LIMITS, default_timeout=3.0, connect_timeout=3.0)


def test_plugins_are_kept_as_a_tuple() -> None:
    plugin = _Plugin()
    assert ConnectOptions(plugins=[plugin]).plugins == (plugin,)
    assert ConnectOptions(plugins=iter([plugin])) == ConnectOptions(plugins=(plugin,))


def test_the_options_are_frozen() -> None:
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        ConnectOptions().timeout = 5  # type: ignore[misc]


def test_process_options_name_those_set() -> None:
    assert ConnectOptions().process_options == frozenset()
    assert ConnectOptions(cwd="/", inherit_env=False).process_options == {"cwd", "inherit_env"}


def test_streams_refuse_options_of_a_process() -> None:
    async def main() -> None:
        client_side, _ = memory_stream_pair()
        options = ConnectOptions(env={"A": "1"})
        async with aio.connect_streams_with(client_side, client_side, options):
            pytest.fail("connected")

    with pytest.raises(ValueError, match=r"env: options of an agent process"):
        trio.run(main)


def test_one_options_value_serves_several_connections() -> None:
    options = ConnectOptions(timeout=7.0, conformance=True)

    async def main() -> None:
        async with aio.connect_with(agent_command(), options) as first:
            assert first._conn.options is options
            turn = await (await first.new_session(cwd="/tmp")).run("one")
            assert turn.text == "one"
        agent, send, receive = _pipes_agent()
        try:
            async with aio.connect_streams_with(send, receive, options) as second:
                assert second._conn.options is options
                assert second._conn.limits.default_timeout == 7.0
        finally:
            await send.aclose()
            await receive.aclose()
            await trio.to_thread.run_sync(agent.close)

    trio.run(main)
