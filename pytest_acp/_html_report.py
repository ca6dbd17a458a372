"""``--acp-html FILE``: the failing tests' conversations as one HTML page.

Each failing test's traffic (every client it used, from where the test started)
is kept as NDJSON with its conformance findings; at the end of the session one
self-contained page (:mod:`acp_lite.view`) shows a timeline per test and client,
findings at the line they happened. Under pytest-xdist each worker sends what it
kept to the controller (``workeroutput``), which writes the file. No failing
test: no page, and an older page at that path is removed (it would describe
another run).
"""

from __future__ import annotations

import dataclasses
import json
import tempfile
from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest

__all__ = ["configure_html"]

_WIRE_KEY = "acp_html_failures"


@dataclasses.dataclass
class _Failure:
    """One client's traffic of a failing test, as NDJSON, and its findings as
    ``(line index in that traffic, rule, message)``."""

    nodeid: str
    client: int
    clients: int
    ndjson: str
    findings: list[tuple[int, str, str]]

    def label(self) -> str:
        many = f" (client {self.client + 1} of {self.clients})" if self.clients > 1 else ""
        return f"{self.nodeid}{many}"


def _failures_of(item: pytest.Item) -> list[_Failure]:
    from acp_lite.transcript import dumps_record
    from pytest_acp._tracking import TRACKED, VIOLATIONS, traffic_of

    tracked = item.stash.get(TRACKED, [])
    violations = item.stash.get(VIOLATIONS, [])
    out: list[_Failure] = []
    for n, t in enumerate(tracked):
        entries, start = traffic_of(t)
        kept = entries[start:]
        t0 = kept[0].time if kept else 0.0
        ndjson = "".join(dumps_record(e.to_record(t0)) + "\n" for e in kept)
        findings: list[tuple[int, str, str]] = []
        if len(tracked) == 1:  # findings name a line of the one client's traffic
            for v in violations:
                index = -1 if v.entry_index is None else v.entry_index - start
                findings.append((index, v.rule, v.message))
        out.append(_Failure(item.nodeid, n, len(tracked), ndjson, findings))
    return out


class _HtmlHooks:
    def __init__(self, target: Path) -> None:
        self.target = target
        self.failures: list[_Failure] = []

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        report = yield
        if report.failed and call.when in ("setup", "call"):
            try:
                self.failures.extend(_failures_of(item))
            except Exception as exc:  # a diagnostic must never hide the real failure
                report.sections.append(("ACP html", f"(not kept for --acp-html: {exc!r})"))
        return report

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: object) -> None:
        # pytest-xdist, on the controller: a worker finished and sent its part.
        data = getattr(node, "workeroutput", {}).get(_WIRE_KEY)
        if data:
            for row in json.loads(data):
                row["findings"] = [tuple(f) for f in row["findings"]]
                self.failures.append(_Failure(**row))

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        config = session.config
        workeroutput = getattr(config, "workeroutput", None)
        if workeroutput is not None:  # an xdist worker: the controller writes the file
            workeroutput[_WIRE_KEY] = json.dumps([dataclasses.asdict(f) for f in self.failures])
            return
        target = self.target
        if not target.is_absolute():
            target = Path(config.invocation_params.dir) / target
        if not self.failures:
            target.unlink(missing_ok=True)
            return
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(render_failures(self.failures).encode("utf-8", errors="replace"))

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.failures and getattr(terminalreporter.config, "workeroutput", None) is None:
            terminalreporter.write_line(f"ACP conversations of the failing tests: {self.target}")


def render_failures(failures: list[_Failure]) -> str:
    """One page: a timeline per failing test and client, in the order they failed."""
    from acp_lite.view import ViewFinding, read_timelines
    from acp_lite.view.html import render_page

    timelines = []
    ordered = sorted(failures, key=lambda f: (f.nodeid, f.client))
    with tempfile.TemporaryDirectory(prefix="acp-html-") as tmp:
        for number, failure in enumerate(ordered):
            path = Path(tmp) / f"{number}.ndjson"
            path.write_text(failure.ndjson, encoding="utf-8")
            findings = [ViewFinding(i, rule, message) for i, rule, message in failure.findings]
            for timeline in read_timelines(path, findings):
                timelines.append(
                    dataclasses.replace(timeline, connection=number, label=failure.label())
                )
    tests = len({f.nodeid for f in failures})
    return render_page(timelines, f"ACP conversations of {tests} failing test(s)")


def configure_html(config: pytest.Config) -> None:
    """With ``--acp-html FILE``: keep the failing tests' traffic, write the page."""
    target = config.getoption("acp_html", None) or config.getini("acp_html")
    if target:
        config.pluginmanager.register(_HtmlHooks(Path(target)), "acp-html")
