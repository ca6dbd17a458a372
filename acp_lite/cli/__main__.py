"""``python -m acp_lite.cli``: the ``acp-lite`` command."""

from acp_lite.cli.app import run

run()
