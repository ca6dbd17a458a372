"""pluggy hook specifications of acp_lite (project name ``acp_lite``).

Pass plugins to ``acp_lite.connect(..., plugins=[obj, ...])`` (or
``acp_lite.aio.connect``); each plugin is any object (module, class instance) with
functions named like the specs below and decorated with :data:`hookimpl`::

    from acp_lite.hookspec import hookimpl

    class AutoApprove:
        @hookimpl
        def acp_permission_request(self, request, session):
            return request.options[0].option_id

Where hooks run: ``acp_session_update`` and ``acp_extension_notification`` run on
the connection's trio thread, in receive order, and must be quick and must not
block (they are on the notification hot path; hand heavy work to a queue). The
decision hooks (``acp_permission_request``, ``acp_elicitation_request``) may block:
they run off the trio thread, in a worker thread. ``session`` is the
``AsyncSession`` for an async client and the blocking ``Session`` for a blocking
one; ``client`` likewise (``AsyncClient`` or ``Client``).

Who answers an agent -> client request: the per-connection callable
(``on_permission`` / ``on_elicitation``) when one is given — its answer is final,
``None`` meaning ``cancelled`` for a permission; otherwise these hook
implementations (pluggy order: last registered first; ``None`` = no opinion);
if none answers, the default policy (:func:`acp_lite.permissions.reject_once`,
:func:`acp_lite.permissions.decline`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

import pluggy

if TYPE_CHECKING:
    from acp_lite.jsontypes import JsonValue
    from acp_lite.model.events import Event
    from acp_lite.protocol import (
        CreateElicitationRequest,
        CreateElicitationResponse,
        RequestPermissionRequest,
    )

# ``client`` / ``session`` are typed ``object``: an AsyncClient / AsyncSession or the
# blocking Client / Session (see above), which this bottom-layer module cannot name.

__all__ = ["PROJECT_NAME", "AcpHookSpec", "hookimpl", "hookspec", "plugin_manager"]

PROJECT_NAME = "acp_lite"
"""The pluggy project name: ``pluggy.PluginManager(PROJECT_NAME)``."""

hookspec = pluggy.HookspecMarker(PROJECT_NAME)
"""Marks a hook specification (used below)."""

hookimpl = pluggy.HookimplMarker(PROJECT_NAME)
"""Marks a hook implementation in a plugin."""


class AcpHookSpec:
    """The hooks a plugin may implement. Register with ``pm.add_hookspecs(AcpHookSpec)``."""

    @hookspec
    def acp_connection_opened(self, client: object) -> None:
        """The agent answered ``initialize``: ``client`` is ready to use.

        Runs on the trio thread; must not block.
        """

    @hookspec
    def acp_connection_closed(self, client: object) -> None:
        """The connection was closed (by ``close()`` or because the agent exited).

        Called once per connection; runs on the trio thread; must not block.
        """

    @hookspec
    def acp_session_update(self, session: object, event: Event) -> None:
        """A ``session/update`` was applied to ``session.model``.

        ``event`` is the model's ``Event`` (``index``, ``update``, ``raw``,
        ``replayed``, ``time``). Runs on the trio thread for every notification:
        keep it to a few microseconds and never block.
        """

    @hookspec(firstresult=True)
    def acp_permission_request(
        self, request: RequestPermissionRequest, session: object
    ) -> str | None:
        """Answer a ``session/request_permission`` request.

        ``request`` is the typed ``RequestPermissionRequest`` (``title``,
        ``options`` with ``option_id``, ``name``, ``kind``, ...). Return the chosen
        ``option_id``, :data:`acp_lite.permissions.CANCELLED` to answer with the
        ``cancelled`` outcome, or ``None`` to let the next plugin (then the default
        policy) decide — pluggy's ``firstresult`` skips ``None``, so ``None`` cannot
        mean "cancelled" here. May block (runs in a worker thread).
        """

    @hookspec(firstresult=True)
    def acp_elicitation_request(
        self, request: CreateElicitationRequest, session: object
    ) -> CreateElicitationResponse | Mapping[str, object] | None:
        """Answer an ``elicitation/create`` request.

        ``request`` is the typed ``CreateElicitationRequest``; ``session`` is the
        session it is scoped to, or ``None`` for a request-scoped elicitation.
        Return the typed ``CreateElicitationResponse`` (see
        :mod:`acp_lite.permissions`: ``decline``, ``cancel``, ``accept``), or
        ``None`` to pass. May block (runs in a worker thread).
        """

    @hookspec
    def acp_extension_notification(self, client: object, method: str, params: JsonValue) -> None:
        """The agent sent a ``_``-prefixed extension notification.

        ``params`` is the raw JSON value. Runs on the trio thread; must not block.
        """


def plugin_manager(plugins: Iterable[object] = ()) -> pluggy.PluginManager:
    """A ``PluginManager`` with the acp_lite hookspecs and ``plugins`` registered."""
    pm = pluggy.PluginManager(PROJECT_NAME)
    pm.add_hookspecs(AcpHookSpec)
    for plugin in plugins:
        pm.register(plugin)
    return pm
