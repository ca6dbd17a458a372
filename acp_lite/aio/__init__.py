"""The trio layer: agent process transport, connection pump, ``AsyncClient``.

::

    import trio
    from acp_lite import aio

    async def main():
        async with aio.connect(["my-agent", "--stdio"], timeout=30) as client:
            session = await client.new_session(cwd="/abs/dir")
            turn = await session.run("hello")
            print(turn.stop_reason, turn.text)

    trio.run(main)

Contract for the blocking facade (``acp_lite.client`` mirrors these names):

* ``connect(command, *, cwd, env, inherit_env=True, timeout, client_info,
  capabilities, on_permission, on_elicitation, files, terminals, plugins, limits,
  protocol_version, conformance)`` and ``connect_streams(send_stream,
  receive_stream, **same but cwd, env, inherit_env)`` are async context managers
  yielding an :class:`AsyncClient` after ``initialize``. ``env`` is merged onto
  ``os.environ`` unless ``inherit_env=False``. ``timeout`` becomes
  ``Limits.default_timeout``. Both build one :class:`acp_lite.options.ConnectOptions`
  from their keywords (a bad value fails there) and pass it to
  ``connect_with(command, options)`` / ``connect_streams_with(send, receive,
  options)``, which a layer above takes directly: their ``session_view`` maps an
  :class:`AsyncSession` to what callbacks and hooks receive as ``session`` (the
  facade passes its blocking ``Session``); ``hook_client(async_client)`` likewise
  gives what hooks receive as ``client`` (from ``acp_connection_opened`` on).
* :class:`AsyncClient`: ``protocol_version``, ``agent_info``,
  ``agent_capabilities``, ``auth_methods``, ``transcript``, ``events`` (client
  event log of :class:`ConnectionEvent`), ``sessions``, ``closed``, ``pid``,
  ``returncode``, ``stderr_tail()``, ``session(id)``; async ``login``, ``logout``,
  ``new_session``, ``resume_session``, ``list_sessions``, ``delete_session``,
  ``request``, ``notify``, ``aclose`` (alias ``close``, the blocking name).
* :class:`AsyncSession`: ``id``, ``model``, ``state``, ``stop_reason``,
  ``updates``, ``timeline``, ``text(submission=None)``; async ``submit(content)``
  (sent, returns the pending ``Submission``), ``wait_inserted(submission)``,
  ``prompt(content)`` (= submit + wait_inserted), ``run(content) -> Turn``,
  ``wait_idle``, ``wait_quiet(grace=0.5)``, ``cancel(wait=False)``,
  ``set_config_option``, ``cancel_tool_call``, ``cancel_terminal``, ``close``,
  ``delete``; sync ``withdraw(submission)`` (``$/cancel_request`` for a held
  prompt), ``on_update(callback) -> unsubscribe`` (callbacks in a worker thread,
  batched); ``async for event in session`` / ``iter_updates(from_start=False, timeout=None)``.
* Every wait takes ``timeout=None`` (= ``Limits.default_timeout``). Cancelling or
  timing out a request sends ``$/cancel_request``; its late response is still
  applied to the model.
* Behaviour the spec leaves open: a ``$/cancel_request`` from the agent for
  a ``session/request_permission`` is answered with the ``cancelled`` outcome (the
  schema says so), other withdrawn agent requests with -32800. An oversize line is
  recorded in the transcript as its first 200 bytes + ``...<truncated>``. Lines
  that are not JSON are not answered (usually stray logs); invalid requests with
  an id are answered with their JSON-RPC error.
"""

from acp_lite.aio._client import (
    PROTOCOL_VERSION,
    AsyncClient,
    connect,
    connect_streams,
    connect_streams_with,
    connect_with,
)
from acp_lite.aio._memory import PipeAgent, connect_in_memory
from acp_lite.aio._process import AgentProcess
from acp_lite.aio._session import AsyncSession, PromptBlock, PromptContent, prompt_blocks
from acp_lite.aio._terminals import (
    MINIMAL_ENV,
    EnvPolicy,
    LocalTerminals,
    TerminalCommand,
    TerminalExitStatus,
    TerminalHandler,
    TerminalOutput,
)
from acp_lite.core import ConnectionEvent, OversizeLine

__all__ = [
    "MINIMAL_ENV",
    "PROTOCOL_VERSION",
    "AgentProcess",
    "AsyncClient",
    "AsyncSession",
    "ConnectionEvent",
    "EnvPolicy",
    "LocalTerminals",
    "OversizeLine",
    "PipeAgent",
    "PromptBlock",
    "PromptContent",
    "TerminalCommand",
    "TerminalExitStatus",
    "TerminalHandler",
    "TerminalOutput",
    "connect",
    "connect_in_memory",
    "connect_streams",
    "connect_streams_with",
    "connect_with",
    "prompt_blocks",
]
