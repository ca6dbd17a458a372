"""Model cassettes of the ``acp_model`` fixture (``--acp-model-record``): recorded
from an upstream (our own scripted model server on 127.0.0.1, no network), then
replayed with the upstream stopped; an unrecorded request fails at teardown; with
``new_episodes`` it is recorded and appended. Three in-process pytester runs, one
per phase, on one inner suite."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from acp_lite.models import ScriptedModel
from acp_lite.models.server import run_in_thread
from pytest_acp import _model_cassette
from pytest_acp._cassettes import cassette_path

from .conftest import LEAN

KEY = "sk-inner-0123456789abcdef"
MODEL_AGENT = str(Path(__file__).parents[1] / "cli" / "agents" / "model_agent.py")

INNER = f"""
import http.client, json, os, sys
import pytest

def chat(port, text):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    body = json.dumps({{"model": "m", "messages": [{{"role": "user", "content": text}}]}})
    headers = {{"content-type": "application/json", "authorization": "Bearer {KEY}",
               "openai-organization": "org-inner"}}
    try:
        conn.request("POST", "/v1/chat/completions", body, headers)
        response = conn.getresponse()
        return response.status, json.loads(response.read())
    finally:
        conn.close()

def test_model(acp_model):
    status, data = chat(acp_model.port, "first")
    assert status == 200, data
    assert data["choices"][0]["message"]["content"] == "upstream says hi"
    if os.environ.get("EXTRA"):
        chat(acp_model.port, "an extra question")

@pytest.mark.acp_cassette("named")
def test_named(acp_model):
    assert chat(acp_model.port, "named")[0] == 200

# A real agent on the model (an ACP agent on the OpenAI API): its turn is the same
# recorded and replayed, the snapshot and strict conformance hold on both runs.
@pytest.mark.acp_agent([sys.executable, {MODEL_AGENT!r}])
@pytest.mark.acp_conformance("strict")
def test_agent(acp_session, acp_model, acp_snapshot):
    turn = acp_session.run("hello")
    assert turn.text == "upstream says hi"
    assert turn.updates == acp_snapshot

@pytest.mark.acp_model(script=[{{"type": "reply", "text": "scripted"}}])
def test_scripted(acp_model):
    assert chat(acp_model.port, "x")[1]["choices"][0]["message"]["content"] == "scripted"
"""


CONFTEST = """
def pytest_acp_model_cassette_redact(interaction, config):
    interaction["request"]["headers"] = [
        [k, "<mine>" if k == "accept-encoding" else v] for k, v in interaction["request"]["headers"]
    ]
"""


def _run(pytester: pytest.Pytester, *args: str) -> Any:
    return pytester.runpytest_inprocess(*LEAN, "-rE", "-W", "ignore::pytest.PytestWarning", *args)


def test_record_then_replay_then_new_episodes(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    (pytester.path / "tests").mkdir()
    (pytester.path / "tests" / "test_inner.py").write_text(INNER)
    (pytester.path / "tests" / "conftest.py").write_text(CONFTEST)
    cassettes = pytester.path / "tests" / "__cassettes__" / "test_inner"
    upstream = ScriptedModel(
        {
            "name": "upstream",
            "steps": [{"type": "reply", "text": "upstream says hi", "repeat": True}],
        }
    )
    with run_in_thread(upstream) as up:
        # 1. Record (an upstream and no mode: once).
        recorded = _run(pytester, f"--acp-model-record={up.url}", "--snapshot-update", "tests")
        recorded.assert_outcomes(passed=4)
        assert len(upstream.requests) == 3  # the scripted test did not go upstream
        # 3. new_episodes (below) needs the upstream again: the replay runs in between.
        path = cassettes / "test_model.model.json"
        text = path.read_text()
        assert KEY not in text and "org-inner" not in text
        document = json.loads(text)
        assert document["acpModelCassette"] == 1 and document["upstream"] == up.url
        (interaction,) = document["interactions"]
        assert interaction["request"]["json"]["messages"][0]["content"] == "first"
        assert ["authorization", "<redacted>"] in interaction["request"]["headers"]
        assert ["accept-encoding", "<mine>"] in interaction["request"]["headers"]  # the hook's
        assert (cassettes / "named.model.json").exists()  # the acp_cassette name
        assert not (cassettes / "test_scripted.model.json").exists()

        # 2. Replay, upstream or not (no --acp-model-record: nothing goes upstream);
        # the request the cassette lacks fails its test at teardown.
        monkeypatch.setenv("EXTRA", "1")
        replayed = _run(pytester, "tests")
        replayed.assert_outcomes(passed=4, errors=1)  # test_agent: snapshot and strict hold
        assert len(upstream.requests) == 3
        replayed.stdout.fnmatch_lines(
            [
                "*ERROR at teardown of test_model*",
                "acp_model (first script: model cassette "
                "tests/__cassettes__/test_inner/test_model.model.json (replay)):",
                "*no recorded interaction left for POST /v1/chat/completions (request #1)*"
                f"Record it again: pytest --acp-model-record={up.url} --acp-record-mode=all "
                "tests/test_inner.py::test_model",
                "*request #1: POST /v1/chat/completions",
                '*"content": "an extra question"*',
            ]
        )

        # 3. new_episodes: the extra request goes upstream and is appended.
        _run(
            pytester, f"--acp-model-record={up.url}", "--acp-record-mode=new_episodes", "tests"
        ).assert_outcomes(passed=4)
        assert len(upstream.requests) == 4
    contents = [
        i["request"]["json"]["messages"][0]["content"]
        for i in json.loads(path.read_text())["interactions"]
    ]
    assert contents == ["first", "an extra question"]


class _Config:
    """What ``_mode`` reads of a pytest config."""

    def __init__(self, option: str | None, ini: str = "") -> None:
        self.option, self.ini = option, ini

    def getoption(self, name: str, default: object = None) -> object:
        return self.option

    def getini(self, name: str) -> object:
        return self.ini


@pytest.mark.parametrize(
    ("option", "ini", "upstream", "mode"),
    [
        (None, "", None, "none"),
        (None, "", "http://u", "once"),
        ("all", "", "http://u", "all"),
        (None, "new_episodes", "http://u", "new_episodes"),
        ("once", "", None, "once"),
    ],
)
def test_the_record_mode(option: str | None, ini: str, upstream: str | None, mode: str) -> None:
    assert _model_cassette._mode(_Config(option, ini), upstream) == mode  # type: ignore[arg-type]


def test_an_upstream_with_mode_none_is_a_usage_error() -> None:
    with pytest.raises(pytest.UsageError, match="--acp-record-mode=none does not"):
        _model_cassette._mode(_Config("none"), "http://u")  # type: ignore[arg-type]


def test_the_model_cassette_sits_beside_the_acp_one(
    request: pytest.FixtureRequest, pytestconfig: pytest.Config
) -> None:
    assert pytestconfig.getoption("acp_model_record") is None
    assert pytestconfig.getini("acp_model_record") == ""
    item = request.node
    path = _model_cassette.model_cassette_path(item)
    here = Path(__file__).parent / "__cassettes__" / "test_plugin_model_cassette"
    assert path == here / "test_the_model_cassette_sits_beside_the_acp_one.model.json"
    assert path.with_name(path.name.replace(".model.json", ".acp.jsonl")) == cassette_path(item)
