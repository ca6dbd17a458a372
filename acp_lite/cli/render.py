"""Terminal rendering of ``session/update`` payloads for the ``acp-lite`` command.

Works on the raw wire dicts (``params.update``), not on the typed classes, so that
anything the agent sends -- including custom ``_`` updates and future variants --
is shown, and a malformed known update cannot break the display.

Layout: the agent's message text goes to *stdout* and nothing else does, so
``acp-lite prompt ... > answer.txt`` captures exactly the answer. Everything else
(thoughts, tool calls, plans, states, notices, usage) goes to *stderr*, one line
per event, prefixed so it reads well when both streams share a terminal.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from typing import Any, TextIO

from acp_lite.protocol.constants import ERROR, IDLE

__all__ = ["Renderer", "content_text", "want_color"]

# ANSI styles, used only when the stream is a terminal and NO_COLOR is not set
# (https://no-color.org).
_DIM = "2"
_BOLD = "1"
_CYAN = "36"
_YELLOW = "33"
_RED = "31"
_GREEN = "32"
_MAGENTA = "35"

_STATUS_STYLE = {
    "completed": _GREEN,
    "failed": _RED,
    "cancelled": _YELLOW,
    "in_progress": _CYAN,
}

_PLAN_MARK = {"pending": "[ ]", "in_progress": "[~]", "completed": "[x]"}


def same_destination(a: TextIO, b: TextIO) -> bool:
    """Whether two streams write to the same place (a terminal, or ``2>&1``)."""
    try:
        return os.path.sameopenfile(a.fileno(), b.fileno())
    except (AttributeError, OSError, ValueError):
        return False


def want_color(stream: TextIO) -> bool:
    """Whether to colour output written to ``stream``."""
    if os.environ.get("NO_COLOR"):
        return False
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def content_text(block: Any) -> str:
    """The displayable text of one content block (a wire dict), or a short placeholder."""
    if not isinstance(block, Mapping):
        return ""
    kind = block.get("type")
    if kind == "text":
        text = block.get("text")
        return text if isinstance(text, str) else ""
    if kind == "resource_link":
        return f"<{block.get('name') or block.get('uri') or 'resource'}>"
    if kind == "resource":
        resource = block.get("resource")
        if isinstance(resource, Mapping):
            text = resource.get("text")
            if isinstance(text, str):
                return text
            return f"<{resource.get('uri', 'resource')}>"
        return "<resource>"
    if kind in ("image", "audio"):
        return f"<{kind} {block.get('mimeType', '')}>".replace(" >", ">")
    return f"<{kind}>" if isinstance(kind, str) else ""


def _blocks_text(blocks: Any) -> str:
    if not isinstance(blocks, list):
        return ""
    return "".join(content_text(b) for b in blocks)


class Renderer:
    """Turns update dicts into terminal output, incrementally.

    State kept per entity is small and constant per update (no per-chunk O(n) work
    except for full message upserts, which are rare).
    """

    def __init__(
        self, out: TextIO, err: TextIO, *, color: bool | None = None, shared: bool | None = None
    ) -> None:
        self.out = out
        self.err = err
        self.color = want_color(err) if color is None else color
        #: stdout and stderr end up in the same place, so a status line after
        #: unfinished answer text needs a line break first.
        self.shared = same_destination(out, err) if shared is None else shared
        # Which text stream is "open" (written without a final newline):
        # ("out", message_id) for agent text, ("thought", message_id) for thoughts.
        self._open: tuple[str, str] | None = None
        self._out_at_line_start = True
        # Text printed so far per messageId (to diff full upserts), as parts: joined
        # only when a whole-message update needs it (one growing str is quadratic).
        self._printed: dict[str, list[str]] = {}
        self._thought_printed: dict[str, list[str]] = {}
        self._tools: dict[str, dict[str, Any]] = {}
        self._last_state: str | None = None
        #: A question waits at the terminal, the cursor at the end of its line: what
        #: is shown meanwhile (an update, Ctrl-C's cancellation) starts a new line.
        self.question_open = False

    @property
    def at_line_start(self) -> bool:
        """Whether the cursor of the error stream is at the start of a line: no
        thought or question open there, and no answer text left open on a shared
        terminal (a progress line may then take the line)."""
        if self.question_open:
            return False
        if self._open is None:
            return True
        kind, _ = self._open
        return kind == "out" and (self._out_at_line_start or not self.shared)

    # -- low-level writers -------------------------------------------------------------

    def _style(self, text: str, code: str) -> str:
        if not self.color:
            return text
        return f"\x1b[{code}m{text}\x1b[0m"

    def styled(self, text: str, code: str = _DIM) -> str:
        """``text`` in an ANSI style when colouring (dim by default)."""
        return self._style(text, code)

    def end_question(self) -> None:
        """End the line of an open question (:attr:`question_open`)."""
        if self.question_open:
            self.question_open = False
            self.err.write("\n")

    def _close_open(self) -> None:
        """End an open text run before writing a line to stderr."""
        self.end_question()
        if self._open is None:
            return
        kind, _ = self._open
        if kind == "thought":
            self.err.write("\n")
        elif not self._out_at_line_start and self.shared:
            # Keep stdout (the answer) untouched: the line break that separates the
            # answer text from the next status line goes to stderr.
            self.out.flush()
            self.err.write("\n")
            self._out_at_line_start = True  # the shared line is ended
        self._open = None

    def line(self, text: str, code: str = _DIM) -> None:
        """Write one status line to stderr (agent text in it is made safe)."""
        self._close_open()
        self.err.write(self._style(safe_text(text), code) + "\n")
        self.err.flush()

    def _agent_text(self, message_id: str, text: str) -> None:
        if not text:
            return
        text = safe_text(text)
        if self.shared:
            self.end_question()
        if self._open != ("out", message_id):
            if self._open is not None and self._open[0] == "thought":
                self.err.write("\n")
                self.err.flush()
            elif self._open is not None and not self._out_at_line_start:
                # A new message starts: separate it from the previous one.
                self.out.write("\n")
            self._open = ("out", message_id)
        self.out.write(text)
        self.out.flush()
        self._out_at_line_start = text.endswith("\n")
        self._printed.setdefault(message_id, []).append(text)

    def _thought_text(self, message_id: str, text: str) -> None:
        if not text:
            return
        text = safe_text(text)
        if self._open != ("thought", message_id):
            self._close_open()
            self.err.write(self._style("thinking: ", _MAGENTA))
            self._open = ("thought", message_id)
        self.err.write(self._style(text.replace("\n", "\n          "), _DIM))
        self.err.flush()
        self._thought_printed.setdefault(message_id, []).append(text)

    def finish(self) -> None:
        """End the output: close any open line so the shell prompt starts on its own."""
        self.end_question()
        if self._open is not None and self._open[0] == "thought":
            self.err.write("\n")
        if not self._out_at_line_start:
            self.out.write("\n")
            self._out_at_line_start = True
        self._open = None
        self.out.flush()
        self.err.flush()

    # -- update dispatch ---------------------------------------------------------------

    def update(self, update: Mapping[str, Any]) -> None:
        """Render one ``params.update`` dict."""
        tag = update.get("sessionUpdate")
        handler = _HANDLERS.get(tag) if isinstance(tag, str) else None
        if handler is not None:
            handler(self, update)
        elif tag is None:
            self.line("update without sessionUpdate: " + _short_json(update), _YELLOW)
        else:
            # Custom (``_``-prefixed) or future variant: show it generically (spec:
            # "Session updates": otherwise ignore it or display it generically).
            self.line(f"[{tag}] " + _short_json(update, drop=("sessionUpdate",)))

    def _on_agent_chunk(self, u: Mapping[str, Any]) -> None:
        self._agent_text(str(u.get("messageId", "")), content_text(u.get("content")))

    def _on_agent_message(self, u: Mapping[str, Any]) -> None:
        message_id = str(u.get("messageId", ""))
        if "content" not in u:
            return  # metadata-only patch
        text = _blocks_text(u.get("content"))
        done = _joined(self._printed, message_id)
        if text.startswith(done):
            self._agent_text(message_id, text[len(done) :])
        else:
            # The agent replaced content already shown: print the new version whole.
            self._printed[message_id] = []
            self._agent_text(message_id, ("\n" if done else "") + text)
            self._printed[message_id] = [text]

    def _on_thought_chunk(self, u: Mapping[str, Any]) -> None:
        self._thought_text(str(u.get("messageId", "")), content_text(u.get("content")))

    def _on_thought(self, u: Mapping[str, Any]) -> None:
        message_id = str(u.get("messageId", ""))
        text = _blocks_text(u.get("content"))
        done = _joined(self._thought_printed, message_id)
        self._thought_text(message_id, text[len(done) :] if text.startswith(done) else text)

    def _on_tool(self, u: Mapping[str, Any]) -> None:
        tool_id = str(u.get("toolCallId", ""))
        known = self._tools.get(tool_id)
        if known is None:
            known = {"title": None, "name": None, "kind": None, "status": None}
            self._tools[tool_id] = known
            new = True
        else:
            new = False
        for key in ("title", "name", "kind", "status"):
            if key in u:  # patch semantics: omitted = unchanged, null = cleared
                known[key] = u[key]
        title = known["title"] or known.get("name") or tool_id
        status = known["status"] or "pending"
        if new:
            kind = f" ({known['kind']})" if known["kind"] else ""
            self.line(f"tool: {title}{kind} [{status}]", _CYAN)
        elif "status" in u and u["status"] != known.get("shown_status"):
            self.line(f"tool: {title} -> {status}", _STATUS_STYLE.get(str(status), _CYAN))
        elif "title" in u:
            self.line(f"tool: {title} [{status}]", _CYAN)
        known["shown_status"] = status

    def _on_plan(self, u: Mapping[str, Any]) -> None:
        plan = u.get("plan")
        if not isinstance(plan, Mapping):
            self.line("plan: (malformed)", _YELLOW)
            return
        kind = plan.get("type")
        if kind == "items":
            entries = plan.get("entries")
            lines = ["plan:"]
            for entry in entries if isinstance(entries, list) else []:
                if isinstance(entry, Mapping):
                    mark = _PLAN_MARK.get(str(entry.get("status")), f"[{entry.get('status')}]")
                    lines.append(f"  {mark} {entry.get('content', '')}")
            self.line("\n".join(lines), _BOLD)
        elif kind == "markdown":
            self.line("plan:\n  " + str(plan.get("content", "")).replace("\n", "\n  "), _BOLD)
        elif kind == "file":
            self.line(f"plan: {plan.get('uri', '')}", _BOLD)
        else:
            self.line(f"plan ({kind}): " + _short_json(plan), _BOLD)

    def _on_plan_removed(self, u: Mapping[str, Any]) -> None:
        self.line(f"plan removed: {u.get('planId', '')}")

    def _on_state(self, u: Mapping[str, Any]) -> None:
        state = u.get("state")
        extra = ""
        if state == IDLE and u.get("stopReason"):
            extra = f" ({u['stopReason']})"
        error = u.get("error")
        if state == IDLE and isinstance(error, Mapping):
            extra += f": {error.get('message', '')}"
        background = u.get("background")
        if isinstance(background, list) and background:
            extra += f", {len(background)} background item(s)"
        text = f"state: {state}{extra}"
        if text == self._last_state:
            return  # repeated snapshot: not a transition (spec "State transitions")
        self._last_state = text
        code = _RED if u.get("stopReason") == ERROR else _DIM
        self.line(text, code)

    def _on_notice(self, u: Mapping[str, Any]) -> None:
        desc = u.get("description")
        text = f"notice ({u.get('severity', 'info')}): {u.get('title', '')}"
        if desc:
            text += f" - {desc}"
        self.line(text, _YELLOW)

    def _on_usage(self, u: Mapping[str, Any]) -> None:
        text = f"usage: {u.get('used')}/{u.get('size')} tokens"
        cost = u.get("cost")
        if isinstance(cost, Mapping):
            text += f", cost {cost.get('amount')} {cost.get('currency', '')}".rstrip()
        self.line(text)

    def _on_info(self, u: Mapping[str, Any]) -> None:
        if u.get("title"):
            self.line(f"title: {u['title']}")

    def _on_compaction(self, u: Mapping[str, Any]) -> None:
        text = f"compaction {u.get('compactionId', '')}: {u.get('status', '')}"
        if u.get("error"):
            text += f" ({u['error']})"
        self.line(text)

    def _on_terminal(self, u: Mapping[str, Any]) -> None:
        status = u.get("exitStatus")
        if "command" in u and u.get("command"):
            self.line(f"terminal {u.get('terminalId', '')}: $ {u['command']}", _CYAN)
        if isinstance(status, Mapping):
            self.line(f"terminal {u.get('terminalId', '')} exited: {_short_json(status)}", _CYAN)

    def _on_terminal_output(self, u: Mapping[str, Any]) -> None:
        data = u.get("data")
        if isinstance(data, str) and data:
            self.line(data.rstrip("\n"), _DIM)

    def _on_subagent(self, u: Mapping[str, Any]) -> None:
        state = u.get("state")
        desc = f" [{state.get('state')}]" if isinstance(state, Mapping) else ""
        self.line(f"subagent {u.get('sessionId', '')}: {u.get('title') or ''}{desc}".rstrip())

    def _on_commands(self, u: Mapping[str, Any]) -> None:
        commands = u.get("availableCommands")
        if isinstance(commands, list) and commands:
            names = ", ".join("/" + str(c.get("name")) for c in commands if isinstance(c, Mapping))
            self.line(f"commands: {names}")

    def _ignore(self, u: Mapping[str, Any]) -> None:
        # The user's own message echo, config options and chunks shown via their
        # entity: nothing useful to print live (they are all in --json output).
        return


_HANDLERS = {
    "agent_message_chunk": Renderer._on_agent_chunk,
    "agent_message": Renderer._on_agent_message,
    "agent_thought_chunk": Renderer._on_thought_chunk,
    "agent_thought": Renderer._on_thought,
    "tool_call_update": Renderer._on_tool,
    "plan_update": Renderer._on_plan,
    "plan_removed": Renderer._on_plan_removed,
    "state_update": Renderer._on_state,
    "notice": Renderer._on_notice,
    "usage_update": Renderer._on_usage,
    "session_info_update": Renderer._on_info,
    "compaction_update": Renderer._on_compaction,
    "terminal_update": Renderer._on_terminal,
    "terminal_output_chunk": Renderer._on_terminal_output,
    "subagent_update": Renderer._on_subagent,
    "available_commands_update": Renderer._on_commands,
    "user_message": Renderer._ignore,
    "user_message_chunk": Renderer._ignore,
    "config_option_update": Renderer._ignore,
    "tool_call_content_chunk": Renderer._ignore,
    "compaction_summary_chunk": Renderer._ignore,
    "session_message": Renderer._ignore,
    "session_message_chunk": Renderer._ignore,
}


def _short_json(value: Any, drop: tuple[str, ...] = (), limit: int = 200) -> str:
    if isinstance(value, Mapping) and drop:
        value = {k: v for k, v in value.items() if k not in drop}
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _joined(printed: dict[str, list[str]], message_id: str) -> str:
    """The text printed for ``message_id`` (kept as one part from then on)."""
    parts = printed.get(message_id)
    if not parts:
        return ""
    if len(parts) > 1:
        parts[:] = ["".join(parts)]
    return parts[0]


# C0 controls but newline and tab, DEL, C1 controls, and lone surrogates.
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]")


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    if "\ud800" <= char <= "\udfff":
        return "\ufffd"  # a lone surrogate cannot be written as UTF-8
    return f"\\x{ord(char):02x}"


def safe_text(text: str) -> str:
    """``text`` as it may reach a terminal: control characters other than newline
    and tab shown escaped (``\\x1b``), so agent text cannot set the title, clear
    the screen or move the cursor; lone surrogates replaced by U+FFFD."""
    return _UNSAFE.sub(_escape, text) if _UNSAFE.search(text) else text


def json_line(value: object) -> str:
    """One JSON line for ``--json`` output: UTF-8 when it can be, with lone
    surrogates as JSON escapes (still valid JSON) when it cannot."""
    text = json.dumps(value, ensure_ascii=False)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = json.dumps(value, ensure_ascii=True)
    return text + "\n"
