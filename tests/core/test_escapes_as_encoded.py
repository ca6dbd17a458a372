"""The run-wide escape check gives what the per-line one gives (issue 26).

``escapes_as_encoded`` decides, for a whole run of chunk lines with escapes, that
every line is written as a raw UTF-8 JSON encoder writes it (the stream's shape);
it must say so exactly when :meth:`CompactLine.escaped` finds that shape for each
line, whatever the texts (escapes, control characters, non-ASCII, lone surrogates)
and however each line was encoded.
"""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis_budget import examples

from acp_lite.protocol.chunk_lines import ChunkLines, escapes_as_encoded, run_texts

from .test_chunk_runs import _body, _shell

TEXT = st.text(
    st.one_of(
        st.sampled_from(['"', "\\", "\n", "\t", "\x00", "\x7f", "é", "😀", "\ud83d", "/"]),
        st.characters(codec="utf-8"),
    ),
    max_size=12,
)


def _stream() -> tuple[bytes, bytes, object]:
    prefix, suffix = _shell("s1", "m1", "agent_message_chunk")
    cache = ChunkLines()
    cache.decode_line(prefix + b"learn" + suffix)
    (t,) = cache.kept
    return prefix, suffix, t


@settings(max_examples=examples(3), deadline=None)
@given(st.lists(st.tuples(TEXT, st.booleans()), min_size=1, max_size=8))
def test_the_run_check_agrees_with_each_line(items: list[tuple[str, bool]]) -> None:
    prefix, suffix, t = _stream()
    lines = [prefix + _body(text, ascii_) + suffix for text, ascii_ in items]
    run = run_texts(b"\n".join(lines), t)  # type: ignore[arg-type]
    if run is None:  # not a run (e.g. a control character written raw): line by line
        return
    texts, escaped, _ = run
    assert texts == [json.loads(b'"' + _body(x, a) + b'"') for x, a in items]
    if not escaped:
        return
    each = all(t.escaped(line, texts[i]) is t.shape for i, line in escaped)  # type: ignore[attr-defined]
    assert escapes_as_encoded(t, texts, escaped) is each  # type: ignore[arg-type]


def test_both_answers_happen() -> None:
    """The check can say no: an ASCII-escaped é, and a lone surrogate."""
    prefix, suffix, t = _stream()
    for texts, ascii_, want in [
        (["a\n", 'b"'], False, True),
        (["é\n", "b\n"], True, False),
        (["\ud83d\n"], True, False),
    ]:
        lines = [prefix + _body(x, ascii_) + suffix for x in texts]
        run = run_texts(b"\n".join(lines), t)  # type: ignore[arg-type]
        assert run is not None
        got, escaped, _ = run
        assert got == texts and escaped
        assert escapes_as_encoded(t, got, escaped) is want  # type: ignore[arg-type]
