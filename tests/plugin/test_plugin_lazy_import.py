"""The plugin loads in every pytest run of an environment that has acp-lite, ACP or
not: a run whose tests use none of its fixtures or markers must not pay for the
client, trio (the cassette replay), the session model, the conformance checks or the
scripted model provider (acp_lite.models, h11: the acp_model fixture).
(They still load when a test needs them: the in-process plugin tests run those
lazy imports on every ACP test.)"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HEAVY = (
    "trio",
    "acp_lite.aio",
    "acp_lite.sync",
    "acp_lite.core",
    "acp_lite.model",
    "acp_lite.cassettes",
    "pytest_acp.conformance",
    "acp_lite.models",
    "acp_lite.models.server",
    "h11",
)

PLAIN_TEST = f"""
import sys

def test_plain():
    assert "pytest_acp.plugin" in sys.modules  # the plugin did load
    assert [m for m in {HEAVY!r} if m in sys.modules] == []
"""


def test_a_run_that_uses_no_acp_fixture_loads_no_client(tmp_path: Path) -> None:
    (tmp_path / "test_plain.py").write_text(PLAIN_TEST)
    # The run goes through the plugin's hooks (collection, call, report, teardown).
    # pytest-trio (a test dependency of this project) imports trio, and so does
    # anyio's plugin (anyio comes with the providers' clients); the other plugins
    # are left out for a faster start.
    argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    for plugin in ("trio", "anyio", "xdist", "hypothesispytest", "syrupy"):
        argv += ["-p", f"no:{plugin}"]
    done = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 passed" in done.stdout
