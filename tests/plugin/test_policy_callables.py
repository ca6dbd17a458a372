"""A custom permission callable on the marker, by keyword (pytest takes a lone
callable marker argument for the decorated function). The agent runs in this
process: the policy is the point, not the process."""

from __future__ import annotations

import pytest

from .conftest import LEAN


def test_a_callable_policy_by_keyword(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import functools

        import pytest
        from acp_lite.testing import InProcessAgent

        AGENT = functools.partial(InProcessAgent, scenario="tool_call_permission")
        asked = []


        def allow(request, session):
            asked.append(request.title)
            return "allow"


        @pytest.mark.acp_agent(in_process=AGENT)
        @pytest.mark.acp_permission(policy=allow)
        def test_allowed(acp_session):
            turn = acp_session.run("write the notes")
            assert asked == ["Allow writing notes.txt?"]
            assert turn.text == "Done: notes.txt is written."
        """
    )
    pytester.runpytest(*LEAN).assert_outcomes(passed=1)
