"""``acp-lite login``: log in to an agent with one of the methods it advertises.

* an ``agent`` method goes through the protocol (v2 ``auth/login``, v1
  ``authenticate``);
* a ``terminal`` method runs the agent's own login program in this terminal (the
  agent's command plus the method's ``args``, with its ``env``; or the command of a
  ``_meta["terminal-auth"]`` method): its exit status 0 means logged in. No shell.
  The agent chooses that command, so it is shown first (control characters
  escaped) and run only when the user answers ``y`` (``--yes``: without asking);
  it needs a terminal on stdin, ``--yes`` or not (a login program without one
  sees end of input: it may exit 0 without logging in). Variables that make a
  program run code its command line does not show (``LD_PRELOAD``,
  ``PYTHONPATH``, ... :data:`acp_lite.auth.UNSAFE_ENV_NAMES`) are refused;
* an ``env_var`` method cannot be done for the user: it prints the variables to
  set (and where to get them) and exits with the authentication code.

With no METHOD, the one method that can log in is used; with several, they are
listed and the user is asked to choose (a usage error). ``--json`` prints one JSON
object on stdout saying what happened (``ok``, ``method``, ``kind``, and the agent's
answer, the command run, or the error), whatever the outcome.

An ``agent`` method's login may last only as long as the agent process that did it
(the reference agent's ``auth_required`` scenario forgets it): ``acp-lite prompt
--login METHOD`` logs in within the process that then runs the turn.
"""

from __future__ import annotations

import argparse
import os
import shlex
import subprocess
import sys
from collections.abc import Callable, Sequence
from typing import TextIO

from acp_lite.auth import AuthMethod, login_hint, unsafe_env_names
from acp_lite.cli.base import EXIT_AUTH, EXIT_OK, EXIT_USAGE, CliError, agent_argv, timeout_kwargs
from acp_lite.cli.errors import explain, login_command
from acp_lite.cli.render import json_line, safe_text
from acp_lite.errors import AcpError

__all__ = ["add_parser", "choose_method", "cmd_login"]

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
        "the only method that can log in is used. A terminal method's command is "
        "shown and run only if you answer y; it needs a terminal.",
    )
    agent_options(login)
    login.add_argument(
        "--yes",
        "-y",
        action="store_true",
        help="run a terminal method's command without asking (a terminal is still needed)",
    )
    login.add_argument("method", nargs="?", metavar="METHOD", help="the auth method id")


def choose_method(
    methods: Sequence[AuthMethod], wanted: str | None, argv: Sequence[str]
) -> AuthMethod:
    """The method ``wanted`` (or the only one that can log in); else a :class:`CliError`."""
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
    outcome: dict[str, object] = {"ok": False, "method": args.method}
    try:
        code = _login(args, err, outcome)
    except CliError as exc:
        if args.json:
            outcome["error"] = exc.message
            outcome["exitCode"] = exc.code
            out.write(json_line(outcome))
            out.flush()
        raise
    if args.json:
        out.write(json_line(outcome))
    else:
        out.write(f"logged in with {outcome['method']}\n")
    return code


def _login(args: argparse.Namespace, err: TextIO, outcome: dict[str, object]) -> int:
    """Log in; ``outcome`` gets what happened (the ``--json`` object), as it happens."""
    from acp_lite.protocol import unstructure
    from acp_lite.sync import connect

    argv = agent_argv(args)
    try:
        with connect(argv, **timeout_kwargs(args.timeout)) as client:
            methods = client.auth_methods
            if not methods:
                raise CliError("the agent advertised no auth method", EXIT_AUTH)
            method = choose_method(methods, args.method, argv)
            outcome.update(method=method.method_id, kind=method.kind)
            if method.kind == "agent":
                response = client.login(method.method_id)
                outcome.update(ok=True, response=unstructure(response))
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
    outcome["command"] = command
    _confirm(method, command, yes=args.yes, err=err)
    try:
        status = subprocess.run(command, env={**os.environ, **method.env}, check=False)
    except (OSError, ValueError) as exc:  # ValueError: a NUL in an argument or value
        raise CliError(f"cannot run {shlex.join(command)}: {exc}", EXIT_AUTH) from None
    outcome["returncode"] = status.returncode
    if status.returncode != 0:
        raise CliError(
            f"the login command exited with status {status.returncode}: not logged in",
            EXIT_AUTH,
        )
    outcome["ok"] = True
    return EXIT_OK


def _confirm(method: AuthMethod, command: list[str], *, yes: bool, err: TextIO) -> None:
    """Show what the agent asks to run; return only if it may run (else CliError)."""
    shown = _one_line(shlex.join(command))
    bad = unsafe_env_names(method.env)
    if bad:
        # Refused outright, not asked: the command shown would not be what runs.
        names = ", ".join(repr(name) for name in bad)
        raise CliError(
            f"{method.method_id}: not running the agent's login command: it sets {names}, "
            f"which can make it run code its command line does not show; if you trust "
            f"it, run it yourself: {shown}",
            EXIT_AUTH,
        )
    if not (sys.stdin is not None and sys.stdin.isatty()):
        raise CliError(
            f"{method.method_id} is a terminal method: run acp-lite login from a terminal "
            f"(it runs the agent's login program: {shown})",
            EXIT_USAGE,
        )
    err.write(f"the agent asks to run its login program:\n  {shown}\n")
    if method.env:
        pairs = " ".join(f"{name}={shlex.quote(value)}" for name, value in method.env.items())
        err.write(f"  with {_one_line(pairs)}\n")
    if yes:
        err.flush()
        return
    err.write("run it? [y/N] ")
    err.flush()
    answer = sys.stdin.readline()
    if not answer.endswith("\n"):  # end of input: what follows starts a line
        err.write("\n")
    if answer.strip().lower() not in ("y", "yes"):
        raise CliError(f"not logged in: {method.method_id}'s command was not run", EXIT_AUTH)


def _one_line(text: str) -> str:
    # The agent's text, all of it visible on one line: control characters escaped,
    # and newlines too (a hundred of them would scroll the real command away).
    return safe_text(text.replace("\n", "\\n").replace("\t", "\\t"))
