"""``python -m acp_lite``: the ``acp-lite`` command."""

from acp_lite.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
