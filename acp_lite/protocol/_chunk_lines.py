"""Streamed-chunk lines that differ from an already decoded line only in their text.

An agent streaming a message writes thousands of ``session/update`` lines that are
byte-for-byte the same except for the chunk's text: same envelope, same session and
message ids, same key order. Once one such line has been decoded in full, the next
ones are recognised by that line's bytes before and after the text (a
:class:`Template`), and only the text is decoded. This is the inside of
:func:`acp_lite.protocol.jsonrpc.decode_line`: it returns the very objects the full
path builds (``tests/protocol/test_chunk_lines.py`` checks both paths agree).

Why the shortcut is exact: a template is kept only when a probe line, its prefix and
suffix around a marker text, decodes to the same update with the marker as its text.
A line ``prefix + body + suffix`` whose body holds no quote, backslash or control
character is then the same JSON document with another string in that one place
(the string token cannot end before the suffix, nor start an escape); a body with
escapes is accepted only when the stdlib's string scanner ends it exactly at the
suffix. Anything else (invalid UTF-8, a stray quote, a bad escape) goes the full way
and gets its usual result, errors included.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from itertools import compress, repeat
from json.decoder import scanstring  # type: ignore[attr-defined]
from operator import itemgetter
from typing import Any, Final, NamedTuple

from acp_lite.protocol import _generated as g
from acp_lite.protocol._runtime import NO_EXTRA
from acp_lite.protocol._unset import UNSET

__all__ = ["ChunkLines", "Template", "run_texts", "text_block", "text_chunk"]

_new: Any = object.__new__


def text_block(text: str) -> Any:
    """A plain ``TextContent`` block of ``text``, as the full decoder builds it
    (``object.__new__`` and slots filled: no ``__init__``, no validation, for the
    streaming path)."""
    block = _new(g.TextContent)
    block.type = "text"
    block.text = text
    block.annotations = UNSET
    block.meta = UNSET
    block.extra = NO_EXTRA
    return block


def text_chunk(cls: type[Any], tag: str, message_id: str, text: str) -> Any:
    """A chunk update (``cls``, wire tag ``tag``) of one plain text block, as the
    full decoder builds it."""
    update = _new(cls)
    update.session_update = tag
    update.message_id = message_id
    update.content = text_block(text)
    update.meta = UNSET
    update.extra = NO_EXTRA
    return update


CHUNK_CLASSES: Final[dict[str, type[Any]]] = {
    "agent_message_chunk": g.AgentMessageChunk,
    "agent_thought_chunk": g.AgentThoughtChunk,
}
"""The chunk updates a template can stand for (those the fast decoder builds)."""

_PLAIN: Final = re.compile(rb'[\x00-\x1f"\\]').search
"""Finds what a plain JSON string body cannot hold (then the escapes are decoded)."""

_PLAIN_TEXT: Final = re.compile(r'[\x00-\x1f"\\]').search
"""The same, in a decoded text."""

PROBE: Final = "acp-lite-probe"
"""The marker text a template is verified with."""

_KEEP: Final = 8
"""Templates kept, most recently used first (messages and thoughts of a few sessions
interleave; a stream whose template was let go is decoded the full way)."""


class Template(NamedTuple):
    """The fixed bytes of one chunk stream's lines and what they decode to."""

    prefix: bytes
    suffix: bytes
    start: int
    end: int  # negative: the text ends ``len(suffix)`` bytes before the line's end
    session_id: str
    message_id: str
    tag: str
    raw: dict[str, Any]  # the params dict of the learned line (private copy)
    cls: type[Any]  # the update's class
    sep: bytes  # suffix + b"\n" + prefix: where one line of the stream ends and the next starts

    def build(self, text: str) -> Any:
        """The update a line of this stream carrying ``text`` decodes to (as
        :meth:`ChunkLines.decode` builds it)."""
        return text_chunk(self.cls, self.tag, self.message_id, text)


def _copy_raw(raw: dict[str, Any]) -> dict[str, Any]:
    update = dict(raw["update"])
    update["content"] = dict(update["content"])
    out = dict(raw)
    out["update"] = update
    return out


def with_text(raw: dict[str, Any], text: str) -> dict[str, Any]:
    """A new params dict: ``raw`` (a template's) with the chunk's text replaced.

    Copied level by level, so key order is that of the learned line, as decoding the
    new line would give."""
    content = raw["update"]["content"].copy()
    content["text"] = text
    update = raw["update"].copy()
    update["content"] = content
    out = raw.copy()
    out["update"] = update
    return out


class ChunkLines:
    """The templates of the chunk streams seen last (see the module doc).

    One per process, shared by every connection (a template is about bytes only);
    its lists are replaced, never changed in place, so threads need no lock.
    """

    def __init__(self) -> None:
        self.templates: list[Template] = []
        self._tried: list[tuple[str, str, str]] = []

    def decode(self, line: bytes) -> tuple[str, Any, Template, bool] | None:
        """``(session id, update, template, verbatim)`` for a line that fits a template
        (the update is what the full decoder builds), or ``None``: decode it in full.

        ``verbatim``: the text is written as is (no escapes), so the line is exactly
        ``template.prefix + text.encode() + template.suffix``."""
        for t in self.templates:
            prefix, suffix, start, end = t[0], t[1], t[2], t[3]
            if line.startswith(prefix) and line.endswith(suffix) and len(line) >= start - end:
                body = line[start:end]
                try:
                    verbatim = _PLAIN(body) is None
                    if verbatim:
                        text = body.decode()
                    else:
                        s = body.decode() + '"'
                        text, stop = scanstring(s, 0, True)
                        if stop != len(s):
                            return None
                except ValueError:  # invalid UTF-8 or a bad escape: the full path says
                    return None
                templates = self.templates
                if t is not templates[0]:
                    # A new list, assigned at once: connections in other threads may
                    # be reading (or reordering) the old one; a lost race only costs
                    # a template, never a line.
                    self.templates = [t, *(x for x in templates if x is not t)]
                # text_chunk, inlined: two calls less per streamed chunk (the hot
                # path); the two must build the same objects.
                block = _new(g.TextContent)
                block.type = "text"
                block.text = text
                block.annotations = UNSET
                block.meta = UNSET
                block.extra = NO_EXTRA
                update = _new(t.cls)
                update.session_update = t.tag
                update.message_id = t.message_id
                update.content = block
                update.meta = UNSET
                update.extra = NO_EXTRA
                return t.session_id, update, t, verbatim
        return None

    def learn(
        self,
        line: bytes,
        raw: dict[str, Any],
        verify: Callable[[bytes, Template], bool],
    ) -> None:
        """Keep a template for ``line``, whose params ``raw`` decoded to a plain text
        chunk, if a probe line confirms it (``verify(probe, template)``)."""
        update = raw["update"]
        text = update["content"]["text"]
        key = (raw["sessionId"], update["messageId"], update["sessionUpdate"])
        if key[2] not in CHUNK_CLASSES:
            return
        if key in self._tried:
            return  # this stream's lines differ elsewhere too: do not try every line
        self._tried = [key, *self._tried[: _KEEP * 2 - 1]]
        for ascii_only in (False, True):  # raw UTF-8, or \u escapes (Python's default)
            try:
                token = json.dumps(text, ensure_ascii=ascii_only).encode()
            except UnicodeEncodeError:  # a lone surrogate: only its escape is on the wire
                continue
            if line.count(token) == 1:
                break
        else:
            return
        at = line.index(token)
        prefix, suffix = line[: at + 1], line[at + len(token) - 1 :]
        t = Template(
            prefix,
            suffix,
            len(prefix),
            -len(suffix),
            key[0],
            key[1],
            key[2],
            _copy_raw(raw),
            CHUNK_CLASSES[key[2]],
            suffix + b"\n" + prefix,
        )
        if verify(prefix + PROBE.encode() + suffix, t):
            self.templates = [t, *self.templates[: _KEEP - 1]]


def run_texts(data: bytes, t: Template) -> tuple[list[str], list[tuple[int, bytes]], int] | None:
    """The texts of the lines of ``t``'s stream that ``data`` starts with, those of
    them written with escapes (their index and line), and where the rest of ``data``
    starts; ``None``: take the lines one by one.

    ``data`` is whole lines joined by ``\\n``. The run is the lines up to the last
    place where a line of the stream ends and the next one starts (``t.sep``), or all
    of them when ``data`` ends like a line of the stream. It is checked and cut in C,
    without a Python step per line: joining the lines' bodies (each line less its
    template's prefix and suffix) with ``t.sep`` gives back the run less its first
    prefix and last suffix only when every line is ``prefix + body + suffix``. Each
    body must then be what :meth:`ChunkLines.decode` accepts, for the same reasons: a
    plain one (no quote, backslash or control character) is the text as is; one with
    escapes must end exactly at the suffix when the stdlib's string scanner decodes
    it. The rest (from the returned offset; ``len(data) + 1`` when nothing is left)
    are whole lines, the first of them possibly of the stream too.
    """
    prefix, suffix = t.prefix, t.suffix
    if not data.startswith(prefix):
        return None
    if data.endswith(suffix):
        run, rest = data, len(data) + 1
    else:
        end = data.rfind(t.sep)
        if end < 0:
            return None
        rest = end + len(suffix) + 1
        run = data[: rest - 1]
    if len(run) < t.start - t.end:  # its prefix and suffix would overlap
        return None
    lines = run.split(b"\n")
    bodies = list(map(itemgetter(slice(t.start, t.end)), lines))
    if t.sep.join(bodies) != run[t.start : t.end]:
        return None  # a line of the run is not of the stream
    # One buffer for all bodies (they hold no newline: the lines were cut at them).
    try:
        texts = b"\n".join(bodies).decode().split("\n")
    except UnicodeDecodeError:  # the full path says
        return None
    if _PLAIN_TEXT("".join(texts)) is None:
        return texts, [], rest  # the common case: every text written as is
    # Some bodies have escapes (or are not JSON strings): each is scanned as
    # ChunkLines.decode scans one, all in C (maps, no Python step per line).
    odd = list(compress(range(len(texts)), map(_PLAIN_TEXT, texts)))
    tokens = list(map(str.__add__, map(texts.__getitem__, odd), repeat('"')))
    try:
        scanned = list(map(scanstring, tokens, repeat(0), repeat(True)))
    except ValueError:  # a bad escape or a control character: the full path says
        return None
    if list(map(itemgetter(1), scanned)) != list(map(len, tokens)):
        return None  # a string that ends before its suffix (a stray quote)
    for i, (text, _) in zip(odd, scanned, strict=True):
        texts[i] = text
    escaped = list(zip(odd, map(lines.__getitem__, odd), strict=True))
    return texts, escaped, rest
