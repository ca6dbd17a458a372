"""The converter for every ACP wire type (docs/architecture.md, "Wire layer").

The generated module supplies one straight-line structure / unstructure function per
class and per union; :class:`_WireConverter` calls them directly and hands everything
else (type expressions such as ``list[TextContent]``, unusual containers) to a cattrs
converter that knows the same functions, so ``converter`` is the single entry point
while the hot path pays no per-field dispatch. The cattrs converter (and cattrs
itself, a sizeable import) is built on first need: a connection usually never needs it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from acp_lite.protocol import _generated as g

if TYPE_CHECKING:
    from cattrs import Converter as CattrsConverter

T = TypeVar("T")

_SCALARS = frozenset({str, int, float, bool, type(None)})
"""Classes cattrs unstructures to themselves (exact classes: subclasses go to cattrs)."""


class _WireConverter:
    """Structures JSON values into wire classes and back; round trips are exact.

    ``structure(value, cls)`` / ``unstructure(obj)`` behave as those of a
    ``cattrs.Converter(detailed_validation=False)`` that knows every wire class (a
    malformed value raises :class:`~acp_lite.protocol.WireError`). Hooks registered
    with :meth:`register_structure_hook` / :meth:`register_unstructure_hook` take
    precedence, as in cattrs; :attr:`cattrs` is that cattrs converter, for the rest
    of its API.
    """

    __slots__ = ("_cattrs", "_lock", "_structure_hooks", "_unstructure_hooks")

    def __init__(self) -> None:
        self._cattrs: CattrsConverter | None = None
        self._lock = threading.Lock()
        self._structure_hooks: dict[Any, Callable[[Any, Any], Any]] = {}
        self._unstructure_hooks: dict[Any, Callable[[Any], Any]] = {}

    @property
    def cattrs(self) -> CattrsConverter:
        """The cattrs converter behind this one (built on first use)."""
        conv = self._cattrs
        if conv is None:
            with self._lock:
                conv = self._cattrs
                if conv is None:
                    conv = self._cattrs = self._make_cattrs()
        return conv

    def _make_cattrs(self) -> CattrsConverter:
        import cattrs

        # detailed_validation=False: let WireError through instead of cattrs exception
        # groups.
        conv = cattrs.Converter(detailed_validation=False)
        structure, unstructure = g.STRUCTURE, g.UNSTRUCTURE

        # One predicate hook for all wire types instead of ~270 registrations:
        # registering attrs classes one by one makes cattrs resolve their type hints
        # (slow). cattrs caches the dispatch per type, so this costs nothing per call.
        def known(t: Any) -> bool:
            try:
                return t in structure
            except TypeError:  # unhashable type expressions
                return False

        conv.register_structure_hook_func(known, lambda d, t: structure[t](d, t))
        conv.register_unstructure_hook_func(
            lambda t: t in unstructure, lambda obj: unstructure[obj.__class__](obj)
        )
        for cls, fn in self._structure_hooks.items():
            conv.register_structure_hook(cls, fn)
        for cls, ufn in self._unstructure_hooks.items():
            conv.register_unstructure_hook(cls, ufn)
        return conv

    def structure(self, obj: Any, cl: type[T]) -> T:
        """``obj`` (a JSON value) as a ``cl``; ``WireError`` when it does not fit."""
        try:
            fn = self._structure_hooks.get(cl) or g.STRUCTURE.get(cl)
        except TypeError:  # an unhashable type expression
            fn = None
        if fn is not None:
            return fn(obj, cl)  # type: ignore[no-any-return]
        return self.cattrs.structure(obj, cl)

    def unstructure(self, obj: Any, unstructure_as: Any = None) -> Any:
        """``obj`` as a JSON value: wire objects to their wire shape, containers walked."""
        if unstructure_as is not None:
            return self.cattrs.unstructure(obj, unstructure_as)
        cls = obj.__class__
        if cls in _SCALARS:
            return obj
        fn = self._unstructure_hooks.get(cls) or g.UNSTRUCTURE.get(cls)
        if fn is not None:
            return fn(obj)
        # What cattrs does with a plain dict or list (keys and items by their classes).
        if cls is dict:
            return {self.unstructure(k): self.unstructure(v) for k, v in obj.items()}
        if cls is list:
            return [self.unstructure(item) for item in obj]
        return self.cattrs.unstructure(obj)

    def __getattr__(self, name: str) -> Any:
        # The rest of cattrs' Converter API (hook factories, copy ...), on the cattrs
        # converter; hooks it registers for wire classes are not seen by the direct path.
        if name.startswith("_"):  # own slots not set yet, dunders: never cattrs'
            raise AttributeError(name)
        return getattr(self.cattrs, name)

    def register_structure_hook(self, cls: Any, func: Callable[[Any, Any], Any]) -> None:
        """Structure values of exactly ``cls`` with ``func(value, cls)``."""
        with self._lock:
            self._structure_hooks[cls] = func
            if self._cattrs is not None:
                self._cattrs.register_structure_hook(cls, func)

    def register_unstructure_hook(self, cls: Any, func: Callable[[Any], Any]) -> None:
        """Unstructure objects of exactly ``cls`` with ``func(obj)``."""
        with self._lock:
            self._unstructure_hooks[cls] = func
            if self._cattrs is not None:
                self._cattrs.register_unstructure_hook(cls, func)


converter: _WireConverter = _WireConverter()
"""Structures JSON values into wire classes and back; round trips are exact."""


def structure_update(update: Any) -> g.SessionUpdate:
    """Typed shortcut for ``converter.structure(update, SessionUpdate)``.

    Never raises for a JSON object: unknown or malformed variants become
    ``UnrecognizedSessionUpdate``. Raises ``WireError`` only when ``update`` is not
    an object. (mypy cannot type ``converter.structure`` with a union alias.)
    """
    return g.STRUCTURE[g.SessionUpdate](update, None)  # type: ignore[no-any-return]


def unstructure(obj: Any) -> Any:
    """Typed shortcut for ``converter.unstructure(obj)`` (wire object -> JSON value)."""
    fn = g.UNSTRUCTURE.get(type(obj))
    return converter.unstructure(obj) if fn is None else fn(obj)


__all__ = ["converter", "structure_update", "unstructure"]
