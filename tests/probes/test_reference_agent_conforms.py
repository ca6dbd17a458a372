"""The whole suites pass against the reference agent (issue 27: "the probe suite
passes against the reference agent"); what is skipped is a capability it does not
advertise, and says so."""

from __future__ import annotations

import pytest

from acp_lite.probes import run_probes
from tests.probes.conftest import reference


@pytest.mark.parametrize("protocol", [2, 1])
def test_every_probe_passes_or_is_skipped_with_a_reason(protocol: int) -> None:
    report = run_probes(reference(protocol=protocol), timeout=2.0)
    assert report.protocol_version == protocol
    assert len(report.results) >= (60 if protocol == 2 else 30)
    failed = [(r.requirement.id, r.reason) for r in report.results if r.status == "fail"]
    assert not failed, failed
    assert report.passed
    for r in report.results:
        assert r.status == "pass" or r.reason, r
