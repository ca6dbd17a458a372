"""pytest_acp: a pytest plugin for testing ACP agents.

The plugin loads by itself (entry point ``pytest11: acp``). Besides its fixtures
(``acp_client``, ``acp_session``, ``acp_snapshot`` ...; see :mod:`pytest_acp.plugin`)
it offers, for use without pytest:

* :func:`normalize` - turn an update stream into comparable wire dicts
  (id placeholders, redaction, ``raw`` / ``merged`` / ``final`` views);
* :func:`check_transcript` - the conformance checks, over a transcript;
* :class:`AgentCommand` - how to launch an agent (for ``acp_agent_command``);
* :class:`AcpCassetteMismatch` - the failure of a cassette replay the client
  did not follow;
* :class:`FakeAgent` - the ``acp_fake_agent`` fixture's type (a scripted fake
  agent for testing code that drives one);
* :class:`ModelFixture` - the ``acp_model`` fixture's type (a scripted model
  provider for testing agents).
"""

from typing import TYPE_CHECKING, Any

from pytest_acp.normalize import IdMap, extract_updates
from pytest_acp.normalize import normalize as normalize

if TYPE_CHECKING:
    from pytest_acp._cassettes import AcpCassetteMismatch
    from pytest_acp._fake_agent import FakeAgent, FakeAgentError
    from pytest_acp._model import ModelFixture
    from pytest_acp._settings import AgentCommand
    from pytest_acp.conformance import RULES, Rule, Violation, check_transcript

_CONFORMANCE = frozenset({"RULES", "Rule", "Violation", "check_transcript"})


def __getattr__(name: str) -> Any:
    # The conformance checks load on use (with the session model under them): the
    # plugin, and so this package, is imported by every pytest run, ACP or not.
    if name in _CONFORMANCE:
        from pytest_acp import conformance

        value = getattr(conformance, name)
        globals()[name] = value
        return value
    # Loaded on use: it needs pytest, and `python -m pytest_acp check` must run
    # on an install without it.
    if name == "AgentCommand":
        from pytest_acp._settings import AgentCommand

        return AgentCommand
    if name == "AcpCassetteMismatch":
        from pytest_acp._cassettes import AcpCassetteMismatch

        return AcpCassetteMismatch
    if name in ("FakeAgent", "FakeAgentError"):
        from pytest_acp import _fake_agent

        return getattr(_fake_agent, name)
    if name == "ModelFixture":
        from pytest_acp._model import ModelFixture

        return ModelFixture
    raise AttributeError(f"module 'pytest_acp' has no attribute {name!r}")


__all__ = [
    "RULES",
    "AcpCassetteMismatch",
    "AgentCommand",
    "FakeAgent",
    "FakeAgentError",
    "IdMap",
    "ModelFixture",
    "Rule",
    "Violation",
    "check_transcript",
    "extract_updates",
    "normalize",
]
