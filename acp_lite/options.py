"""What every way of connecting takes alike: the agent's argv and the effective
:class:`~acp_lite.limits.Limits` (plain Python; the trio and blocking entry points
both use them)."""

from __future__ import annotations

import os
from collections.abc import Sequence

import attrs

from acp_lite.limits import Limits

__all__ = ["command_argv", "effective_limits"]


def command_argv(command: Sequence[str | os.PathLike[str]]) -> list[str]:
    """The argv list of ``command``; a single string is refused (it is not split:
    no shell runs the agent), with a hint to pass a list or ``shlex.split`` it."""
    if isinstance(command, str | bytes | os.PathLike):
        raise TypeError(
            f"the agent command must be a list of arguments, not {type(command).__name__} "
            f"{command!r}: pass e.g. shlex.split({command!r})"
        )
    argv = [os.fspath(a) for a in command]
    if not argv:
        raise ValueError("the agent command is empty")
    return argv


def effective_limits(limits: Limits | None, timeout: float | None) -> Limits:
    """``limits`` with ``timeout`` (when given) as the default and handshake timeout:
    the one setting every wait of the connection honours."""
    limits = limits or Limits()
    if timeout is not None:
        limits = attrs.evolve(limits, default_timeout=timeout, connect_timeout=timeout)
    return limits
