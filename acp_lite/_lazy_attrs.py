"""``define`` / ``frozen``: attrs' decorators (``slots=True``), with attrs' own
processing deferred to the class's first use.

attrs compiles ``__init__``, ``__repr__``, ``__eq__`` ... for each class as the
module that declares it is imported: about a millisecond per class, which for the
few dozen record classes of the connection path was a sizeable share of
``import acp_lite.client``. Here the class gets its ``__slots__`` at once (so
instances are as small as attrs makes them); every member attrs may write is a
placeholder that, when first looked up, lets attrs process the class: making an
instance, unpickling one, or using one made with ``object.__new__`` (``repr``,
``==``, ``hash``, setting a field), or introspecting the class (``attrs.fields``,
``attrs.has``, ``attrs.evolve``, ``inspect.signature``). attrs builds its slotted
twin from the same fields and options, and the twin's members move onto the class,
which then is what ``attrs.define(slots=True)`` / ``attrs.frozen(slots=True)``
would have made. Type checkers see attrs' own decorators.

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

__all__ = [
    "LAZY_FIELDS",
    "NO_DEFAULT",
    "Deferred",
    "defer",
    "define",
    "frozen",
    "is_processed",
    "process",
]

_BUILD_LOCK = threading.RLock()
_COUNTING_ATTR: Final = type(attrs.field())
_CLASS_VARS: Final = ("typing.ClassVar", "t.ClassVar", "ClassVar", "typing_extensions.ClassVar")


class Deferred:
    """What a class whose attrs processing is deferred keeps until its first use
    (``__lazy_attrs__``): its fields as ``(name, annotation, default)`` (a default
    may be an ``attrs.field()``; ``NO_DEFAULT`` when there is none), and how to let
    attrs process it, given the fields as attrs' ``these``.

    Two kinds of classes use it: this module's record classes (attrs builds a
    slotted twin whose members move onto the class) and the generated wire classes
    (``acp_lite.protocol._runtime``: attrs processes them in place, their ``__init__``,
    ``__eq__`` and ``__repr__`` being written already). One lock, one placeholder
    and one way to read the fields serve both.
    """

    __slots__ = ("fields", "process")

    def __init__(
        self,
        fields: tuple[tuple[str, Any, Any], ...],
        process: Callable[[type, dict[str, Any]], None],
    ) -> None:
        self.fields = fields
        self.process = process


NO_DEFAULT: Final = object()
"""The default of a deferred field that has none."""


class _LazyFields:
    """``__attrs_attrs__`` of a class attrs has not processed yet: reading it lets
    attrs process the class first (the class itself, or the deferred class a plain
    subclass extends)."""

    def __get__(self, obj: object, owner: type) -> Any:
        klass = _deferred_class(owner)
        process(klass)
        return klass.__dict__["__attrs_attrs__"]


def _deferred_class(owner: type) -> type:
    """``owner`` if it is a deferred class, else the deferred class it extends."""
    for klass in owner.__mro__:
        if "__lazy_attrs__" in klass.__dict__:
            return klass
    raise AttributeError("__attrs_attrs__")  # pragma: no cover - only on deferred classes


LAZY_FIELDS: Final = _LazyFields()
"""The placeholder ``__attrs_attrs__`` of a deferred class."""


def defer(ns: dict[str, Any], deferred: Deferred) -> None:
    """Mark the class namespace ``ns`` (before the class is made) as deferred."""
    ns["__lazy_attrs__"] = deferred
    ns["__attrs_attrs__"] = LAZY_FIELDS


def is_processed(cls: type) -> bool:
    """Whether attrs processed ``cls`` (a deferred class) already."""
    return cls.__dict__.get("__attrs_attrs__") is not LAZY_FIELDS


def process(cls: type) -> None:
    """Let attrs process the deferred class ``cls`` now (once: later calls, and calls
    from other threads meanwhile, find it done)."""
    with _BUILD_LOCK:
        if is_processed(cls):
            return  # by another thread meanwhile
        deferred: Deferred = cls.__dict__["__lazy_attrs__"]
        these: dict[str, Any] = {}
        for name, annotation, default in deferred.fields:
            if isinstance(default, _COUNTING_ATTR):
                default.type = annotation  # as attrs records an annotated field's type
                these[name] = default
            elif default is NO_DEFAULT:
                these[name] = attrs.field(type=annotation)
            else:
                these[name] = attrs.field(default=default, type=annotation)
        deferred.process(cls, these)


def _twin(
    options: dict[str, Any], placeholders: frozenset[str]
) -> Callable[[type, dict[str, Any]], None]:
    """How a record class is processed: attrs builds its slotted twin from the same
    fields and options, and the twin's methods and field records move onto ``cls``."""

    def move(cls: type, these: dict[str, Any]) -> None:
        ns = {"__module__": cls.__module__, "__qualname__": cls.__qualname__}
        for hook in _INIT_HOOKS:  # attrs' __init__ calls them only if its class has them
            if hook in cls.__dict__:
                ns[hook] = cls.__dict__[hook]
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
        written = {name for name, _ in copied}
        for name in placeholders - written:  # attrs writes none: object's apply
            if isinstance(cls.__dict__.get(name), _LazyMember):
                delattr(cls, name)
        for name, value in copied:
            setattr(cls, name, value)

    return move


_INIT_HOOKS: Final = ("__attrs_pre_init__", "__attrs_post_init__")

_NOT_COPIED: Final = frozenset(
    {"__module__", "__qualname__", "__doc__", "__slots__", "__dict__", "__weakref__"}
)


class _LazyMember:
    """A member attrs may write (``__init__``, ``__repr__``, ``__eq__``, ...), before
    it has: looking it up lets attrs process the class first. Instances made without
    ``__init__`` (``object.__new__`` and filling the slots, as hot paths do, or
    unpickling) so behave as attrs' from the start."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __get__(self, obj: object, owner: type) -> Any:
        klass = _deferred_class(owner)
        process(klass)
        if klass.__dict__.get(self.name) is self:  # pragma: no cover - _build replaces it
            raise AttributeError(self.name)
        return getattr(owner if obj is None else obj, self.name)


_PLACEHOLDERS: Final = frozenset(
    {
        "__init__",
        "__repr__",
        "__eq__",
        "__ne__",
        "__lt__",
        "__le__",
        "__gt__",
        "__ge__",
        "__hash__",
        "__setattr__",
        "__delattr__",
        "__getstate__",
        "__setstate__",
        "__match_args__",
    }
)
"""What attrs may write into a class: all of it waits for the class's processing."""


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
    fields = tuple((name, annotations[name], ns.pop(name, NO_DEFAULT)) for name in names)
    placeholders = frozenset(_PLACEHOLDERS - ns.keys())  # the class's own are kept
    defer(ns, Deferred(fields, _twin(options, placeholders)))
    ns["__slots__"] = (*names, "__weakref__")  # attrs' slotted classes take weak refs
    for name in placeholders:
        ns[name] = _LazyMember(name)
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
