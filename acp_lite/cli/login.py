"""``acp-lite login``: log in to an agent with one of the methods it advertises.

* an ``agent`` method goes through the protocol (v2 ``auth/login``, v1
  ``authenticate``);
* a ``terminal`` method runs the agent's own login program in this terminal (the
  agent's command plus the method's ``args``, with its ``env``; or the command of a
  ``_meta["terminal-auth"]`` method): its exit status 0 means logged in. No shell;
* an ``env_var`` method cannot be done for the user: it prints the variables to
  set (and where to get them) and exits with the authentication code.

With no METHOD, the one method that can log in is used; with several, they are
listed and the user is asked to choose (a usage error).
"""

from __future__ import annotations

import argparse
import os
import shlex
import subprocess
from collections.abc import Callable, Sequence
from typing import TextIO

from acp_lite.auth import AuthMethod, login_hint
from acp_lite.cli.base import EXIT_AUTH, EXIT_OK, EXIT_USAGE, CliError, agent_argv, timeout_kwargs
from acp_lite.cli.errors import explain, login_command
from acp_lite.errors import AcpError

__all__ = ["add_parser", "cmd_login"]

_LOGGABLE = ("agent", "terminal")


def add_parser(
    sub: argparse._SubParsersAction[argparse.ArgumentParser],
    agent_options: Callable[[argparse.ArgumentParser], None],
) -> None:
    """Register the ``login`` subcommand."""
    login = sub.add_parser(
        "login",
        help="log in to the agent with one of its auth methods",
        description="Log in to the agent: an agent method through the protocol, a "
        "terminal method by running the agent's login program here. Without METHOD, "
        "the only method that can log in is used.",
    )
    agent_options(login)
    login.add_argument("method", nargs="?", metavar="METHOD", help="the auth method id")


def _choose(methods: list[AuthMethod], wanted: str | None, argv: Sequence[str]) -> AuthMethod:
    listed = ", ".join(m.summary() for m in methods)
    if wanted is not None:
        for method in methods:
            if method.method_id == wanted:
                return method
        raise CliError(f"the agent has no auth method {wanted!r}; it has: {listed}", EXIT_USAGE)
    loggable = [m for m in methods if m.kind in _LOGGABLE]
    if len(loggable) == 1:
        return loggable[0]
    if not loggable:
        raise CliError(f"nothing to log in with: {login_hint(methods)}", EXIT_AUTH)
    raise CliError(
        f"choose an auth method: {login_command(argv, 'METHOD')} (methods: {listed})",
        EXIT_USAGE,
    )


def cmd_login(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Run ``acp-lite login``; returns the exit code."""
    from acp_lite.sync import connect

    argv = agent_argv(args)
    try:
        with connect(argv, **timeout_kwargs(args.timeout)) as client:
            methods = client.auth_methods
            if not methods:
                raise CliError("the agent advertised no auth method", EXIT_AUTH)
            method = _choose(methods, args.method, argv)
            if method.kind == "agent":
                client.login(method.method_id)
                out.write(f"logged in with {method.method_id}\n")
                return EXIT_OK
    except AcpError as exc:
        raise explain(exc, argv, args.timeout, args.scenario) from None
    if method.kind == "env_var":
        names = " and ".join(v.name for v in method.env_vars) or "(no variable named)"
        where = f" (get it at {method.link})" if method.link else ""
        raise CliError(f"{method.method_id}: set {names} for the agent{where}", EXIT_AUTH)
    if method.kind != "terminal":
        raise CliError(f"acp-lite cannot log in with a {method.kind!r} method", EXIT_AUTH)
    # The agent's own login program, in this terminal: the user interacts with it.
    command = method.terminal_command(argv)
    err.write(f"running {shlex.join(command)}\n")
    err.flush()
    try:
        status = subprocess.run(command, env={**os.environ, **method.env}, check=False)
    except OSError as exc:
        raise CliError(f"cannot run {shlex.join(command)}: {exc}", EXIT_AUTH) from None
    if status.returncode != 0:
        raise CliError(
            f"the login command exited with status {status.returncode}: not logged in",
            EXIT_AUTH,
        )
    out.write(f"logged in with {method.method_id}\n")
    return EXIT_OK
