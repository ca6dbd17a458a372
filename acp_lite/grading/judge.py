"""Judging a client from the grading agent's logs and the client's output.

One function per requirement (:data:`CHECKS`), each given the runs of the
scenarios and answering ``pass`` / ``fail`` with evidence (the log lines behind
it), or ``not-tested`` with the reason when the run that shows it did not get
that far. A client whose negotiated version a requirement does not cover, or that
did not advertise the capability, is ``skipped``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

from acp_lite.conformance.report import Evidence, Report, Result, Status
from acp_lite.grading.requirements import CLIENT_REQUIREMENTS, ClientRequirement
from acp_lite.grading.runs import LogLine, ScenarioRun
from acp_lite.testing.grade_scenarios import (
    LONG_TEXT_SIZE,
    READ_TEXT,
    REPLIES,
    TERMINAL_TEXT,
    WRITE_TEXT,
)

__all__ = ["CHECKS", "judge"]


class _Verdict(Exception):
    """Raised by a check: the result it found."""

    def __init__(self, status: str, reason: str, lines: tuple[LogLine, ...] = ()) -> None:
        super().__init__(reason)
        self.status, self.reason, self.lines = status, reason, lines


def _fail(reason: str, *lines: LogLine) -> _Verdict:
    return _Verdict("fail", reason, lines)


def _untested(reason: str) -> _Verdict:
    return _Verdict("not-tested", reason)


class View:
    """One run, indexed: the client's lines, the agent's requests, the responses."""

    def __init__(self, run: ScenarioRun) -> None:
        self.run = run
        self.ins = [line for line in run.log if line.direction == "in"]
        #: id -> (method, the line, in a batch)
        self.requests: dict[Any, tuple[str, LogLine, bool]] = {}
        for line in run.log:
            if line.direction != "out":
                continue
            batch = isinstance(line.message, list)
            for item in _items(line.message):
                if "method" in item and "id" in item:
                    self.requests[item["id"]] = (str(item["method"]), line, batch)
        #: the client's responses: (message, line, in a batch)
        self.responses: list[tuple[dict[str, Any], LogLine, bool]] = [
            (item, line, isinstance(line.message, list))
            for line in self.ins
            for item in _items(line.message)
            if "method" not in item
        ]

    def events(self, name: str) -> list[LogLine]:
        """The log's events of this name."""
        return [line for line in self.run.log if line.direction is None and line.text == name]

    def answers(self, method: str) -> list[tuple[dict[str, Any], LogLine]]:
        """The client's responses to the agent's requests of ``method``."""
        ids = {rid for rid, (m, _, _) in self.requests.items() if m == method}
        return [(msg, line) for msg, line, _ in self.responses if msg.get("id") in ids]

    def requests_of(self, method: str) -> list[tuple[dict[str, Any], LogLine]]:
        """The client's requests of ``method``."""
        return [
            (item, line)
            for line in self.ins
            for item in _items(line.message)
            if item.get("method") == method
        ]

    def reply_ok(self, expected: str) -> None:
        """Raise unless the client printed exactly ``expected`` and exited 0."""
        got = self.run.stdout.strip()
        if got != expected.strip():
            shown = got if len(got) <= 80 else got[:40] + "..." + got[-20:]
            raise _fail(
                f"{self.run.scenario}: the client printed {shown!r}, expected {expected!r}",
                *self.ins[-1:],
            )
        if self.run.exit_code != 0:
            raise _fail(f"{self.run.scenario}: the client exited {self.run.exit_code}")


def _items(message: Any) -> Iterator[dict[str, Any]]:
    for item in message if isinstance(message, list) else [message]:
        if isinstance(item, dict):
            yield item


def _first_answer(view: View, method: str) -> tuple[dict[str, Any], LogLine]:
    """The client's first answer to the agent's ``method`` request (fails if none)."""
    answers = view.answers(method)
    if not answers:
        raise _fail(f"{view.run.scenario}: no answer to the agent's {method}")
    return answers[0]


def _error_code(message: Mapping[str, Any]) -> Any:
    error = message.get("error")
    return error.get("code") if isinstance(error, dict) else None


# -- every run --------------------------------------------------------------------------


def check_initialize_first(views: Mapping[str, View]) -> None:
    for view in views.values():
        if not view.ins:
            raise _fail(f"{view.run.scenario}: the client sent nothing")
        first = view.ins[0]
        msg = first.message
        if not isinstance(msg, dict) or msg.get("method") != "initialize":
            raise _fail(f"{view.run.scenario}: the first message is not initialize", first)
        version = (msg.get("params") or {}).get("protocolVersion")
        if not isinstance(version, int) or isinstance(version, bool):
            raise _fail(f"protocolVersion {version!r} is not an integer", first)


def check_valid_messages(views: Mapping[str, View]) -> None:
    for view in views.values():
        for line in view.ins:
            msg = line.message
            items = msg if isinstance(msg, list) else [msg]
            if (
                not line.valid_json
                or not items
                or not all(isinstance(i, dict) and i.get("jsonrpc") == "2.0" for i in items)
            ):
                raise _fail(f"{view.run.scenario}: not a JSON-RPC 2.0 message", line)


def check_prompt_after_setup(views: Mapping[str, View]) -> None:
    prompted = False
    for view in views.values():
        setup = next(
            (
                line
                for line in view.run.log
                if line.direction == "out" and "sessionId" in line.text and '"result"' in line.text
            ),
            None,
        )
        for msg, line in view.requests_of("session/prompt"):
            prompted = True
            sid = (msg.get("params") or {}).get("sessionId")
            if setup is None or line.index < setup.index:
                raise _fail("session/prompt before the session/new response", line)
            if sid != "grade-1":
                raise _fail(f"session/prompt for session {sid!r}, not grade-1", line)
    if not prompted:
        raise _untested("the client sent no session/prompt")


def check_prompt_content(views: Mapping[str, View]) -> None:
    found = False
    for view in views.values():
        for msg, line in view.requests_of("session/prompt"):
            found = True
            blocks = (msg.get("params") or {}).get("prompt")
            for block in blocks if isinstance(blocks, list) else []:
                kind = block.get("type") if isinstance(block, dict) else None
                if kind not in ("text", "resource_link"):
                    raise _fail(f"a {kind!r} block though no prompt capability allows it", line)
    if not found:
        raise _untested("the client sent no session/prompt")


def check_no_reply_to_notification(views: Mapping[str, View]) -> None:
    for view in views.values():
        for msg, line, _ in view.responses:
            rid = msg.get("id")
            if rid is None and view.run.scenario == "batch" and _error_code(msg) == -32600:
                continue  # the answer to the empty batch (ACP-CLIENT-032)
            if rid not in view.requests:
                raise _fail(f"a response with id {rid!r}, which no request of the agent had", line)


def check_one_response_each(views: Mapping[str, View]) -> None:
    for view in views.values():
        counts: dict[Any, int] = {}
        for msg, _, _ in view.responses:
            counts[msg.get("id")] = counts.get(msg.get("id"), 0) + 1
        for rid, (method, line, batch) in view.requests.items():
            if batch:
                continue  # batches: ACP-CLIENT-030
            n = counts.get(rid, 0)
            if n != 1:
                what = "no response" if n == 0 else f"{n} responses"
                raise _fail(f"{view.run.scenario}: {what} to the agent's {method}", line)


# -- one scenario each -------------------------------------------------------------------


def check_turn(views: Mapping[str, View]) -> None:
    views["basics"].reply_ok(REPLIES["basics"])


def check_patches(views: Mapping[str, View]) -> None:
    views["patches"].reply_ok(REPLIES["patches"])


def _unknown_answer(views: Mapping[str, View], method: str) -> None:
    view = views["unknown"]
    msg, line = _first_answer(view, method)
    if _error_code(msg) != -32601:
        raise _fail(f"{method} answered {_short(msg)}, not error -32601", line)


def check_unknown_custom_request(views: Mapping[str, View]) -> None:
    _unknown_answer(views, "_grade/ask")


def check_unknown_request(views: Mapping[str, View]) -> None:
    _unknown_answer(views, "grade/future_method")


def check_unknown_notification(views: Mapping[str, View]) -> None:
    view = views["unknown"]
    if not view.events("unknown_requests"):
        raise _untested("the turn did not get to the unknown notifications")
    if not view.answers("_grade/ask"):
        raise _fail("after the unknown notifications the client answered nothing more")


def check_unknown_variants(views: Mapping[str, View]) -> None:
    views["unknown"].reply_ok(REPLIES["unknown"])


def check_early_updates(views: Mapping[str, View]) -> None:
    view = views["early"]
    if not view.requests_of("session/prompt"):
        raise _fail("after updates before the session/new response the client never prompted")
    view.reply_ok(REPLIES["early"])


def check_permission(views: Mapping[str, View]) -> None:
    view = views["requests"]
    msg, line = _first_answer(view, "session/request_permission")
    result = msg.get("result")
    outcome = result.get("outcome") if isinstance(result, dict) else None
    if not isinstance(outcome, dict):
        raise _fail(f"the answer {_short(msg)} has no outcome", line)
    if outcome.get("outcome") == "cancelled":
        return
    if outcome.get("outcome") != "selected" or outcome.get("optionId") not in ("allow", "reject"):
        raise _fail(f"the answer {_short(msg)} is neither an offered option nor cancelled", line)


def check_elicitation(views: Mapping[str, View]) -> None:
    view = views["requests"]
    msg, line = _first_answer(view, "elicitation/create")
    result = msg.get("result")
    action = result.get("action") if isinstance(result, dict) else None
    if action in ("decline", "cancel"):
        return
    if action != "accept":
        raise _fail(f"the answer {_short(msg)} is not accept, decline or cancel", line)
    content = result.get("content") if isinstance(result, dict) else None
    if not isinstance(content, dict) or not isinstance(content.get("name", ""), str):
        raise _fail(f"accepted content {_short(content)} does not match the form's schema", line)


def check_read_file(views: Mapping[str, View]) -> None:
    view = views["requests"]
    msg, line = _first_answer(view, "fs/read_text_file")
    result = msg.get("result")
    if not isinstance(result, dict) or result.get("content") != READ_TEXT:
        raise _fail(f"the answer {_short(msg)} does not hold the file's content", line)


def check_write_file(views: Mapping[str, View]) -> None:
    view = views["requests"]
    msg, line = _first_answer(view, "fs/write_text_file")
    if "error" in msg:
        raise _fail(f"fs/write_text_file failed: {_short(msg)}", line)
    if view.run.written != WRITE_TEXT:
        raise _fail(f"the file holds {view.run.written!r} afterwards", line)


def check_terminal(views: Mapping[str, View]) -> None:
    view = views["requests"]
    steps = {}
    for method in ("terminal/create", "terminal/wait_for_exit", "terminal/output"):
        msg, line = _first_answer(view, method)
        result = msg.get("result")
        if not isinstance(result, dict):
            raise _fail(f"{method} answered {_short(msg)}", line)
        steps[method] = (result, line)
    result, line = steps["terminal/wait_for_exit"]
    if result.get("exitCode") != 0:
        raise _fail(f"`echo` exited {result.get('exitCode')!r}, not 0", line)
    result, line = steps["terminal/output"]
    output = result.get("output")
    if not isinstance(output, str) or TERMINAL_TEXT not in output:
        raise _fail(f"the output {_short(output)} lacks what the command printed", line)
    released = view.answers("terminal/release")
    if not released or "error" in released[0][0]:
        raise _fail("terminal/release was not answered with a result", *[x for _, x in released])


def _batch(views: Mapping[str, View]) -> tuple[View, list[Any]]:
    view = views["batch"]
    sent = view.events("batch")
    if not sent:
        raise _untested("the turn did not get to the batch")
    return view, list(sent[0].data.get("ids", []))


def check_batch_answered(views: Mapping[str, View]) -> None:
    view, ids = _batch(views)
    got = {msg.get("id") for msg, _, _ in view.responses}
    missing = [rid for rid in ids if rid not in got]
    if missing:
        raise _fail(f"no response to the batch's request(s) {missing}", view.events("batch")[0])


def check_batch_array(views: Mapping[str, View]) -> None:
    view, ids = _batch(views)
    for line in view.ins:
        if isinstance(line.message, list):
            inside = {i.get("id") for i in _items(line.message)}
            if set(ids) <= inside:
                return
    lines = [line for msg, line, _ in view.responses if msg.get("id") in ids]
    raise _fail("the batch's responses came as separate messages", *lines[:2])


def check_empty_batch(views: Mapping[str, View]) -> None:
    view = views["batch"]
    if not view.events("empty_batch"):
        raise _untested("the turn did not get to the empty batch")
    for msg, line, in_batch in view.responses:
        if msg.get("id") is None:
            if in_batch or _error_code(msg) != -32600:
                raise _fail(f"the empty batch was answered {line.text[:120]}", line)
            return
    raise _fail("no answer to the empty batch", view.events("empty_batch")[0])


def check_long_line(views: Mapping[str, View]) -> None:
    views["long_line"].reply_ok("x" * LONG_TEXT_SIZE + "END")


def _cancelled(views: Mapping[str, View]) -> View:
    view = views["cancel"]
    if not view.events("cancel"):
        raise _untested("interrupted (SIGINT), the client did not send session/cancel")
    return view


def check_cancel_permission(views: Mapping[str, View]) -> None:
    view = _cancelled(views)
    msg, line = _first_answer(view, "session/request_permission")
    result = msg.get("result")
    outcome = result.get("outcome") if isinstance(result, dict) else None
    if not isinstance(outcome, dict) or outcome.get("outcome") != "cancelled":
        raise _fail(f"the cancelled work's permission request was answered {_short(msg)}", line)


def check_cancel_stays(views: Mapping[str, View]) -> None:
    view = _cancelled(views)
    end = view.events("turn_end")
    eof = view.events("eof")
    if not end:
        raise _fail("the client left before the cancelled turn ended", *eof[:1])
    if eof and eof[0].t < end[0].t:
        raise _fail("the client closed the connection before the cancelled turn ended", eof[0])


def check_cancel_sent(views: Mapping[str, View]) -> None:
    view = views["cancel"]
    if not view.events("ready_for_cancel"):
        raise _untested("the turn did not get to the point of the interruption")
    if not view.events("cancel"):
        raise _fail("interrupted (SIGINT), the client did not send session/cancel")


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 120 else text[:117] + "..."


CHECKS: dict[str, Callable[[Mapping[str, View]], None]] = {
    "ACP-CLIENT-001": check_initialize_first,
    "ACP-CLIENT-002": check_valid_messages,
    "ACP-CLIENT-003": check_prompt_after_setup,
    "ACP-CLIENT-004": check_prompt_content,
    "ACP-CLIENT-005": check_no_reply_to_notification,
    "ACP-CLIENT-006": check_one_response_each,
    "ACP-CLIENT-010": check_turn,
    "ACP-CLIENT-011": check_patches,
    "ACP-CLIENT-012": check_unknown_custom_request,
    "ACP-CLIENT-013": check_unknown_request,
    "ACP-CLIENT-014": check_unknown_notification,
    "ACP-CLIENT-015": check_unknown_variants,
    "ACP-CLIENT-016": check_early_updates,
    "ACP-CLIENT-020": check_permission,
    "ACP-CLIENT-021": check_elicitation,
    "ACP-CLIENT-022": check_read_file,
    "ACP-CLIENT-023": check_write_file,
    "ACP-CLIENT-024": check_terminal,
    "ACP-CLIENT-030": check_batch_answered,
    "ACP-CLIENT-031": check_batch_array,
    "ACP-CLIENT-032": check_empty_batch,
    "ACP-CLIENT-040": check_long_line,
    "ACP-CLIENT-050": check_cancel_permission,
    "ACP-CLIENT-051": check_cancel_stays,
    "ACP-CLIENT-052": check_cancel_sent,
}
"""Requirement id -> its check."""


def _negotiated(views: Mapping[str, View]) -> tuple[int | None, dict[str, Any]]:
    """The version the agent answered, and the client's capabilities in its form."""
    for view in views.values():
        if not view.ins or not isinstance(view.ins[0].message, dict):
            continue
        params = view.ins[0].message.get("params") or {}
        answered = next(
            (
                line.message["result"].get("protocolVersion")
                for line in view.run.log
                if line.direction == "out"
                and isinstance(line.message, dict)
                and line.message.get("id") == view.ins[0].message.get("id")
                and isinstance(line.message.get("result"), dict)
            ),
            params.get("protocolVersion"),
        )
        v = 1 if answered == 1 else 2
        caps = params.get("capabilities" if v == 2 else "clientCapabilities")
        return v, caps if isinstance(caps, dict) else {}
    return None, {}


def _advertised(caps: Mapping[str, Any], path: str) -> bool:
    node: Any = caps
    for part in path.split("."):
        if not isinstance(node, dict) or node.get(part) in (None, False):
            return False
        node = node[part]
    return True


def _result(
    client_req: ClientRequirement,
    views: Mapping[str, View],
    version: int | None,
    caps: Mapping[str, Any],
) -> Result:
    req = client_req.requirement
    if version is not None and req.version not in ("both", f"v{version}"):
        return Result(req, "skipped", f"a {req.version} rule; the client speaks v{version}")
    if req.capability is not None and not _advertised(caps, req.capability):
        return Result(req, "skipped", f"the client does not advertise {req.capability}")
    scenario = client_req.scenario
    if scenario is not None:
        run = views.get(scenario)
        if run is None:
            return Result(req, "not-tested", f"scenario {scenario!r} was not run")
        if not run.run.started:
            return Result(req, "not-tested", run.run.error)
        if run.run.exit_code is None and not run.ins:
            return Result(req, "fail", f"{scenario}: the client sent nothing before the timeout")
    try:
        CHECKS[req.id](views)
    except _Verdict as verdict:
        evidence = tuple(Evidence(line.index, _evidence(views, line)) for line in verdict.lines)
        status: Status = "fail" if verdict.status == "fail" else "not-tested"
        return Result(req, status, verdict.reason, evidence)
    except KeyError as exc:
        return Result(req, "not-tested", f"scenario {exc} was not run")
    return Result(req, "pass")


def _evidence(views: Mapping[str, View], line: LogLine) -> str:
    arrow = {"in": "client ->", "out": "agent ->"}.get(line.direction or "", "event")
    text = line.text if len(line.text) <= 300 else line.text[:297] + "..."
    scenario = next((s for s, v in views.items() if line in v.run.log), "?")
    return f"[{scenario}] {arrow} {text}"


def judge(subject: str, runs: Mapping[str, ScenarioRun]) -> Report:
    """The report on one client from its scenario runs."""
    views = {name: View(run) for name, run in runs.items()}
    version, caps = _negotiated(views)
    results = tuple(_result(c, views, version, caps) for c in CLIENT_REQUIREMENTS)
    tail: tuple[str, ...] = ()
    for run in runs.values():
        if run.stderr_tail:
            tail = run.stderr_tail
    return Report(subject, "client", results, version, tail)
