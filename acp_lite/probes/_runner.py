"""Running probes against an agent: negotiation, shared connections, results.

:class:`ProbeRun` negotiates once (``initialize`` at v2: the agent's answer picks
the v2 or the v1 suite), keeps one initialized connection for the ``shared``
probes (replaced after a probe that did not pass, which may have left it in a
bad state) and starts an agent of their own for the others. :func:`run_probes`
runs a whole suite and returns the :class:`~acp_lite.conformance.report.Report`.
"""

from __future__ import annotations

import shutil
import tempfile
import traceback
from collections.abc import Collection, Iterable

from acp_lite.conformance.report import Evidence, Report, Result
from acp_lite.conformance.requirements import TIERS, Requirement, Tier
from acp_lite.jsontypes import JsonObject
from acp_lite.probes._context import ProbeContext, ProbeFailed, ProbeSkipped
from acp_lite.probes._peer import Line, Peer, PeerClosed, ProbeTimeout
from acp_lite.probes._registry import Probe, suite_for
from acp_lite.probes._targets import Target

__all__ = ["DEFAULT_TIMEOUT", "NEGOTIATION", "NegotiationFailed", "ProbeRun", "run_probes"]

DEFAULT_TIMEOUT = 5.0
"""Seconds a probe waits for any one answer of the agent."""

#: The check every run starts with: without a version there is no suite to run.
NEGOTIATION = Requirement(
    "ACP-INIT-000",
    "mandatory",
    "initialize answers with a protocolVersion (the run negotiates before any probe).",
    "docs-v2-draft/initialization.mdx",
)


class NegotiationFailed(Exception):
    """The agent did not answer ``initialize`` with a protocol version."""

    def __init__(self, reason: str, lines: Iterable[Line] = (), stderr: Iterable[str] = ()) -> None:
        super().__init__(reason)
        self.reason = reason
        self.lines = tuple(lines)
        self.stderr = tuple(stderr)


def _evidence(lines: Iterable[Line]) -> tuple[Evidence, ...]:
    return tuple(Evidence(line.index, str(line)) for line in lines)


class ProbeRun:
    """Probes against one agent target (see the module docstring). Use as a
    context manager, or call :meth:`close`: it stops every agent it started."""

    def __init__(
        self,
        target: Target,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        protocol_version: int = 2,
    ) -> None:
        self.target = target
        self.timeout = timeout
        self.requested_version = protocol_version
        self.cwd = tempfile.mkdtemp(prefix="acp-probe-")
        self._shared: Peer | None = None
        self._shared_init: JsonObject = {}
        self._peers: list[Peer] = []
        self._stderr_tail: list[str] = []
        self.protocol_version: int | None = None
        self.init: JsonObject = {}
        #: The connection the last probe used, as it stood after the probe (every
        #: line, both ways) and where the probe's own lines start: to judge the
        #: probe's traffic by the passive rules too (``pytest_acp``).
        self.last_traffic: tuple[tuple[Line, ...], int] = ((), 0)

    def __enter__(self) -> ProbeRun:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- connections -----------------------------------------------------------------

    def _start(self) -> Peer:
        peer = self.target.start()
        self._peers.append(peer)
        return peer

    def _initialize(self, peer: Peer) -> JsonObject:
        ctx = ProbeContext(
            peer,
            NEGOTIATION,
            init={},
            protocol_version=self.requested_version,
            timeout=self.timeout,
            cwd=self.cwd,
        )
        try:
            line = ctx.initialize(self.requested_version)
        except (ProbeTimeout, PeerClosed) as exc:
            raise NegotiationFailed(str(exc), peer.log[-8:], peer.stderr_tail()) from None
        result = line.obj.get("result")
        version = result.get("protocolVersion") if isinstance(result, dict) else None
        if not isinstance(result, dict) or not isinstance(version, int):
            raise NegotiationFailed(
                "initialize did not answer a protocolVersion", [line], peer.stderr_tail()
            )
        return result

    def negotiate(self) -> int:
        """Initialize the shared connection; the protocol version the agent chose."""
        if self.protocol_version is None:
            peer = self._start()
            self.init = self._initialize(peer)
            version = self.init["protocolVersion"]
            assert isinstance(version, int)
            self.protocol_version = version
            self._shared, self._shared_init = peer, self.init
        return self.protocol_version

    def suite(self) -> list[Probe]:
        """The probes for the negotiated version."""
        return suite_for(self.negotiate())

    def _retire(self, peer: Peer) -> None:
        self._stderr_tail = peer.stderr_tail()
        peer.close()
        if peer in self._peers:
            self._peers.remove(peer)
        if peer is self._shared:
            self._shared = None

    def _shared_peer(self) -> tuple[Peer, JsonObject]:
        if self._shared is None or self._shared.eof:
            if self._shared is not None:
                self._retire(self._shared)
            peer = self._start()
            self._shared_init = self._initialize(peer)
            self._shared = peer
        return self._shared, self._shared_init

    # -- running ---------------------------------------------------------------------

    def run(self, probe: Probe) -> Result:
        """Run one probe; its result (never raises for what the agent does)."""
        try:
            version = self.negotiate()
        except NegotiationFailed as exc:
            return Result(NEGOTIATION, "fail", exc.reason, _evidence(exc.lines))
        requirement = probe.requirement
        own = probe.isolation != "shared"
        try:
            if probe.isolation == "shared":
                peer, init = self._shared_peer()
            else:
                peer = self._start()
                init = self._initialize(peer) if probe.isolation == "connection" else {}
        except NegotiationFailed as exc:
            return Result(
                requirement, "fail", f"initialize failed: {exc.reason}", _evidence(exc.lines)
            )
        ctx = ProbeContext(
            peer,
            requirement,
            init=init,
            protocol_version=version,
            timeout=self.timeout,
            cwd=self.cwd,
        )
        if requirement.capability and probe.check_capability:
            # Capabilities are judged on what the negotiated connection advertised.
            ctx_caps = ProbeContext(
                peer, requirement, init=self.init, protocol_version=version, timeout=0, cwd=self.cwd
            )
            if not ctx_caps.advertised(requirement.capability):
                if own:
                    self._retire(peer)
                return Result(
                    requirement, "skipped", f"the agent does not advertise {requirement.capability}"
                )
        result: Result
        try:
            probe.function(ctx)
            result = Result(requirement, "pass")
        except ProbeFailed as exc:
            result = Result(requirement, "fail", exc.reason, _evidence(exc.lines))
        except ProbeSkipped as exc:
            result = Result(requirement, "skipped", exc.reason)
        except (ProbeTimeout, PeerClosed) as exc:
            result = Result(requirement, "fail", str(exc), _evidence(peer.log[ctx.start :][-8:]))
        except Exception as exc:  # a probe bug must not end the run
            detail = traceback.format_exception_only(type(exc), exc)[-1].strip()
            result = Result(requirement, "fail", f"probe error: {detail}")
        self.last_traffic = (tuple(peer.log), ctx.start)
        if own or result.status == "fail":
            self._retire(peer)
        return result

    def stderr_tail(self) -> list[str]:
        """The last stderr lines of the agent used last."""
        if self._shared is not None:
            return self._shared.stderr_tail()
        return list(self._stderr_tail)

    def close(self) -> None:
        """Stop every agent this run started, and remove its directory."""
        for peer in list(self._peers):
            peer.close()
        self._peers.clear()
        self._shared = None
        shutil.rmtree(self.cwd, ignore_errors=True)


def run_probes(
    target: Target,
    *,
    tiers: Collection[Tier] = TIERS,
    ids: Collection[str] | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    protocol_version: int = 2,
) -> Report:
    """Run the suite the agent negotiates (restricted to ``tiers``, and to ``ids``
    when given) and return the report."""
    with ProbeRun(target, timeout=timeout, protocol_version=protocol_version) as run:
        try:
            probes = run.suite()
        except NegotiationFailed as exc:
            failed = Result(NEGOTIATION, "fail", exc.reason, _evidence(exc.lines))
            return Report(target.description, "agent", (failed,), None, exc.stderr)
        results = [
            run.run(p)
            for p in probes
            if p.requirement.tier in tiers and (ids is None or p.id in ids)
        ]
        return Report(
            target.description,
            "agent",
            tuple(results),
            run.protocol_version,
            tuple(run.stderr_tail()),
        )
