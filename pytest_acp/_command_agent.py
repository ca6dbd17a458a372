"""``python -m pytest_acp._command_agent STARTED ARGS...``: ``acp-lite ARGS...`` (a
cassette's replay or recorder, for ``acp_cassette_command``) that first writes its
pid to the file STARTED, so that the test's teardown knows at once whether the
code under test ever started its agent (and waits for the outcome only if it did).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path


def main(argv: Sequence[str]) -> int:
    """Mark the start, then run the ``acp-lite`` command ``argv[1:]``."""
    Path(argv[0]).write_text(f"{os.getpid()}\n", encoding="utf-8")
    from acp_lite.cli import main as acp_lite

    return acp_lite(list(argv[1:]))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
