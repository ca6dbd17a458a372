"""Probes: one function per requirement, registered with how much isolation it needs."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Literal

from acp_lite import _lazy_attrs as lazy_attrs
from acp_lite.conformance.requirements import Requirement, Tier, Version, register

if TYPE_CHECKING:
    from acp_lite.probes._context import ProbeContext

__all__ = ["ISOLATIONS", "PROBES", "Isolation", "Probe", "probe", "probe_requirement", "suite_for"]

Isolation = Literal["shared", "connection", "fresh"]
"""How much of an agent a probe needs to itself:

* ``shared``: its own session on a connection other probes use too (initialized
  once, at the protocol version the agent chose); the connection is replaced
  after a probe that failed or timed out, since it may be left in a bad state;
* ``connection``: its own agent, initialized by the runner;
* ``fresh``: its own agent, not initialized (the probe sends ``initialize``).
"""

ISOLATIONS: tuple[Isolation, ...] = ("shared", "connection", "fresh")

ProbeFunction = Callable[["ProbeContext"], None]


@lazy_attrs.frozen
class Probe:
    """A probe: the requirement it checks, the function that checks it, and its
    isolation. A capability requirement's probe is skipped (with the reason) when
    the agent does not advertise the capability, unless ``check_capability`` is
    false (the probe decides itself)."""

    requirement: Requirement
    function: ProbeFunction
    isolation: Isolation = "shared"
    check_capability: bool = True

    @property
    def id(self) -> str:
        """The requirement id."""
        return self.requirement.id


PROBES: dict[str, Probe] = {}
"""Every probe, by requirement id."""

#: The modules holding the probes of each protocol version, imported on first use.
SUITE_MODULES: dict[str, tuple[str, ...]] = {
    "v2": (
        "acp_lite.probes.v2_init",
        "acp_lite.probes.v2_session",
        "acp_lite.probes.v2_session_history",
        "acp_lite.probes.v2_config",
        "acp_lite.probes.v2_prompt",
        "acp_lite.probes.v2_cancel",
        "acp_lite.probes.v2_rpc",
    ),
    "v1": ("acp_lite.probes.v1", "acp_lite.probes.v1_turns"),
}


def probe_requirement(
    rid: str,
    tier: Tier,
    summary: str,
    spec: str,
    capability: str | None = None,
    *,
    version: Version = "v2",
) -> Requirement:
    """A probe's requirement (kind ``probe``; v2 unless ``version`` says otherwise)."""
    return Requirement(
        rid, tier, summary, spec, kind="probe", version=version, capability=capability
    )


def probe(
    requirement: Requirement,
    *,
    isolation: Isolation = "shared",
    check_capability: bool = True,
) -> Callable[[ProbeFunction], ProbeFunction]:
    """Register the decorated function as the probe of ``requirement`` (which is
    added to the catalogue)."""
    if requirement.kind != "probe":
        raise ValueError(f"{requirement.id}: a probe checks a requirement of kind 'probe'")
    if isolation not in ISOLATIONS:
        raise ValueError(f"{requirement.id}: unknown isolation {isolation!r}")

    def decorate(function: ProbeFunction) -> ProbeFunction:
        known = PROBES.get(requirement.id)
        if known is not None and _name(known.function) != _name(function):
            raise ValueError(f"{requirement.id} has a probe already: {_name(known.function)}")
        register(requirement)
        PROBES[requirement.id] = Probe(requirement, function, isolation, check_capability)
        return function

    return decorate


def _name(function: ProbeFunction) -> str:
    # A module imported again (a test run that reset sys.modules) registers the
    # same functions again: that is not a second probe.
    return f"{function.__module__}.{function.__qualname__}"


def suite_for(protocol_version: int) -> list[Probe]:
    """The probes for an agent speaking ``protocol_version`` (1: v1, else v2), by id."""
    version = "v1" if protocol_version == 1 else "v2"
    for name in SUITE_MODULES[version]:
        importlib.import_module(name)
    chosen = [p for p in PROBES.values() if p.requirement.version in (version, "both")]
    return sorted(chosen, key=lambda p: p.id)
