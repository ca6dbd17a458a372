"""The ``acp_model`` fixture (a scripted model provider for the test), its marker, its
option and ini key. This session has the plugin loaded, so most tests here use the
fixture itself; one shared in-process pytester run covers the marker, the option, the
ini key, the stopped server and the failures at teardown."""

from __future__ import annotations

import http.client
import json
import sys
import urllib.parse
from pathlib import Path
from typing import Any

import pytest

from acp_lite.models import ModelScript, Reply
from pytest_acp import ModelFixture

from .conftest import LEAN


def chat(url: str, text: str, *, body: bytes | None = None) -> tuple[int, Any]:
    """POST an OpenAI chat completion (not streamed) asking ``text``; the status and
    the parsed answer."""
    parts = urllib.parse.urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=10)
    if body is None:
        request = {"model": "scripted-model", "messages": [{"role": "user", "content": text}]}
        body = json.dumps(request).encode()
    try:
        conn.request("POST", "/v1/chat/completions", body, {"content-type": "application/json"})
        response = conn.getresponse()
        return response.status, json.loads(response.read())
    finally:
        conn.close()


def answer(url: str, text: str) -> str:
    status, data = chat(url, text)
    assert status == 200, data
    content: str = data["choices"][0]["message"]["content"]
    return content


def test_the_fixture_answers_from_the_script_the_test_sets(acp_model: ModelFixture) -> None:
    assert isinstance(acp_model, ModelFixture)
    assert acp_model.url == f"http://127.0.0.1:{acp_model.port}"
    assert acp_model.openai_base_url == acp_model.url + "/v1"
    assert acp_model.requests == ()
    acp_model.reply("hello")
    assert answer(acp_model.url, "hi") == "hello"
    acp_model.script([{"type": "reply", "text": "from steps"}])
    assert answer(acp_model.url, "again") == "from steps"
    acp_model.script({"name": "a dict", "steps": [{"type": "reply", "text": "from a dict"}]})
    assert answer(acp_model.url, "third") == "from a dict"
    assert acp_model.model.script.name == "a dict"
    # Every request of the test, under every script, counted across them.
    requests = acp_model.requests
    assert [r.index for r in requests] == [0, 1, 2]
    assert [r.api for r in requests] == ["openai_chat"] * 3
    assert [r.step for r in requests] == [0, 0, 0]
    assert isinstance(requests[0].body, dict)
    assert requests[0].body["messages"] == [{"role": "user", "content": "hi"}]
    assert acp_model.unmatched == ()
    acp_model.check()
    assert repr(acp_model).startswith(f"<ModelFixture {acp_model.url} script 'a dict'")


def test_a_script_object_a_file_and_repeat(acp_model: ModelFixture, tmp_path: Path) -> None:
    acp_model.script(ModelScript(name="object", steps=(Reply(text="from an object"),)))
    assert answer(acp_model.url, "hi") == "from an object"
    path = tmp_path / "script.toml"
    path.write_text('name = "file"\n[[steps]]\ntype = "reply"\ntext = "from a file"\n')
    acp_model.script(path)  # absolute here; a relative path is the test file's
    assert answer(acp_model.url, "hi") == "from a file"
    acp_model.reply("always", repeat=True)
    assert [answer(acp_model.url, "x") for _ in range(2)] == ["always", "always"]
    # The current script's steps all used (a repeat step needs no use).
    acp_model.check(all_steps_used=True)


def test_an_unused_step_fails_check_when_asked(acp_model: ModelFixture) -> None:
    acp_model.script([{"type": "reply", "text": "never asked", "label": "lonely"}])
    acp_model.check()  # an unused step is no failure by default
    with pytest.raises(AssertionError, match=r"steps\[0\] \(reply, 'lonely'\) was never used"):
        acp_model.check(all_steps_used=True)


def test_a_malformed_script_raises_in_the_test(acp_model: ModelFixture) -> None:
    from acp_lite.errors import ModelScriptError

    with pytest.raises(ModelScriptError, match="nope"):
        acp_model.script([{"type": "nope"}])
    with pytest.raises(TypeError, match="a model script is"):
        acp_model.script(42)


def test_without_h11_the_fixture_names_the_extra(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delitem(sys.modules, "acp_lite.models.server")
    monkeypatch.setitem(sys.modules, "h11", None)  # import h11 raises ImportError
    with pytest.raises(pytest.fail.Exception, match=r"pip install 'acp-lite\[models\]'"):
        request.getfixturevalue("acp_model")


def test_the_marker_option_and_ini_key_are_registered(
    pytestconfig: pytest.Config, pytester: pytest.Pytester
) -> None:
    markers = pytestconfig.getini("markers")
    assert any(line.startswith("acp_model(script=None, *, profile=None):") for line in markers)
    assert pytestconfig.getoption("acp_model_script") is None
    assert pytestconfig.getini("acp_model_script") == ""
    result = pytester.runpytest_inprocess(*LEAN, "--help")
    result.stdout.fnmatch_lines(
        ["  --acp-model-script=FILE", "*script of the acp_model fixture*", "  acp_model_script (*"]
    )


INNER = """
import http.client, json, socket, threading
import pytest
from pytest_acp import AgentCommand
from pytest_acp._model import model_command

PORTS = []

def post(port, text, body=None):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    if body is None:
        body = json.dumps({"model": "m", "messages": [{"role": "user", "content": text}]})
    conn.request("POST", "/v1/chat/completions", body, {"content-type": "application/json"})
    response = conn.getresponse()
    data = response.read()
    conn.close()
    return response.status, json.loads(data)

def text(port, ask):
    status, data = post(port, ask)
    assert status == 200, data
    return data["choices"][0]["message"]["content"]

@pytest.mark.acp_model(script={"name": "inline", "steps": [{"type": "reply", "text": "dict"}]})
def test_marker_dict(acp_model):
    assert text(acp_model.port, "hi") == "dict"
    PORTS.append(acp_model.port)

@pytest.mark.acp_model(script=[{"type": "reply", "text": "list"}])
def test_marker_list(acp_model):
    assert text(acp_model.port, "hi") == "list"

@pytest.mark.acp_model(script="marker.toml")
def test_marker_path_is_relative_to_the_test_file(acp_model):
    assert text(acp_model.port, "hi") == "from the marker's file"

def test_option_script(acp_model):
    assert acp_model.model.script.name == "option"
    assert text(acp_model.port, "hi") == "from the option"

def test_the_server_is_stopped_after_its_test():
    assert not [t for t in threading.enumerate() if t.name == "acp-lite-model-server"]
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", PORTS[0]), timeout=5)

def test_unmatched_request_fails_at_teardown(acp_model):
    acp_model.script({"name": "too short", "steps": []})
    status, data = post(acp_model.port, "who answers?")
    assert status == 400 and "no step" in data["error"]["message"]

def test_body_not_json_fails_at_teardown(acp_model):
    status, _ = post(acp_model.port, "", body="{not json")
    assert status == 400

@pytest.mark.acp_model(script=[{"type": "nope"}])
def test_bad_marker_script(acp_model):
    pass

@pytest.mark.acp_model(script=[], profile="nope")
def test_bad_marker_profile(acp_model):
    pass

def test_option_profile(acp_model, request):
    # --acp-model-profile generic: the agent is launched on this test's model.
    command = model_command(request, AgentCommand(("codex-acp",)))
    assert command.env["OPENAI_BASE_URL"] == acp_model.openai_base_url
    assert "CODEX_HOME" not in command.env

@pytest.mark.acp_model(profile="codex")
def test_the_marker_profile_beats_the_option(acp_model, request):
    command = model_command(request, AgentCommand(("qwen",)))
    assert command.env["CODEX_HOME"].startswith(command.env["HOME"])

@pytest.mark.acp_scope("module")
@pytest.mark.acp_model(script=[])
def test_a_shared_agent_cannot_run_on_a_test_model(acp_client):
    pass
"""


def _project(pytester: pytest.Pytester) -> None:
    (pytester.path / "tests").mkdir()
    (pytester.path / "tests" / "test_model.py").write_text(INNER)
    (pytester.path / "tests" / "marker.toml").write_text(
        '[[steps]]\ntype = "reply"\ntext = "from the marker\'s file"\n'
    )
    (pytester.path / "option.json").write_text(
        json.dumps({"name": "option", "steps": [{"type": "reply", "text": "from the option"}]})
    )


def test_marker_option_stopped_server_and_teardown_failures(pytester: pytest.Pytester) -> None:
    _project(pytester)
    result = pytester.runpytest_inprocess(
        *LEAN, "--acp-model-script", "option.json", "--acp-model-profile", "generic", "-rE", "tests"
    )
    result.assert_outcomes(passed=9, errors=5)
    result.stdout.fnmatch_lines(
        [
            "*ERROR at teardown of test_unmatched_request_fails_at_teardown*",
            "acp_model (first script: --acp-model-script 'option.json'):",
            "*scripted model 'too short': 1 problem(s)",
            "*no step of scripted model 'too short' matches this openai_chat request*",
            "*request #0: POST /v1/chat/completions",
            '*"content": "who answers?"*',
        ]
    )
    result.stdout.fnmatch_lines(
        [
            "*ERROR at teardown of test_body_not_json_fails_at_teardown*",
            "acp_model (first script: --acp-model-script 'option.json'):",
            "*the request body is not JSON*",
            "*{not json*",
        ]
    )
    result.stdout.fnmatch_lines(
        [
            "*ERROR at setup of test_bad_marker_script*",
            "*@pytest.mark.acp_model (tests/test_model.py::test_bad_marker_script):*nope*",
        ]
    )
    result.stdout.fnmatch_lines(
        [
            "*ERROR at setup of test_bad_marker_profile*",
            "*@pytest.mark.acp_model (tests/test_model.py::test_bad_marker_profile): "
            "no agent profile 'nope'; known: qwen, *",
        ]
    )
    result.stdout.fnmatch_lines(
        [
            "*ERROR at setup of test_a_shared_agent_cannot_run_on_a_test_model*",
            "*runs on this test's scripted model (acp_model), which lives for one test: "
            "it needs the 'function' acp scope, not 'module'",
        ]
    )
    # Each failure is its message alone: no chained exception, no hidden traceback.
    assert "During handling" not in result.stdout.str()
    assert "traceback entries are hidden" not in result.stdout.str()


def test_the_ini_script_is_relative_to_the_ini_file(pytester: pytest.Pytester) -> None:
    (pytester.path / "project" / "scripts").mkdir(parents=True)
    (pytester.path / "project" / "scripts" / "ini.json").write_text(
        json.dumps({"name": "ini", "steps": [{"type": "reply", "text": "from the ini"}]})
    )
    (pytester.path / "project" / "pytest.ini").write_text(
        "[pytest]\nacp_model_script = scripts/ini.json\n"
    )
    (pytester.path / "project" / "test_ini.py").write_text(
        "def test_ini(acp_model):\n    assert acp_model.model.script.name == 'ini'\n"
    )
    result = pytester.runpytest_inprocess(
        *LEAN, "-c", str(pytester.path / "project" / "pytest.ini"), "project/test_ini.py"
    )
    result.assert_outcomes(passed=1)
