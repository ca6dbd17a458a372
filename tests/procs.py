"""This process's children, read from Linux ``/proc`` (leak checks of the tests)."""

from __future__ import annotations

import os

__all__ = ["child_processes"]


def child_processes() -> list[str]:
    """Command lines of this process's live or zombie children (Linux ``/proc``)."""
    me = str(os.getpid())
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            # Fields after the parenthesised command name: state, ppid, ...
            state, ppid = _read(f"/proc/{entry}/stat").rsplit(")", 1)[1].split()[:2]
            if ppid != me:
                continue  # most entries: no need to read their command line
            cmdline = _read(f"/proc/{entry}/cmdline").replace("\0", " ")
        except (OSError, IndexError, ValueError):
            continue
        found.append(f"{state} {cmdline}")
    return found


def _read(path: str) -> str:
    # os.read, not open(): this runs twice per test over every process of the
    # machine, and a file object per /proc entry costs twice as much.
    fd = os.open(path, os.O_RDONLY)
    try:
        return os.read(fd, 65536).decode(errors="replace")
    finally:
        os.close(fd)
