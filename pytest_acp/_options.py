"""pytest_acp's command-line options, ini keys and markers (registered by the plugin)."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from pytest_acp import _settings as settings
from pytest_acp._cassettes import RECORD_MODES
from pytest_acp._model import MARKER as _MODEL_MARKER
from pytest_acp._model import add_options as _add_model_options
from pytest_acp._model_cassette import add_options as _add_model_cassette_options
from pytest_acp._probes import add_option as _add_probes_option
from pytest_acp._report import add_option as _add_report_option

__all__ = [
    "MARKERS",
    "MARKER_KEYWORDS",
    "add_options",
    "check_markers",
    "fail_bad_markers",
    "marker_problems",
]

MARKERS = (
    "acp_agent(argv, *, env=None, cwd=None, in_process=None, scenario=None): the ACP agent "
    "command for this test (an argv list or a command string), extra environment variables "
    "and its working directory; or in_process=factory (or 'python:module:name'): an agent in "
    "this process, such as acp_lite.testing.InProcessAgent; or scenario='name': the reference "
    "agent playing that built-in scenario (acp-lite-agent --list-scenarios).",
    "acp_timeout(seconds): default timeout of every ACP call in this test "
    "(starting the agent gets at least 10 s).",
    "acp_scope(scope): share one agent process per 'module' or 'session' (default "
    "'function': a fresh agent per test).",
    "acp_conformance(mode): conformance checking for this test: 'off', 'warn' or 'strict'.",
    "acp_waive(*rule_ids, reason=None): do not report these ACP conformance rules here.",
    "acp_permission(policy): answer permission requests with 'reject_once' (default), "
    "'reject_always', 'allow_once', 'allow_always', 'cancel' (aliases: allow, reject, "
    "cancelled) or a callable (request, session) -> option id (pass a callable by keyword: "
    "@pytest.mark.acp_permission(policy=fn)).",
    "acp_elicitation(policy): answer elicitations with 'decline' (default), 'cancel', "
    "'accept_defaults' or a callable (request, session) -> response (by keyword: "
    "acp_elicitation(policy=fn)).",
    "acp_protocol(version): the ACP version to speak here: 'auto' (default), 1 or 2.",
    "acp_login(method_id): log in with this auth method right after initialize.",
    "acp_serve(*, files=None, terminals=None): serve the agent's fs/* and terminal/* "
    "requests: True (acp_lite.LocalFiles() / LocalTerminals(), confined to the session's "
    "directories), False (not served), or a handler (or its class).",
    "acp_cassette(name=None, *, match_on=None): record this test's ACP traffic in a cassette "
    "(__cassettes__/<module>/<name or test>.acp.jsonl) and replay it without the agent "
    "(see --acp-record-mode); match_on: what a client line must match ('method', 'params', "
    "'meta', 'id').",
    _MODEL_MARKER,
)


#: Each marker's keywords (the positional argument's name included: ``acp_timeout(seconds=5)``
#: is ``acp_timeout(5)``). Any other keyword is a usage error: ignored, it would let a
#: test run with a setting it did not ask for.
MARKER_KEYWORDS: dict[str, tuple[str, ...]] = {
    "acp_agent": ("argv", "env", "cwd", "in_process", "scenario"),
    "acp_timeout": ("seconds",),
    "acp_scope": ("scope",),
    "acp_conformance": ("mode",),
    "acp_waive": ("reason",),
    "acp_permission": ("policy",),
    "acp_elicitation": ("policy",),
    "acp_protocol": ("version",),
    "acp_login": ("method_id",),
    "acp_serve": ("files", "terminals"),
    "acp_cassette": ("name", "match_on"),
    "acp_model": ("script", "profile"),
}


def marker_problems(item: pytest.Item) -> list[str]:
    """One line per pytest_acp marker of ``item`` given a keyword it does not take,
    naming the ones it does."""
    problems: list[str] = []
    for marker in item.iter_markers():
        accepted = MARKER_KEYWORDS.get(marker.name)
        unknown = sorted(set(marker.kwargs) - set(accepted or ()))
        if accepted is None or not unknown:
            continue
        hint = ""
        if marker.name == "acp_agent":
            hint = " (scenario='name' runs the reference agent's built-in scenario)"
        problems.append(
            f"{item.nodeid}: @pytest.mark.{marker.name} takes no keyword "
            f"{', '.join(map(repr, unknown))}; its keywords: {', '.join(accepted)}{hint}"
        )
    return problems


_MARKER_PROBLEMS = pytest.StashKey[list[str]]()


def check_markers(config: pytest.Config, items: Sequence[pytest.Item]) -> None:
    """A ``UsageError`` listing :func:`marker_problems` of ``items``. In an xdist
    worker (whose usage error the controller would only show as an internal error)
    each such test fails at its setup instead: :func:`fail_bad_markers`."""
    problems: list[str] = []
    for item in items:
        found = marker_problems(item)
        if found:
            item.stash[_MARKER_PROBLEMS] = found
            problems.extend(found)
    if problems and not hasattr(config, "workerinput"):
        raise pytest.UsageError("\n".join(problems))


def fail_bad_markers(item: pytest.Item) -> None:
    """Fail ``item`` at its setup if :func:`check_markers` found bad markers on it."""
    found = item.stash.get(_MARKER_PROBLEMS, None)
    if found:
        pytest.fail("usage error: " + "\n".join(found), pytrace=False)


def add_options(parser: pytest.Parser) -> None:
    """Register the ``acp`` option group's options and the ini keys."""
    group = parser.getgroup("acp", "Agent Client Protocol agents (pytest_acp)")
    strings = {
        "acp_agent": "agent command line, or python:MODULE:NAME for an agent in this "
        "process (default: the acp_lite reference agent)",
        "acp_scope": "agent process per 'function' (default), 'module' or 'session'",
        "acp_timeout": "default timeout of ACP calls in seconds (30)",
        "acp_conformance": "conformance checks: off, warn (default), strict",
        "acp_permission": "permission policy: reject_once (default), reject_always, "
        "allow_once, allow_always, cancel",
        "acp_elicitation": "elicitation policy: decline (default), cancel, accept_defaults",
        "acp_transcripts": "directory to save every test's wire transcript (NDJSON)",
        "acp_html": "file to write the failing tests' conversations to, as one HTML page",
        "acp_snapshot_view": "default acp_snapshot view: merged (default), raw, final",
        "acp_protocol": "ACP version to speak: auto (default: 2, or 1 if the agent answers "
        "1), 1 or 2",
        "acp_login": "auth method id to log in with after initialize (agent methods)",
        "acp_record_mode": "cassettes (@pytest.mark.acp_cassette): none (default: replay "
        "only), once, new_episodes, all",
        "acp_replay_speed": "replay cassettes with their recorded timing, this much faster "
        "(default: as fast as the client reads)",
    }
    for name, help_text in strings.items():
        parser.addini(name, help_text, type="string", default="")
    parser.addini("acp_env", "KEY=VALUE environment variables for the agent", type="linelist")
    for what in ("files", "terminals"):
        parser.addini(
            f"acp_{what}",
            f"serve the agent's {'fs/*' if what == 'files' else 'terminal/*'} requests "
            "(confined to the session's directories)",
            type="bool",
            default=False,
        )
    parser.addini("acp_waive", "conformance rule ids never reported", type="linelist")
    parser.addini(
        "acp_match_on",
        "what a client line must match in a cassette replay (default: method params)",
        type="linelist",
    )
    group.addoption(
        "--acp-agent",
        dest="acp_agent",
        metavar="CMD",
        help="agent command line (shell-quoted), or python:MODULE:NAME: a factory of an agent "
        "run in this process (e.g. python:acp_lite.testing:InProcessAgent)",
    )
    group.addoption(
        "--acp-env",
        dest="acp_env",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="environment variable for the agent (repeatable)",
    )
    group.addoption(
        "--acp-scope",
        dest="acp_scope",
        choices=settings.SCOPES,
        help="share one agent process per module or session (default: one per test)",
    )
    group.addoption(
        "--acp-timeout", dest="acp_timeout", type=float, metavar="SECONDS", help="ACP call timeout"
    )
    group.addoption(
        "--acp-conformance",
        dest="acp_conformance",
        choices=settings.CONFORMANCE_MODES,
        help="check ACP conformance of each test's traffic: off, warn (default), strict",
    )
    group.addoption(
        "--acp-permission",
        dest="acp_permission",
        choices=(*settings.PERMISSION_POLICIES, *settings.PERMISSION_ALIASES),
        help="answer permission requests with this policy (default: reject_once; "
        "allow, reject and cancelled are aliases of allow_once, reject_once and cancel)",
    )
    group.addoption(
        "--acp-elicitation",
        dest="acp_elicitation",
        choices=settings.ELICITATION_POLICIES,
        help="answer elicitation requests with this policy (default: decline; "
        "accept_defaults accepts a form with its fields' defaults)",
    )
    group.addoption(
        "--acp-protocol",
        dest="acp_protocol",
        choices=settings.PROTOCOLS,
        help="ACP version to speak: auto (default: v2, or v1 when the agent answers v1), 1, 2",
    )
    group.addoption(
        "--acp-login",
        dest="acp_login",
        metavar="METHOD",
        help="log in with this auth method (client.login) right after initialize",
    )
    group.addoption(
        "--acp-files",
        dest="acp_files",
        action="store_true",
        default=None,
        help="serve the agent's fs/* requests with acp_lite.LocalFiles (reads and writes, "
        "confined to the session's directories: acp_session's is the test's tmp_path)",
    )
    group.addoption(
        "--acp-terminals",
        dest="acp_terminals",
        action="store_true",
        default=None,
        help="serve the agent's terminal/* requests with acp_lite.LocalTerminals (local "
        "processes, their cwd confined to the session's directories; any command runs)",
    )
    group.addoption(
        "--acp-record-mode",
        dest="acp_record_mode",
        choices=RECORD_MODES,
        help="cassettes of @pytest.mark.acp_cassette tests: none (default: replay only, no "
        "agent), once (record a missing cassette), new_episodes (record connections the "
        "cassette lacks), all (record everything again)",
    )
    group.addoption(
        "--acp-replay-speed",
        dest="acp_replay_speed",
        type=float,
        metavar="FACTOR",
        help="replay cassettes with their recorded timing (1.0: as recorded, 2.0: twice as "
        "fast); default: as fast as the client reads",
    )
    group.addoption(
        "--acp-transcripts",
        dest="acp_transcripts",
        metavar="DIR",
        help="save every test's wire transcript as NDJSON in DIR",
    )
    group.addoption(
        "--acp-html",
        dest="acp_html",
        metavar="FILE",
        help="write the failing tests' conversations (timelines, findings, wire lines) "
        "as one self-contained HTML page (acp-lite view)",
    )
    _add_report_option(group)  # --acp-report-json
    _add_probes_option(group)  # --acp-probes, --acp-probe-timeout
    _add_model_options(parser, group)
    _add_model_cassette_options(parser, group)
