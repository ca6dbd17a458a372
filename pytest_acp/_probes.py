"""Active conformance probes as pytest tests: ``--acp-probes[=TIERS]`` and
:func:`pytest_acp.probes.acp_probe_suite`.

One test per requirement of the suite the agent negotiates (v2, or v1 for an
agent that answers 1), named by its id (``acp-probes::ACP-RPC-001``). The agent
is negotiated once at collection (one short start: the suite depends on the
version it chooses; every xdist worker gets the same answer). The probes of one
agent share one :class:`acp_lite.probes.ProbeRun` for the session: the ``shared``
ones use its connection. A mandatory or capability failure fails the test with
the requirement, the spec section, the reason and the evidence lines; an
advisory or informational failure is reported as ``xfailed`` (the spec lets the
agent choose: reported, not failing); a capability the agent does not advertise
skips its probe, with the reason. Results join ``--acp-report-json``.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Collection, Sequence
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from acp_lite.conformance import Result
    from acp_lite.probes import Line, ProbeRun, Target

__all__ = [
    "ProbeFailure",
    "ProbeItem",
    "add_option",
    "collect_probe_items",
    "probe_ids",
    "run_case",
]

_RUNS = pytest.StashKey[dict[tuple[object, ...], "ProbeRun"]]()
ALL_TIERS = "mandatory,capability,advisory,informational"


def add_option(group: pytest.OptionGroup) -> None:
    """Register ``--acp-probes[=TIERS]`` and ``--acp-probe-timeout``."""
    group.addoption(
        "--acp-probes",
        dest="acp_probes",
        nargs="?",
        const=ALL_TIERS,
        default=None,
        metavar="TIERS",
        help="add one test per conformance probe of the --acp-agent agent "
        "(acp-probes::ACP-...); TIERS: comma-separated, default all "
        f"({ALL_TIERS})",
    )
    group.addoption(
        "--acp-probe-timeout",
        dest="acp_probe_timeout",
        type=float,
        default=None,  # 5 s; None so an unrelated run shows no `acp:` header line
        metavar="S",
        help="seconds a probe waits for any one answer of the agent (default 5)",
    )


def parse_tiers(text: str) -> tuple[str, ...]:
    """``mandatory,capability`` -> the tiers (a usage error names an unknown one)."""
    from acp_lite.conformance.requirements import TIERS

    tiers = tuple(t.strip() for t in text.split(",") if t.strip())
    for tier in tiers:
        if tier not in TIERS:
            raise pytest.UsageError(f"--acp-probes: unknown tier {tier!r} ({', '.join(TIERS)})")
    return tiers or TIERS


class _Target:
    """The probe target for a configured agent (a command, or an in-process factory)."""

    def __init__(self, argv: Sequence[str], env: dict[str, str], factory: Any) -> None:
        self.argv = tuple(argv)
        self.env = env
        self.factory = factory

    def key(self) -> tuple[object, ...]:
        return (self.argv, tuple(sorted(self.env.items())), self.factory)

    def target(self) -> Target:
        from acp_lite.probes import AgentCommand, FdAgent

        if self.factory is None:
            return AgentCommand(self.argv, env=self.env)
        factory = self.factory

        def start() -> tuple[int, int, Callable[[], list[str]], Callable[[], None]]:
            agent = factory()
            write_fd, read_fd = agent.start()
            return write_fd, read_fd, agent.stderr_tail, agent.close

        return FdAgent(start, getattr(factory, "__name__", repr(factory)))


def configured_target(config: pytest.Config, agent: object = None) -> _Target:
    """The agent to probe: ``agent`` (argv list, command string, or factory), else
    ``--acp-agent`` / ini ``acp_agent`` / the reference agent, with ``--acp-env``."""
    from pytest_acp._settings import (
        _is_spec,
        _option,
        _split,
        default_agent_argv,
        load_factory,
        parse_env,
    )

    env = parse_env(config.getini("acp_env") or [], "ini acp_env")
    env.update(parse_env(config.getoption("acp_env", None) or [], "--acp-env"))
    if callable(agent):
        return _Target((), {}, agent)
    if agent is not None:
        return _Target(_split(agent), env, None)  # type: ignore[arg-type]
    configured = _option(config, "acp_agent")
    if _is_spec(configured):
        return _Target((), {}, load_factory(configured, "--acp-agent / ini acp_agent"))
    argv = _split(configured) if configured else default_agent_argv()
    return _Target(argv, env, None)


def probe_run(config: pytest.Config, target: _Target, timeout: float) -> ProbeRun:
    """The session's run for ``target`` (started, and negotiated, on first use)."""
    from acp_lite.probes import ProbeRun

    runs = config.stash.setdefault(_RUNS, {})
    key = (*target.key(), timeout)
    if key not in runs:
        runs[key] = ProbeRun(target.target(), timeout=timeout)
    return runs[key]


def close_runs(config: pytest.Config) -> None:
    """Stop every agent the probes started (end of session)."""
    for run in config.stash.get(_RUNS, {}).values():
        run.close()
    config.stash[_RUNS] = {}


def probe_ids(
    config: pytest.Config,
    target: _Target,
    timeout: float,
    tiers: Collection[str],
    ids: Collection[str] | None = None,
) -> list[str]:
    """The ids of the probes to run (``["ACP-INIT-000"]`` when negotiation failed:
    that test then fails with the reason)."""
    from acp_lite.probes import NEGOTIATION, NegotiationFailed

    run = probe_run(config, target, timeout)
    try:
        suite = run.suite()
    except (NegotiationFailed, OSError):
        return [NEGOTIATION.id]
    return [p.id for p in suite if p.requirement.tier in tiers and (ids is None or p.id in ids)]


class ProbeFailure(Exception):
    """A probe failed: its result, shown by :meth:`ProbeItem.repr_failure`."""

    def __init__(self, result: Result, stderr: Sequence[str], passed: str | None = None) -> None:
        super().__init__(result.reason)
        self.result = result
        self.stderr = tuple(stderr)
        #: The probe that passed, when the failure is a passive finding in its traffic.
        self.passed = passed

    def describe(self) -> str:
        r = self.result
        q = r.requirement
        lines = [f"{self.passed} passed, but its traffic broke a rule:"] if self.passed else []
        lines += [
            f"{q.id} [{q.tier}] {q.summary}",
            f"spec: {q.spec}",
            f"why: {r.reason}",
        ]
        if r.evidence:
            lines.append("evidence:")
            lines.extend(f"  {e.text}" for e in r.evidence)
        if self.stderr:
            lines.append("agent stderr (last lines):")
            lines.extend(f"  {s}" for s in self.stderr[-10:])
        return "\n".join(lines)


def _result_of(
    config: pytest.Config, target: _Target, timeout: float, requirement_id: str
) -> Result:
    from acp_lite.conformance import Result
    from acp_lite.probes import NEGOTIATION, PROBES, NegotiationFailed

    run = probe_run(config, target, timeout)
    try:
        run.negotiate()
    except (NegotiationFailed, OSError) as exc:
        from acp_lite.conformance import Evidence

        lines = getattr(exc, "lines", ())
        reason = getattr(exc, "reason", str(exc))
        evidence = tuple(Evidence(line.index, str(line)) for line in lines)
        return Result(NEGOTIATION, "fail", f"{reason} (agent: {shlex.join(target.argv)})", evidence)
    return run.run(PROBES[requirement_id])


def traffic_findings(run: ProbeRun) -> list[Result]:
    """The passive rules' findings on the last probe's own traffic (the lines of its
    connection from where the probe began), one failed result per rule, as in any
    test's traffic. An error response the checker cannot pair with a request answers
    a message the probe sent broken on purpose (a parse error, an invalid request,
    whose id the checker does not count as a request): not an answer to nothing."""
    from acp_lite.conformance import Evidence, Result
    from acp_lite.conformance.passive import for_rule
    from pytest_acp.conformance import check_transcript

    log, start = run.last_traffic
    if not log:
        return []
    records = [{"dir": "send" if x.direction == "sent" else "recv", "raw": x.text} for x in log]
    out: dict[str, Result] = {}
    for v in check_transcript(records, start=start):
        at = v.entry_index
        line = log[at] if at is not None and at < len(log) else None
        if v.rule == "response-without-request" and line is not None and _answers_broken(line):
            continue
        requirement = for_rule(v.rule)
        if requirement is None or requirement.id in out:
            continue
        evidence = (Evidence(at, str(line)),) if line is not None else ()
        out[requirement.id] = Result(requirement, "fail", f"{v.rule}: {v.message}", evidence)
    return list(out.values())


def _answers_broken(line: Line) -> bool:
    items = line.message if isinstance(line.message, list) else [line.message]
    return any(isinstance(item, dict) and "error" in item for item in items)


def run_case(config: pytest.Config, target: _Target, timeout: float, requirement_id: str) -> None:
    """Run one probe as the body of a test: pass, skip, xfail (advisory) or fail.

    The probe's own traffic is judged by the passive rules too: a probe that passed
    fails when its traffic broke a mandatory passive rule (reported like a finding
    in any test's traffic); every finding joins ``--acp-report-json``."""
    from pytest_acp._report import report_collector

    result = _result_of(config, target, timeout, requirement_id)
    collector = report_collector(config)
    run = probe_run(config, target, timeout)
    findings = traffic_findings(run) if run.protocol_version is not None else []
    if collector is not None:
        collector.add(result)
        for finding in findings:
            collector.add(finding)
    if result.status == "pass":
        mandatory = [f for f in findings if f.requirement.tier == "mandatory"]
        if mandatory:
            raise ProbeFailure(mandatory[0], run.stderr_tail(), passed=result.requirement.id)
    if result.status == "skipped":
        pytest.skip(result.reason)
    if result.status == "fail":
        if result.requirement.tier in ("advisory", "informational"):
            pytest.xfail(f"{result.requirement.tier}: {result.reason}")
        raise ProbeFailure(result, run.stderr_tail())


class ProbeItem(pytest.Item):
    """One probe of ``--acp-probes``, a test named by its requirement id."""

    def __init__(
        self, *, target: _Target, timeout: float, requirement_id: str, **kwargs: Any
    ) -> None:
        super().__init__(**kwargs)
        self.target = target
        self.timeout = timeout
        self.requirement_id = requirement_id

    def runtest(self) -> None:
        run_case(self.config, self.target, self.timeout, self.requirement_id)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, ProbeFailure):
            return excinfo.value.describe()
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[str, int | None, str]:
        return "acp-probes", None, f"acp-probes::{self.requirement_id}"


class ProbeSuite(pytest.Collector):
    """The collector the ``--acp-probes`` items hang from (node id ``acp-probes``)."""

    def collect(self) -> list[pytest.Item]:  # never collected itself: items are added
        return []


def collect_probe_items(session: pytest.Session, config: pytest.Config) -> list[pytest.Item]:
    """The ``--acp-probes`` items (none without the option)."""
    option = config.getoption("acp_probes", None)
    if option is None:
        return []
    tiers = parse_tiers(option)
    timeout = float(config.getoption("acp_probe_timeout", None) or 5.0)
    target = configured_target(config)
    suite = ProbeSuite.from_parent(session, name="acp-probes", nodeid="acp-probes")
    items: list[pytest.Item] = [
        ProbeItem.from_parent(suite, name=rid, target=target, timeout=timeout, requirement_id=rid)
        for rid in probe_ids(config, target, timeout, tiers)
    ]
    # Reported as collected, so "collected N items" and the selection counts include them.
    report = pytest.CollectReport(
        suite.nodeid, "passed", None, list[pytest.Item | pytest.Collector](items)
    )
    session.ihook.pytest_collectreport(report=report)
    return items


def generate(metafunc: pytest.Metafunc) -> None:
    """Parametrize a test made by :func:`pytest_acp.probes.acp_probe_suite`."""
    settings = getattr(metafunc.function, "_acp_probe_suite", None)
    if settings is None or "acp_probe_id" not in metafunc.fixturenames:
        return
    config = metafunc.config
    target = configured_target(config, settings["agent"])
    ids = probe_ids(config, target, settings["timeout"], settings["tiers"], settings["ids"])
    metafunc.parametrize("acp_probe_id", ids, ids=ids)
