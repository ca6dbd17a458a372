"""Runtime helpers of the generated structure functions (``_generated.py``).

Hand-written so the generator stays small. :class:`WireObject`, the base of every wire
class, is public (``acp_lite.protocol.WireObject``); the rest is private to the wire
layer.
Errors are :class:`WireError` values built here, raised by the generated code.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar, Final, TypeVar, dataclass_transform

import attrs

from acp_lite import _lazy_attrs as lazy_attrs
from acp_lite.protocol._errors import WireError

_GENERATED_MODULE: Final = "acp_lite.protocol._generated"


class _WireMeta(type):
    """Metaclass of the wire classes: a class of the generated module gets its
    ``__slots__`` as the class statement creates it (what :func:`wire_class` does
    by creating the class a second time, which doubled the module's load time)."""

    def __new__(mcls, name: str, bases: tuple[type, ...], ns: dict[str, Any]) -> _WireMeta:
        if ns.get("__module__") == _GENERATED_MODULE and "__annotations__" in ns:
            _wire_namespace(ns, bases)
        return super().__new__(mcls, name, bases, ns)


class WireObject(metaclass=_WireMeta):
    """Base of every generated wire class: value equality and a readable repr.

    Hand-written once instead of letting attrs compile ``__eq__``/``__repr__`` for each
    of the ~270 classes (that dominated the import time of the package).
    """

    __slots__ = ()
    __attrs_attrs__: ClassVar[tuple[Any, ...]]
    __hash__ = None  # type: ignore[assignment]  # value equality on mutable objects

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return all(getattr(self, a.name) == getattr(other, a.name) for a in self.__attrs_attrs__)

    def __repr__(self) -> str:
        shown = ", ".join(f"{a.name}={getattr(self, a.name)!r}" for a in self.__attrs_attrs__)
        return f"{type(self).__name__}({shown})"


_new: Any = object.__new__  # the generated structure functions' and fast constructors'

_C = TypeVar("_C", bound=type)
_FACTORY: Any = attrs.NOTHING  # the generated __init__'s default of a field made per instance


def _process_in_place(cls: type, these: dict[str, Any]) -> None:
    """How a wire class is processed: in place, as it has its ``__slots__``,
    ``__init__``, ``__eq__`` and ``__repr__`` already (attrs adds its field records
    and bookkeeping only)."""
    attrs.define(
        these=these,
        kw_only=True,
        init=False,  # the generated __init__ is the one attrs would write
        repr=False,
        eq=False,
        match_args=False,
        slots=False,  # in place: the class has its __slots__ already
        auto_detect=False,
    )(cls)


@dataclass_transform(kw_only_default=True, field_specifiers=(attrs.field,))
def wire_class(cls: _C) -> _C:
    """Class decorator of the generated wire classes: what ``attrs.define(kw_only=True,
    slots=True)`` makes, with attrs' own processing deferred to first use.

    Running attrs on each of the ~200 classes was most of the import time of the
    wire layer, though a connection needs none of it: decoding fills the slots
    directly and the generated ``__init__`` is written out. The class gets its
    ``__slots__`` now; ``__attrs_attrs__`` (``attrs.fields``, ``attrs.has``,
    ``attrs.evolve``, ``==``, ``repr``) is attrs' own, made on first use.
    """
    if "__lazy_attrs__" in cls.__dict__:
        return cls  # a class of the generated module: _WireMeta made it so already
    ns = dict(cls.__dict__)
    ns.pop("__dict__", None)
    ns.pop("__weakref__", None)
    _wire_namespace(ns, cls.__bases__)
    new: _C = type(cls)(cls.__name__, cls.__bases__, ns)
    return new


def _wire_namespace(ns: dict[str, Any], bases: tuple[type, ...]) -> None:
    """Turn a class namespace into a wire class's: the annotated fields become
    ``__slots__`` (their defaults move to ``__lazy_attrs__``), attrs' fields lazy."""
    own: dict[str, Any] = ns.get("__annotations__", {})
    inherited = {n for b in bases for k in b.__mro__ for n in k.__dict__.get("__slots__", ())}
    fields = tuple((name, None, ns.pop(name, lazy_attrs.NO_DEFAULT)) for name in own)
    ns["__slots__"] = tuple(name for name in own if name not in inherited)
    lazy_attrs.defer(ns, lazy_attrs.Deferred(fields, _process_in_place))
    ns["__attrs_own_setattr__"] = False  # as attrs.define(slots=True) sets it


def _bad(cls: str, key: str, value: Any, want: str) -> WireError:
    shown = repr(value)
    if len(shown) > 60:
        shown = shown[:57] + "..."
    return WireError(f"{cls}.{key}: expected {want}, got {type(value).__name__} {shown}")


def _required(cls: str, key: str, d: dict[str, Any], want: str) -> WireError:
    return _bad(cls, key, d[key], want) if key in d else _missing(cls, key)


_TAGGED: Final = object()  # passed by union dispatchers: the tag is already checked


def _missing(cls: str, key: str) -> WireError:
    return WireError(f"{cls}: required key {key!r} is missing")


def _not_object(cls: str, value: Any) -> WireError:
    return WireError(f"{cls}: expected a JSON object, got {type(value).__name__}")


def _list_of(cls: str, key: str, v: Any, check: Callable[[Any], bool], want: str) -> Any:
    if type(v) is not list:
        raise _bad(cls, key, v, "an array")
    for item in v:
        if not check(item):
            raise _bad(cls, key, item, want)
    return v


def _struct_list(cls: str, key: str, v: Any, fn: Callable[[Any], Any]) -> list[Any]:
    if type(v) is not list:
        raise _bad(cls, key, v, "an array")
    return [fn(item) for item in v]


def _struct_list_keep(
    cls: str, key: str, v: Any, fn: Callable[[Any], Any], keep: Callable[[Any, str], Any]
) -> list[Any]:
    """Like ``_struct_list``, but an item that fails becomes ``keep(item, error)`` (an
    Unrecognized* object); ``keep`` raises WireError when the item has no usable tag."""
    if type(v) is not list:
        raise _bad(cls, key, v, "an array")
    out = []
    for item in v:
        try:
            out.append(fn(item))
        except WireError as exc:
            out.append(keep(item, str(exc)))
    return out


class _NoExtra(dict[str, Any]):
    """The ``extra`` of every decoded object that had no unknown keys: one shared,
    read-only, empty dict.

    Hot path (the notification path): a streamed chunk's content block is kept by the
    model; an empty dict of its own per block would cost memory and make the cyclic
    GC run more often. To change ``extra`` of a decoded object, assign a new dict.
    """

    __slots__ = ()

    def _read_only(self, *args: Any, **kwargs: Any) -> Any:
        raise TypeError(
            "this decoded object had no unknown keys: its `extra` is a shared read-only "
            "empty dict; assign a new dict to `.extra` instead"
        )

    __setitem__ = __delitem__ = __ior__ = _read_only
    setdefault = update = pop = popitem = clear = _read_only

    def __repr__(self) -> str:
        return "{}"

    def __reduce__(self) -> tuple[Any, ...]:
        return (dict, ())  # copies and pickles are ordinary (mutable) dicts


NO_EXTRA: Final[dict[str, Any]] = _NoExtra()


def _extra(d: dict[str, Any], known: frozenset[str]) -> dict[str, Any]:
    return {k: v for k, v in d.items() if k not in known}


def _is_str(v: Any) -> bool:
    return type(v) is str


def _is_int(v: Any) -> bool:
    return type(v) is int


def _is_float(v: Any) -> bool:
    return type(v) is float or type(v) is int


def _is_bool(v: Any) -> bool:
    return type(v) is bool


def _is_dict(v: Any) -> bool:
    return type(v) is dict


def _is_any(v: Any) -> bool:
    return True
