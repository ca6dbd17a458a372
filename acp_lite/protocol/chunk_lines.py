"""Streamed-chunk lines that differ from an already decoded line only in their text.

An agent streaming a message writes thousands of ``session/update`` lines that are
byte-for-byte the same except for the chunk's text: same envelope, same session and
message ids, same key order. Once one such line has been decoded in full, the next
ones are recognised by that line's bytes before and after the text (its stream's
:class:`CompactLine`), and only the text is decoded. A line of such a stream is then
also *kept* compactly, anywhere (the transcript, the session's event log): as its
stream's :class:`CompactLine` and its text, from which :meth:`CompactLine.line`,
:meth:`CompactLine.params` and :meth:`CompactLine.update` rebuild exactly what the
line is and decodes to.

:class:`ChunkLines` holds the compact lines one connection has learned (one per
connection: what a connection decodes never depends on another's traffic);
:meth:`ChunkLines.decode_line` is :func:`~acp_lite.protocol.jsonrpc.decode_line` with
that shortcut, and returns the very objects the full path builds
(``tests/protocol/test_chunk_lines.py`` checks both paths agree).

Why the shortcut is exact: a compact line is kept only when a probe line, its prefix
and suffix around a marker text, decodes to the same update with the marker as its
text. A line ``prefix + body + suffix`` whose body holds no quote, backslash or
control character is then the same JSON document with another string in that one
place (the string token cannot end before the suffix, nor start an escape); a body
with escapes is accepted only when the stdlib's string scanner ends it exactly at the
suffix. Anything else (invalid UTF-8, a stray quote, a bad escape) goes the full way
and gets its usual result, errors included.
"""

from __future__ import annotations

import json
import re
from itertools import compress, repeat
from json.decoder import scanstring  # type: ignore[attr-defined]
from json.encoder import (
    encode_basestring,
    encode_basestring_ascii,
)
from operator import itemgetter
from typing import Any, Final, TypeAlias

from acp_lite.protocol._generated import (
    AgentMessageChunk,
    AgentThoughtChunk,
    TextContent,
    UpdateSessionNotification,
)
from acp_lite.protocol.jsonrpc import (
    Message,
    Notification,
    compact_json,
    decode_line,
    loads_json,
    text_chunk_update,
)

__all__ = [
    "CHUNK_CLASSES",
    "PROBE",
    "ChunkLines",
    "ChunkUpdate",
    "CompactLine",
    "EscapedLine",
    "LineShape",
    "escapes_as_encoded",
    "run_texts",
]

ChunkUpdate: TypeAlias = AgentMessageChunk | AgentThoughtChunk
"""The updates a compact line's stream carries."""

CHUNK_CLASSES: Final[dict[str, type[ChunkUpdate]]] = {
    "agent_message_chunk": AgentMessageChunk,
    "agent_thought_chunk": AgentThoughtChunk,
}
"""The chunk updates a compact line can stand for (those the fast decoder builds)."""

_PLAIN: Final = re.compile(rb'[\x00-\x1f"\\]').search
"""Finds what a plain JSON string body cannot hold (then the escapes are decoded)."""

_PLAIN_TEXT: Final = re.compile(r'[\x00-\x1f"\\]').search
"""The same, in a decoded text."""

PROBE: Final = "acp-lite-probe"
"""The marker text a compact line is verified with."""

_KEEP: Final = 8
"""Compact lines kept, most recently used first (messages and thoughts of a few
sessions interleave; a stream whose compact line was let go is decoded the full way)."""

_UPDATE: Final = "session/update"
_text_block: Final = TextContent.fast
_notification: Final = Notification.fast
_params: Final = UpdateSessionNotification.fast


def _copy_params(params: dict[str, Any]) -> dict[str, Any]:
    update = dict(params["update"])
    update["content"] = dict(update["content"])
    out = dict(params)
    out["update"] = update
    return out


class CompactLine:
    """The lines of one chunk stream, less their text (see the module doc).

    A line of the stream is exactly ``prefix`` + its text's body + ``suffix``; it is
    kept compactly as its stream's compact line and its text (a ``str`` the message
    holds anyway), and rebuilt from those two: :meth:`line` (its bytes, for a text
    written verbatim), :meth:`params` (its raw params) and :meth:`update` (the typed
    update). Shared by every line of the stream; read-only. Two compact lines are
    equal when they stand for the same stream (the same bytes around the text).
    """

    __slots__ = (
        "_escaped",
        "_params",
        "end",
        "message_id",
        "prefix",
        "sep",
        "session_id",
        "shape",
        "start",
        "suffix",
        "tag",
        "update_class",
    )

    prefix: bytes
    """The bytes of each line before its text (the opening quote included)."""
    suffix: bytes
    """The bytes of each line after its text (the closing quote included)."""
    start: int
    """Where a line's text starts: ``len(prefix)``."""
    end: int
    """Where a line's text ends, from the line's end: ``-len(suffix)``."""
    sep: bytes
    """``suffix + b"\\n" + prefix``: where a line of the stream ends and the next starts."""
    session_id: str
    """The session of the stream's updates."""
    message_id: str
    """The message (or thought) the stream's chunks belong to."""
    tag: str
    """The updates' ``sessionUpdate`` tag."""
    update_class: type[ChunkUpdate]
    """The updates' class (``AgentMessageChunk`` or ``AgentThoughtChunk``)."""

    def __init__(self, prefix: bytes, suffix: bytes, params: dict[str, Any]) -> None:
        """The compact line of a stream whose line ``prefix + text + suffix`` has the
        raw params ``params`` (a plain text chunk's; copied)."""
        update = params["update"]
        self.prefix, self.suffix = prefix, suffix
        self.start, self.end = len(prefix), -len(suffix)
        self.sep = suffix + b"\n" + prefix
        self.session_id = params["sessionId"]
        self.message_id = update["messageId"]
        self.tag = update["sessionUpdate"]
        self.update_class = CHUNK_CLASSES[self.tag]
        self._params = _copy_params(params)
        self._escaped = (EscapedLine(self, False), EscapedLine(self, True))
        #: How a transcript rebuilds a line of the stream whose text is written
        #: verbatim or with the escapes of a raw UTF-8 JSON encoder (the two agree on
        #: a text that needs no escape): one shape for most of a stream's lines, so
        #: a transcript keeps one run for them (``transcript.py``).
        self.shape: EscapedLine = self._escaped[0]

    def line(self, text: str) -> bytes:
        """The line of the stream that carries ``text`` written verbatim (no escapes)."""
        return self.prefix + text.encode() + self.suffix

    def escaped(self, line: bytes, text: str) -> EscapedLine | None:
        """How ``line``, a line of the stream that carries ``text`` with escapes, is
        rebuilt from ``text``: the :class:`EscapedLine` of this stream whose escaping
        gives back exactly its bytes, or ``None`` (keep the line itself).

        JSON encoders escape alike (``\\"``, ``\\\\``, ``\\n`` ... and ``\\u00XX``
        for other control characters, in lower case), raw UTF-8 (the TypeScript SDK,
        ``ensure_ascii=False``) or ``\\uXXXX`` for all non-ASCII (Python's default):
        a line written either way is kept as its text."""
        pair = self._escaped
        body = line[self.start : self.end]
        try:
            if encode_basestring(text)[1:-1].encode() == body:
                return pair[0]
        except UnicodeEncodeError:  # a lone surrogate: only its \u escape is on the wire
            pass
        if encode_basestring_ascii(text)[1:-1].encode() == body:
            return pair[1]
        return None

    def params(self, text: str) -> dict[str, Any]:
        """The raw params of a line of the stream carrying ``text``: a new dict, copied
        level by level, so key order is that of the learned line, as decoding gives."""
        raw = self._params
        content = raw["update"]["content"].copy()
        content["text"] = text
        update = raw["update"].copy()
        update["content"] = content
        out = raw.copy()
        out["update"] = update
        return out

    def update(self, text: str) -> ChunkUpdate:
        """The typed update a line of the stream carrying ``text`` decodes to (the full
        object, as :meth:`ChunkLines.decode` and the full decoder build it)."""
        return self.update_class.fast(self.message_id, _text_block(text))

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not CompactLine:
            return NotImplemented
        assert isinstance(other, CompactLine)
        return self.prefix == other.prefix and self.suffix == other.suffix

    def __hash__(self) -> int:
        return hash((self.prefix, self.suffix))

    def __repr__(self) -> str:
        return f"<CompactLine {self.tag} {self.session_id!r} {self.message_id!r}>"


class EscapedLine:
    """The lines of a compact line's stream whose text is written with the escapes a
    JSON encoder writes (:meth:`CompactLine.escaped`): :meth:`line` rebuilds one
    exactly from its text. ``ascii``: every non-ASCII character as ``\\uXXXX``."""

    __slots__ = ("_encode", "ascii", "compact")

    def __init__(self, compact: CompactLine, ascii: bool) -> None:
        self.compact = compact
        self.ascii = ascii
        self._encode = encode_basestring_ascii if ascii else encode_basestring

    def line(self, text: str) -> bytes:
        """The line of the stream that carries ``text``, escaped as this one escapes."""
        t = self.compact
        return t.prefix + self._encode(text)[1:-1].encode() + t.suffix

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not EscapedLine:
            return NotImplemented
        assert isinstance(other, EscapedLine)
        return self.ascii == other.ascii and self.compact == other.compact

    def __hash__(self) -> int:
        return hash((self.compact, self.ascii))

    def __repr__(self) -> str:
        return f"<EscapedLine {'ascii' if self.ascii else 'utf-8'} of {self.compact!r}>"


LineShape: TypeAlias = CompactLine | EscapedLine
"""What a transcript keeps beside a line's text to rebuild the line (``.line(text)``)."""


class ChunkLines:
    """The compact lines of the chunk streams one connection saw last (module doc).

    One per connection (``ClientConnection`` makes its own and decodes with it): what
    it learned never changes how another connection decodes. Its list is replaced,
    never changed in place, so a reader in another thread sees a whole one.
    """

    __slots__ = ("_tried", "kept")

    def __init__(self) -> None:
        self.kept: list[CompactLine] = []
        """The compact lines, most recently used first."""
        self._tried: list[tuple[str, str, str]] = []

    def decode_line(self, line: bytes | str) -> Message | list[Message]:
        """:func:`~acp_lite.protocol.jsonrpc.decode_line`, by the compact line of its
        stream when it has one, learning the stream of a chunk's line decoded in
        full. Never raises; the same objects as the full path."""
        if line.__class__ is bytes:
            hit = self.decode(line)
            if hit is not None:
                sid, update, t = hit[0], hit[1], hit[2]
                params = t.params(update.content.text)
                return _notification(_UPDATE, _params(sid, update), params)
        msg = decode_line(line)
        if (
            msg.__class__ is Notification
            and line.__class__ is bytes
            and msg.params.__class__ is UpdateSessionNotification
        ):
            raw = msg.raw_params
            if _plain_chunk(raw):
                self.learn(line, raw)
        return msg

    def decode(self, line: bytes) -> tuple[str, Any, CompactLine, bool] | None:
        """``(session id, update, compact line, verbatim)`` for a line that fits a kept
        compact line (the update, a :data:`ChunkUpdate` of one ``TextContent``, is
        what the full decoder builds), or ``None``: decode it in full.

        ``verbatim``: the text is written as is (no escapes), so the line is exactly
        ``compact.line(text)``."""
        for t in self.kept:
            prefix, suffix, start, end = t.prefix, t.suffix, t.start, t.end
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
                kept = self.kept
                if t is not kept[0]:
                    # A new list, assigned at once (see the class doc).
                    self.kept = [t, *(x for x in kept if x is not t)]
                # CompactLine.update, inlined: a call less per streamed chunk.
                return (
                    t.session_id,
                    t.update_class.fast(t.message_id, _text_block(text)),
                    t,
                    verbatim,
                )
        return None

    def learn(self, line: bytes, params: dict[str, Any]) -> None:
        """Keep a compact line for ``line``, whose raw params ``params`` decoded to a
        plain text chunk, if a probe line confirms it (the module doc)."""
        update = params["update"]
        text = update["content"]["text"]
        key = (params["sessionId"], update["messageId"], update["sessionUpdate"])
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
        t = CompactLine(line[: at + 1], line[at + len(token) - 1 :], params)
        if _verify(t):
            self.kept = [t, *self.kept[: _KEEP - 1]]


def _plain_chunk(params: Any) -> bool:
    """Whether ``session/update`` params are those of a plain text chunk (the shape
    the fast decoder builds directly)."""
    return (
        type(params) is dict
        and len(params) == 2
        and type(params.get("sessionId")) is str
        and text_chunk_update(params.get("update")) is not None
    )


def _verify(t: CompactLine) -> bool:
    """Whether the probe line of ``t`` (its prefix and suffix around the marker text)
    decodes, the full way, to ``t``'s update with the marker as its text."""
    msg = decode_line(t.prefix + PROBE.encode() + t.suffix)
    return (
        msg.__class__ is Notification
        and msg.params.__class__ is UpdateSessionNotification
        and _plain_chunk(msg.raw_params)
        and msg.raw_params == t.params(PROBE)
    )


def escapes_as_encoded(t: CompactLine, texts: list[str], escaped: list[tuple[int, bytes]]) -> bool:
    """Whether every line of ``escaped`` (index in ``texts``, line) is written with the
    escapes of a raw UTF-8 JSON encoder (``t.shape``, what :meth:`CompactLine.escaped`
    would find first for each), checked in C for the whole run.

    Each side is a ``"``-quoted token per line with no raw newline in it (the
    encoder escapes newlines; the lines were cut at them), joined by newlines: the
    joins are equal exactly when every token is.
    """
    bodies = b'"\n"'.join(map(itemgetter(slice(t.start, t.end)), map(itemgetter(1), escaped)))
    encoded = "\n".join(map(encode_basestring, map(texts.__getitem__, map(itemgetter(0), escaped))))
    try:
        return encoded.encode() == b'"' + bodies + b'"'
    except UnicodeEncodeError:  # a lone surrogate: only its \u escape is on the wire
        return False


def run_texts(data: bytes, t: CompactLine) -> tuple[list[str], list[tuple[int, bytes]], int] | None:
    """The texts of the lines of ``t``'s stream that ``data`` starts with, those of
    them written with escapes (their index and line), and where the rest of ``data``
    starts; ``None``: take the lines one by one.

    ``data`` is whole lines joined by ``\\n``. The run is the lines up to the last
    place where a line of the stream ends and the next one starts (``t.sep``), or all
    of them when ``data`` ends like a line of the stream. It is checked and cut in C,
    without a Python step per line: joining the lines' bodies (each line less the
    stream's prefix and suffix) with ``t.sep`` gives back the run less its first
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
    every = len(odd) == len(texts)  # the common shape: the TypeScript SDK's texts,
    # each ending in a newline
    raw = texts if every else list(map(texts.__getitem__, odd))
    # First, all bodies in one decode (orjson when present), proven by re-encoding:
    # a body that is what a raw UTF-8 encoder writes for the text it decoded to is
    # exactly that text's JSON string, however the array split.
    batch = bodies if every else list(map(bodies.__getitem__, odd))
    array = b'["' + b'","'.join(batch) + b'"]'
    try:
        decoded = loads_json(array)
        if (
            decoded.__class__ is list
            and len(decoded) == len(odd)
            and all(map(str.__instancecheck__, decoded))
            and compact_json(decoded) == array
        ):
            if every:
                texts = decoded
            else:
                for i, text in zip(odd, decoded, strict=True):
                    texts[i] = text
            return texts, list(zip(odd, map(lines.__getitem__, odd), strict=True)), rest
    except (ValueError, TypeError):  # not one array of strings: each body on its own
        pass
    tokens = list(map(str.__add__, raw, repeat('"')))
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
