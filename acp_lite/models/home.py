"""An agent's temporary home: where a profile's files are written (issue 23).

The IO half of :mod:`acp_lite.models.profiles` (which renders, and writes nothing):
:func:`prepare_home` writes an :class:`~acp_lite.models.profiles.AgentSetup`'s files
under a directory and returns the agent's whole environment;
:func:`temporary_home` does it in a fresh directory that is removed afterwards.
No trio, no h11: the CLI and the pytest plugin use it around a blocking ``connect``.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

import attrs

from acp_lite.errors import ModelScriptError
from acp_lite.models.profiles import DEFAULT_MODEL, DUMMY_KEY, AgentProfile, AgentSetup

__all__ = ["PreparedAgent", "prepare_home", "temporary_home"]


def prepare_home(
    setup: AgentSetup, home: str | os.PathLike[str], environ: Mapping[str, str] | None = None
) -> dict[str, str]:
    """Write ``setup.files`` under ``home`` (directories created, files replaced) and
    return the agent's whole environment: ``environ`` (default ``os.environ``)
    without ``setup.unset``, with ``setup.env`` set (start the agent with it
    *instead of* this process's environment, e.g. ``inherit_env=False``)."""
    root = Path(home).resolve()
    for relative, text in setup.files.items():
        target = (root / relative).resolve()
        # Profiles refuse such paths already; a hand-built AgentSetup might not.
        if not target.is_relative_to(root) or target == root:
            raise ModelScriptError(f"agent setup file {relative!r} is outside the home {root}")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    return setup.environ(os.environ if environ is None else environ)


@attrs.frozen(kw_only=True)
class PreparedAgent:
    """A profile rendered and written for one run: the home, and how to start the agent."""

    home: Path
    setup: AgentSetup
    #: The agent's whole environment (see :func:`prepare_home`).
    env: Mapping[str, str]

    def argv(self, command: Sequence[str]) -> list[str]:
        """``command`` with the profile's arguments appended."""
        return [*command, *self.setup.args]


@contextmanager
def temporary_home(
    profile: AgentProfile,
    *,
    url: str,
    model: str = DEFAULT_MODEL,
    key: str = DUMMY_KEY,
    environ: Mapping[str, str] | None = None,
) -> Iterator[PreparedAgent]:
    """A fresh temporary home with ``profile``'s files for a server at ``url``, for
    the body of the ``with``; the directory is removed afterwards (with whatever
    the agent wrote there)."""
    home = Path(tempfile.mkdtemp(prefix="acp-lite-home-")).resolve()
    try:
        setup = profile.setup(url=url, home=str(home), model=model, key=key)
        env = prepare_home(setup, home, environ)
        yield PreparedAgent(home=home, setup=setup, env=env)
    finally:
        shutil.rmtree(home, ignore_errors=True)
