"""``define`` / ``frozen``: attrs' decorators (``slots=True``), with attrs' own
processing deferred to the class's first use.

attrs compiles ``__init__``, ``__repr__``, ``__eq__`` ... for each class as the
module that declares it is imported: about a millisecond per class, which for the
few dozen record classes of the connection path was a sizeable share of
``import acp_lite.client``. Here the class gets its ``__slots__`` at once (so
instances are as small as attrs makes them); attrs processes it in place the first
time an instance is made, unpickled, or the class is introspected
(``attrs.fields``, ``attrs.has``, ``attrs.evolve``, ...). After that it is exactly
the class ``attrs.define(slots=True)`` / ``attrs.frozen(slots=True)`` would have
made. Type checkers see attrs' own decorators.

Limits (checked at decoration): the class is declared with annotated fields and
plain bases (no attrs base classes, no ``super()`` in its methods); anything else
raises ``TypeError``, use attrs directly there.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from types import MemberDescriptorType
from typing import TYPE_CHECKING, Any, Final

import attrs

__all__ = ["define", "frozen"]

_NO_DEFAULT: Final = object()
_BUILD_LOCK = threading.RLock()
_COUNTING_ATTR: Final = type(attrs.field())
_CLASS_VARS: Final = ("typing.ClassVar", "t.ClassVar", "ClassVar", "typing_extensions.ClassVar")


class _LazyFields:
    """``__attrs_attrs__`` of a class attrs has not processed yet: reading it lets
    attrs process the class first."""

    def __get__(self, obj: object, owner: type) -> Any:
        _build(owner)
        return owner.__dict__["__attrs_attrs__"]


_LAZY_FIELDS: Final = _LazyFields()


def _build(cls: type) -> None:
    """Let attrs process ``cls``: attrs builds its slotted twin from the same fields
    and options, and the twin's methods and field records move onto ``cls``."""
    with _BUILD_LOCK:
        if cls.__dict__.get("__attrs_attrs__") is not _LAZY_FIELDS:
            return  # by another thread meanwhile
        fields, options = cls.__dict__["__lazy_attrs__"]
        these: dict[str, Any] = {}
        for name, annotation, default in fields:
            if isinstance(default, _COUNTING_ATTR):
                default.type = annotation  # as attrs records an annotated field's type
                these[name] = default
            elif default is _NO_DEFAULT:
                these[name] = attrs.field(type=annotation)
            else:
                these[name] = attrs.field(default=default, type=annotation)
        ns = {"__module__": cls.__module__, "__qualname__": cls.__qualname__}
        twin = attrs.define(these=these, slots=True, auto_detect=False, **options)(
            type(cls.__name__, (), ns)
        )
        copied = [
            (name, value)
            for name, value in twin.__dict__.items()
            if name not in _NOT_COPIED and not isinstance(value, MemberDescriptorType)
        ]
        # The ways to make an instance next to last, so another thread that makes one
        # without taking the lock finds every method in place; the field records,
        # which mark the class processed, last.
        order = {"__init__": 1, "__setstate__": 1, "__attrs_attrs__": 2}
        copied.sort(key=lambda item: order.get(item[0], 0))
        for name, value in copied:
            setattr(cls, name, value)


_NOT_COPIED: Final = frozenset(
    {"__module__", "__qualname__", "__doc__", "__slots__", "__dict__", "__weakref__"}
)


class _LazyMethod:
    """A method attrs writes (``__init__``, ``__setstate__``), before it has: looking
    it up (to make an instance, unpickle one, or read its signature) lets attrs
    process the class first."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __get__(self, obj: object, owner: type) -> Any:
        _build(owner)
        return owner.__dict__[self.name].__get__(obj, owner)


def _lazy(cls: type, options: dict[str, Any]) -> type:
    if cls.__bases__ != (object,):
        raise TypeError(f"{cls.__qualname__}: lazy attrs classes have no base classes")
    options = dict(options)
    # attrs' auto_detect: methods the class writes itself are kept.
    if "__init__" in cls.__dict__:
        raise TypeError(f"{cls.__qualname__}: lazy attrs classes do not write __init__")
    if "__repr__" in cls.__dict__:
        options.setdefault("repr", False)
    if "__eq__" in cls.__dict__ or "__ne__" in cls.__dict__:
        options.setdefault("eq", False)
    ns = dict(cls.__dict__)
    ns.pop("__dict__", None)
    ns.pop("__weakref__", None)
    for value in ns.values():
        cells = getattr(value, "__closure__", None) or ()
        if any(cell.cell_contents is cls for cell in cells):
            raise TypeError(f"{cls.__qualname__}: lazy attrs classes cannot use super()")
    annotations: dict[str, Any] = ns.get("__annotations__", {})
    names = [
        name
        for name, annotation in annotations.items()
        if not (isinstance(annotation, str) and annotation.startswith(_CLASS_VARS))
    ]
    fields = tuple((name, annotations[name], ns.pop(name, _NO_DEFAULT)) for name in names)
    ns["__lazy_attrs__"] = (fields, options)
    ns["__slots__"] = (*names, "__weakref__")  # attrs' slotted classes take weak refs
    ns["__attrs_attrs__"] = _LAZY_FIELDS
    ns["__init__"] = _LazyMethod("__init__")
    ns["__setstate__"] = _LazyMethod("__setstate__")  # unpickling makes an instance too
    return type(cls)(cls.__name__, cls.__bases__, ns)


def _decorator(defaults: dict[str, Any]) -> Callable[..., Any]:
    def decorate(maybe_cls: type | None = None, /, **options: Any) -> Any:
        if options.pop("slots", True) is not True:
            raise TypeError("lazy attrs classes are slotted")
        merged = {**defaults, **options}
        if maybe_cls is None:
            return lambda cls: _lazy(cls, merged)
        return _lazy(maybe_cls, merged)

    return decorate


if TYPE_CHECKING:
    from attrs import define, frozen
else:
    define = _decorator({})
    define.__doc__ = "``attrs.define`` (slots=True), processed by attrs on first use."
    frozen = _decorator({"frozen": True, "on_setattr": None})
    frozen.__doc__ = "``attrs.frozen`` (slots=True), processed by attrs on first use."
