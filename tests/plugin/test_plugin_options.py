"""Options, ini keys, markers and configuration fixtures (no agent is started here, so
these pytester runs are in-process)."""

from __future__ import annotations

import importlib.abc
import re
import sys
from pathlib import Path

import pytest

import acp_lite

from .conftest import LEAN_HEADER


def test_help_lists_the_acp_group_and_ini_keys(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest(*LEAN_HEADER, "--help")
    result.stdout.fnmatch_lines(
        [
            "*Agent Client Protocol agents (pytest_acp)*",
            "*--acp-agent=CMD*",
            "*--acp-env=KEY=VALUE*",
            "*--acp-scope=*",
            "*--acp-timeout=SECONDS*",
            "*--acp-conformance=*",
            "*--acp-permission=*",
            "*--acp-elicitation=*",
            "*--acp-transcripts=DIR*",
        ]
    )
    for key in ("acp_agent", "acp_env", "acp_scope", "acp_timeout", "acp_conformance",
                "acp_waive", "acp_permission", "acp_elicitation", "acp_transcripts",
                "acp_snapshot_view"):  # fmt: skip
        result.stdout.fnmatch_lines([f"  {key} (*"])


def test_markers_are_registered_and_the_defaults(pytester: pytest.Pytester) -> None:
    # One run: every marker (strict markers, warnings as errors) and, with no
    # configuration at all, the defaults.
    pytester.makepyfile(
        test_markers="""
        import pytest

        @pytest.mark.acp_agent(["agent"], env={"A": "1"}, cwd="/")
        @pytest.mark.acp_timeout(3)
        @pytest.mark.acp_scope("module")
        @pytest.mark.acp_conformance("strict")
        @pytest.mark.acp_waive("unknown-stop-reason", reason="known bug")
        @pytest.mark.acp_permission("allow_once")
        @pytest.mark.acp_elicitation("cancel")
        def test_nothing():
            pass
        """,
        test_defaults=f"""
        from acp_lite import permissions

        def test_defaults(acp_agent_command, acp_timeout, acp_permission_policy,
                          acp_elicitation_policy):
            assert acp_agent_command.argv == ({sys.executable!r}, "-m", "acp_lite.testing.agent")
            assert dict(acp_agent_command.env) == {{}} and acp_agent_command.cwd is None
            assert acp_timeout == 30
            assert acp_permission_policy is permissions.reject
            assert acp_elicitation_policy is permissions.decline
        """,
    )
    result = pytester.runpytest(*LEAN_HEADER, "--strict-markers", "-W", "error")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(["acp: agent=reference agent*, conformance=warn"])
    markers = pytester.runpytest(*LEAN_HEADER, "--markers")
    for name in ("acp_agent(argv", "acp_timeout(", "acp_scope(", "acp_conformance(",
                 "acp_waive(", "acp_permission(", "acp_elicitation("):  # fmt: skip
        markers.stdout.fnmatch_lines([f"@pytest.mark.{name}*"])


def test_precedence_marker_over_cli_over_ini(pytester: pytest.Pytester) -> None:
    pytester.makeini(
        """
        [pytest]
        acp_agent = ini-agent --flag "two words"
        acp_env =
            A=1
            B=ini
        acp_timeout = 7
        acp_permission = allow_once
        acp_elicitation = cancel
        acp_scope = module
        acp_conformance = strict
        acp_waive =
            reserved-state
        """
    )
    pytester.makepyfile(
        test_ini="""
        import pytest
        from acp_lite import permissions
        from pytest_acp import _settings

        def test_scope_conformance_and_waivers_from_ini(request):
            assert _settings.scope_of(request.node, request.config) == "module"
            assert _settings.conformance_mode(request.node, request.config) == "strict"
            assert _settings.waived_rules(request.node, request.config) == {"reserved-state"}

        @pytest.mark.acp_scope("function")
        @pytest.mark.acp_conformance("off")
        @pytest.mark.acp_waive("a", "b")
        def test_markers_beat_ini(request):
            assert _settings.scope_of(request.node, request.config) == "function"
            assert _settings.conformance_mode(request.node, request.config) == "off"
            waived = _settings.waived_rules(request.node, request.config)
            assert waived == {"reserved-state", "a", "b"}

        def test_from_ini(acp_agent_command, acp_timeout, acp_permission_policy,
                          acp_elicitation_policy):
            assert acp_agent_command.argv == ("ini-agent", "--flag", "two words")
            assert dict(acp_agent_command.env) == {"A": "1", "B": "ini"}
            assert acp_timeout == 7
            assert acp_permission_policy is permissions.allow_once
            assert acp_elicitation_policy is permissions.cancel
        """,
        test_markers="""
        import pytest
        from acp_lite import permissions

        def policy(request, session):
            return None

        @pytest.mark.acp_agent(["marker-agent", "a b"], env={"B": 2, "C": "3"}, cwd="/srv")
        @pytest.mark.acp_timeout(0.5)
        @pytest.mark.acp_permission.with_args(policy)
        @pytest.mark.acp_elicitation("decline")
        def test_marker_wins(acp_agent_command, acp_timeout, acp_permission_policy,
                             acp_elicitation_policy):
            assert acp_agent_command.argv == ("marker-agent", "a b")
            assert dict(acp_agent_command.env) == {"A": "1", "B": "2", "C": "3"}
            assert acp_agent_command.cwd == "/srv"
            assert acp_timeout == 0.5
            assert acp_permission_policy is policy
            assert acp_elicitation_policy is permissions.decline

        @pytest.mark.acp_agent("string-agent --opt 'x y'")
        class TestClassMarker:
            def test_string_command(self, acp_agent_command):
                assert acp_agent_command.argv == ("string-agent", "--opt", "x y")
        """,
        test_module_marker="""
        import pytest

        pytestmark = pytest.mark.acp_agent(["module-agent"], env={"M": "1"}, cwd="/m")

        def test_module_marker(acp_agent_command):
            assert acp_agent_command.argv == ("module-agent",)
            assert acp_agent_command.env["M"] == "1" and acp_agent_command.cwd == "/m"

        @pytest.mark.acp_agent(["test-agent"])
        def test_closest_marker_wins(acp_agent_command):
            assert acp_agent_command.argv == ("test-agent",)
        """,
        test_override="""
        import pytest
        from pytest_acp.plugin import AgentCommand

        @pytest.fixture
        def acp_agent_command():
            return "my-agent --stdio"

        def test_overridden(acp_agent_command):
            assert acp_agent_command == "my-agent --stdio"

        def test_agent_command_type():
            assert AgentCommand(("a", "b c")).key() == (("a", "b c"), (), None)
            assert str(AgentCommand(("a", "b c"))) == "a 'b c'"
        """,
    )
    pytester.runpytest(*LEAN_HEADER).assert_outcomes(passed=9)

    pytester.makepyfile(
        test_cli="""
        from acp_lite import permissions

        from pytest_acp import _settings

        def test_cli_beats_ini(request, acp_agent_command, acp_timeout, acp_permission_policy):
            assert _settings.scope_of(request.node, request.config) == "session"
            assert _settings.conformance_mode(request.node, request.config) == "warn"
            assert acp_agent_command.argv == ("cli-agent", "-v")
            assert dict(acp_agent_command.env) == {"A": "1", "B": "cli"}
            assert acp_timeout == 3
            assert acp_permission_policy is permissions.cancelled
        """
    )
    result = pytester.runpytest(
        *LEAN_HEADER,
        "test_cli.py",
        "--acp-scope=session",
        "--acp-conformance=warn",
        "--acp-agent=cli-agent -v",
        "--acp-env=B=cli",
        "--acp-timeout=3",
        "--acp-permission=cancelled",
    )
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["acp: agent=cli-agent -v, conformance=warn"])


def test_configuration_in_pyproject_toml(pytester: pytest.Pytester) -> None:
    pytester.makepyprojecttoml(
        """
        [tool.pytest.ini_options]
        acp_agent = "py-agent --stdio"
        acp_env = ["A=1"]
        acp_timeout = "4"
        acp_permission = "allow_always"
        """
    )
    pytester.makepyfile(
        """
        from acp_lite import permissions

        def test_pyproject(acp_agent_command, acp_timeout, acp_permission_policy):
            assert acp_agent_command.argv == ("py-agent", "--stdio")
            assert dict(acp_agent_command.env) == {"A": "1"}
            assert acp_timeout == 4
            assert acp_permission_policy is permissions.allow_always
        """
    )
    result = pytester.runpytest(*LEAN_HEADER)
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["acp: agent=py-agent --stdio, conformance=warn"])


def test_bad_values_are_clear_errors(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.acp_timeout("soon")
        def test_bad_timeout(acp_timeout):
            pass

        @pytest.mark.acp_scope("galaxy")
        def test_bad_scope(acp_client):
            pass

        @pytest.mark.acp_permission("maybe")
        def test_bad_policy(acp_permission_policy):
            pass
        """
    )
    result = pytester.runpytest(*LEAN_HEADER, "--acp-env=NOEQUALS")
    result.assert_outcomes(errors=3)
    result.stdout.fnmatch_lines(
        [
            "*acp timeout must be a number of seconds, not 'soon'*",
            "*--acp-env: expected KEY=VALUE, got 'NOEQUALS'*",
            "*acp permission must be one of allow_once, allow_always, reject_once, "
            "reject_always, cancel (aliases: allow, reject, cancelled), not 'maybe'*",
        ],
        consecutive=False,
    )
    bad_cli = pytester.runpytest(*LEAN_HEADER, "--acp-conformance=loud")
    assert bad_cli.ret == pytest.ExitCode.USAGE_ERROR
    bad_cli.stderr.fnmatch_lines(["*--acp-conformance: invalid choice: 'loud'*"])


class _NoSyrupy(importlib.abc.MetaPathFinder):
    """A finder that fails every syrupy import, as if syrupy were not installed."""

    def find_spec(self, name: str, path: object = None, target: object = None) -> None:
        if name.split(".")[0] == "syrupy":
            raise ImportError(f"No module named {name!r}")


def test_plugin_works_without_syrupy(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    # In this process, with syrupy unimportable and the plugin's own modules dropped,
    # so that the run's entry point imports pytest_acp again from scratch (pytester
    # puts this process's modules back afterwards). acp_lite's modules stay loaded:
    # none of them imports syrupy (checked below from their source).
    for name in list(sys.modules):
        if name.split(".")[0] in ("syrupy", "pytest_acp"):
            monkeypatch.delitem(sys.modules, name)
    monkeypatch.setattr(sys, "meta_path", [_NoSyrupy(), *sys.meta_path])
    pytester.makepyfile(
        """
        import sys

        def test_config(acp_timeout):
            assert acp_timeout == 30
            assert "pytest_acp.plugin" in sys.modules
            assert not [m for m in sys.modules if m.split(".")[0] == "syrupy"]

        def test_snapshot(acp_snapshot):
            pass
        """
    )
    # (LEAN_HEADER has --assert=plain: an inner rewrite hook would import syrupy's plugin
    # module anyway.)
    result = pytester.runpytest_inprocess("-p", "no:syrupy", *LEAN_HEADER, "-q")
    result.stdout.fnmatch_lines(["*acp_snapshot needs syrupy*", "*1 passed, 1 error*"])
    sources = Path(acp_lite.__file__).parent.rglob("*.py")
    assert not [p for p in sources if re.search(r"^\s*(from|import) syrupy", p.read_text(), re.M)]


def test_policy_names_are_the_library_vocabulary(pytester: pytest.Pytester) -> None:
    # One vocabulary (acp_lite.permissions): the option kinds plus cancel, and the
    # older spellings allow / reject / cancelled as aliases; in markers, options, ini.
    pytester.makeini("[pytest]\nacp_permission = allow\nacp_elicitation = accept_defaults\n")
    pytester.makepyfile(
        test_names="""
        import pytest
        from acp_lite import permissions

        @pytest.mark.parametrize("name", sorted(permissions.PERMISSION_POLICIES))
        def test_marker(request, name):
            request.applymarker(pytest.mark.acp_permission(name))
            policy = request.getfixturevalue("acp_permission_policy")
            assert policy is permissions.PERMISSION_POLICIES[name]

        @pytest.mark.acp_permission("reject")
        def test_alias(acp_permission_policy):
            assert acp_permission_policy is permissions.reject_once

        def test_ini(acp_permission_policy, acp_elicitation_policy):
            assert acp_permission_policy is permissions.allow_once
            assert acp_elicitation_policy is permissions.accept_defaults
        """
    )
    pytester.runpytest_inprocess(*LEAN_HEADER).assert_outcomes(passed=7)
    by_option = pytester.runpytest_inprocess(
        *LEAN_HEADER, "-k", "ini", "--acp-permission=reject_always", "--acp-elicitation=cancel"
    )
    by_option.assert_outcomes(failed=1)
    by_option.stdout.fnmatch_lines(["*assert <function reject_always*"])
