"""The README's two "fresh machine" commands are real: parsed, checked and run.

Marker: the first ```console block under a "Quick start" heading holds exactly two
commands, one per line (lines starting with ``#`` are comments):

1. install and run the main job against the embedded reference agent:
   ``python3 -m venv V && V/bin/pip install -e . && V/bin/acp-lite prompt "..."``
2. install and run the tests:
   ``python3 -m venv V && V/bin/pip install -e '.[test]' && V/bin/python -m pytest``

The install steps are what CI does in its own fresh venv (``.ci/run``); here we
check their shape against pyproject.toml and execute the ``acp-lite prompt`` step
with this venv's ``acp-lite``.
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from .conftest import cli_env, reference_agent_in_memory

ROOT = Path(__file__).resolve().parents[2]
# Documents whose Quick start commands and python blocks are checked: README.md
# holds the user documentation (it used to be drafted in docs/usage.md).
DOCS = [ROOT / "README.md"]


def quick_start_commands(text: str) -> list[str]:
    """The command lines of the first ```console block under a "Quick start" heading."""
    heading = re.search(r"^#{1,6}\s+Quick start\s*$", text, re.MULTILINE | re.IGNORECASE)
    assert heading, 'no "Quick start" heading'
    rest = text[heading.end() :]
    fence = re.search(r"^```(\w*)\n(.*?)^```", rest, re.MULTILINE | re.DOTALL)
    assert fence and fence.group(1) == "console", 'no ```console block under "Quick start"'
    assert not re.search(r"^#{1,6}\s", rest[: fence.start()], re.MULTILINE), (
        'the ```console block is not in the "Quick start" section'
    )
    block = fence
    return [
        line.strip()
        for line in block.group(2).splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    ]


def steps(command: str) -> list[list[str]]:
    """Split ``a && b && c`` into argv lists (only ``&&`` is allowed between steps)."""
    lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    result: list[list[str]] = [[]]
    for token in lexer:
        if token == "&&":
            result.append([])
        else:
            assert not set(token) <= set("|;&<>()"), f"unexpected shell operator {token!r}"
            result[-1].append(token)
    assert all(result), command
    return result


def _extras() -> set[str]:
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())
    return set(data["project"].get("optional-dependencies", {}))


def _check_install(command: str) -> tuple[str, list[str], set[str]]:
    """The venv dir, the final step, and the extras installed by ``command``."""
    assert subprocess.run(["bash", "-n", "-c", command]).returncode == 0, command
    parts = steps(command)
    assert parts[0][:3] == ["python3", "-m", "venv"], parts[0]
    venv = parts[0][3]
    pip = [p for p in parts if p[0] == f"{venv}/bin/pip"]
    assert len(pip) == 1, "one pip install step from the venv"
    assert pip[0][1:3] == ["install", "-e"], pip[0]
    target = pip[0][3]
    match = re.fullmatch(r"\.(?:\[([\w,-]+)\])?", target)
    assert match, f"installs the checkout, got {target!r}"
    extras = set(match.group(1).split(",")) if match.group(1) else set()
    assert extras <= _extras(), f"unknown extras {extras - _extras()}"
    for part in parts[1:]:
        assert part[0].startswith(f"{venv}/bin/"), f"runs from the venv: {part}"
    return venv, parts[-1], extras


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_quick_start_has_two_commands(doc: Path) -> None:
    assert len(quick_start_commands(doc.read_text())) == 2


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_install_and_run_command_runs(doc: Path, tmp_path: Path) -> None:
    venv, last, _ = _check_install(quick_start_commands(doc.read_text())[0])
    assert last[0] == f"{venv}/bin/acp-lite", last
    assert last[1] == "prompt", "runs the main job"
    assert "--agent" not in last, "against the embedded default agent"
    # The install steps ran in CI's venv; run the command with that venv's binary.
    binary = Path(sys.executable).parent / "acp-lite"
    assert binary.exists(), f"acp-lite is not installed next to {sys.executable}"
    proc = subprocess.run(
        [str(binary), *last[1:]],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        env=cli_env(),
    )
    assert proc.returncode == 0, proc.stderr
    prompt_text = last[-1]
    assert prompt_text in proc.stdout, (proc.stdout, proc.stderr)


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_install_and_test_command_matches_ci(doc: Path) -> None:
    venv, last, extras = _check_install(quick_start_commands(doc.read_text())[1])
    assert "test" in extras, "installs the test extra"
    assert last in ([f"{venv}/bin/python", "-m", "pytest"], [f"{venv}/bin/pytest"]), last
    # .ci/run runs the same test command (`python -m pytest` in its activated venv).
    assert "python -m pytest" in (ROOT / ".ci" / "run").read_text()


MODEL_AGENT = Path(__file__).resolve().parent / "agents" / "model_agent.py"
MODEL_AGENT_CONFTEST = """
import sys

import pytest


@pytest.fixture
def acp_agent_command(request, acp_agent_command):
    if "acp_model" in request.fixturenames:
        return [sys.executable, {agent!r}]
    return acp_agent_command
"""


def python_blocks(text: str) -> list[str]:
    """Every ```python block of a document."""
    return re.findall(r"^```python\n(.*?)^```", text, re.MULTILINE | re.DOTALL)


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_python_blocks_run(
    doc: Path,
    pytester: pytest.Pytester,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Scripts run as ``__main__``; blocks defining ``test_`` functions run under pytest.

    Both in this interpreter (in pytester's temporary directory): what a block does
    is the point, not a fresh interpreter's start-up; the agents they start are
    still real processes, and the inner pytest loads pytest_acp by its entry point.
    """
    # An inner run must not believe it is an xdist worker (syrupy would keep quiet).
    for name in ("PYTEST_XDIST_WORKER", "PYTEST_XDIST_WORKER_COUNT", "PYTEST_XDIST_TESTRUNUID"):
        monkeypatch.delenv(name, raising=False)
    blocks = python_blocks(doc.read_text())
    assert blocks, "at least the blocking API"
    suites: dict[int, Path] = {}  # block number -> its test file
    for number, code in enumerate(blocks, 1):
        where = f"python block {number} of {doc.name}"
        if re.search(r"^def test_", code, re.MULTILINE):
            suites[number] = pytester.makepyfile(**{f"test_snippet_{number}": code})
        else:
            capsys.readouterr()
            # The reference agent the scripts name runs in this process: what they
            # do with the client is the point (agent processes: the test blocks
            # below, the Quick start command, tests/client and tests/aio).
            with monkeypatch.context() as patch:
                reference_agent_in_memory(patch)
                exec(compile(code, f"<{where}>", "exec"), {"__name__": "__main__"})
            assert capsys.readouterr().out.strip(), f"{where} printed nothing"
    # A block testing a real agent on the scripted model names one that is not
    # installed here: a stand-in that calls the same model (an ACP agent on the
    # OpenAI API, tests/cli/agents/model_agent.py) takes its place, through an
    # overriding acp_agent_command as a user's conftest would.
    pytester.makeconftest(MODEL_AGENT_CONFTEST.format(agent=str(MODEL_AGENT)))
    # The test blocks in one run (pytest's start-up once), "-v" naming each test.
    options = ("-v", "-p", "no:cacheprovider", "--snapshot-update")
    for number, path in suites.items():
        if "acp_cassette" in blocks[number - 1]:
            # The recipe's two runs: record the cassettes, then replay them (below).
            record = pytester.runpytest_inprocess(*options, "--acp-record-mode=once", path)
            where = f"python block {number} of {doc.name} (recording)"
            assert record.ret == 0, f"{where}:\n{record.stdout.str()}"
    result = pytester.runpytest_inprocess(*options, *suites.values())
    out = result.stdout.str()
    assert result.ret == 0, f"the test blocks of {doc.name}:\n{out}\n{result.stderr.str()}"
    for number, path in suites.items():
        assert re.search(rf"^{path.name}::\S+ PASSED", out, re.MULTILINE), (
            f"python block {number} of {doc.name} ran no test:\n{out}"
        )


def test_usage_has_every_api_snippet() -> None:
    blocks = python_blocks((ROOT / "README.md").read_text())
    # blocking API, async API, permissions, pytest
    assert len(blocks) >= 4
    assert any("acp_lite.aio.connect" in b for b in blocks)
    assert any("on_permission" in b for b in blocks)
    assert any("def test_" in b for b in blocks)


def test_parser_on_a_sample() -> None:
    sample = (
        "# Title\n\n## Quick start\n\ntext\n\n```console\n# a comment\n"
        "python3 -m venv .v && .v/bin/pip install -e . && .v/bin/acp-lite prompt 'hi there'\n"
        "python3 -m venv .v && .v/bin/pip install -e '.[test]' && .v/bin/python -m pytest\n"
        "```\n\n## Next\n```console\nnot this\n```\n"
    )
    first, second = quick_start_commands(sample)
    assert steps(first)[-1] == [".v/bin/acp-lite", "prompt", "hi there"]
    assert steps(second)[1] == [".v/bin/pip", "install", "-e", ".[test]"]
    with pytest.raises(AssertionError):
        steps("python3 -m venv .v; rm -rf /")
