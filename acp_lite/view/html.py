"""Timelines -> one self-contained HTML page.

The page has its CSS and a small script inline and refers to nothing outside
itself (no URL but the page's own ``#`` anchors). Every piece of data is escaped
(:func:`html.escape`, quotes too), so an agent's ``<script>`` is text on the page.
Its size is bounded however long the conversation: an item shows a preview of its
text and a sample of its wire lines, and what the page holds beyond that (a
message's full text, the lines themselves) is drawn from one budget of
:data:`PAGE_BUDGET` characters; past :data:`MAX_ITEMS` items the rest are counted.
"""

from __future__ import annotations

import difflib
import html
from collections.abc import Sequence

from acp_lite.view.items import (
    AgentRequest,
    Call,
    Diff,
    ErrorItem,
    Item,
    Message,
    Permission,
    Plan,
    PromptAnswered,
    PromptSent,
    RawItem,
    StateChange,
    ToolCall,
    Update,
)
from acp_lite.view.timeline import Timeline
from acp_lite.view.wire import WireLine

__all__ = ["MAX_ITEMS", "PAGE_BUDGET", "render_page"]

#: Characters of optional content (full texts, wire lines) one page holds at most.
PAGE_BUDGET = 3_000_000
#: Items shown at most (all connections together); the rest are counted.
MAX_ITEMS = 5_000
#: A text longer than this shows a preview and a "show all" button.
PREVIEW_CHARS = 2_000
#: A wire line is shown up to this many characters.
LINE_CHARS = 2_000
#: A diff's texts are compared up to this many characters each.
DIFF_CHARS = 20_000

_LABELS: dict[str, str] = {
    "prompt": "prompt",
    "prompt_response": "prompt response",
    "message": "message",
    "thought": "thought",
    "tool_call": "tool call",
    "plan": "plan",
    "permission": "permission",
    "agent_request": "agent request",
    "call": "call",
    "state": "state",
    "error": "error",
    "update": "update",
    "raw": "raw",
}

_CSS = """
:root{--fg:#1d232a;--muted:#66707a;--line:#d9dee3;--bg:#fff;--soft:#f4f6f8}
*{box-sizing:border-box}
body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;color:var(--fg);
background:var(--bg)}
header{position:sticky;top:0;background:var(--soft);border-bottom:1px solid var(--line);
padding:8px 16px;z-index:1}
h1{font-size:18px;margin:0 0 4px}h2{font-size:15px;margin:16px 0 8px}
.meta,.gap,.omitted,.note{color:var(--muted)}
.filters label{margin-right:10px;white-space:nowrap}
.filters button{margin-left:6px}
main{padding:0 16px 40px}
ol.timeline{list-style:none;margin:0;padding:0}
li.item{display:flex;gap:12px;border-left:4px solid var(--line);padding:6px 10px;
margin:6px 0;background:var(--bg)}
li.item.hidden{display:none}
.when{flex:0 0 110px;font:12px ui-monospace,monospace;text-align:right}
.body{flex:1;min-width:0}
.badge{display:inline-block;font-size:11px;font-weight:600;text-transform:uppercase;
padding:0 6px;border-radius:3px;background:var(--soft);border:1px solid var(--line);
margin-right:6px}
pre{white-space:pre-wrap;word-break:break-word;margin:4px 0;
font:12.5px/1.4 ui-monospace,SFMono-Regular,Menlo,monospace}
pre.text{background:var(--soft);padding:6px 8px;border-radius:4px}
details.wire pre{margin:0;padding:2px 6px;border-bottom:1px dotted var(--line)}
details.wire summary{cursor:pointer;color:var(--muted);font-size:12px}
.send{color:#0b5cad}.recv{color:#7a3e00}
li.item.k-prompt{border-color:#0b5cad}
li.item.k-message{border-color:#2e7d32}
li.item.k-thought{border-color:#9e9e9e}
li.item.k-tool_call{border-color:#6a1b9a}
li.item.k-permission{border-color:#ef6c00}
li.item.k-error{border-color:#c62828;background:#fff5f5}
li.item.k-state{border-color:#90a4ae}
li.item.k-plan{border-color:#00838f}
.finding{color:#c62828;font-weight:600}
ul{margin:4px 0;padding-left:20px}
.chosen{font-weight:700}
.diff .add{color:#1b5e20;background:#e8f5e9}.diff .del{color:#b71c1c;background:#ffebee}
.status{font:12px ui-monospace,monospace}
li.item.target{outline:2px solid #ef6c00}
"""

_JS = """
(function(){
  var items = document.querySelectorAll('li.item');
  var count = document.getElementById('count');
  function shown(){
    var n = 0;
    items.forEach(function(li){ if(!li.classList.contains('hidden')) n++; });
    count.textContent = n + ' of ' + items.length + ' items shown';
  }
  document.querySelectorAll('input[data-kind]').forEach(function(box){
    box.addEventListener('change', function(){
      var kind = box.getAttribute('data-kind');
      items.forEach(function(li){
        if(li.getAttribute('data-kind') === kind) li.classList.toggle('hidden', !box.checked);
      });
      shown();
    });
  });
  document.querySelectorAll('button.show-all').forEach(function(b){
    b.addEventListener('click', function(){
      var box = b.parentNode;
      var full = box.querySelector('pre.full'), preview = box.querySelector('pre.preview');
      var open = full.hidden;
      full.hidden = !open; preview.hidden = open;
      b.textContent = open ? 'show less' : b.getAttribute('data-label');
    });
  });
  function wires(open){
    document.querySelectorAll('details.wire').forEach(function(d){ d.open = open; });
  }
  document.getElementById('open-wire').addEventListener('click', function(){ wires(true); });
  document.getElementById('close-wire').addEventListener('click', function(){ wires(false); });
  // A link to an item (a finding's, or one shared): show it with its wire lines open.
  function reveal(){
    var li = location.hash ? document.getElementById(location.hash.slice(1)) : null;
    if(!li || !li.classList.contains('item')) return;
    li.classList.remove('hidden');
    li.classList.add('target');
    var wire = li.querySelector('details.wire');
    if(wire) wire.open = true;
  }
  window.addEventListener('hashchange', reveal);
  reveal();
  shown();
  document.body.setAttribute('data-ready', String(items.length));
})();
"""


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


class _Budget:
    """What is left of :data:`PAGE_BUDGET`."""

    def __init__(self, total: int) -> None:
        self.left = total

    def take(self, text: str) -> tuple[str, int]:
        """``text`` cut to what is left (taken from it), and how many chars were cut."""
        n = min(len(text), max(self.left, 0))
        self.left -= n
        return text[:n], len(text) - n


def _secs(t: float) -> str:
    return f"{t:.3f}s"


def _anchor(connection: int, position: int) -> str:
    return f"i-{connection}-{position}"


class _Page:
    def __init__(self, timelines: Sequence[Timeline], title: str) -> None:
        self.timelines = timelines
        self.title = title
        self.budget = _Budget(PAGE_BUDGET)
        self.shown = 0
        self.out: list[str] = []

    def render(self) -> str:
        w = self.out.append
        kinds = sorted({i.kind for t in self.timelines for i in t.items}, key=list(_LABELS).index)
        w('<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">')
        w('<meta name="viewport" content="width=device-width, initial-scale=1">')
        w(f"<title>{_e(self.title)}</title><style>{_CSS}</style></head><body>")
        w(f'<header><h1>{_e(self.title)}</h1><p class="meta">{self.meta()}</p>')
        w('<div class="filters">')
        for kind in kinds:
            w(
                f'<label><input type="checkbox" checked data-kind="{_e(kind)}"> '
                f"{_e(_LABELS.get(kind, kind))}</label>"
            )
        w('<button type="button" id="open-wire">open all wire lines</button>')
        w('<button type="button" id="close-wire">close all</button>')
        w(' <span id="count" class="note"></span></div></header><main>')
        self.findings_summary()
        for timeline in self.timelines:
            self.connection(timeline)
        w(f"</main><script>{_JS}</script></body></html>\n")
        return "".join(self.out)

    def meta(self) -> str:
        parts: list[str] = []
        for t in self.timelines:
            bits = [_e(t.label) if t.label else ""]
            if not t.label and len(self.timelines) > 1:
                bits = [f"connection {t.connection + 1}"]
            if t.agent:
                bits.append(f"agent {_e(t.agent)}")
            if t.protocol_version is not None:
                bits.append(f"ACP v{t.protocol_version}")
            bits.append(f"{t.lines} wire lines, {len(t.items)} items, {_secs(t.duration)}")
            parts.append(" · ".join(b for b in bits if b))
        return "<br>".join(parts) or "empty transcript"

    def findings_summary(self) -> None:
        rows: list[str] = []
        for t in self.timelines:
            for pos, item in enumerate(t.items):
                for f in item.findings:
                    href = _anchor(t.connection, pos)
                    rows.append(
                        f'<li><a href="#{href}">line {f.index}</a> '
                        f'<span class="finding">{_e(f.requirement)}</span> {_e(f.message)}</li>'
                    )
            for f in t.unplaced:
                rows.append(
                    f"<li>line {f.index} (not in this transcript) "
                    f'<span class="finding">{_e(f.requirement)}</span> {_e(f.message)}</li>'
                )
        if rows:
            self.out.append(
                f'<section class="findings"><h2>Findings ({len(rows)})</h2><ul>'
                + "".join(rows)
                + "</ul></section>"
            )

    def connection(self, t: Timeline) -> None:
        w = self.out.append
        w(f'<section class="connection" id="c{t.connection}">')
        if t.label:
            w(f"<h2>{_e(t.label)}</h2>")
        elif len(self.timelines) > 1:
            w(f"<h2>Connection {t.connection + 1}</h2>")
        w('<ol class="timeline">')
        for pos, item in enumerate(t.items):
            if self.shown >= MAX_ITEMS:
                rest = len(t.items) - pos
                w(f'<li class="omitted">… {rest} more items not shown (see the transcript)</li>')
                break
            self.shown += 1
            self.item(t.connection, pos, item)
        w("</ol></section>")

    def item(self, connection: int, pos: int, item: Item) -> None:
        w = self.out.append
        kind = item.kind
        w(f'<li class="item k-{_e(kind)}" data-kind="{_e(kind)}" id="{_anchor(connection, pos)}">')
        w(
            f'<div class="when"><div class="t">{_secs(item.time)}</div>'
            f'<div class="gap">+{_secs(item.gap)}</div></div><div class="body">'
        )
        session = (
            f' <span class="note">session {_e(item.session_id)}</span>' if item.session_id else ""
        )
        w(f'<div class="head"><span class="badge">{_e(_LABELS.get(kind, kind))}</span>')
        w(self.headline(item) + session + "</div>")
        self.details(item)
        if item.findings:
            w('<ul class="item-findings">')
            for f in item.findings:
                w(
                    f'<li><span class="finding">{_e(f.requirement)}</span> (line {f.index}) '
                    f"{_e(f.message)}</li>"
                )
            w("</ul>")
        self.wire(item)
        w("</div></li>")

    def headline(self, item: Item) -> str:
        if isinstance(item, PromptSent):
            return f"client sent session/prompt (id {_e(item.request_id)})"
        if isinstance(item, PromptAnswered):
            if item.message_id is not None:
                return f"inserted as message {_e(item.message_id)}"
            if item.stop_reason is not None:
                return f"turn ended: stopReason {_e(item.stop_reason)}"
            return "answered"
        if isinstance(item, Message):
            mid = f" {_e(item.message_id)}" if item.message_id else ""
            n = f" · {item.chunks} chunks" if item.chunks > 1 else ""
            return f"{_e(item.role)}{mid}{n}"
        if isinstance(item, ToolCall):
            status = " → ".join(_e(c.status) for c in item.changes) or "no status"
            kind = f" ({_e(item.tool_kind)})" if item.tool_kind else ""
            return (
                f"<strong>{_e(item.title or item.tool_call_id)}</strong>{kind} "
                f'<span class="status">{status}</span>'
            )
        if isinstance(item, Plan):
            if item.removed:
                return f"plan {_e(item.plan_id or '')} removed"
            done = sum(e.status == "completed" for e in item.entries)
            return f"{done}/{len(item.entries)} done · {item.revisions} revisions"
        if isinstance(item, Permission):
            answer = _e(item.answer) if item.answer is not None else "no answer"
            return f"<strong>{_e(item.title)}</strong> → {answer}"
        if isinstance(item, AgentRequest):
            answer = f" → {_e(item.answer)}" if item.answer is not None else " (no answer)"
            return f"agent asked {_e(item.method)}{answer}"
        if isinstance(item, Call):
            who = "client" if item.direction == "send" else "agent"
            if item.notification:
                return f"{who} notified {_e(item.method)}"
            answer = "" if item.answer is None else " (answered)"
            return f"{who} called {_e(item.method)}{answer}"
        if isinstance(item, StateChange):
            stop = f" · stopReason {_e(item.stop_reason)}" if item.stop_reason else ""
            bg = f" · {item.background} background" if item.background else ""
            return f"<strong>{_e(item.state)}</strong>{stop}{bg}"
        if isinstance(item, ErrorItem):
            code = f" {item.code}" if item.code is not None else ""
            return f"<strong>{_e(item.source)}</strong>{code} {_e(item.message)}"
        if isinstance(item, Update):
            return f"{_e(item.update_kind)}"
        if isinstance(item, RawItem):
            return "not a JSON-RPC message" if item.wire.count else "the agent exited"
        return ""

    def details(self, item: Item) -> None:
        w = self.out.append
        if isinstance(item, PromptSent | Message):
            self.text(item.text)
        elif isinstance(item, ToolCall):
            if len(item.changes) > 1:
                steps = ", ".join(f"{_e(c.status)} at {_secs(c.time)}" for c in item.changes)
                w(f'<div class="note">{steps} · {item.updates} updates</div>')
            if item.raw_input is not None:
                w(f"<pre>input: {_e(item.raw_input)}</pre>")
            if item.content:
                self.text("\n".join(item.content))
            if item.raw_output is not None:
                w(f"<pre>output: {_e(item.raw_output)}</pre>")
            for diff in item.diffs:
                self.diff(diff)
        elif isinstance(item, Plan):
            w("<ul>")
            for e in item.entries:
                w(f"<li>[{_e(e.status)}] {_e(e.content)}</li>")
            w("</ul>")
        elif isinstance(item, Permission):
            if item.tool_call_id:
                w(f'<div class="note">for tool call {_e(item.tool_call_id)}</div>')
            w("<ul>")
            for o in item.options:
                chosen = item.answer is not None and item.answer.startswith(o.name)
                cls = ' class="chosen"' if chosen else ""
                w(f"<li{cls}>{_e(o.name)} [{_e(o.option_kind)}] ({_e(o.option_id)})</li>")
            w("</ul>")
            if item.answer_time is not None:
                w(f'<div class="note">answered at {_secs(item.answer_time)}</div>')
        elif isinstance(item, AgentRequest | Call):
            if item.summary and item.summary != "{}":
                w(f"<pre>{_e(item.summary)}</pre>")
            if isinstance(item, Call) and item.answer:
                w(f"<pre>→ {_e(item.answer)}</pre>")
        elif isinstance(item, Update):
            if item.summary:
                w(f"<pre>{_e(item.summary)}</pre>")
        elif isinstance(item, RawItem):
            shown, _ = self.budget.take(item.text[:LINE_CHARS])
            w(f"<pre>{_e(shown)}</pre>")

    def text(self, text: str) -> None:
        w = self.out.append
        if len(text) <= PREVIEW_CHARS:
            w(f'<pre class="text">{_e(text)}</pre>')
            return
        w('<div class="long">')
        w(f'<pre class="text preview">{_e(text[:PREVIEW_CHARS])}…</pre>')
        full, cut = self.budget.take(text)
        if len(full) > PREVIEW_CHARS:
            more = f"\n… {cut} more characters not in this page" if cut else ""
            label = f"show all ({len(text)} characters)"
            w(f'<pre class="text full" hidden>{_e(full)}{_e(more)}</pre>')
            w(f'<button type="button" class="show-all" data-label="{label}">{label}</button>')
        else:
            rest = len(text) - PREVIEW_CHARS
            w(f'<div class="note">{rest} more characters not in this page</div>')
        w("</div>")

    def diff(self, diff: Diff) -> None:
        w = self.out.append
        old = (diff.old_text or "")[:DIFF_CHARS].splitlines()
        new = diff.new_text[:DIFF_CHARS].splitlines()
        label = "new file" if diff.old_text is None else "diff"
        w(f'<div class="note">{label} {_e(diff.path)}</div><pre class="diff">')
        for line in list(difflib.unified_diff(old, new, lineterm="", n=2))[2:]:
            cls = "add" if line.startswith("+") else "del" if line.startswith("-") else ""
            shown, _ = self.budget.take(line[:LINE_CHARS])
            w(f'<span class="{cls}">{_e(shown)}</span>\n')
        w("</pre>")

    def wire(self, item: Item) -> None:
        wire = item.wire
        if not wire.count:
            return
        w = self.out.append
        first, last = wire.indexes[0], wire.indexes[-1]
        span = f"line {first}" if wire.count == 1 else f"{wire.count} lines, {first} to {last}"
        w(f'<details class="wire"><summary>wire: {span}</summary>')
        for line in wire.head:
            self.line(line)
        if wire.omitted:
            w(f'<p class="omitted">… {wire.omitted} more lines …</p>')
        for line in wire.tail:
            self.line(line)
        w("</details>")

    def line(self, line: WireLine) -> None:
        text = line.text()
        shown, cut = self.budget.take(text[:LINE_CHARS])
        cut += max(0, len(text) - LINE_CHARS)
        more = f" … ({cut} more characters)" if cut else ""
        arrow = {"send": "→", "recv": "←"}.get(line.direction, "exit")
        index = f"#{line.index}" if line.index >= 0 else ""
        self.out.append(
            f'<pre class="{line.direction}">{arrow} {index} {_secs(line.time)} '
            f"{_e(shown)}{_e(more)}</pre>"
        )


def render_page(timelines: Sequence[Timeline], title: str) -> str:
    """The HTML page of ``timelines`` (one per connection), titled ``title``."""
    return _Page(timelines, title).render()
