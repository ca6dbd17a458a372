"""``AgentCommand(argv)`` takes a list or tuple as given and a string split as a
shell would: a list used to fail every test's setup with ``unhashable type: 'list'``."""

from __future__ import annotations

from pytest_acp import AgentCommand


def test_a_list_a_tuple_and_a_string_give_the_same_command() -> None:
    expected = ("my-agent", "--acp", "a b")
    assert AgentCommand(["my-agent", "--acp", "a b"]).argv == expected
    assert AgentCommand(expected).argv == expected
    assert AgentCommand("my-agent --acp 'a b'").argv == expected
    assert hash(AgentCommand(["my-agent"]).key())  # usable as a shared agent's key
