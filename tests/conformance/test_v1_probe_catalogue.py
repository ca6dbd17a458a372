"""The v1 probe requirements: well formed, unique, at least 30, registered with their
probes (and by register_v1_probes, which stays a no-op-safe way to register them)."""

from __future__ import annotations

from acp_lite.conformance import CATALOGUE
from acp_lite.conformance.passive import PASSIVE
from acp_lite.conformance.v1_probes import V1_PROBES, register_v1_probes
from acp_lite.probes import PROBES, suite_for


def test_thirty_v1_probe_requirements_with_spec_sections() -> None:
    ids = [q.id for q in V1_PROBES]
    assert len(ids) == len(set(ids)) >= 30
    assert all(q.kind == "probe" and q.version == "v1" for q in V1_PROBES)
    assert all(q.id.startswith("ACP-V1-") and int(q.id[-3:]) < 100 for q in V1_PROBES)
    assert all(q.summary and q.spec and "\n" not in q.summary for q in V1_PROBES)
    assert not set(ids) & {q.id for q in PASSIVE.values()}
    assert {q.tier for q in V1_PROBES} >= {"mandatory", "capability", "advisory"}


def test_registered_with_their_probes() -> None:
    register_v1_probes()  # before the probes: the same records, so no conflict
    suite = {p.id for p in suite_for(1)}
    register_v1_probes()  # and after: idempotent
    for q in V1_PROBES:
        assert q.id in suite
        assert CATALOGUE[q.id] is q
        assert PROBES[q.id].requirement is q
