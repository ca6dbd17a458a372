"""The requirement catalogue and the conformance report (plain data, no IO).

One catalogue (:mod:`.requirements`) names every requirement acp_lite checks: the
passive rules judged on every test's traffic, the active probes that provoke an
agent, and the checks that grade a client. Each has a stable id
(``ACP-CANCEL-003``), a tier and the spec section it is written from; a finding in
any test, a failed probe and a client's grade therefore read the same way.
:mod:`.report` is the machine-readable report all three write.
"""

from __future__ import annotations

from acp_lite.conformance.report import Evidence, Report, Result, Status, Verdict
from acp_lite.conformance.requirements import (
    CATALOGUE,
    TIERS,
    Kind,
    Requirement,
    Tier,
    by_rule,
    register,
    requirement,
    unregister,
)

__all__ = [
    "CATALOGUE",
    "TIERS",
    "Evidence",
    "Kind",
    "Report",
    "Requirement",
    "Result",
    "Status",
    "Tier",
    "Verdict",
    "by_rule",
    "register",
    "requirement",
    "unregister",
]
