"""Blocking twins of async methods, declared in one line (httpx-style pairing).

::

    class Session(Facade):
        wait_idle = blocking(AsyncSession.wait_idle)
        ...

gives ``Session.wait_idle(*, timeout=None) -> None``: the async method's name,
docstring and signature (``inspect.signature``) and, for mypy, its parameter and
return types (``ParamSpec``), but not ``async``. A call:

1. replaces arguments that are blocking facade objects by their async object
   (``facade._async``),
2. crosses to the trio thread once, through ``facade._call(afn, timeout=...)``
   (the portal: a trio-side deadline, Ctrl-C cancels the work and re-raises within
   the portal's bound), where it runs ``await facade._async.<name>(*args, **kwargs)``,
3. passes the result through ``facade._view(result)``, which maps async objects to
   their blocking view (``AsyncSession`` -> ``Session``). When that changes the
   type, declare it for mypy with ``returns=``:
   ``new_session = blocking(AsyncClient.new_session, returns=Session)`` (checked at
   run time too).

The twin of a method declared ``@outside_safe`` where it is written
(:func:`acp_lite.aio.outside.outside_safe`: plain request methods, which call no
trio themselves) runs the coroutine in the caller's thread instead when the trio
thread is parked (``facade._call_direct``, :mod:`acp_lite.sync._direct`), and as in
2. otherwise. The mark is the only declaration: the twin reads it.

``timeout`` is taken from the call's own ``timeout`` argument when the async method
has one, so the portal's last-resort deadline follows it.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, Concatenate, Generic, ParamSpec, Protocol, TypeVar, overload

from acp_lite.aio.outside import is_outside_safe

__all__ = ["DirectRunner", "Facade", "blocking", "mirrored_async"]

P = ParamSpec("P")
T = TypeVar("T")
R = TypeVar("R")
T_co = TypeVar("T_co", covariant=True)

_MISSING: Any = object()


class DirectRunner(Protocol):
    """Runs a request coroutine in the calling thread (``acp_lite.sync._portal.Portal``)."""

    def call_direct(
        self, coroutine: Callable[[], Coroutine[Any, Any, T]], *, fallback: Callable[[], T]
    ) -> T: ...


class Facade:
    """Base of the blocking classes whose methods :func:`blocking` builds.

    A subclass sets ``_async`` (the async object it mirrors) and implements
    ``_call``; it overrides ``_view`` when async results need a blocking view.
    """

    __slots__ = ()

    _async: Any
    """The async object this blocking object mirrors."""

    def _call(
        self, afn: Callable[..., Awaitable[T]], *args: Any, timeout: float | None = None
    ) -> T:
        """Run ``await afn(*args)`` on the trio thread (one crossing) and return it.

        ``timeout`` is the call's own timeout (``None``: the default one).
        """
        raise NotImplementedError

    def _direct_runner(self) -> DirectRunner | None:
        """What runs the twins of ``@outside_safe`` methods in the calling thread (the
        portal); ``None``: they cross like the others."""
        return None

    def _call_direct(
        self,
        coroutine: Callable[[], Coroutine[Any, Any, T]],
        afn: Callable[[], Awaitable[T]],
        *,
        timeout: float | None = None,
    ) -> T:
        """Run ``coroutine()`` in the calling thread if the trio thread is parked,
        else as :meth:`_call` runs ``afn``."""
        runner = self._direct_runner()
        if runner is None:
            return self._call(afn, timeout=timeout)
        return runner.call_direct(coroutine, fallback=lambda: self._call(afn, timeout=timeout))

    def _view(self, value: Any) -> Any:
        """The blocking view of an async result (identity unless overridden)."""
        return value


class _AsyncMethod(Protocol[P, T_co]):
    """An async method as its class holds it: ``self`` first, by that name.

    (Not ``Callable[Concatenate[Any, P], ...]``: mypy refuses to match that against
    a method with ``**params``, which could not take a keyword named ``self``.)
    """

    def __call__(_, self: Any, *args: P.args, **kwargs: P.kwargs) -> Awaitable[T_co]: ...


def _unwrap(value: Any) -> Any:
    return value._async if isinstance(value, Facade) else value


class _Blocking(Generic[P, T]):
    """What :func:`blocking` returns: it installs its function in the class it is
    assigned in (``__set_name__``), so at run time the class holds a plain function;
    this class only gives mypy the bound and unbound types."""

    __slots__ = ("function",)

    def __init__(self, function: Callable[..., Any]) -> None:
        self.function = function

    def __set_name__(self, owner: type, name: str) -> None:
        function = self.function
        if name != function.__name__:
            raise TypeError(
                f"{owner.__qualname__}.{name} = blocking(...{function.__name__}): "
                "a blocking twin must have the async method's name"
            )
        function.__qualname__ = f"{owner.__qualname__}.{name}"
        function.__module__ = owner.__module__
        setattr(owner, name, function)

    @overload
    def __get__(self, instance: None, owner: type) -> Callable[Concatenate[Any, P], T]: ...

    @overload
    def __get__(self, instance: Facade, owner: type | None = None) -> Callable[P, T]: ...

    def __get__(self, instance: Facade | None, owner: type | None = None) -> Callable[..., T]:
        # Only reached when used outside a class body (no __set_name__).
        bound: Callable[..., T] = self.function.__get__(instance, owner)
        return bound


@overload
def blocking(method: _AsyncMethod[P, T]) -> _Blocking[P, T]: ...


@overload
def blocking(method: _AsyncMethod[P, object], *, returns: type[R]) -> _Blocking[P, R]: ...


def blocking(method: _AsyncMethod[P, Any], *, returns: type | None = None) -> _Blocking[P, Any]:
    """The blocking twin of the ``async def`` method ``method`` (see the module docs).

    ``returns``: the type of the blocking result when ``Facade._view`` maps the async
    result to another type (``AsyncSession`` -> ``Session``). A method declared
    ``@outside_safe`` (it only sends requests and awaits their responses, no other
    trio call) is run by the caller's thread itself while the trio thread is parked
    (:mod:`acp_lite.sync._direct`: no thread crossing, or one, instead of three).
    """
    if not inspect.iscoroutinefunction(method):
        raise TypeError(f"blocking() needs an async def method, got {method!r}")
    direct = is_outside_safe(method)
    name: str = method.__name__
    signature = inspect.signature(method)
    if returns is not None:
        signature = signature.replace(return_annotation=returns.__name__)
    timeout_param = signature.parameters.get("timeout")
    keyword_timeout = (
        timeout_param is not None and timeout_param.kind is inspect.Parameter.KEYWORD_ONLY
    )
    timeout_default = timeout_param.default if timeout_param is not None else None
    if timeout_default is inspect.Parameter.empty:
        timeout_default = None

    def call_timeout(facade: Facade, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        if timeout_param is None:
            return None
        if keyword_timeout:
            return kwargs.get("timeout", timeout_default)
        # A positional ``timeout`` (not used by acp_lite today): bind to find it.
        bound = signature.bind_partial(facade, *args, **kwargs)
        return bound.arguments.get("timeout", timeout_default)

    def mirrored(self: Facade, /, *args: Any, **kwargs: Any) -> Any:
        target = self._async
        args = tuple(_unwrap(a) for a in args)
        kwargs = {k: _unwrap(v) for k, v in kwargs.items()}

        async def call() -> Any:
            return await getattr(target, name)(*args, **kwargs)

        call.__name__ = name  # the portal names it in its last-resort Timeout
        timeout = call_timeout(self, args, kwargs)
        if direct:
            result = self._view(
                self._call_direct(
                    lambda: getattr(target, name)(*args, **kwargs), call, timeout=timeout
                )
            )
        else:
            result = self._view(self._call(call, timeout=timeout))
        if returns is not None and not isinstance(result, returns):
            raise TypeError(
                f"{type(self).__name__}.{name} returned {type(result).__name__}, "
                f"declared {returns.__name__}"
            )
        return result

    mirrored.__name__ = name
    mirrored.__doc__ = method.__doc__
    # No ``__wrapped__``: tools that follow it would take the twin for a coroutine
    # function; ``mirrored_async`` gives the async method instead.
    mirrored.__signature__ = signature  # type: ignore[attr-defined]
    # The async method's annotations (strings, resolved in its own module), so
    # annotation readers see the real types rather than ``*args: Any``.
    annotations = dict(getattr(method, "__annotations__", {}))
    if returns is not None:
        annotations["return"] = returns
    mirrored.__annotations__ = annotations
    mirrored._acp_async_method = method  # type: ignore[attr-defined]
    mirrored._acp_direct = direct  # type: ignore[attr-defined]
    return _Blocking(mirrored)


def mirrored_async(member: object) -> Callable[..., Any] | None:
    """The async method ``member`` (a :func:`blocking` twin) mirrors, else ``None``."""
    found: Callable[..., Any] | None = getattr(member, "_acp_async_method", None)
    return found
