"""``acp-lite model serve``: the scripted model provider (:mod:`acp_lite.models`) as a
local HTTP server, so that a real agent can run against a script instead of a
provider (point its OpenAI, Anthropic or Gemini base URL at the printed address).

``--script FILE`` serves a model script (``.json`` or ``.toml``); ``--reply TEXT``
is the shorthand for a script of one step that answers every request with TEXT,
streamed in chunks. Once listening it prints ``ready http://HOST:PORT`` on stdout
(``--port 0``, the default: a free port), logs each request on stderr, one line
each, and serves until SIGINT (Ctrl-C) or SIGTERM; then it prints a one-line
summary on stderr.

Exit codes: 0 stopped by a signal, every request answered by the script; 1 some
request matched no step or had a body that is not JSON (like a test failing at
teardown: the log above says which); 2 bad command line or model script; 3 the
server could not start (h11, the ``acp-lite[models]`` extra, is missing, or the
address cannot be listened on). trio, h11 and :mod:`acp_lite.models` are imported
only when the command runs, not at the CLI's start-up.
"""

from __future__ import annotations

import argparse
import json
import logging
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, TextIO

from acp_lite.cli.base import (
    EXIT_OK,
    EXIT_START_FAILED,
    EXIT_STOPPED,
    EXIT_USAGE,
    PROG,
    CliError,
)
from acp_lite.cli.render import safe_text

if TYPE_CHECKING:
    from acp_lite.models import EventStream, HttpRequest, HttpResponse, ModelScript, ScriptedModel

__all__ = ["EXIT_MODEL_CODES", "LOGGER", "add_parser", "check_server", "cmd_model", "script_of"]

#: ``acp-lite model serve``'s exit codes -> meaning (shown in its ``--help``).
EXIT_MODEL_CODES: dict[int, str] = {
    EXIT_OK: "stopped by SIGINT/SIGTERM, every request answered by the script",
    EXIT_STOPPED: "a request matched no step, or its body was not JSON",
    EXIT_USAGE: "bad command line or model script",
    EXIT_START_FAILED: "could not start: no h11 (pip install 'acp-lite[models]'), or cannot listen",
}

#: The logger of the model provider and its server; the command shows it on stderr.
LOGGER = "acp_lite.models"
_NAME = f"{PROG} model"


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register the ``model`` subcommand (``serve``)."""
    model = sub.add_parser(
        "model",
        help="a scripted model provider for running real agents (serve)",
        description="A scripted model provider: answers the OpenAI (chat, responses), "
        "Anthropic and Gemini APIs from a model script, without keys.",
    )
    tools = model.add_subparsers(dest="model_command", metavar="TOOL", required=True)
    epilog = "exit codes:\n" + "\n".join(f"  {k:<4} {v}" for k, v in EXIT_MODEL_CODES.items())
    serve = tools.add_parser(
        "serve",
        help="serve a model script over HTTP until Ctrl-C",
        description="Serve a model script on HOST:PORT: prints `ready http://HOST:PORT` on "
        "stdout once listening, logs each request on stderr, and serves until SIGINT "
        "(Ctrl-C) or SIGTERM, then prints a summary on stderr.",
        epilog=epilog,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    what = serve.add_mutually_exclusive_group(required=True)
    what.add_argument("--script", metavar="FILE", help="a model script (.json or .toml)")
    what.add_argument(
        "--reply", metavar="TEXT", help="answer every request with TEXT, streamed in chunks"
    )
    serve.add_argument(
        "--port", metavar="N", type=_port, default=0, help="the port (default 0: a free one)"
    )
    serve.add_argument(
        "--host", metavar="ADDR", default="127.0.0.1", help="the address (default 127.0.0.1)"
    )


def _port(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a port number: {value!r}") from None
    if not 0 <= number <= 65535:
        raise argparse.ArgumentTypeError(f"a port is 0 to 65535, not {value!r}")
    return number


def cmd_model(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """``acp-lite model serve``: serve until a signal; the exit code says whether the
    script answered every request (see the module docstring)."""
    script = _script(args)
    check_server(f"{_NAME} serve")
    import trio

    from acp_lite.models import ScriptedModel

    model = ScriptedModel(script)
    state = _State()
    with _log_to(err):
        try:
            trio.run(_serve, _Logged(model), args.host, args.port, out, state)
        except (OSError, BaseExceptionGroup) as exc:
            leaf = _leaf(exc)
            if state.listening or not isinstance(leaf, OSError):
                raise leaf from None
            where = f"{args.host}:{args.port}"
            raise CliError(f"cannot listen on {where}: {leaf}", EXIT_START_FAILED) from None
    return _summary(model, err)


def _script(args: argparse.Namespace) -> ModelScript:
    return script_of(args.reply, args.script, "--reply")


def check_server(what: str) -> None:
    """Import the model server, or a :class:`CliError` (exit 3) saying that ``what``
    needs h11 and which extra installs it."""
    try:
        import acp_lite.models.server  # noqa: F401  (h11 is checked here, once)
    except ImportError as exc:
        if "h11" not in (exc.name, getattr(exc.__cause__, "name", None)):
            raise
        raise CliError(
            f"{what} needs h11, which the models extra installs: pip install 'acp-lite[models]'",
            EXIT_START_FAILED,
        ) from None


def script_of(reply: str | None, path: str | None, flag: str) -> ModelScript:
    """The model script a command line asks for: ``reply`` (named ``flag``) answers
    every request, streamed; else the script file at ``path``. A malformed file is a
    usage error (the message names the file and the step)."""
    from acp_lite.errors import ModelScriptError
    from acp_lite.models import ModelScript, Reply, load_model_script

    if reply is not None:
        return ModelScript(name=flag, steps=(Reply(text=reply, repeat=True),))
    if path is None:
        raise CliError(f"give a model script or {flag} TEXT", EXIT_USAGE)
    try:
        return load_model_script(path)
    except ModelScriptError as exc:
        # "FILE: model script 'x': steps[1] (tool_call): ...": the file and the step.
        raise CliError(str(exc), EXIT_USAGE) from None


class _State:
    """What the trio run tells the command: whether it got to listen."""

    listening = False


async def _serve(handler: _Logged, host: str, port: int, out: TextIO, state: _State) -> None:
    import trio

    from acp_lite.models.server import open_model_server

    # Signals are caught before listening: one sent right after `ready` is not lost.
    with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        async with open_model_server(handler, host=host, port=port) as server:
            state.listening = True
            out.write(f"ready {server.url}\n")
            out.flush()
            async for signum in signals:
                logging.getLogger(LOGGER).debug("stopping on %s", signal.Signals(signum).name)
                return


class _Logged:
    """The scripted model, logging one line per request: method, path, status (and,
    for an error, the message the client got, which says why)."""

    def __init__(self, model: ScriptedModel) -> None:
        self.model = model
        self.log = logging.getLogger(LOGGER)

    def __call__(self, request: HttpRequest) -> HttpResponse | EventStream:
        response = self.model(request)
        line = f"{request.method} {request.path} {response.status}"
        body = getattr(response, "body", b"")
        if response.status >= 400 and body:
            line += f": {_error_message(body)}"
        # The path is the client's (decoded: it may hold a newline): one line, escaped.
        self.log.info("%s", safe_text(line).replace("\n", "\\n"))
        return response


def _error_message(body: bytes) -> str:
    """The message of a provider-shaped error body (every API has ``error.message``)."""
    try:
        data = json.loads(body)
        message = data["error"]["message"]
    except (ValueError, KeyError, TypeError):
        return body.decode("utf-8", "replace")[:200]
    return str(message)


@contextmanager
def _log_to(err: TextIO) -> Iterator[None]:
    """Show the provider's log (INFO and up) on ``err`` while the server runs."""
    logger = logging.getLogger(LOGGER)
    handler = logging.StreamHandler(err)
    handler.setFormatter(logging.Formatter(f"{_NAME}: %(message)s"))
    saved = logger.level, logger.propagate
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False  # once here is enough (a root handler would repeat it)
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.setLevel(saved[0])
        logger.propagate = saved[1]


def _leaf(exc: BaseException) -> BaseException:
    """The one exception inside nested single-exception groups (trio's nurseries)."""
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    return exc


def _summary(model: ScriptedModel, err: TextIO) -> int:
    requests = len(model.requests)
    unmatched = len(model.unmatched)
    not_json = len(model.failures) - unmatched
    line = f"{_NAME}: stopped; {requests} request(s) answered, {unmatched} unmatched"
    if not_json:
        line += f", {not_json} with a body that is not JSON"
    if model.failures:
        line += " (the log above says why)"
    err.write(line + "\n")
    err.flush()
    return EXIT_STOPPED if model.failures else EXIT_OK
