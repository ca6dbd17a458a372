"""The ``acp-lite`` command: drive any ACP v2 agent from the terminal.

``acp-lite prompt [--agent CMD] TEXT`` starts the agent (by default the embedded
reference agent, a friendly echo agent), opens a session in the current directory,
sends TEXT and streams what the agent does until its foreground work ends.
``acp-lite info [--agent CMD]`` prints what the agent says about itself.
``acp-lite login [--agent CMD] [METHOD]`` logs in with one of its auth methods.
``acp-lite scenarios`` lists the reference agent's scenarios (``--scenario NAME``).
A bare ``python`` / ``python3`` first word of ``--agent`` is this interpreter.
``acp-lite replay CASSETTE`` is a stdio agent replaying a recorded cassette;
``acp-lite cassette from-transcript IN OUT`` makes one from a saved transcript.
``acp-lite view TRANSCRIPT`` renders a transcript or cassette as an HTML page.
``acp-lite model serve`` serves a scripted model provider for real agents
(:mod:`acp_lite.cli.model`, its own exit codes). ``prompt --model-script FILE`` (or
``--model-reply TEXT``) runs a real agent's turn on one, the agent in a temporary
home (:mod:`acp_lite.cli.model_run`: 1 also for a model request no step matched).
One module per command in this package: ``prompt``, ``info``, ``login``,
``replay``, ``cassette``, ``model``, ``scenarios``, ``view``; ``app`` parses the command line
and runs them.

Exit codes (``prompt``; ``info`` uses the error codes only):

====  ===============================================================
0     the turn ended with ``end_turn``
1     the turn ended with another stop reason (``cancelled``, ``refusal``,
      ``max_tokens``, ``max_turn_requests``, ``error``, custom) or none
2     bad command line (argparse)
3     the agent could not be started (command not found, not executable)
4     the agent exited or closed its output before we were done
5     protocol problem: version mismatch or an agent that broke the protocol
6     timeout (``--timeout``)
7     the agent answered a request with an error (e.g. prompt rejected)
8     the agent needs authentication: the message says what to run or set
130   interrupted (Ctrl-C)
====  ===============================================================
"""

from __future__ import annotations

from acp_lite.cli.app import main
from acp_lite.cli.base import (
    DEFAULT_TURN_TIMEOUT,
    EXIT_AGENT_EXITED,
    EXIT_AUTH,
    EXIT_CODES,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_PROTOCOL,
    EXIT_REQUEST_ERROR,
    EXIT_START_FAILED,
    EXIT_STOPPED,
    EXIT_TIMEOUT,
    EXIT_USAGE,
    REFERENCE_AGENT,
    CliError,
)

__all__ = [
    "DEFAULT_TURN_TIMEOUT",
    "EXIT_AGENT_EXITED",
    "EXIT_AUTH",
    "EXIT_CODES",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_PROTOCOL",
    "EXIT_REQUEST_ERROR",
    "EXIT_START_FAILED",
    "EXIT_STOPPED",
    "EXIT_TIMEOUT",
    "EXIT_USAGE",
    "REFERENCE_AGENT",
    "CliError",
    "main",
]
