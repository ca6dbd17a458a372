"""The v1 diff conversion does bounded work (issue 24, item 6).

``v1_shapes.git_patch`` ran difflib over whole files on the connection's
thread: a 128k-line rewrite took 69 s and starved every timeout. Now difflib
sees only what lies between the common first and last lines, and only within
``DIFF_BUDGET``; past it the patch is one plain replacement. Every patch made
here is applied back to prove it valid.
"""

from __future__ import annotations

import difflib
import itertools
import re
from typing import Any

import pytest

from acp_lite.core import v1_shapes
from acp_lite.core.v1_shapes import DIFF_BUDGET, git_patch

HUNK = re.compile(r"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@\n")
NO_NEWLINE = "\\ No newline at end of file\n"


def split(text: str) -> list[str]:
    """The lines of ``text``, each with its "\\n" (the last one maybe without)."""
    return re.findall(r"[^\n]*\n|[^\n]+$", text)


def apply(patch: str, old: str) -> str:
    """``old`` with the unified ``patch`` applied; asserts every hunk fits exactly."""
    lines = split(patch)
    assert lines[0] == "diff --git /p /p\n"
    at = 1 + (lines[1:2] == ["new file mode 100644\n"])
    if at == len(lines):
        return old  # no hunk: nothing changes
    assert lines[at].startswith("--- ") and lines[at + 1] == "+++ /p\n"
    src = split(old)
    out: list[str] = []
    pos = 0  # lines of src consumed
    i = at + 2
    while i < len(lines):
        m = HUNK.fullmatch(lines[i])
        assert m, lines[i]
        a_start, a_len = int(m[1]), int(m[2] or 1)
        b_len = int(m[4] or 1)
        begin = a_start - 1 if a_len else a_start
        assert begin >= pos
        out += src[pos:begin]
        pos = begin
        i += 1
        seen_a = seen_b = 0
        while i < len(lines) and not lines[i].startswith("@@"):
            mark, text = lines[i][0], lines[i][1:]
            i += 1
            if i < len(lines) and lines[i] == NO_NEWLINE:
                text = text[:-1]
                i += 1
            if mark in " -":
                assert src[pos] == text, (pos, src[pos], text)
                pos += 1
                seen_a += 1
            if mark in " +":
                out.append(text)
                seen_b += 1
            assert mark in " -+", mark
        assert (seen_a, seen_b) == (a_len, b_len)
    return "".join(out + src[pos:])


def texts(alphabet: list[str], most: int) -> Any:
    for n in range(most + 1):
        for parts in itertools.product(alphabet, repeat=n):
            yield "".join(parts)


def test_small_patches_apply_exactly() -> None:
    # "\r", "\f" and U+2028 are no line ends to git: lines end at "\n" only.
    small = list(texts(["a\n", "b\n", "\n", "c", "\r", "\f\n"], 3))
    for old, new in itertools.product(small[::7], small[1::9]):
        assert apply(git_patch("/p", old, new), old) == new, (old, new)
        assert apply(git_patch("/p", None, new), "") == new, new


def test_an_edit_in_a_big_file_stays_a_small_hunk() -> None:
    old = "".join(f"line {i}\n" for i in range(30_000))
    new = old.replace("line 15000\n", "changed\n")
    patch = git_patch("/p", old, new)
    assert patch.count("\n@@ ") == 1 and patch.count("\n") < 20, patch
    assert apply(patch, old) == new


def test_a_huge_rewrite_is_bounded_work_and_a_valid_patch(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    compared: list[int] = []
    real = difflib.SequenceMatcher

    class Counting(real):  # type: ignore[misc, valid-type]
        def set_seqs(self, a: Any, b: Any) -> None:
            compared.append(len(a) * len(b))
            # Refused before the (quadratic) work, so the old code fails fast.
            assert len(a) * len(b) <= DIFF_BUDGET, (len(a), len(b))
            super().set_seqs(a, b)

    monkeypatch.setattr(difflib, "SequenceMatcher", Counting)
    # Every line changed, with popular lines difflib cannot junk (128k such lines
    # took 69 s).
    old = "".join(f"{i % 300}\n" for i in range(20_000))
    new = "".join(f"{(i * 7) % 300}\n" for i in range(20_000)) + "tail"
    patch = git_patch("/p", old, new)
    assert patch.count("\n@@ ") == 1  # one hunk
    assert len(patch) <= len(old) + len(new) + 2 * 20_001 + 200
    assert apply(patch, old) == new


def test_within_the_budget_difflib_still_diffs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(v1_shapes, "DIFF_BUDGET", 100)
    old = "".join(f"line {i}\n" for i in range(20))
    new = old.replace("line 5\n", "five\n").replace("line 15\n", "fifteen\n")
    narrow = git_patch("/p", old, new)  # lines 5..15 differ: 11 x 11 = 121 > 100
    assert narrow.count("\n@@ ") == 1 and "-line 6\n" in narrow  # one replacement hunk
    monkeypatch.setattr(v1_shapes, "DIFF_BUDGET", 121)
    fine = git_patch("/p", old, new)
    assert fine.count("\n@@ ") == 2 and "-line 6\n" not in fine  # two hunks, lines kept
    for patch in (narrow, fine):
        assert apply(patch, old) == new
