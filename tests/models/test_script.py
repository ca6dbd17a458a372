"""Model scripts as data: loading, the errors a malformed one gets, chunking."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import acp_lite
from acp_lite.models import (
    ErrorReply,
    HangReply,
    ModelScript,
    Refusal,
    Reply,
    ToolCall,
    ToolCalls,
    When,
    load_model_script,
)
from acp_lite.models.script import chunks_of


@given(st.text())
def test_chunking_never_loses_text(text: str) -> None:
    pieces = chunks_of(text)
    assert "".join(pieces) == text
    assert all(pieces) and (len(pieces) > 0) == (text != "")


def test_chunks_are_a_few_words() -> None:
    assert chunks_of("one two three four five six seven") == [
        "one two three ",
        "four five six ",
        "seven",
    ]


names = st.text(st.characters(codec="utf-8"), max_size=8)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | names,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(names, inner, max_size=3),
    max_leaves=8,
)
whens = st.none() | st.builds(
    When,
    last_user_text_contains=st.none() | names,
    tool_result_for=st.none() | names,
    api=st.none() | st.sampled_from(["openai_chat", "anthropic", "gemini"]),
)
common: dict[str, Any] = {
    "when": whens,
    "delay": st.sampled_from([0.0, 0.5]),
    "repeat": st.booleans(),
    "label": st.none() | names,
}
steps = st.one_of(
    st.builds(Reply, text=names, truncated=st.booleans(), **common),
    st.builds(Reply, chunks=st.lists(names, max_size=3).map(tuple), **common),
    st.builds(
        ToolCalls,
        calls=st.lists(
            st.builds(
                ToolCall,
                name=names,
                arguments=st.dictionaries(names, json_values, max_size=3),
                id=st.none() | names,
            ),
            min_size=1,
            max_size=3,
        ).map(tuple),
        text=names,
        **common,
    ),
    st.builds(Refusal, text=names, **common),
    st.builds(
        ErrorReply,
        status=st.sampled_from([429, 500, 529]),
        message=names,
        mid_stream=st.booleans(),
        **common,
    ),
    st.builds(HangReply, text=names, **common),
)


@given(st.builds(ModelScript, name=names, steps=st.lists(steps, max_size=4).map(tuple)))
def test_a_script_round_trips_through_dicts_and_json(script: ModelScript) -> None:
    data = script.to_dict()
    assert ModelScript.from_dict(data) == script
    assert ModelScript.from_json(json.dumps(data)) == script


def test_tool_call_shorthand_and_toml(tmp_path: Path) -> None:
    toml = tmp_path / "s.toml"
    toml.write_text(
        'name = "toml one"\n'
        "[[steps]]\n"
        'type = "tool_call"\nname = "read_file"\narguments = { path = "README.md" }\nid = "c1"\n'
        "[[steps]]\n"
        'type = "reply"\ntext = "done"\nwhen = { tool_result_for = "c1" }\n',
        encoding="utf-8",
    )
    script = load_model_script(toml)
    assert script.name == "toml one"
    assert script.steps[0] == ToolCalls(
        calls=(ToolCall(name="read_file", arguments={"path": "README.md"}, id="c1"),)
    )
    assert script.steps[1] == Reply(text="done", when=When(tool_result_for="c1"))
    as_json = tmp_path / "s.json"
    as_json.write_text(json.dumps(script.to_dict()), encoding="utf-8")
    assert load_model_script(as_json) == script


@pytest.mark.parametrize(
    ("steps", "message"),
    [
        (
            [
                {"type": "reply"},
                {"type": "reply"},
                {"type": "tool_call", "name": "x", "arguments": [1]},
            ],
            "steps[2] (tool_call): arguments must be a JSON object",
        ),
        ([{"type": "shout"}], "steps[0]: unknown step type 'shout'"),
        ([{"type": "reply", "txt": "a"}], "steps[0] (reply): unknown key(s) ['txt']"),
        (
            [{"type": "error", "status": 200}],
            "steps[0] (error): status must be an HTTP error status",
        ),
        ([{"type": "reply", "delay": -1}], "steps[0] (reply): delay must not be negative"),
        ([{"type": "reply", "delay": True}], "steps[0] (reply): delay must be a number of seconds"),
        ([{"type": "reply", "when": {"api": "bard"}}], "steps[0] (reply): when.api must be one of"),
        ([{"type": "reply", "when": {"colour": "x"}}], "steps[0] (reply): unknown when key(s)"),
        ([{"type": "tool_calls", "calls": []}], "steps[0] (tool_calls): calls must be a non-empty"),
        (
            [{"type": "tool_calls", "calls": [{"name": "a"}, {"arguments": {}}]}],
            "steps[0] (tool_calls) calls[1]: a tool call needs a name",
        ),
        ([{"type": "reply", "text": "ab", "chunks": ["a"]}], "text and chunks disagree"),
        ([{"type": "reply", "chunks": "ab"}], "chunks must be a list of strings"),
        (["reply"], "steps[0]: a step must be a table/object"),
    ],
)
def test_a_malformed_script_gets_one_error_naming_the_step(steps: list[Any], message: str) -> None:
    with pytest.raises(acp_lite.ModelScriptError) as caught:
        ModelScript.from_dict({"name": "bad one", "steps": steps})
    assert str(caught.value).startswith("model script 'bad one': ")
    assert message in str(caught.value)
    assert isinstance(caught.value, ValueError)


def test_malformed_files_and_top_level_keys(tmp_path: Path) -> None:
    with pytest.raises(acp_lite.ModelScriptError, match="unknown key"):
        ModelScript.from_dict({"stepz": []})
    with pytest.raises(acp_lite.ModelScriptError, match="models must be a list of strings"):
        ModelScript.from_dict({"models": "gpt"})
    with pytest.raises(acp_lite.ModelScriptError, match="not JSON"):
        ModelScript.from_json("{")
    bad = tmp_path / "bad.toml"
    bad.write_text("[[steps]]\ntype = 'reply'\ntext = 3\n", encoding="utf-8")
    with pytest.raises(
        acp_lite.ModelScriptError, match=r"bad\.toml: .*steps\[0\] \(reply\): text must be a string"
    ):
        load_model_script(bad)
    with pytest.raises(acp_lite.ModelScriptError, match="cannot read"):
        load_model_script(tmp_path / "missing.json")
