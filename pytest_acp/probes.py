"""Conformance probes in your own test suite.

Either run them from the command line, one test per requirement of the suite
your agent negotiates::

    pytest --acp-agent "my-agent --acp" --acp-probes            # every tier
    pytest --acp-agent "my-agent --acp" --acp-probes=mandatory  # the MUSTs only

or opt in from a test module (the agent defaults to ``--acp-agent``)::

    from pytest_acp.probes import acp_probe_suite

    test_my_agent_conforms = acp_probe_suite(["my-agent", "--acp"], tiers=["mandatory"])

Each test is named by its requirement id (``ACP-RPC-001``); a failure shows the
requirement, its spec section, why, and the wire lines. Advisory failures are
``xfailed``; a capability the agent does not advertise skips its probe.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence

import pytest

from pytest_acp._probes import ALL_TIERS, configured_target, parse_tiers, run_case

__all__ = ["acp_probe_suite"]


def acp_probe_suite(
    agent: Sequence[str] | str | Callable[[], object] | None = None,
    *,
    tiers: Collection[str] | None = None,
    ids: Collection[str] | None = None,
    timeout: float = 5.0,
) -> Callable[..., None]:
    """A test function that runs the probes as one test per requirement.

    ``agent``: an argv list, a command string, or a factory of an in-process agent
    (``start()`` -> the two file descriptors, ``stderr_tail()``, ``close()``, as
    ``acp_lite.testing.InProcessAgent``); default the configured agent. ``tiers``
    and ``ids`` restrict the suite; ``timeout`` bounds each wait of a probe.
    """
    chosen = parse_tiers(",".join(tiers) if tiers is not None else ALL_TIERS)

    def test_acp_probe(acp_probe_id: str, request: pytest.FixtureRequest) -> None:
        config = request.config
        run_case(config, configured_target(config, agent), timeout, acp_probe_id)

    test_acp_probe._acp_probe_suite = {  # type: ignore[attr-defined]
        "agent": agent,
        "tiers": chosen,
        "ids": None if ids is None else frozenset(ids),
        "timeout": timeout,
    }
    return test_acp_probe
