"""acp_lite's version: one constant, which ``pyproject.toml`` repeats (a test checks
both against the installed metadata)."""

__version__ = "0.1.0.dev0"
