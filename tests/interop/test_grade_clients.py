"""`acp-lite grade-client` against clients written by others: the official TypeScript
SDK (experimental/v2) and the official Python SDK (v1).

Each grading is one full run (every scenario, its own processes). The failures
asserted are the documented differences (docs/grading.md, "Scores"): when one
changes, the test says which, and the scores in the docs need the same change.
"""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

import attrs
import pytest
from early import in_thread
from rawpipe import HERE, node_executable

from acp_lite.conformance.report import Report
from acp_lite.grading import ScenarioRun, grade_client, judge
from acp_lite.grading.runs import run_scenario

GRADE_TS = HERE / "grade_ts_client.mjs"
GRADE_PY = HERE / "grade_py_client.py"


#: Graded here. The TypeScript SDK's default v1 API (`grade_ts_client.mjs --v1`) is
#: graded by hand (docs/grading.md): eight more Node starts for what the v1 agents'
#: interop tests already cover of that API.
CLIENTS = ("ts-v2", "py")
_early: list[Future[dict[str, Report]]] = []


def _command(name: str) -> list[str]:
    return {
        "ts-v2": [node_executable(), str(GRADE_TS)],
        "py": [sys.executable, str(GRADE_PY)],
    }[name]


def _grade(name: str) -> Report:
    return grade_client(_command(name), timeout=60, jobs=2)


def start_early(tmp_path_factory: pytest.TempPathFactory, items: list[pytest.Function]) -> bool:
    """Grades the clients in a thread now (tests/interop/conftest.py calls this at the
    first interop test): the runs mostly wait for Node and the SDKs to load, which
    overlaps the interop tests before this module's."""
    if _early:
        return False
    wanted = {item.callspec.params["name"] for item in items if hasattr(item, "callspec")}

    def grade_all() -> dict[str, Report]:
        return {name: _grade(name) for name in CLIENTS if name in wanted}

    _early.append(in_thread(grade_all, "grade clients"))
    return True


def end_early() -> None:
    """Waits for the gradings started early."""
    with contextlib.suppress(Exception):  # the tests report a failed grading
        _early[0].result(timeout=300)


def _statuses(report: Report, status: str) -> set[str]:
    return {r.requirement.id for r in report.results if r.status == status}


@pytest.mark.parametrize(
    ("name", "version", "failed"),
    [
        pytest.param(
            "ts-v2",
            2,
            # readTextUntilIdle ends at the initial idle sent before the session/new
            # response; a batch gets no answer at all.
            {"ACP-CLIENT-016", "ACP-CLIENT-030", "ACP-CLIENT-031"},
            id="typescript-sdk-v2",
        ),
        pytest.param(
            "py",
            1,
            # A batch array closes the SDK's connection (so nothing of it is answered).
            {"ACP-CLIENT-030", "ACP-CLIENT-031", "ACP-CLIENT-032"},
            id="python-sdk",
        ),
    ],
)
def test_sdk_client_scores(name: str, version: int, failed: set[str]) -> None:
    report = _early[0].result(timeout=300)[name] if _early else _grade(name)
    assert report.protocol_version == version
    reasons = {r.requirement.id: r.reason for r in report.results if r.status == "fail"}
    assert set(reasons) == failed, reasons
    assert not _statuses(report, "not-tested")
    if version == 1:  # fs and terminals, answered by the application's callbacks
        assert _statuses(report, "pass") >= V1_REQUESTS


V1_REQUESTS = {"ACP-CLIENT-022", "ACP-CLIENT-023", "ACP-CLIENT-024"}


def _edit_answer(run: ScenarioRun, method: str, change: Callable[[Any], None]) -> ScenarioRun:
    """``run`` with the client's answer to the agent's ``method`` request changed."""
    ids = {
        x.message["id"]
        for x in run.log
        if x.direction == "out"
        and isinstance(x.message, dict)
        and x.message.get("method") == method
    }
    log = []
    for x in run.log:
        if x.direction == "in" and isinstance(x.message, dict) and x.message.get("id") in ids:
            message = json.loads(x.text)
            change(message)
            x = attrs.evolve(x, text=json.dumps(message), message=message)
        log.append(x)
    return attrs.evolve(run, log=tuple(log))


def test_v1_request_rules_fail_on_a_client_that_breaks_them() -> None:
    """The fs and terminal rules, judged on the Python SDK client's `requests` run
    with one answer broken each (acp_lite's own client is graded in v2)."""
    run = run_scenario(_command("py"), "requests", timeout=60)

    def content(m: Any) -> None:
        m["result"]["content"] = "something else"

    def exit_code(m: Any) -> None:
        m["result"]["exitCode"] = 1

    broken = {
        "ACP-CLIENT-022": _edit_answer(run, "fs/read_text_file", content),
        "ACP-CLIENT-023": attrs.evolve(run, written=None),
        "ACP-CLIENT-024": _edit_answer(run, "terminal/wait_for_exit", exit_code),
    }
    assert _statuses(judge("py", {"requests": run}), "pass") >= V1_REQUESTS
    for rid, edited in broken.items():
        failed = _statuses(judge("broken", {"requests": edited}), "fail")
        assert failed == {rid}, rid
