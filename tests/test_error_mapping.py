"""``request_error_from``: the JSON-RPC code decides first, then the method.

A -32601 answer to ``session/prompt`` used to be a bare ``PromptRejected``, so
``except MethodNotFound`` missed an agent that does not implement prompting.
Now every standard code maps to its class for every method; a ``session/prompt``
error is additionally a ``PromptRejected`` (an error response means the message
was not inserted).
"""

from __future__ import annotations

import pytest

from acp_lite import errors

CODES: dict[int, type[errors.RequestError]] = {
    -32601: errors.MethodNotFound,
    -32602: errors.InvalidParams,
    -32603: errors.InternalError,
    -32800: errors.RequestCancelled,
    -32000: errors.AuthRequired,
    -32002: errors.ResourceNotFound,
}

METHODS = ["session/new", "session/close", "tool_call/cancel", "_ext/thing", None]


@pytest.mark.parametrize("code", sorted(CODES))
@pytest.mark.parametrize("method", METHODS)
def test_code_maps_first_for_every_method(code: int, method: str | None) -> None:
    err = errors.request_error_from(code, "msg", method=method)
    assert isinstance(err, CODES[code])
    assert not isinstance(err, errors.PromptRejected)
    assert err.code == code and err.method == method


def test_prompt_answered_method_not_found_is_method_not_found() -> None:
    # Before: PromptRejected only, so ``except MethodNotFound`` did not catch it.
    err = errors.request_error_from(-32601, "no prompt here", method="session/prompt")
    assert isinstance(err, errors.MethodNotFound)
    assert err.code == -32601 and err.method == "session/prompt"
    # Still "not inserted": every error answer to session/prompt is a rejection.
    assert isinstance(err, errors.PromptRejected)


@pytest.mark.parametrize("code", sorted(CODES))
def test_prompt_errors_with_a_standard_code_are_both(code: int) -> None:
    err = errors.request_error_from(code, "x", method="session/prompt", session_id="s1")
    assert isinstance(err, CODES[code]) and isinstance(err, errors.PromptRejected)
    assert err.session_id == "s1"
    assert f"(code {code})" in str(err)


def test_prompt_with_another_code_is_prompt_rejected_only() -> None:
    err = errors.request_error_from(
        -32099, "custom refusal", data={"a": 1}, method="session/prompt"
    )
    assert type(err) is errors.PromptRejected
    assert err.data == {"a": 1}


def test_other_code_other_method_is_plain_request_error() -> None:
    err = errors.request_error_from(-1, "custom", method="session/close")
    assert type(err) is errors.RequestError


def test_except_order_by_code_first() -> None:
    def classify(exc: errors.RequestError) -> str:
        try:
            raise exc
        except errors.MethodNotFound:
            return "missing"
        except errors.PromptRejected:
            return "rejected"

    assert classify(errors.request_error_from(-32601, "x", method="session/prompt")) == "missing"
    assert classify(errors.request_error_from(-32099, "x", method="session/prompt")) == "rejected"


def test_prompt_classes_are_named_module_classes() -> None:
    err = errors.request_error_from(-32800, "withdrawn", method="session/prompt")
    assert getattr(errors, type(err).__name__) is type(err)
    assert type(err).__name__ == "PromptRequestCancelled"


def test_capability_not_supported_names_method_capability_and_force() -> None:
    err = errors.CapabilityNotSupported(
        "session/fork", ("capabilities", "session", "fork"), session_id="s1"
    )
    assert isinstance(err, errors.AcpError)
    assert not isinstance(err, errors.RequestError)  # nothing was sent
    text = str(err)
    assert "session/fork" in text and "capabilities.session.fork" in text
    assert "force=True" in text and "session=s1" in text
    assert err.capability == ("capabilities", "session", "fork")
