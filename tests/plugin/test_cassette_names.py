"""Cassette file names (issue 24, item 8): ids that the old names folded together
get a file each, a very long id a valid name, and a malformed cassette one clear
setup error naming the file and line. pytester runs in this process."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from .conftest import IN_PROCESS, LEAN

SUITE = """
import pytest
from conftest import scenario

pytestmark = pytest.mark.acp_cassette


@scenario("echo")
@pytest.mark.parametrize("word", ["a/b", "a_b", "a b", "x" * 300])
def test_echo(acp_session, word):
    assert acp_session.run(word).text == word


@scenario("echo")
def test_plain(acp_session):
    assert acp_session.run("hi").text == "hi"
"""


def test_names_are_unique_and_bounded_and_a_bad_cassette_is_one_error(
    pytester: pytest.Pytester,
) -> None:
    pytester.makeconftest(IN_PROCESS)
    pytester.makepyfile(test_names=SUITE)
    pytester.runpytest_inprocess(*LEAN, "--acp-record-mode=all").assert_outcomes(passed=5)
    folder = pytester.path / "__cassettes__" / "test_names"
    names = sorted(p.name for p in folder.iterdir())
    assert len(names) == 5 and all(len(n.encode()) <= 255 for n in names)
    # An ordinary test (and an id that is a plain name) keeps its old file name.
    assert "test_plain.acp.jsonl" in names and "test_echo[a_b].acp.jsonl" in names
    # Each cassette holds its own test's word: replay passes for all five.
    pytester.runpytest_inprocess(*LEAN).assert_outcomes(passed=5)

    plain = folder / "test_plain.acp.jsonl"
    lines = plain.read_text(encoding="utf-8").splitlines()
    lines[2] = '{"dir": "send", "t": 1e400, "msg": {}}'
    plain.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = pytester.runpytest_inprocess(*LEAN, "-k", "plain")
    result.assert_outcomes(errors=1)
    out = result.stdout.str()
    assert f"cannot read cassette {plain}: {plain}:3: 't' is inf, not a finite number" in out
    assert "OverflowError" not in out and "Traceback" not in out


def test_a_plain_name_is_kept_and_others_get_a_hash() -> None:
    from pytest_acp._cassettes import MAX_STEM, _safe

    for kept in ("test_plain", "Class.test_x[1-2]", "test_echo[a_b]"):
        assert _safe(kept) == kept
    folded = {_safe(n) for n in ("[a/b]", "[a_b]", "[a b]", "[a:b]")}
    assert len(folded) == 4
    long = _safe("x" * 300)
    assert len(long) <= MAX_STEM + 11 and long != _safe("x" * 301)
    assert not _safe("..").startswith(".") and Path(_safe("../up")).name == _safe("../up")


def test_a_cassette_under_its_old_name_still_replays(tmp_path: Path) -> None:
    from pytest_acp._cassettes import _legacy_path, _safe

    new = tmp_path / f"{_safe('a name')}.acp.jsonl"
    old = tmp_path / "a_name.acp.jsonl"
    item: Any = None  # the marker's name is given: the item is not consulted
    assert _legacy_path(item, "a name", new) == new  # neither exists: record the new
    old.write_text("{}\n")
    assert _legacy_path(item, "a name", new) == old
    new.write_text("{}\n")
    assert _legacy_path(item, "a name", new) == new
    long = tmp_path / f"{_safe('x' * 300)}.acp.jsonl"
    assert _legacy_path(item, "x" * 300, long) == long  # no ENAMETOOLONG on lookup
