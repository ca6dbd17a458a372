"""``acp-lite prompt --model-script FILE | --model-reply TEXT``: one turn of a real
agent on the scripted model provider (:mod:`acp_lite.models`), without keys.

For the run, a scripted model server listens on ``127.0.0.1`` (a free port) and the
agent gets a fresh temporary home (removed afterwards) holding its profile's
generated configuration; it is started with the profile's environment over this
process's (minus the variables the profile removes) and the profile's arguments
appended to its command line. The profile is ``--model-profile NAME``, else the one
recognised from the agent's command (:func:`acp_lite.models.profiles.recognise`;
an unknown agent gets ``generic``: the usual OpenAI, Anthropic and Gemini
base-URL variables). The turn runs as ``prompt`` runs it; then the server stops.

``--model-reply TEXT`` is the script of one ``reply`` step with ``repeat = true``:
every model request gets TEXT, streamed a few words a chunk, so the requests an
agent sends besides the turn (a session title, a memory or a router request) are
answered too. A ``--model-script`` is used as written: an agent's side requests
need steps of their own (or a ``repeat`` step).

Exit codes: those of ``prompt``, except that a model request no step matched (or
whose body was not JSON) makes it 1, whatever the turn did (the agent saw a
provider error, so the turn's own outcome is not the script's): each such request
is reported on stderr, one line each, after the turn. 2 also for an unreadable or
malformed model script (the message names the step) and an unknown profile; 3
also when the model server cannot start (h11, the ``acp-lite[models]`` extra, is
missing). trio, h11 and :mod:`acp_lite.models` are imported only for such a run.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, TextIO

from acp_lite.cli.base import (
    EXIT_INTERRUPTED,
    EXIT_STOPPED,
    EXIT_USAGE,
    PROG,
    CliError,
)
from acp_lite.cli.errors import report
from acp_lite.cli.render import safe_text

if TYPE_CHECKING:
    from acp_lite.models import AgentProfile, ModelScript, ScriptedModel

__all__ = ["PROFILE_NAMES", "add_options", "check_options", "run_on_model", "wants_model"]

#: The built-in profiles' names, spelled out (acp_lite.models.PROFILES, which a test
#: ties them to): --help must not import acp_lite.models.
PROFILE_NAMES = (
    "qwen",
    "opencode",
    "codex",
    "claude",
    "gemini",
    "fast-agent",
    "kimi",
    "vibe",
    "copilot",
    "generic",
)

#: Runs the turn: the agent's argv and whole environment in, the exit code out.
Turn = Callable[[Sequence[str], Mapping[str, str]], int]


def add_options(parser: argparse.ArgumentParser) -> None:
    """``prompt``'s scripted-model options."""
    group = parser.add_argument_group(
        "scripted model",
        "Run a real agent on a local scripted model provider instead of its own (no\n"
        "keys, no network), in a temporary home. Exit code 1 if a model request matched\n"
        "no step (each is reported on stderr, one line).",
    )
    what = group.add_mutually_exclusive_group()
    what.add_argument(
        "--model-script",
        metavar="FILE",
        default=None,
        help="answer the agent's model requests from FILE (a model script, .json or .toml)",
    )
    what.add_argument(
        "--model-reply",
        metavar="TEXT",
        default=None,
        help="answer every model request with TEXT, streamed (a one-step repeating script)",
    )
    group.add_argument(
        "--model-profile",
        metavar="NAME",
        default=None,
        help=f"how to point the agent at the model: {', '.join(PROFILE_NAMES)} "
        "(default: recognised from the agent's command)",
    )


def wants_model(args: argparse.Namespace) -> bool:
    """Whether the command line asks for a scripted model."""
    return args.model_script is not None or args.model_reply is not None


def check_options(args: argparse.Namespace) -> None:
    """A usage error for ``--model-profile`` without a model option."""
    if args.model_profile is not None and not wants_model(args):
        raise CliError("--model-profile needs --model-script or --model-reply", EXIT_USAGE)


def run_on_model(args: argparse.Namespace, argv: Sequence[str], err: TextIO, turn: Turn) -> int:
    """Run ``turn`` on the agent ``argv`` pointed at a scripted model (see the module
    docstring); returns the exit code."""
    script = _script(args)
    profile = _profile(args, argv)
    from acp_lite.cli.model import check_server

    check_server("--model-script and --model-reply")
    from acp_lite.models import ScriptedModel
    from acp_lite.models.home import temporary_home
    from acp_lite.models.server import run_in_thread

    model = ScriptedModel(script)
    model_name = script.models[0] if script.models else "scripted-model"
    with (
        run_in_thread(model) as running,
        temporary_home(profile, url=running.url, model=model_name) as agent,
    ):
        err.write(f"{PROG}: scripted model at {running.url}, agent profile {profile.name}\n")
        err.flush()
        try:
            code = turn(agent.argv(argv), agent.env)
        except CliError as exc:
            if not model.failures:
                raise
            report(exc, err)  # what the turn ran into, then why
            code = exc.code
    _report_failures(model, err)
    if model.failures and code != EXIT_INTERRUPTED:
        return EXIT_STOPPED
    return code


def _script(args: argparse.Namespace) -> ModelScript:
    from acp_lite.cli.model import script_of

    return script_of(args.model_reply, args.model_script, "--model-reply")


def _profile(args: argparse.Namespace, argv: Sequence[str]) -> AgentProfile:
    from acp_lite.errors import ModelScriptError
    from acp_lite.models import profile_named, recognise

    if args.model_profile is None:
        return recognise(argv)
    try:
        return profile_named(args.model_profile)
    except ModelScriptError as exc:
        raise CliError(f"--model-profile: {exc}", EXIT_USAGE) from None


def _report_failures(model: ScriptedModel, err: TextIO) -> None:
    """One line per model request the script did not answer: the request, and why."""
    for failure in model.failures:
        why, _, shown = failure.partition("\n")
        request = shown.partition("\n")[0]  # "request #N: METHOD PATH"
        err.write(safe_text(f"{PROG}: unanswered model {request}: {why}").replace("\n", " ") + "\n")
    err.flush()
