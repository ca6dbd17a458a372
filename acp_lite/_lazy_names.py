"""A package's names imported on first use (PEP 562 ``__getattr__`` / ``__dir__``).

::

    __getattr__, __dir__ = lazy_names(globals(), {"Cassette": "_format"})

The first access of a name imports its module and caches the value in the
package's globals, so later accesses are plain lookups. Stdlib only: the package
``acp_lite`` itself uses it before anything else is imported.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Collection, Mapping
from typing import Any

__all__ = ["lazy_names"]


def lazy_names(
    namespace: dict[str, Any],
    names: Mapping[str, str],
    *,
    submodules: Collection[str] = (),
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for the package whose globals are ``namespace``.

    ``names`` maps each lazy name to the module that defines it (a name without a
    dot is one of the package's own modules);
    ``submodules`` are the package's modules reachable as attributes, as when the
    package imported them eagerly.
    """
    package: str = namespace["__name__"]

    def __getattr__(name: str) -> Any:
        if name in submodules:
            return importlib.import_module(f"{package}.{name}")
        module = names.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        if "." not in module:
            module = f"{package}.{module}"
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(namespace["__all__"]))

    return __getattr__, __dir__
