"""A message's content blocks, compact for streamed text.

A streamed message is thousands of chunks of one plain text block each. Holding a
``TextContent`` object per chunk costs ~70 bytes and one object the cyclic garbage
collector visits on every full collection (a tenth of a long turn's time). So
:class:`Blocks` holds a plain text block (``type`` text, no annotations, ``_meta``
or unknown keys) as its text, a ``str``, and hands out an equal ``TextContent``
wherever an item is read. Every other block is held as received.

Reading gives the blocks the agent sent, in order (indexing, slicing, iteration,
``==``, ``in``, ``repr``, copies, pickles). A read text block is built afresh each
time: entities are read-only, so it is equal to, not the same object as, the one
decoded from the wire.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any, SupportsIndex, overload

from acp_lite.protocol import UNSET, TextContent, converter

__all__ = ["Blocks", "block_texts", "compact", "merge_text", "text_parts"]

_get = list.__getitem__
_iter = list.__iter__
_text_block = TextContent.fast  # a plain text block, as decoding builds it


def _block(item: Any) -> Any:
    if item.__class__ is not str:
        return item
    return _text_block(item)


def compact(block: Any) -> Any:
    """What :class:`Blocks` holds for ``block``: its text when it is plain text."""
    if (
        block.__class__ is TextContent
        and block.annotations is UNSET
        and block.meta is UNSET
        and not block.extra
        and block.type == "text"
        and block.text.__class__ is str
    ):
        return block.text
    return block


class Blocks(list[Any]):
    """A list of content blocks that holds plain text blocks as their text (module doc)."""

    __slots__ = ()

    def __init__(self, blocks: Iterable[Any] = ()) -> None:
        super().__init__(compact(b) for b in blocks)

    def append(self, block: Any) -> None:
        list.append(self, compact(block))

    def extend(self, blocks: Iterable[Any]) -> None:
        list.extend(self, [compact(b) for b in blocks])

    def insert(self, index: SupportsIndex, block: Any) -> None:
        list.insert(self, index, compact(block))

    @overload
    def __getitem__(self, index: SupportsIndex) -> Any: ...

    @overload
    def __getitem__(self, index: slice) -> list[Any]: ...

    def __getitem__(self, index: SupportsIndex | slice) -> Any:
        if isinstance(index, slice):
            return [_block(b) for b in _get(self, index)]
        return _block(_get(self, index))

    def __setitem__(self, index: Any, value: Any) -> None:
        if isinstance(index, slice):
            list.__setitem__(self, index, [compact(b) for b in value])
        else:
            list.__setitem__(self, index, compact(value))

    def __iter__(self) -> Iterator[Any]:
        return map(_block, _iter(self))

    def __reversed__(self) -> Iterator[Any]:
        return map(_block, list.__reversed__(self))

    def __contains__(self, value: object) -> bool:
        return any(b == value for b in self)

    def index(self, value: Any, start: SupportsIndex = 0, stop: SupportsIndex = 2**62) -> int:
        return list(self).index(value, start, stop)

    def count(self, value: Any) -> int:
        return list(self).count(value)

    def pop(self, index: SupportsIndex = -1) -> Any:
        return _block(list.pop(self, index))

    def remove(self, value: Any) -> None:
        del self[self.index(value)]

    def copy(self) -> list[Any]:
        return list(self)

    def sort(self, *args: Any, **kwargs: Any) -> None:
        items = list(self)
        items.sort(*args, **kwargs)
        list.__setitem__(self, slice(None), [compact(b) for b in items])

    def __eq__(self, other: object) -> bool:
        return list(self) == other

    def __ne__(self, other: object) -> bool:
        return list(self) != other

    __hash__ = None

    def __add__(self, other: Any) -> list[Any]:
        out: list[Any] = list(self) + other
        return out

    def __radd__(self, other: Any) -> list[Any]:
        out: list[Any] = other + list(self)
        return out

    def __mul__(self, n: SupportsIndex) -> list[Any]:
        return list(self) * n

    __rmul__ = __mul__

    def __repr__(self) -> str:
        return repr(list(self))

    def __reduce__(self) -> tuple[Any, ...]:
        return (Blocks, (list(self),))

    def __copy__(self) -> Blocks:
        return Blocks(self)


# cattrs hands a list subclass back unchanged: unstructure the blocks, as for a list.
converter.register_unstructure_hook(
    Blocks, lambda blocks: [converter.unstructure(b) for b in blocks]
)


def block_texts(items: list[Any], start: int = 0) -> list[str]:
    """The texts of the text blocks of ``items[start:]`` (without building blocks)."""
    out: list[str] = []
    for b in _get(items, slice(start, None)):
        if b.__class__ is str:
            out.append(b)
        elif b.__class__ is TextContent:
            out.append(b.text)
    return out


def text_parts(items: list[Any], start: int = 0) -> list[str]:
    """Texts whose join is that of :func:`block_texts`: one when every item is plain
    text (held as its ``str``, the common case, joined in C), else those texts."""
    try:
        return ["".join(_get(items, slice(start, None)))]
    except TypeError:  # some block is not plain text
        return block_texts(items, start)


def merge_text(items: Blocks, start: int) -> None:
    """Join each run of adjacent plain text blocks of ``items[start:]`` into one text
    block, in place (the joined text is unchanged; only chunk boundaries are lost).

    The first joined block is then joined with the text blocks just before ``start``
    while those are no longer than it (a binary counter): merging a long stream a
    few hundred chunks at a time copies each character O(log n) times, not O(n).
    Blocks other than plain text are kept as they are, in place.
    """
    out: list[Any] = []
    run: list[str] = []
    for b in _get(items, slice(start, None)):
        if b.__class__ is str:
            run.append(b)
        else:
            if run:
                out.append("".join(run))
                run = []
            out.append(b)
    if run:
        out.append("".join(run))
    lo = start
    if out and out[0].__class__ is str:
        first: str = out[0]
        while lo > 0:
            prev = _get(items, lo - 1)
            if prev.__class__ is not str or len(prev) > len(first):
                break
            first = prev + first
            lo -= 1
        out[0] = first
    list.__setitem__(items, slice(lo, None), out)
