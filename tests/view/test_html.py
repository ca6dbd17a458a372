"""The page: self-contained (nothing fetched), data escaped, size bounded."""

from __future__ import annotations

import re
from collections.abc import Callable
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

from acp_lite.view import ViewFinding, render_html, write_html
from acp_lite.view.html import MAX_ITEMS

from .conftest import FLOOD_CHUNKS, update, write_ndjson

Records = Callable[..., list[dict[str, Any]]]

HOSTILE = (
    '<script>alert("x")</script><img src="https://evil.example/p.png" onerror="alert(1)">'
    " see http://example.com/docs and <a href='//cdn.example/x.js'>this</a> &amp; \"quotes\""
)


class _Scan(HTMLParser):
    """Every tag's attributes, and the text of each script and style element."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.attrs: list[tuple[str, str, str | None]] = []
        self.code: list[str] = []
        self.tags: list[str] = []
        self._in: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.attrs.extend((tag, k, v) for k, v in attrs)
        self._in = tag if tag in ("script", "style") else None

    def handle_endtag(self, tag: str) -> None:
        self._in = None

    def handle_data(self, data: str) -> None:
        if self._in is not None:
            self.code.append(data)


def scan(page: str) -> _Scan:
    parser = _Scan()
    parser.feed(page)
    parser.close()
    return parser


def hostile_page(tmp_path: Path) -> str:
    chunk = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": HOSTILE}}
    records = [
        update(0.0, chunk),
        update(0.1, {"sessionUpdate": "_x/" + HOSTILE, "note": HOSTILE}),
        {"dir": "recv", "t": 0.2, "raw": HOSTILE},
    ]
    return render_html(
        write_ndjson(tmp_path / "t.ndjson", records),
        title=HOSTILE,
        findings=[ViewFinding(0, "<b>REQ</b>", HOSTILE)],
    )


def test_agent_text_is_escaped(tmp_path: Path) -> None:
    page = hostile_page(tmp_path)
    assert "<script>alert" not in page
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in page
    assert "<b>REQ</b>" not in page and "&lt;b&gt;REQ&lt;/b&gt;" in page
    parsed = scan(page)
    assert parsed.tags.count("script") == 1  # ours, and only ours
    assert "img" not in parsed.tags and "a" in parsed.tags  # our anchor to the finding
    assert not [a for a in parsed.attrs if a[1].startswith("on")]


def test_no_external_reference(tmp_path: Path, scenario_records: Records) -> None:
    for page in (
        hostile_page(tmp_path),
        render_html(write_ndjson(tmp_path / "s.ndjson", scenario_records("tool_call_permission"))),
    ):
        parsed = scan(page)
        for tag, name, value in parsed.attrs:
            if name in ("src", "href", "action", "srcset", "data", "poster"):
                assert (value or "").startswith("#"), (tag, name, value)
            assert not re.search(r"https?:|//", value or ""), (tag, name, value)
        for code in parsed.code:
            assert not re.search(r"https?:|url\(|@import|//[a-z]", code), code[:200]
        assert "<link" not in page and "<iframe" not in page
        # Any URL left is the user's data, in text: the page's own markup has none.
        markup = re.sub(r">[^<]*<", "><", page)
        assert not re.search(r"https?://", markup)


def test_a_long_message_is_cut_and_the_page_bounded(flood_page: Path) -> None:
    size = flood_page.stat().st_size
    assert size < 5_000_000, size
    page = flood_page.read_text(encoding="utf-8")
    assert page.count('class="item ') < 20  # one item for the whole stream
    assert "show all (" in page
    assert f"{FLOOD_CHUNKS} chunks" in page
    assert f"… {FLOOD_CHUNKS - 8} more lines …" in page  # 5 first and 3 last shown
    assert page.rstrip().endswith("</html>")


def test_many_items_are_counted_past_the_limit(tmp_path: Path) -> None:
    kinds = ("agent_message_chunk", "agent_thought_chunk")  # no ids: each chunk a new item
    records = [
        update(i * 0.001, {"sessionUpdate": kinds[i % 2], "content": {"type": "text", "text": "x"}})
        for i in range(MAX_ITEMS + 500)
    ]
    page = render_html(write_ndjson(tmp_path / "t.ndjson", records))
    assert page.count('class="item ') == MAX_ITEMS
    assert "… 500 more items not shown" in page
    assert len(page) < 5_000_000


def test_findings_are_listed_and_shown_at_their_item(
    tmp_path: Path, scenario_records: Records
) -> None:
    records = scenario_records("tool_call_permission")
    ask = next(i for i, r in enumerate(records) if "request_permission" in str(r))
    page = render_html(
        write_ndjson(tmp_path / "t.ndjson", records),
        findings=[ViewFinding(ask, "ACP-PERM-009", "asked after idle")],
    )
    assert page.count("ACP-PERM-009") == 2  # the summary and the item
    anchor = re.search(r'<a href="#(i-0-\d+)">line ' + str(ask), page)
    assert anchor is not None
    item = page.split(f'id="{anchor[1]}"', 1)[1].split("</li>", 1)[0]
    assert "Allow writing notes.txt?" in item


def test_items_render_what_happened(tmp_path: Path, scenario_records: Records) -> None:
    diff = {"type": "diff", "path": "a.py", "oldText": "x = 1\n", "newText": "x = 2\n"}
    records = [
        *scenario_records("tool_call_permission"),
        update(1.0, {"sessionUpdate": "tool_call_update", "toolCallId": "d", "content": [diff]}),
    ]
    target = write_html(write_ndjson(tmp_path / "t.ndjson", records), tmp_path / "t.html")
    page = target.read_text(encoding="utf-8")
    assert "<title>t.ndjson</title>" in page
    assert "pending → in_progress → completed" in page
    assert "Allow writing notes.txt?</strong> → Allow once [allow_once]" in page
    assert "inserted as message user-1" in page
    assert "<strong>idle</strong> · stopReason end_turn" in page
    assert '<span class="del">-x = 1</span>' in page and '<span class="add">+x = 2</span>' in page
    assert page.count("<details") == page.count("</details>") > 10
