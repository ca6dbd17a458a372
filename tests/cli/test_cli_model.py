"""``acp-lite model serve``: the scripted model provider as a command.

What only a process shows (the ``ready`` line on stdout, signals, the exit code at
the end) runs ``python -m acp_lite model serve`` itself: one process per test,
several checks each. Bad input, the missing extra and the help run in this process
(``run_cli``); the start-up imports in a fresh ``python -c``.
"""

from __future__ import annotations

import http.client
import json
import signal
import subprocess
import sys
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

import acp_lite.models
from acp_lite.cli.base import EXIT_OK, EXIT_START_FAILED, EXIT_STOPPED, EXIT_USAGE

from .conftest import RunCli, assert_clean_error, cli_env

CHAT = "/v1/chat/completions"


@contextmanager
def serving(*args: str, cwd: Path) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """``python -m acp_lite model serve ARGS --port 0``: the process and its URL (from
    the ``ready`` line), killed if the body leaves it running."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "acp_lite", "model", "serve", *args, "--port", "0"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=cwd,
        env=cli_env(),
    )
    try:
        assert proc.stdout is not None
        ready = proc.stdout.readline()
        if not ready.startswith("ready http://127.0.0.1:"):
            proc.kill()
            _, err = proc.communicate(timeout=60)
            pytest.fail(f"no ready line: {ready!r}; stderr: {err}")
        yield proc, ready.removeprefix("ready ").strip()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate(timeout=60)


def stop(proc: subprocess.Popen[str], signum: int) -> tuple[int, str, str]:
    """Send ``signum``; the exit code, the rest of stdout, and stderr."""
    proc.send_signal(signum)
    out, err = proc.communicate(timeout=60)
    return proc.returncode, out, err


def chat(url: str, text: str) -> tuple[int, dict[str, object]]:
    """A non-streamed Chat Completions request: the status and the JSON body."""
    parts = urllib.parse.urlsplit(url)
    assert parts.hostname is not None and parts.port is not None
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=60)
    try:
        body = {"model": "m", "messages": [{"role": "user", "content": text}]}
        conn.request("POST", CHAT, json.dumps(body), {"content-type": "application/json"})
        response = conn.getresponse()
        return response.status, json.loads(response.read())
    finally:
        conn.close()


def content(answer: dict[str, object]) -> object:
    choices = answer["choices"]
    assert isinstance(choices, list)
    return choices[0]["message"]["content"]


def test_reply_serves_until_sigint_then_exits_0_with_a_summary(tmp_path: Path) -> None:
    with serving("--reply", "Hello from the script.", cwd=tmp_path) as (proc, url):
        # --reply repeats: every request gets the text.
        for question in ("hi", "again"):
            status, answer = chat(url, question)
            assert status == 200, answer
            assert content(answer) == "Hello from the script."
        code, out, err = stop(proc, signal.SIGINT)
    assert code == EXIT_OK, err
    assert out == ""  # stdout holds the ready line only
    assert "Traceback" not in err, err
    lines = err.splitlines()
    assert lines.count(f"acp-lite model: POST {CHAT} 200") == 2, err
    assert lines[-1] == "acp-lite model: stopped; 2 request(s) answered, 0 unmatched", err


def test_an_unmatched_request_fails_the_run_at_sigterm(tmp_path: Path) -> None:
    script = tmp_path / "once.json"
    script.write_text(
        json.dumps({"name": "once", "steps": [{"type": "reply", "text": "only once"}]})
    )
    with serving("--script", str(script), cwd=tmp_path) as (proc, url):
        first, answer = chat(url, "one")
        assert (first, content(answer)) == (200, "only once")
        second, error = chat(url, "two")
        assert second == 400, error
        code, _, err = stop(proc, signal.SIGTERM)
    assert code == EXIT_STOPPED, err
    assert "Traceback" not in err, err
    # The failing request's line says why (the 400's message), the summary counts it.
    why = [line for line in err.splitlines() if line.startswith(f"acp-lite model: POST {CHAT} 400")]
    assert len(why) == 1 and "no step of scripted model 'once' matches" in why[0], err
    assert err.splitlines()[-1] == (
        "acp-lite model: stopped; 2 request(s) answered, 1 unmatched (the log above says why)"
    ), err


def test_a_bad_script_is_one_error_line_naming_the_file_and_step(
    run_cli: RunCli, tmp_path: Path
) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text('[[steps]]\ntype = "reply"\ntext = "ok"\n[[steps]]\ntype = "nope"\n')
    proc = run_cli("model", "serve", "--script", str(bad))
    assert_clean_error(proc, EXIT_USAGE, f"{bad}: model script 'model script': steps[1]")
    assert "unknown step type 'nope'" in proc.stderr
    missing = run_cli("model", "serve", "--script", str(tmp_path / "none.json"))
    assert_clean_error(missing, EXIT_USAGE, "cannot read model script")


def test_exactly_one_of_script_and_reply(capsys: pytest.CaptureFixture[str]) -> None:
    from acp_lite.cli import main

    for argv, message in (
        (["--script", "s.json", "--reply", "x"], "not allowed with argument"),
        ([], "one of the arguments --script --reply is required"),
    ):
        with pytest.raises(SystemExit) as exit_:
            main(["model", "serve", *argv])
        assert exit_.value.code == EXIT_USAGE
        assert message in capsys.readouterr().err


def test_missing_h11_says_which_extra_to_install(
    run_cli: RunCli, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "h11", None)  # import h11 raises ImportError
    monkeypatch.delitem(sys.modules, "acp_lite.models.server", raising=False)
    monkeypatch.delattr(acp_lite.models, "server", raising=False)
    proc = run_cli("model", "serve", "--reply", "hi")
    assert_clean_error(proc, EXIT_START_FAILED, "pip install 'acp-lite[models]'")


def test_a_port_in_use_is_one_error_line(run_cli: RunCli) -> None:
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        proc = run_cli("model", "serve", "--reply", "hi", "--port", port)
    assert_clean_error(proc, EXIT_START_FAILED, f"cannot listen on 127.0.0.1:{port}")


def test_help_lists_the_command(capsys: pytest.CaptureFixture[str]) -> None:
    from acp_lite.cli import main

    for argv, fragment in ((["--help"], "model"), (["model", "--help"], "serve")):
        with pytest.raises(SystemExit) as exit_:
            main(argv)
        assert exit_.value.code == 0
        assert fragment in capsys.readouterr().out


def test_cli_start_up_does_not_import_the_model_server() -> None:
    """Parsing any command line (this one's and prompt's model options too) loads
    neither trio, h11 nor acp_lite.models: they are imported when the command runs."""
    code = (
        "import sys, json\n"
        "from acp_lite.cli.app import build_parser\n"
        "build_parser().parse_args(['model', 'serve', '--reply', 'hi'])\n"
        "build_parser().parse_args(\n"
        "    ['prompt', '--model-reply', 'x', '--model-profile', 'qwen', 'hi'])\n"
        "heavy = ('trio', 'h11', 'acp_lite.models')\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith(heavy))))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=cli_env()
    )
    assert json.loads(proc.stdout) == []
