"""pytest hooks added by pytest_acp (registered through ``pytest_addhooks``).

Implement them in a ``conftest.py`` or a plugin, like any pytest hook::

    def pytest_acp_normalize(update, view, config):
        # Our agent stamps a random trace id into _meta: not behaviour, drop it.
        (update.get("_meta") or {}).pop("traceId", None)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from acp_lite.jsontypes import JsonObject, JsonValue

__all__ = ["AcpHookSpecs"]


class AcpHookSpecs:
    """The hook specifications of pytest_acp."""

    @pytest.hookspec
    def pytest_acp_normalize(
        self, update: JsonObject, view: str, config: pytest.Config
    ) -> bool | None:
        """Normalise one update payload before it is snapshotted (``acp_snapshot``) or
        returned by the ``acp_normalize`` fixture. The agent's requests come here too,
        as request lines (``{"request": method, "params": ..., "result": ...}``, no
        ``sessionUpdate``: read it with ``update.get("sessionUpdate")``).

        ``update`` is a private copy with wire field names and raw ids (placeholders
        are assigned afterwards, so ids you rewrite are numbered too); built-in
        redaction has already run. Mutate it in place; return ``False`` to drop it
        from the snapshot. ``view`` is ``"raw"``, ``"merged"`` or ``"final"``.
        """
        return None

    @pytest.hookspec
    def pytest_acp_cassette_redact(
        self, message: JsonObject | list[JsonValue], direction: str, config: pytest.Config
    ) -> None:
        """Redact more before a recorded line is written to a cassette
        (``@pytest.mark.acp_cassette`` recording).

        ``message`` is a private copy of the line's JSON value (a JSON-RPC message,
        or a batch list) after the built-in redaction (credential-like environment
        variables, auth payloads, MCP server secrets); mutate it in place.
        ``direction`` is ``"send"`` (client -> agent) or ``"recv"``. Redact the
        client's lines the same way in every run: the replay compares them.
        """
        return None

    @pytest.hookspec
    def pytest_acp_model_cassette_redact(
        self, interaction: JsonObject, config: pytest.Config
    ) -> None:
        """Redact more before a recorded interaction is written to a model cassette
        (``--acp-model-record``).

        ``interaction`` is a private copy of its JSON form (``{"request": {...},
        "response": {...}}``, as in the file) after the built-in redaction (keys,
        auth headers, org ids, cookies, credential-like environment values); mutate
        it in place. Replay matches a request by route and order first, so a body
        edited here only loses the equal-body preference, not its answer.
        """
        return None
