"""A client written with the official Python SDK (agent-client-protocol 0.12.1, v1),
following its client example, that keeps `acp-lite grade-client`'s contract
(docs/grading.md): start the agent in $ACP_AGENT_ARGV, one session in the current
directory, one prompt, print the agent's reply when the turn ends, cancel on SIGINT.

What is the application's job under this SDK (the SDK hands over each update and
request) is written to the spec: a permission request after our cancel is
answered ``cancelled``; fs requests read and write the files asked for. What the
SDK itself does (framing, batches, unknown methods and variants) is what gets graded.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from pathlib import Path
from typing import Any

import acp
from acp import schema


class GradeClient:
    """The callbacks of the SDK's Client interface."""

    def __init__(self) -> None:
        self.text: list[str] = []
        self.cancelled = False
        self.terminals: dict[str, tuple[asyncio.subprocess.Process, bytearray]] = {}

    async def request_permission(
        self, session_id: str, tool_call: Any, options: list[Any], **kwargs: Any
    ) -> schema.RequestPermissionResponse:
        if self.cancelled:  # spec: the cancelled work's requests get `cancelled`
            return schema.RequestPermissionResponse(
                outcome=schema.DeniedOutcome(outcome="cancelled")
            )
        option = next((o for o in options if str(o.kind).startswith("allow")), options[0])
        return schema.RequestPermissionResponse(
            outcome=schema.AllowedOutcome(outcome="selected", optionId=option.option_id)
        )

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        if isinstance(update, schema.AgentMessageChunk):
            content = update.content
            if isinstance(content, schema.TextContentBlock):
                self.text.append(content.text)

    async def read_text_file(
        self,
        session_id: str,
        path: str,
        line: int | None = None,
        limit: int | None = None,
        **kwargs: Any,
    ) -> schema.ReadTextFileResponse:
        return schema.ReadTextFileResponse(content=Path(path).read_text(encoding="utf-8"))

    async def write_text_file(
        self, session_id: str, path: str, content: str, **kwargs: Any
    ) -> schema.WriteTextFileResponse:
        Path(path).write_text(content, encoding="utf-8")
        return schema.WriteTextFileResponse()

    async def create_terminal(
        self, session_id: str, command: str, args: list[str] | None = None, **kwargs: Any
    ) -> schema.CreateTerminalResponse:
        proc = await asyncio.create_subprocess_exec(
            command, *(args or []), stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT
        )
        terminal_id = f"term-{len(self.terminals) + 1}"
        self.terminals[terminal_id] = (proc, bytearray())
        return schema.CreateTerminalResponse(terminalId=terminal_id)

    async def _drain(self, terminal_id: str) -> asyncio.subprocess.Process:
        proc, output = self.terminals[terminal_id]
        if proc.stdout is not None:
            output.extend(await proc.stdout.read())
        await proc.wait()
        return proc

    async def wait_for_terminal_exit(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> schema.WaitForTerminalExitResponse:
        proc = await self._drain(terminal_id)
        return schema.WaitForTerminalExitResponse(exitCode=proc.returncode)

    async def terminal_output(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> schema.TerminalOutputResponse:
        _, output = self.terminals[terminal_id]
        return schema.TerminalOutputResponse(output=output.decode(), truncated=False)

    async def release_terminal(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> schema.ReleaseTerminalResponse:
        proc, _ = self.terminals.pop(terminal_id)
        if proc.returncode is None:
            proc.kill()
        return schema.ReleaseTerminalResponse()

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        raise acp.RequestError.method_not_found(method)

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        return None

    def on_connect(self, conn: Any) -> None:
        return None


async def main() -> int:
    argv = json.loads(os.environ["ACP_AGENT_ARGV"])
    client = GradeClient()
    async with acp.spawn_agent_process(client, argv[0], *argv[1:]) as (conn, _process):
        await conn.initialize(
            protocol_version=acp.PROTOCOL_VERSION,
            client_capabilities=schema.ClientCapabilities(
                fs=schema.FileSystemCapabilities(readTextFile=True, writeTextFile=True),
                terminal=True,
            ),
        )
        session = await conn.new_session(cwd=os.getcwd(), mcp_servers=[])
        loop = asyncio.get_running_loop()
        cancels: list[asyncio.Task[None]] = []

        def interrupted() -> None:
            client.cancelled = True
            cancels.append(loop.create_task(conn.cancel(session_id=session.session_id)))

        loop.add_signal_handler(signal.SIGINT, interrupted)
        await conn.prompt(session_id=session.session_id, prompt=[acp.text_block("grade")])
    sys.stdout.write("".join(client.text) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
