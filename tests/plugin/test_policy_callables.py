"""A custom permission callable on the marker, by keyword (pytest takes a lone
callable marker argument for the decorated function)."""

from __future__ import annotations

import pytest

pytest_plugins = ["pytester"]


def test_a_callable_policy_by_keyword(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import sys

        import pytest

        AGENT = [sys.executable, "-m", "acp_lite.testing.agent"]
        AGENT += ["--scenario", "tool_call_permission"]
        asked = []


        def allow(request, session):
            asked.append(request.title)
            return "allow"


        @pytest.mark.acp_agent(AGENT)
        @pytest.mark.acp_permission(policy=allow)
        def test_allowed(acp_session):
            turn = acp_session.run("write the notes")
            assert asked == ["Allow writing notes.txt?"]
            assert turn.text == "Done: notes.txt is written."
        """
    )
    pytester.runpytest().assert_outcomes(passed=1)
