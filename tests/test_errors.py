from __future__ import annotations

from acp_lite import errors


def test_str_names_method_session_and_stderr() -> None:
    exc = errors.AgentExited(
        "agent exited",
        returncode=3,
        session_id="s1",
        method="session/prompt",
        stderr_tail=["boom", "trace"],
    )
    text = str(exc)
    assert "method=session/prompt" in text and "session=s1" in text and "trace" in text
    assert exc.returncode == 3


def test_request_error_from_picks_subclass() -> None:
    assert isinstance(errors.request_error_from(-32601, "nope"), errors.MethodNotFound)
    assert isinstance(errors.request_error_from(-32800, "x"), errors.RequestCancelled)
    rej = errors.request_error_from(-32602, "bad", method="session/prompt")
    assert isinstance(rej, errors.PromptRejected) and rej.code == -32602
    assert "(code -32602)" in str(rej)
    plain = errors.request_error_from(-1, "custom", data={"a": 1})
    assert type(plain) is errors.RequestError and plain.data == {"a": 1}


def test_timeout_is_a_timeout_error() -> None:
    exc = errors.Timeout("waited", awaited="idle", state="running")
    assert isinstance(exc, TimeoutError) and exc.state == "running"
