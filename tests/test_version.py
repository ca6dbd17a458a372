"""One version: ``acp_lite.__version__`` (what the client announces, ``--version``,
cassette headers) is the installed distribution's and ``pyproject.toml``'s."""

from __future__ import annotations

import tomllib
from importlib.metadata import version
from pathlib import Path

import acp_lite
from acp_lite.aio._client import _version
from acp_lite.cassettes._format import library_version


def test_the_version_constant_is_the_packages() -> None:
    pyproject = tomllib.loads((Path(__file__).parent.parent / "pyproject.toml").read_text())
    assert acp_lite.__version__ == pyproject["project"]["version"] == version("acp-lite")
    assert _version() == library_version() == acp_lite.__version__
