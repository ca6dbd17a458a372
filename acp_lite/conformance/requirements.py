"""Requirements: what an agent or a client must (or should) do, one record each.

A :class:`Requirement` has a stable id (``ACP-<AREA>-<NNN>``, never reused once
published), a :data:`Tier`, the protocol version it applies to, its kind (a passive
rule judged on observed traffic, a probe that provokes the agent, or a check of a
client), a one-line summary written from the spec text, and the spec section it
cites (a path under the spec tree, ``prompt-lifecycle#cancellation`` style, or
``schema <Definition>``).

Tiers, from the acp-tck vocabulary:

* ``mandatory``: a MUST of the spec that applies to every peer;
* ``capability``: a MUST that applies only when the peer advertises a capability
  (:attr:`Requirement.capability` names it); not advertised -> skipped, with the
  reason;
* ``advisory``: a SHOULD, or a choice the spec leaves to the peer; a failure is
  reported but does not fail the verdict;
* ``informational``: what the peer chose where the spec allows several answers.

Modules that define requirements call :func:`register` at import; the catalogue is
the union. A passive rule (``acp_lite.model.rules``, ``pytest_acp.conformance``)
links to its requirement by :attr:`Requirement.rule`, found by :func:`by_rule`.
"""

from __future__ import annotations

import re
from typing import Literal

from acp_lite import _lazy_attrs as lazy_attrs

Tier = Literal["mandatory", "capability", "advisory", "informational"]
Kind = Literal["passive", "probe", "client"]
Version = Literal["v2", "v1", "both"]

TIERS: tuple[Tier, ...] = ("mandatory", "capability", "advisory", "informational")
"""The tiers, strictest first."""

_ID = re.compile(r"^ACP-[A-Z0-9]+(?:-[A-Z0-9]+)*-\d{3}$")


@lazy_attrs.frozen
class Requirement:
    """One requirement of the catalogue (see the module docstring for the fields)."""

    id: str
    tier: Tier
    summary: str
    spec: str
    kind: Kind = "probe"
    version: Version = "v2"
    capability: str | None = None
    rule: str | None = None

    def __str__(self) -> str:
        return f"{self.id} [{self.tier}] {self.summary} ({self.spec})"


CATALOGUE: dict[str, Requirement] = {}
"""Every registered requirement, by id, in registration order."""

_BY_RULE: dict[tuple[str, Version], Requirement] = {}


def register(*items: Requirement) -> None:
    """Add requirements to :data:`CATALOGUE` (``ValueError`` on a bad or reused id).

    Registering the very same record again is a no-op (a module imported twice).
    """
    for item in items:
        if not _ID.match(item.id):
            raise ValueError(f"requirement id {item.id!r} is not ACP-<AREA>-<NNN>")
        if item.tier not in TIERS:
            raise ValueError(f"{item.id}: unknown tier {item.tier!r}")
        if (item.tier == "capability") != (item.capability is not None):
            raise ValueError(f"{item.id}: a capability requirement, and only one, names it")
        known = CATALOGUE.get(item.id)
        if known is not None:
            if known == item:
                continue
            raise ValueError(f"requirement id {item.id} is registered twice")
        CATALOGUE[item.id] = item
        if item.rule is not None:
            _BY_RULE[(item.rule, item.version)] = item


def unregister(*ids: str) -> None:
    """Remove requirements from :data:`CATALOGUE` (unknown ids are ignored)."""
    for requirement_id in ids:
        item = CATALOGUE.pop(requirement_id, None)
        if item is not None and item.rule is not None:
            _BY_RULE.pop((item.rule, item.version), None)


def requirement(requirement_id: str) -> Requirement:
    """The registered requirement with this id (``KeyError`` if there is none)."""
    return CATALOGUE[requirement_id]


def by_rule(rule_id: str, version: Version = "v2") -> Requirement | None:
    """The requirement a passive rule id checks, for a protocol version, if registered.

    A rule registered for ``"both"`` versions is found for either.
    """
    found = _BY_RULE.get((rule_id, version))
    return found if found is not None else _BY_RULE.get((rule_id, "both"))


__all__ = [
    "CATALOGUE",
    "TIERS",
    "Kind",
    "Requirement",
    "Tier",
    "Version",
    "by_rule",
    "register",
    "requirement",
    "unregister",
]
