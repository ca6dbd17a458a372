"""Output files of ``acp-lite`` commands, checked before the work starts.

A file the command would write only at the end (a transcript after the turn, a
cassette when the connection ends, a replay report) is checked first: a path that
cannot be written is a usage error before any agent starts, not a traceback after
the whole turn.
"""

from __future__ import annotations

import os

from acp_lite.cli.base import EXIT_USAGE, CliError

__all__ = ["check_writable"]


def check_writable(path: str, what: str, *, makes_dirs: bool = False) -> None:
    """Raise a usage :class:`CliError` unless ``path`` can be written as ``what``.

    ``makes_dirs``: the writer creates missing directories (a cassette), so the
    nearest directory that exists must be writable; otherwise the file's own
    directory must exist.
    """
    if not path:
        raise CliError(f"cannot write {what}: the path is empty", EXIT_USAGE)
    if os.path.isdir(path):
        raise CliError(f"cannot write {what} {path}: it is a directory", EXIT_USAGE)
    if os.path.exists(path):
        if not os.access(path, os.W_OK):
            raise CliError(f"cannot write {what} {path}: permission denied", EXIT_USAGE)
        return
    directory = os.path.dirname(os.path.abspath(path))
    if makes_dirs:
        while not os.path.exists(directory):
            directory = os.path.dirname(directory)
    elif not os.path.exists(directory):
        raise CliError(f"cannot write {what} {path}: no such directory: {directory}", EXIT_USAGE)
    if not os.path.isdir(directory):
        raise CliError(f"cannot write {what} {path}: {directory} is not a directory", EXIT_USAGE)
    if not os.access(directory, os.W_OK | os.X_OK):
        raise CliError(f"cannot write {what} {path}: {directory} is not writable", EXIT_USAGE)
