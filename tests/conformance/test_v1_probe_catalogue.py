"""The v1 probe requirements (draft): well formed, unique, at least 30, registrable."""

from __future__ import annotations

from acp_lite.conformance import CATALOGUE, unregister
from acp_lite.conformance.passive import PASSIVE
from acp_lite.conformance.v1_probes import V1_PROBES, register_v1_probes


def test_thirty_v1_probe_requirements_with_spec_sections() -> None:
    ids = [q.id for q in V1_PROBES]
    assert len(ids) == len(set(ids)) >= 30
    assert all(q.kind == "probe" and q.version == "v1" for q in V1_PROBES)
    assert all(q.id.startswith("ACP-V1-") and int(q.id[-3:]) < 100 for q in V1_PROBES)
    assert all(q.summary and q.spec and "\n" not in q.summary for q in V1_PROBES)
    assert not set(ids) & {q.id for q in PASSIVE.values()}
    assert {q.tier for q in V1_PROBES} >= {"mandatory", "capability", "advisory"}


def test_registered_on_request_only() -> None:
    before = set(CATALOGUE)
    assert not before & {q.id for q in V1_PROBES}  # a draft: not registered at import
    register_v1_probes()
    register_v1_probes()  # idempotent
    try:
        assert all(CATALOGUE[q.id] is q for q in V1_PROBES)
    finally:
        unregister(*(q.id for q in V1_PROBES))
    assert set(CATALOGUE) == before
