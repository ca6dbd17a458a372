"""The replay engine: plays the agent side of a recorded connection (no IO).

Feed it what the client writes (:meth:`Replayer.receive_line`), send what
:meth:`Replayer.take` returns. The recorded client lines are expected in the
recorded order; lines the client wrote back to back (with no agent line between
them in the recording) may come in any order among themselves, since nothing the
agent said ordered them. Each agent line goes out once every client line
recorded before it has been received: the agent's responses, notifications and
requests keep their recorded order relative to each other, including updates
that precede a prompt's response.

Ids are rewritten both ways: a response carries the id the client used now, not
the recorded one; the recorded working directory in the agent's lines becomes the
one the client sent now (a file the agent asks to read is in this run's
directory). A client line that matches nothing is a :class:`Mismatch` with a diff;
a request is then answered with a JSON-RPC error that carries the diff, and the
replay stops: the driver ends the connection.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import attrs

from acp_lite.cassettes._format import Record, Recording, StreamedRecording
from acp_lite.cassettes._match import (
    DEFAULT_MATCH_ON,
    Normalizer,
    PathTable,
    check_match_on,
    diff,
    kind_of,
)
from acp_lite.cassettes._redact import Redactor, redact_records, secrets_in, secrets_of

__all__ = ["MISMATCH_CODE", "Mismatch", "Outgoing", "Replayer"]

MISMATCH_CODE = -32603
"""The JSON-RPC error code of the answer to a request the cassette does not hold."""

_NOT_JSON = object()


@attrs.define
class _Step:
    """A record read from the recording: its file line, the recorded time since the
    record before it (either direction), and (a client line) whether it came."""

    line: int | None
    record: Record
    delay: float
    consumed: bool = False


@attrs.frozen
class Outgoing:
    """A line for the client: its recorded ``time`` (seconds since the connection
    started), the ``line`` (bytes, no newline) and ``delay``, the recorded time
    between it and the line before it (either direction)."""

    time: float
    line: bytes
    delay: float = 0.0


@attrs.frozen
class Mismatch:
    """A client line the cassette did not expect: ``number`` (1-based, among the
    client's lines), ``method`` (``""`` for a response or a non-JSON line), and the
    readable ``report`` (what was expected, where in the cassette, and a diff)."""

    number: int
    method: str
    report: str

    def __str__(self) -> str:
        return self.report


def _method(message: Any) -> object:
    return message.get("method") if isinstance(message, dict) else None


def _describe(message: Any) -> str:
    kind = kind_of(message)
    if kind in ("request", "notification"):
        return f"{kind} {message['method']}"
    if kind == "response":
        return f"response to the agent's request id {message.get('id')!r}"
    return "line"


class Replayer:
    """The agent side of ``recording``, played to one client (see the module
    docstring). ``match_on``: what must be equal (:mod:`acp_lite.cassettes._match`);
    ``name`` names the cassette in reports; ``secrets`` (value -> placeholder,
    default: this process's credential-like environment variables) and
    ``redactors`` are applied to the client's lines before they are compared, as
    recording applied them to the recorded ones."""

    def __init__(
        self,
        recording: Recording | StreamedRecording,
        *,
        match_on: Iterable[str] = DEFAULT_MATCH_ON,
        name: str = "the cassette",
        secrets: Mapping[str, str] | None = None,
        redactors: Iterable[Redactor] = (),
    ) -> None:
        self.recording = recording
        self._redactors = list(redactors)
        # The client's lines are redacted as the recording was (secret -> its
        # placeholder), so a client that sends a credential still matches.
        self._secrets = secrets_of() if secrets is None else dict(secrets)
        self.match_on = check_match_on(match_on)
        self.name = name
        self.mismatches: list[Mismatch] = []
        #: True once the recorded agent exited here: close the connection after
        #: sending what :meth:`take` returns.
        self.exited = False
        self.returncode: int | None = None
        # The records are read as the replay goes (a streamed recording is never
        # held whole): ``_window`` is the run of client lines expected now, in any
        # order among themselves; ``_ahead`` what was read past it.
        self._source: Iterator[tuple[int | None, Record]] = iter(recording.numbered())
        self._last_time: float | None = None
        self._ahead: deque[_Step] = deque()
        self._window: list[_Step] = []
        self._out: list[Outgoing] = []
        self._received = 0
        self._refused = 0  # client lines after the first mismatch
        self._ids: dict[str, Any] = {}  # recorded client request id (JSON) -> live id
        self._live_ids: dict[str, Any] = {}  # live id (JSON) -> recorded id
        self._cwds: set[tuple[str, str]] = set()  # (recorded, live)
        self._rewrites = PathTable()  # recorded directory -> the live one
        self._recorded_norm = Normalizer()
        self._live_norm = Normalizer()
        self._advance()

    # -- what the driver calls ---------------------------------------------------------

    def take(self) -> list[Outgoing]:
        """The agent lines that may go out now, in order (each returned once)."""
        out, self._out = self._out, []
        return out

    @property
    def broken(self) -> bool:
        """A client line matched nothing: the replay stopped (the driver sends what
        :meth:`take` returns, the error answer of a refused request, then ends the
        connection: a client waiting for the recorded answer must not hang)."""
        return bool(self.mismatches)

    def receive_line(self, line: bytes) -> None:
        """One line the client wrote (without its newline)."""
        self._received += 1
        try:
            message: Any = json.loads(line)
        except ValueError:
            message = _NOT_JSON
        else:
            record = Record("send", 0.0, message)
            # What this line reveals (an MCP server's token) is redacted from the
            # later lines too, as recording redacted it from every line.
            for value, placeholder in secrets_in([record]).items():
                self._secrets.setdefault(value, placeholder)
            (redacted,) = redact_records([record], secrets=self._secrets, redactors=self._redactors)
            compared = redacted.message
        if self.broken:
            self._refused += 1
            self._refuse(message, self.mismatches[0].report)
            return
        found = self._match(compared if message is not _NOT_JSON else message, line)
        if found is None:
            return
        found.consumed = True
        self._learn(found.record.message, message)
        self._advance()

    def unplayed(self) -> list[str]:
        """The recorded client lines not received (yet), one description each (this
        reads the rest of a streamed recording)."""
        while (step := self._read()) is not None:
            self._ahead.append(step)
        out = []
        for step in (*self._window, *self._ahead):
            if step.record.direction == "send" and not step.consumed:
                at = f" (line {step.line})" if step.line is not None else ""
                out.append(f"{_describe(step.record.message)}{at}")
        return out

    def verdict(self, *, ended: bool = True) -> str | None:
        """Why the replay failed, or ``None``: the first mismatch, else (``ended``:
        the client is done) the recorded client lines it never sent."""
        if self.mismatches:
            extra = self._refused
            more = f"\n({extra} later client line(s) refused too)" if extra else ""
            return self.mismatches[0].report + more
        missing = self.unplayed() if ended else []
        if missing:
            listed = "\n".join(f"  {m}" for m in missing[:10])
            more = f"\n  ... and {len(missing) - 10} more" if len(missing) > 10 else ""
            return (
                f"{self.name}: the client did not send {len(missing)} recorded line(s):\n"
                f"{listed}{more}"
            )
        return None

    # -- internals ---------------------------------------------------------------------

    def _read(self) -> _Step | None:
        """The next record of the source, or ``None`` at its end."""
        found = next(self._source, None)
        if found is None:
            return None
        line, record = found
        before = record.time if self._last_time is None else self._last_time
        self._last_time = record.time
        return _Step(line, record, max(0.0, record.time - before))

    def _next(self) -> _Step | None:
        return self._ahead.popleft() if self._ahead else self._read()

    def _advance(self) -> None:
        while not self.exited:
            if any(not step.consumed for step in self._window):
                return
            self._window.clear()
            step = self._next()
            if step is None:
                return
            record = step.record
            if record.direction == "send":
                # The whole run of client lines recorded back to back is expected.
                self._window.append(step)
                while (more := self._next()) is not None:
                    if more.record.direction != "send":
                        self._ahead.appendleft(more)
                        break
                    self._window.append(more)
            elif record.direction == "exit":
                self.exited = True
                self.returncode = record.returncode
            else:
                self._out.append(Outgoing(record.time, self._rewrite(record), step.delay))

    def _normalized(self, norm: Normalizer, message: Any, ids: dict[str, Any] | None) -> Any:
        return norm.message(message, self.match_on, ids)

    def _match(self, message: Any, line: bytes) -> _Step | None:
        window = [step for step in self._window if not step.consumed]
        live_text = line.decode("utf-8", "replace")
        if not window:
            self._mismatch(
                message,
                f"{self.name}: the client sent {self._what(message, live_text)}, but the "
                "recording has no more client lines here"
                + (" (the recorded agent exited)" if self.exited else ""),
            )
            return None
        best: tuple[_Step, Any, Any] | None = None
        for step in window:
            record = step.record
            if message is _NOT_JSON or record.raw is not None:
                if record.raw == live_text:
                    return step
                continue
            # A trial: the ids this candidate numbers are forgotten unless it matches.
            marks = self._recorded_norm.checkpoint(), self._live_norm.checkpoint()
            want = self._normalized(self._recorded_norm, record.message, None)
            got = self._normalized(self._live_norm, message, self._live_ids)
            if want == got:
                self._recorded_norm.commit()
                self._live_norm.commit()
                return step
            self._recorded_norm.rollback(marks[0])
            self._live_norm.rollback(marks[1])
            # The diff is against the first candidate of the same method, if any.
            same = _method(record.message) == _method(message)
            if best is None or (same and _method(best[0].record.message) != _method(message)):
                best = (step, want, got)
        if best is None:
            first = window[0]
            text = (
                first.record.raw
                if first.record.raw is not None
                else json.dumps(first.record.message)
            )
            self._mismatch(
                message,
                f"{self.name}: the client sent {self._what(message, live_text)}, "
                f"expected {text[:200]} (line {first.line})",
            )
            return None
        step, want, got = best
        where = step.line
        title = (
            f"{self.name}: client line #{self._received} ({self._what(message, live_text)}) "
            f"does not match the recorded {_describe(step.record.message)}"
            f"{f' at line {where}' if where is not None else ''} "
            f"(match_on={list(self.match_on)}):"
        )
        self._mismatch(message, diff(want, got, title=title))
        return None

    def _what(self, message: Any, text: str) -> str:
        if message is _NOT_JSON:
            return f"a non-JSON line {text[:80]!r}"
        return _describe(message)

    def _mismatch(self, message: Any, report: str) -> None:
        method = message.get("method", "") if isinstance(message, dict) else ""
        self.mismatches.append(Mismatch(self._received, str(method), report))
        self._refuse(message, report)

    def _refuse(self, message: Any, report: str) -> None:
        if kind_of(message) != "request":
            return
        error = {
            "code": MISMATCH_CODE,
            "message": f"cassette mismatch: {report.splitlines()[0]}",
            "data": {"cassetteMismatch": report},
        }
        reply = {"jsonrpc": "2.0", "id": message["id"], "error": error}
        self._out.append(Outgoing(0.0, json.dumps(reply, separators=(",", ":")).encode()))

    def _learn(self, recorded: Any, live: Any) -> None:
        """Ids and directories the client chose now, for the agent's later lines."""
        if kind_of(recorded) == "request" and kind_of(live) == "request":
            self._ids[json.dumps(recorded["id"])] = live["id"]
            self._live_ids[json.dumps(live["id"])] = recorded["id"]
        params, now = (m.get("params") if isinstance(m, dict) else None for m in (recorded, live))
        if isinstance(params, dict) and isinstance(now, dict):
            pairs = [(params.get("cwd"), now.get("cwd"))]
            dirs, live_dirs = params.get("additionalDirectories"), now.get("additionalDirectories")
            if isinstance(dirs, list) and isinstance(live_dirs, list):
                pairs += list(zip(dirs, live_dirs, strict=False))
            for old, new in pairs:
                if not (isinstance(old, str) and isinstance(new, str) and old and old != new):
                    continue
                if (old, new) not in self._cwds:
                    self._cwds.add((old, new))
                    self._rewrites.add(old, new.rstrip("/") or "/")
                    self._recorded_norm.cwds.add(old, "<cwd>")
                    self._live_norm.cwds.add(new, "<cwd>")

    def _rewrite(self, record: Record) -> bytes:
        if record.raw is not None:
            return record.line()
        message = record.message
        if not self._ids and not self._cwds:
            return record.line()
        message = self._paths(message)
        if kind_of(message) == "response":
            key = json.dumps(message.get("id"))
            if key in self._ids:
                message = {**message, "id": self._ids[key]}
        elif isinstance(message, dict) and message.get("method") == "$/cancel_request":
            params = message.get("params")
            if isinstance(params, dict):
                key = json.dumps(params.get("requestId"))
                if key in self._ids:
                    message = {**message, "params": {**params, "requestId": self._ids[key]}}
        return json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode(
            "utf-8", errors="surrogatepass"
        )

    def _paths(self, value: Any) -> Any:
        if isinstance(value, str):
            return self._rewrites.replace(value)
        if isinstance(value, list):
            return [self._paths(v) for v in value]
        if isinstance(value, dict):
            return {k: self._paths(v) for k, v in value.items()}
        return value
