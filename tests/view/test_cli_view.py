"""``acp-lite view TRANSCRIPT [-o PAGE] [--title T]``, run in this process."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from acp_lite.cassettes import from_transcript
from acp_lite.cli import main

from .conftest import write_ndjson

Records = Callable[..., list[dict[str, Any]]]


def view(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["view", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_the_page_is_written_next_to_the_transcript(
    tmp_path: Path, scenario_records: Records, capsys: pytest.CaptureFixture[str]
) -> None:
    source = write_ndjson(tmp_path / "turn.ndjson", scenario_records("tool_call_permission"))
    code, out, err = view(capsys, str(source))
    assert (code, err) == (0, "")
    assert out == f"{tmp_path / 'turn.html'}\n"
    page = (tmp_path / "turn.html").read_text(encoding="utf-8")
    assert "<title>turn.ndjson</title>" in page and "Write notes.txt" in page


def test_output_and_title(
    tmp_path: Path,
    scenario_records: Records,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)
    write_ndjson(tmp_path / "t.ndjson", scenario_records("streaming", 1))
    code, out, _ = view(capsys, "t.ndjson", "-o", "page.html", "--title", "v1 <turn>")
    assert (code, out) == (0, "page.html\n")
    page = (tmp_path / "page.html").read_text(encoding="utf-8")
    assert "<title>v1 &lt;turn&gt;</title>" in page and "ACP v1" in page


def test_a_cassette(
    tmp_path: Path, scenario_records: Records, capsys: pytest.CaptureFixture[str]
) -> None:
    plain = write_ndjson(tmp_path / "t.ndjson", scenario_records("thinking"))
    from_transcript(plain, agent="ref").save(tmp_path / "c.acp.jsonl")
    code, out, _ = view(capsys, str(tmp_path / "c.acp.jsonl"))
    assert code == 0
    assert "Let me think about that." in Path(out.strip()).read_text(encoding="utf-8")
    assert out.strip().endswith("c.acp.html")


@pytest.mark.parametrize(
    ("content", "says"),
    [
        (None, "cannot read {src}: no such file"),
        ("garbage\n", "cannot read {src}: {src}:1: not JSON"),
        ('{"dir": "send", "t": 0, "msg": {}}\n{"t": 1}\n', "{src}:2: not a transcript record"),
        ("", "{src} holds no transcript records"),
        (b"\xff\xfe\n", "{src}:1: not UTF-8 text"),
    ],
)
def test_unreadable_files_are_usage_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str | bytes | None, says: str
) -> None:
    source = tmp_path / "t.ndjson"
    if isinstance(content, bytes):
        source.write_bytes(content)
    elif content is not None:
        source.write_text(content)
    code, out, err = view(capsys, str(source))
    assert code == 2 and out == ""
    assert err.startswith("acp-lite: error: "), err
    assert says.format(src=source) in err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert not (tmp_path / "t.html").exists()


def test_unwritable_output_and_a_directory(
    tmp_path: Path, scenario_records: Records, capsys: pytest.CaptureFixture[str]
) -> None:
    source = write_ndjson(tmp_path / "t.ndjson", scenario_records("streaming"))
    code, _, err = view(capsys, str(source), "-o", str(tmp_path / "no" / "p.html"))
    assert code == 2 and "no such directory" in err
    code, _, err = view(capsys, str(tmp_path))
    assert code == 2 and "is a directory" in err
    code, _, err = view(capsys, str(source), "-o", str(source))
    assert code == 2 and "the transcript itself" in err
    with pytest.raises(SystemExit) as exit_:
        main(["view"])
    assert exit_.value.code == 2
    assert "TRANSCRIPT" in capsys.readouterr().err
