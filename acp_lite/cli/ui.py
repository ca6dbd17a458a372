"""What ``acp-lite prompt`` writes: the terminal (or ``--json``) view of a session,
serialised by one lock, and how a session event is shown."""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any, TextIO

from acp_lite.cli.render import Renderer, json_line, safe_text

_PERMISSION = "session/request_permission"

__all__ = [
    "PROGRESS_INTERVAL",
    "Ui",
    "permission_options",
    "raw_update",
    "shown_update",
    "silence_stdout",
    "wants_progress",
]


def permission_options(request: Any) -> list[tuple[str, str, str]]:
    """(option_id, name, kind) of each option of a RequestPermissionRequest."""
    return [
        (str(o.option_id), str(getattr(o, "name", "")), str(getattr(o, "kind", "")))
        for o in getattr(request, "options", None) or ()
    ]


def raw_update(event: Any) -> Any:
    """The wire dict (``params.update``) of a session event, exactly as received."""
    return event.raw


def shown_update(event: Any) -> Any:
    """What the terminal shows of a session event: the wire dict, or for a v1 agent's
    update its v2 form (the renderer speaks v2: a v1 ``tool_call`` or ``plan`` is a
    ``tool_call_update`` / ``plan_update``; docs/v1.md). ``--json`` keeps the raw one."""
    if not str(getattr(event, "source", "")).startswith("v1:"):
        return event.raw
    from acp_lite.protocol import converter

    update = converter.unstructure(event.update)
    return update if isinstance(update, dict) and "sessionUpdate" in update else event.raw


#: Seconds without output before the progress line shows, and between its updates.
PROGRESS_INTERVAL = 1.0
#: Erase the current terminal line: back to its start, clear to its end.
_ERASE = "\r\x1b[K"


def wants_progress(err: TextIO, json_mode: bool) -> bool:
    """Whether to show the progress line: only on a terminal, never with ``--json``."""
    isatty = getattr(err, "isatty", None)
    return not json_mode and bool(isatty and isatty())


class _OutputLock:
    """The lock every writer of the terminal takes: entering it erases the progress
    line first (output resumes on a clean line), leaving it notes the time of the
    output (the progress line waits for a quiet interval)."""

    def __init__(self, ui: Ui) -> None:
        self.ui = ui
        self.lock = threading.RLock()

    def __enter__(self) -> _OutputLock:
        self.lock.acquire()
        try:
            self.ui.erase_progress()
        except BaseException:
            self.lock.release()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            self.ui.last_output = self.ui.clock()
        finally:
            self.lock.release()


class Ui:
    """Everything ``prompt`` writes, serialised by one lock (callbacks may run on
    another thread than the main one).

    On a terminal (never with ``--json`` or into a pipe), a quiet interval shows a
    progress line on stderr, ``... the agent is working (12s)``: what is awaited and
    for how long. It is erased as soon as anything else is written, and only drawn
    where the cursor is at the start of a line (not in the middle of the answer, a
    thought or a question)."""

    def __init__(
        self,
        out: TextIO,
        err: TextIO,
        *,
        json_mode: bool,
        progress: bool | None = None,
        clock: Callable[[], float] = time.monotonic,
        interval: float | None = None,
    ) -> None:
        self.out = out
        self.err = err
        self.json_mode = json_mode
        self.renderer = Renderer(out, err)
        #: Whether the progress line may show (default: :func:`wants_progress`).
        self.progress_enabled = wants_progress(err, json_mode) if progress is None else progress
        self.clock = clock
        self.interval = PROGRESS_INTERVAL if interval is None else interval
        self.last_output = clock()
        self._activity: str | None = None
        self._activity_since = 0.0
        self._drawn = False
        self._ticker: threading.Thread | None = None
        self._stop_ticker = threading.Event()
        self.lock = _OutputLock(self)
        self.shown = -1  # index of the last event shown (events arrive in order)
        self.open = True
        #: Called once when stdout is closed by its reader (``acp-lite ... | head``).
        self.on_closed: Callable[[], object] | None = None

    def read_answer(self) -> str:
        """The line typed at the terminal after a question ("" at end of input).
        Read without the lock: Ctrl-C must be able to show the interruption (this
        thread is then abandoned; the request is answered cancelled)."""
        with self.lock:
            self.renderer.question_open = True
        try:
            return sys.stdin.readline()
        finally:
            with self.lock:
                self.renderer.question_open = False  # the typed Enter ended the line

    def event(self, event: Any) -> None:
        """Show one session event (from ``Session.on_update`` or the event log)."""
        with self.lock:
            index = getattr(event, "index", None)
            if isinstance(index, int):
                if index <= self.shown:
                    return
                self.shown = index
            if not self.open:
                return
            try:
                update = raw_update(event)
                if self.json_mode:
                    if getattr(event, "source", None) == _PERMISSION:
                        return  # not streamed: the permission line stands for it
                    if self.renderer.shared:
                        self.renderer.end_question()
                    self.out.write(json_line(update))
                    self.out.flush()
                else:
                    self.renderer.update(shown_update(event))
            except BrokenPipeError:
                self._closed()

    def permission(self, request: Any, chosen: str | None) -> None:
        """With ``--json``: the permission request and its answer, as one line."""
        if not self.json_mode:
            return
        tool_call = getattr(getattr(request, "subject", None), "tool_call", None)
        line = {
            "permission": {
                "title": getattr(request, "title", None),
                "toolCallId": getattr(tool_call, "tool_call_id", None),
                "options": [oid for oid, _, _ in permission_options(request)],
                "answer": chosen if chosen is not None else "cancelled",
            }
        }
        with self.lock:
            if self.open:
                self.out.write(json_line(line))
                self.out.flush()

    def elicitation(self, request: Any, answer: Mapping[str, Any]) -> None:
        """With ``--json``: the elicitation request and its answer, as one line."""
        if not self.json_mode:
            return
        line = {
            "elicitation": {
                "message": getattr(request, "message", None),
                "mode": getattr(request, "mode", None),
                "answer": answer.get("action"),
                **({"content": answer["content"]} if "content" in answer else {}),
            }
        }
        with self.lock:
            if self.open:
                self.out.write(json_line(line))
                self.out.flush()

    def status(self, text: str) -> None:
        with self.lock:
            if not self.open:
                return
            try:
                if self.json_mode:
                    self.renderer.end_question()
                    self.err.write(safe_text(text) + "\n")
                    self.err.flush()
                else:
                    self.renderer.line(text)
            except BrokenPipeError:
                self._closed()

    # -- the progress line --------------------------------------------------------------

    def progress(self, activity: str) -> None:
        """What is awaited from now on (``"starting the agent"``): the progress line
        says it with the time since this call. Starts the ticker thread on first use."""
        if not self.progress_enabled:
            return
        with self.lock.lock:
            self._activity = activity
            self._activity_since = self.clock()
            if self._ticker is None:
                self._ticker = threading.Thread(
                    target=self._tick_until_stopped, name="cli progress line", daemon=True
                )
                self._ticker.start()

    def tick(self) -> None:
        """Draw (or update) the progress line if output has paused for an interval."""
        # Never waits for the lock: a writer holds it (and erases the line anyway),
        # and stop_progress may join this thread while holding it.
        if not self.lock.lock.acquire(blocking=False):
            return
        try:
            self._draw()
        finally:
            self.lock.lock.release()

    def _draw(self) -> None:
        if not (self.progress_enabled and self.open and self._activity is not None):
            return
        now = self.clock()
        if not self._drawn and now - self.last_output < self.interval:
            return
        if not self.renderer.at_line_start:
            return
        elapsed = _elapsed(now - self._activity_since)
        text = self.renderer.styled(f"... {self._activity} ({elapsed})")
        try:
            self.err.write(f"{_ERASE}{text}")
            self.err.flush()
        except (BrokenPipeError, ValueError):
            return
        self._drawn = True

    def erase_progress(self) -> None:
        """Erase the progress line, if drawn (the cursor back at the line's start)."""
        with self.lock.lock:
            if not self._drawn:
                return
            self._drawn = False
            with contextlib.suppress(BrokenPipeError, ValueError):
                self.err.write(_ERASE)
                self.err.flush()

    def stop_progress(self) -> None:
        """No more progress line: stop the ticker and erase the line."""
        self._stop_ticker.set()
        ticker, self._ticker = self._ticker, None
        if ticker is not None and ticker is not threading.current_thread():
            ticker.join()
        with self.lock.lock:
            self._activity = None
        self.erase_progress()

    def _tick_until_stopped(self) -> None:
        while not self._stop_ticker.wait(self.interval):
            self.tick()

    def interrupted(self, text: str) -> None:
        """Ctrl-C's line, on a line of its own: on a terminal the ``^C`` it echoed
        (where no output ends the line) is erased first."""
        self.stop_progress()
        with self.lock:
            self.finish()
            tty = getattr(self.err, "isatty", None)
            start = "\r\x1b[K" if tty is not None and tty() else ""
            with contextlib.suppress(BrokenPipeError, ValueError):
                self.err.write(f"{start}{text}\n")
                self.err.flush()

    def finish(self) -> None:
        self.stop_progress()
        with self.lock:
            self.renderer.end_question()  # Ctrl-C at a question: the line it left open
            if self.open and not self.json_mode:
                try:
                    self.renderer.finish()
                except BrokenPipeError:
                    self._closed()
            self.open = False

    def _closed(self) -> None:
        """Our reader went away: stop writing, and stop the agent's work."""
        self.open = False
        silence_stdout()
        if self.on_closed is not None:
            callback, self.on_closed = self.on_closed, None
            callback()


def _elapsed(seconds: float) -> str:
    """``12s``, ``1m05s``: whole seconds, as a status line reads them."""
    whole = int(seconds)
    return f"{whole}s" if whole < 60 else f"{whole // 60}m{whole % 60:02d}s"


def silence_stdout() -> None:
    """Point stdout at devnull so the interpreter's final flush of a closed pipe is
    quiet (Python docs, signal module: "Note on SIGPIPE")."""
    with contextlib.suppress(OSError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
