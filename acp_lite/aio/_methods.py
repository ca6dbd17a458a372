"""The typed client -> agent method surface: the primitive shared by the mixins of
``AsyncClient`` (``_client_methods.py``) and ``AsyncSession`` (``_session_methods.py``).

Every method goes through one primitive, :meth:`_Methods._request`:

1. the capability gate (:mod:`acp_lite.protocol.capabilities`): a method the agent
   did not advertise raises :class:`~acp_lite.errors.CapabilityNotSupported`
   before anything is sent, unless ``force=True`` (spec, initialization
   "Capabilities": omitted capabilities MUST be treated as unsupported);
2. the connection's ``call`` (raw result today; an already-typed result is kept);
3. the typed result, ``METHODS[method].result``; a result that does not fit its
   schema raises :class:`~acp_lite.errors.ProtocolError` naming the method.

Parameters are snake_case wire names; values may be typed wire objects or plain
JSON values. ``meta`` is the wire ``_meta``; ``**extra`` adds wire-named keys as
given (the protocol's open values).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from acp_lite.aio._outside import outside_safe
from acp_lite.errors import CapabilityNotSupported, ProtocolError
from acp_lite.protocol import (
    UNSET,
    AuthStatusUpdateNotification,
    InitializeResponse,
    WireObject,
    converter,
)
from acp_lite.protocol.capabilities import (
    param_capability,
    required_capability,
    supports,
    supports_param,
)

if TYPE_CHECKING:
    from acp_lite.aio._link import Link
    from acp_lite.core import ConnectionEvent

__all__ = ["AUTH_STATUS_UPDATE", "Meta", "auth_status_update"]

T = TypeVar("T")

AUTH_STATUS_UPDATE = "auth/status_update"
"""The agent's notification that its authentication state changed (unstable)."""

Meta = Mapping[str, Any]
"""The wire ``_meta`` object (open: implementations attach what they like)."""


def _to_wire(value: object, where: str = "a parameter") -> object:
    """A JSON value for ``value``: wire objects unstructured, containers walked.

    Anything else (a function, an arbitrary object) is a ``TypeError`` naming
    ``where``: it would only fail later, when the request is encoded.
    """
    if value is None or isinstance(value, str | int | float | bool):
        return value
    if isinstance(value, WireObject):
        return converter.unstructure(value)
    if isinstance(value, Mapping):
        return {str(k): _to_wire(v, f"{where}[{k!r}]") for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_to_wire(v, f"{where}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    # Whatever the converter turns into JSON (attrs classes, enums ...) is fine; what
    # it passes through unchanged (a function, an arbitrary object) is not JSON.
    converted = converter.unstructure(value)
    if converted is not value:
        return _to_wire(converted, where)
    raise TypeError(
        f"{where} is not a JSON value ({type(value).__name__}): extra keyword "
        "arguments are sent to the agent as protocol parameters"
    )


def _params(
    base: Mapping[str, object], meta: Meta | None, extra: Mapping[str, object]
) -> dict[str, object]:
    params: dict[str, object] = {k: _to_wire(v, k) for k, v in base.items()}
    if meta is not None:
        params["_meta"] = _to_wire(meta, "meta")
    for key, value in extra.items():
        params[key] = _to_wire(value, f"keyword argument {key!r}")
    return params


def _typed(method: str, result: object, result_type: type[T], session_id: str | None) -> T:
    if isinstance(result, result_type):
        return result
    try:
        typed: T = converter.structure(result, result_type)
    except Exception as exc:
        raise ProtocolError(
            f"invalid {method} result ({result_type.__name__}): {exc}",
            method=method,
            session_id=session_id,
        ) from exc
    return typed


def auth_status_update(event: ConnectionEvent) -> AuthStatusUpdateNotification | None:
    """The typed ``auth/status_update`` carried by a client event, else ``None``.

    Today such notifications reach ``client.events`` as ``kind == "notification"``
    entries whose ``data`` is the decoded ``Notification``.
    """
    if event.method != AUTH_STATUS_UPDATE:
        return None
    params = getattr(event.data, "params", None)
    if isinstance(params, AuthStatusUpdateNotification):
        return params
    if isinstance(params, Mapping):
        try:
            typed: AuthStatusUpdateNotification = converter.structure(
                params, AuthStatusUpdateNotification
            )
        except Exception:
            return None
        return typed
    return None


class _Methods:
    """The shared primitive: gate, send, type the result."""

    _conn: Link

    def _initialize_response(self) -> InitializeResponse | None:
        # What the agent advertised, as the core recorded it.
        return self._conn.core.initialize_response

    def _call_state(self) -> Callable[[], str | None] | None:
        return None

    def _check(self, method: str, *, session_id: str | None, force: bool) -> None:
        """Raise :class:`CapabilityNotSupported` unless the agent advertised ``method``."""
        if force:
            return
        init = self._initialize_response()
        capabilities = init.capabilities if init is not None else UNSET
        auth_methods = init.auth_methods if init is not None else UNSET
        if supports(capabilities, method, auth_methods=auth_methods):
            return
        path = required_capability(method)
        assert path is not None
        raise CapabilityNotSupported(
            method, path, session_id=session_id, stderr_tail=self._conn.stderr_tail()
        )

    def _check_params(
        self, method: str, params: Mapping[str, object], *, session_id: str | None, force: bool
    ) -> None:
        """Raise for optional parameters that need a capability the agent lacks."""
        if force:
            return
        init = self._initialize_response()
        capabilities = init.capabilities if init is not None else UNSET
        for name, value in params.items():
            if value is None:
                continue
            path = param_capability(method, name)
            if path is not None and not supports_param(capabilities, method, name):
                raise CapabilityNotSupported(
                    f"{method} with {name}",
                    path,
                    session_id=session_id,
                    stderr_tail=self._conn.stderr_tail(),
                )

    @outside_safe
    async def _request(
        self,
        method: str,
        params: Mapping[str, object] | WireObject | None,
        result_type: type[T],
        *,
        session_id: str | None = None,
        timeout: float | None = None,
        force: bool = False,
    ) -> T:
        """Gate ``method``, send it, return its result as ``result_type``."""
        self._check(method, session_id=session_id, force=force)
        wire = {} if params is None else _to_wire(params)
        if isinstance(wire, dict):
            self._check_params(method, wire, session_id=session_id, force=force)
        result = await self._conn.call(
            method, wire, session_id=session_id, timeout=timeout, state=self._call_state()
        )
        return _typed(method, result, result_type, session_id)

    def _send_notification(
        self,
        method: str,
        params: Mapping[str, object],
        *,
        session_id: str | None = None,
        force: bool = False,
    ) -> None:
        """Gate and send a notification (nothing to wait for)."""
        self._check(method, session_id=session_id, force=force)
        self._conn.notify(method, _to_wire(params))
