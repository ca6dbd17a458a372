"""Turn (plain data) and the pluggy hookspecs."""

from __future__ import annotations

import pytest

from acp_lite.errors import AcpError
from acp_lite.hookspec import PROJECT_NAME, hookimpl, plugin_manager
from acp_lite.permissions import CANCELLED
from acp_lite.turn import Turn, TurnFailed


def test_turn_raise_for_stop_passes_end_turn() -> None:
    turn = Turn(submission=None, message_id="m1", stop_reason="end_turn", text="hi")
    assert turn.raise_for_stop() is turn
    assert turn.ok


def test_turn_raise_for_stop_raises_with_error_details() -> None:
    turn = Turn(
        submission=None,
        message_id="m1",
        stop_reason="error",
        error={"code": -32603, "message": "model overloaded"},
        session_id="s1",
    )
    with pytest.raises(TurnFailed) as info:
        turn.raise_for_stop()
    assert isinstance(info.value, AcpError)
    text = str(info.value)
    assert "'error'" in text and "model overloaded" in text and "-32603" in text
    assert "session=s1" in text
    assert info.value.turn is turn and info.value.stop_reason == "error"


def test_turn_raise_for_stop_accepts_listed_reasons() -> None:
    turn = Turn(submission=None, message_id="m1", stop_reason="cancelled")
    assert not turn.ok
    assert turn.raise_for_stop(ok=("end_turn", "cancelled")) is turn
    with pytest.raises(TurnFailed, match="cancelled"):
        turn.raise_for_stop()


def test_turn_repr_is_short() -> None:
    turn = Turn(submission=None, message_id="m", updates=tuple(range(100_000)), text="x" * 1000)
    assert len(repr(turn)) < 200
    assert "updates=100000" in repr(turn)


class _Approver:
    @hookimpl
    def acp_permission_request(self, request: object, session: object) -> str:
        return "first"


class _Passer:
    @hookimpl
    def acp_permission_request(self, request: object, session: object) -> None:
        return None


class _Canceller:
    @hookimpl
    def acp_permission_request(self, request: object, session: object) -> str:
        return CANCELLED


def test_permission_hook_is_firstresult_and_none_passes() -> None:
    pm = plugin_manager([_Approver(), _Passer()])
    assert pm.project_name == PROJECT_NAME == "acp_lite"
    # last registered runs first: _Passer says None (no opinion), _Approver answers.
    assert pm.hook.acp_permission_request(request=None, session=None) == "first"
    pm = plugin_manager([_Passer()])
    assert pm.hook.acp_permission_request(request=None, session=None) is None


def test_cancelled_answer_is_distinct_from_no_opinion() -> None:
    pm = plugin_manager([_Approver(), _Canceller()])
    assert pm.hook.acp_permission_request(request=None, session=None) is CANCELLED


def test_unknown_hook_name_is_rejected() -> None:
    class Typo:
        @hookimpl
        def acp_session_updat(self, session: object, event: object) -> None: ...

    pm = plugin_manager([Typo()])
    with pytest.raises(Exception, match="unknown hook"):
        pm.check_pending()
