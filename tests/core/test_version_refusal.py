"""Why an ``initialize`` answer is refused: the error names what was wrong (the
version asked for, or a version number that contradicts the answer's shape)."""

from __future__ import annotations

from typing import Any

import pytest

from acp_lite.core._book import negotiate
from acp_lite.errors import UnsupportedProtocolVersion

V2_BODY: dict[str, Any] = {"info": {"name": "a", "version": "1"}, "capabilities": {}}
V1_BODY: dict[str, Any] = {"agentInfo": {"name": "a", "version": "1"}, "agentCapabilities": {}}


def refusal(requested: Any, result: dict[str, Any]) -> str:
    _, error, _ = negotiate(requested, result, list)
    assert isinstance(error, UnsupportedProtocolVersion)
    return error.message


def test_a_1_in_the_v2_shape_is_named_as_such() -> None:
    # The `wrong_protocol_version` scenario's answer: neither v1 nor v2.
    message = refusal("auto", {"protocolVersion": 1, **V2_BODY})
    assert "announced protocol version 1 but answered initialize in the v2 shape" in message
    assert "acp_lite speaks versions 2 and 1" in message
    assert "speaks 2)" not in message and not message.endswith("speaks 2")


def test_auto_names_both_versions() -> None:
    assert refusal("auto", {"protocolVersion": 3, **V2_BODY}) == (
        "the agent answered protocol version 3; acp_lite speaks versions 2 and 1"
    )


def test_asked_for_2_says_so() -> None:
    message = refusal(2, {"protocolVersion": 1, **V1_BODY})
    assert message == "the agent answered protocol version 1; the connection was asked to speak 2"


@pytest.mark.parametrize("requested", ["auto", 1])
def test_a_real_v1_answer_is_accepted(requested: Any) -> None:
    _, error, v1 = negotiate(requested, {"protocolVersion": 1, **V1_BODY}, list)
    assert error is None and v1
