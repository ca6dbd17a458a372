"""Extra keyword arguments of the methods are protocol parameters: a value that is not
JSON (a callable passed where connect() takes it, say) is a clear TypeError at once,
before anything is sent."""

from __future__ import annotations

import pytest

from acp_lite import connect_in_memory
from acp_lite.limits import Limits
from acp_lite.testing import InProcessAgent

FAST = Limits(default_timeout=5.0)


def test_a_callable_keyword_is_a_type_error_naming_it() -> None:
    with connect_in_memory(InProcessAgent(), limits=FAST) as client:
        sent = len(client.transcript)
        with pytest.raises(TypeError, match=r"keyword argument 'on_permission' is not a JSON"):
            client.new_session(cwd="/tmp", on_permission=lambda request, session: None)
        with pytest.raises(TypeError, match=r"keyword argument 'x'\['deep'\]\[0\] is not a JSON"):
            client.new_session(cwd="/tmp", x={"deep": [object()]})
        assert len(client.transcript) == sent  # nothing was sent
        session = client.new_session(cwd="/tmp", _meta={"ok": [1, "two", None]})
        with pytest.raises(TypeError, match="keyword argument 'hook'"):
            session.set_config_option("mode", "ask", hook=print)
        assert session.run("still fine").stop_reason == "end_turn"


def test_values_the_converter_turns_into_json_are_accepted() -> None:
    import enum

    from acp_lite.aio._methods import _to_wire

    class Mode(enum.Enum):
        ASK = "ask"

    assert _to_wire({"mode": Mode.ASK, "n": (1, 2)}) == {"mode": "ask", "n": [1, 2]}
