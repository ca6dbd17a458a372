"""``--acp-report-json FILE``: the session's conformance report (``acp-lite-report/1``).

A :class:`ReportCollector` lives in ``config.stash`` for the session (only when the
option is given: otherwise nothing here runs). The plugin tells it what each test's
conformance check judged (:func:`note_checked`); active probes add their results
with :meth:`ReportCollector.add` (:func:`report_collector` finds the collector). A
requirement's results merge, the stronger status winning: fail over pass over
skipped over not-tested. At the end of the session a passive requirement is

* ``fail`` where any test's traffic broke its rule (the test's nodeid and the
  message in the reason; the transcript line, index and text, as evidence);
* ``pass`` where it was checked on at least one transcript of its protocol version
  (v1 rules on v1 traffic, v2 rules on v2 traffic, shared ones on either) and
  never failed;
* ``skipped`` where every test that could check it waived it (``acp_waive``);
* ``not-tested`` where no traffic of its version was checked (conformance off,
  no test used an ACP client, or no agent spoke that version).

The agents' stderr tails of the failed tests join the report. Under pytest-xdist
each worker sends its collector to the controller (``workeroutput``), which merges
them and alone writes the file.

This module is imported with the plugin: it loads the catalogue only when used.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Generator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from acp_lite.conformance import Report, Requirement, Result, Status
    from acp_lite.jsontypes import JsonObject
    from pytest_acp._tracking import Tracked
    from pytest_acp.conformance import Violation

__all__ = [
    "COLLECTOR",
    "ReportCollector",
    "add_option",
    "configure_report",
    "merge_results",
    "note_checked",
    "report_collector",
]

_RANK: dict[str, int] = {"not-tested": 0, "skipped": 1, "pass": 2, "fail": 3}
MAX_EVIDENCE = 20  # evidence lines kept per requirement
MAX_REASON = 2000  # characters of a failed requirement's reason
MAX_TEXT = 500  # characters of an evidence line
STDERR_LINES = 20  # stderr lines kept per failed test's client
STDERR_TESTS = 10  # failed tests whose stderr is kept
_WIRE_KEY = "acp_report_json"


def merge_results(old: Result | None, new: Result) -> Result:
    """One result of two for the same requirement: the stronger status wins (fail >
    pass > skipped > not-tested); two failures join their reasons and evidence."""
    if old is None or _RANK[new.status] > _RANK[old.status]:
        return new
    if _RANK[new.status] < _RANK[old.status] or old.status != "fail":
        return old
    from acp_lite.conformance import Result

    reason = old.reason
    if new.reason and new.reason not in reason.split("; "):
        joined = f"{reason}; {new.reason}" if reason else new.reason
        reason = joined if len(joined) <= MAX_REASON else reason
        if reason is not joined and not reason.endswith("; ..."):
            reason += "; ..."
    evidence = (old.evidence + new.evidence)[:MAX_EVIDENCE]
    return Result(old.requirement, "fail", reason, evidence)


class ReportCollector:
    """What a pytest session learnt of its agent's conformance, requirement by requirement."""

    def __init__(self, subject: str) -> None:
        self.subject = subject
        self.results: dict[str, Result] = {}
        #: Passive requirement id -> transcripts that checked it (not waived).
        self.checked: dict[str, int] = {}
        #: Passive requirement id -> transcripts whose test waived it.
        self.waived: dict[str, int] = {}
        #: The protocol versions the checked transcripts negotiated.
        self.versions: set[int] = set()
        self.stderr: list[str] = []
        self._stderr_tests = 0

    def add(self, result: Result) -> None:
        """Record a result (a probe's, or a passive finding), merged with the
        requirement's earlier ones (:func:`merge_results`)."""
        key = result.requirement.id
        self.results[key] = merge_results(self.results.get(key), result)

    def passive(
        self,
        nodeid: str,
        version: int,
        found: list[tuple[Violation, str | None]],
        waived: Collection[str],
    ) -> None:
        """One transcript of test ``nodeid`` (protocol ``version``) was checked:
        ``found`` its findings (waivers applied) with their lines' text, ``waived``
        the rule ids its test waived."""
        from acp_lite.conformance import Evidence, Result
        from acp_lite.conformance.passive import PASSIVE, for_rule

        self.versions.add(version)
        applies = ("both", f"v{version}")
        for rule, q in PASSIVE.items():
            if q.version in applies:
                counts = self.waived if rule in waived else self.checked
                counts[q.id] = counts.get(q.id, 0) + 1
        for v, text in found:
            linked = for_rule(v.rule)
            if linked is None:  # a rule without a requirement: the catalogue's test fails
                continue
            evidence = () if v.entry_index is None else (Evidence(v.entry_index, text or ""),)
            self.add(Result(linked, "fail", f"{nodeid}: {v.message}", evidence))

    def stderr_tail(self, nodeid: str, lines: list[str]) -> None:
        """The agent's stderr tail of a failed test (the first few tests only)."""
        if self._stderr_tests >= STDERR_TESTS:
            return
        self._stderr_tests += 1
        self.stderr.append(f"--- {nodeid} ---")
        self.stderr.extend(lines[-STDERR_LINES:])

    def report(self) -> Report:
        """The report: every passive requirement and every added result."""
        from acp_lite.conformance import CATALOGUE, Report, Result
        from acp_lite.conformance.passive import PASSIVE

        results = dict(self.results)
        for q in PASSIVE.values():
            n, w = self.checked.get(q.id, 0), self.waived.get(q.id, 0)
            if n:
                made = Result(q, "pass", f"checked on {n} test transcript(s), no finding")
            elif w:
                made = Result(q, "skipped", f"waived (acp_waive) in the {w} test(s) checking it")
            else:
                which = "v1 or v2" if q.version == "both" else q.version
                made = Result(
                    q,
                    "not-tested",
                    f"no {which} traffic was checked (conformance off, or no test used "
                    "an ACP client of that version)",
                )
            results[q.id] = merge_results(results.get(q.id), made)
        order = {rid: n for n, rid in enumerate(CATALOGUE)}
        rows = sorted(results.values(), key=lambda r: order.get(r.requirement.id, len(order)))
        version = next(iter(self.versions)) if len(self.versions) == 1 else None
        return Report(self.subject, "agent", tuple(rows), version, tuple(self.stderr))

    # -- across xdist workers ----------------------------------------------------------

    def to_wire(self) -> JsonObject:
        """This collector as JSON (a worker's part, for the controller)."""
        from acp_lite.conformance import Report

        rows = Report(self.subject, "agent", tuple(self.results.values())).to_json()
        return {
            "results": rows["requirements"],
            "checked": dict(self.checked),
            "waived": dict(self.waived),
            "versions": [v for v in sorted(self.versions)],
            "stderr": list(self.stderr),
            "stderrTests": self._stderr_tests,
        }

    def merge_wire(self, data: Mapping[str, Any]) -> None:
        """Merge a worker's :meth:`to_wire`."""
        for row in data.get("results", ()):
            self.add(_result_of(row))
        for name in ("checked", "waived"):
            counts: dict[str, int] = getattr(self, name)
            for rid, n in data.get(name, {}).items():
                counts[rid] = counts.get(rid, 0) + int(n)
        self.versions.update(int(v) for v in data.get("versions", ()))
        if self._stderr_tests < STDERR_TESTS:
            self.stderr.extend(data.get("stderr", ()))
            self._stderr_tests += int(data.get("stderrTests", 0))


def _result_of(row: Mapping[str, Any]) -> Result:
    """A result from its row of ``Report.to_json()`` (its requirement from the
    catalogue when registered here, else rebuilt from the row)."""
    from acp_lite.conformance import CATALOGUE, Evidence, Requirement, Result

    rid = str(row["id"])
    q: Requirement = CATALOGUE.get(rid) or Requirement(
        rid,
        row["tier"],
        str(row.get("summary", "")),
        str(row.get("spec", "")),
        kind=row.get("kind", "probe"),
        version=row.get("version", "v2"),
        capability=row.get("capability"),
        rule=row.get("rule"),
    )
    evidence = tuple(Evidence(e.get("line"), str(e.get("text", ""))) for e in row["evidence"])
    status: Status = row["status"]
    return Result(q, status, str(row.get("reason", "")), evidence)


# -- the plugin's side ------------------------------------------------------------------

COLLECTOR = pytest.StashKey["ReportCollector"]()


def report_collector(config: pytest.Config) -> ReportCollector | None:
    """The session's collector, or ``None`` without ``--acp-report-json``."""
    return config.stash.get(COLLECTOR, None)


def add_option(group: pytest.OptionGroup) -> None:
    """Register ``--acp-report-json FILE``."""
    group.addoption(
        "--acp-report-json",
        dest="acp_report_json",
        metavar="FILE",
        help="after the session, write a JSON conformance report (format acp-lite-report/1): "
        "each requirement's status over all tests' traffic, with evidence",
    )


def configure_report(config: pytest.Config) -> None:
    """With ``--acp-report-json``: a collector for the session, and the hooks that fill
    and write it."""
    target = config.getoption("acp_report_json", None)
    if not target:
        return
    agent = config.getoption("acp_agent", None) or config.getini("acp_agent")
    collector = ReportCollector(agent or "reference agent (acp_lite.testing.agent)")
    config.stash[COLLECTOR] = collector
    config.pluginmanager.register(_ReportHooks(collector, Path(target)), "acp-report-json")


def note_checked(
    item: pytest.Item, tracked: Tracked, violations: list[Violation], waived: Collection[str]
) -> None:
    """The plugin checked ``tracked``'s traffic of ``item``: ``violations`` before waivers."""
    collector = item.config.stash.get(COLLECTOR, None)
    if collector is None:
        return
    found = [v for v in violations if v.rule not in waived]
    lines: list[Any] = []
    if found:  # findings are rare: only then are the lines read
        from pytest_acp._tracking import traffic_of

        lines = traffic_of(tracked)[0]
    located: list[tuple[Violation, str | None]] = []
    for v in found:
        i = v.entry_index
        text = None
        if i is not None and 0 <= i < len(lines):
            text = lines[i].line.decode("utf-8", "replace")[:MAX_TEXT]
        located.append((v, text))
    version = getattr(tracked.client, "protocol_version", None)
    collector.passive(item.nodeid, version if version in (1, 2) else 2, located, waived)


class _ReportHooks:
    """The hooks of ``--acp-report-json`` (registered only with it)."""

    def __init__(self, collector: ReportCollector, target: Path) -> None:
        self.collector = collector
        self.target = target

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        report = yield
        if call.when == "call" and report.failed:
            from pytest_acp._cassettes import is_replay
            from pytest_acp._tracking import TRACKED

            for t in item.stash.get(TRACKED, []):
                if is_replay(item, t.client):
                    continue
                try:
                    tail = list(t.client.stderr_tail())
                except Exception as exc:  # never hide the test's own failure
                    tail = [f"(stderr unavailable: {exc!r})"]
                self.collector.stderr_tail(item.nodeid, tail)
        return report

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: object) -> None:
        # pytest-xdist, on the controller: a worker finished and sent its part.
        data = getattr(node, "workeroutput", {}).get(_WIRE_KEY)
        if data:
            self.collector.merge_wire(json.loads(data))

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        config = session.config
        workeroutput = getattr(config, "workeroutput", None)
        if workeroutput is not None:  # an xdist worker: the controller writes the file
            workeroutput[_WIRE_KEY] = json.dumps(self.collector.to_wire())
            return
        target = self.target
        if not target.is_absolute():
            target = Path(config.invocation_params.dir) / target
        target.parent.mkdir(parents=True, exist_ok=True)
        text = json.dumps(self.collector.report().to_json(), indent=2)
        target.write_text(text + "\n", encoding="utf-8")
