"""``acp-lite info``: what the agent says about itself (``initialize``)."""

from __future__ import annotations

import argparse
import json
import shlex
from collections.abc import Callable, Mapping
from typing import TextIO

from acp_lite.cli.base import EXIT_OK, agent_argv, timeout_kwargs
from acp_lite.cli.errors import explain
from acp_lite.cli.render import json_line, safe_text
from acp_lite.errors import AcpError

__all__ = ["add_parser", "capability_table", "cmd_info"]


def add_parser(
    sub: argparse._SubParsersAction[argparse.ArgumentParser],
    agent_options: Callable[[argparse.ArgumentParser], None],
) -> None:
    """Register the ``info`` subcommand."""
    info = sub.add_parser(
        "info",
        help="print the agent's info, capabilities and auth methods",
        description="Initialize the agent and print its info, capabilities and auth methods.",
    )
    agent_options(info)


def cmd_info(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Run ``acp-lite info``: the raw ``initialize`` result with ``--json``, else a
    summary (v1 agents' ``agentInfo`` / ``agentCapabilities`` read the same way)."""
    from acp_lite.sync import connect

    argv = agent_argv(args)
    try:
        with connect(argv, **timeout_kwargs(args.timeout)) as client:
            # The initialize result as received: nothing lost, custom keys included.
            result = dict(client.initialize_result)
            version = client.protocol_version
            methods = client.auth_methods
    except AcpError as exc:
        raise explain(exc, argv, args.timeout, args.scenario) from None
    if args.json:
        out.write(json_line(result))
        return EXIT_OK
    # The agent wrote every string here: control characters are shown escaped.
    lines: list[str] = []
    info = result.get("info", result.get("agentInfo"))
    info = info if isinstance(info, Mapping) else {}
    name = info.get("title") or info.get("name") or "(unnamed)"
    agent = f"{_field(name)} {_field(info.get('version', ''))}".rstrip()
    lines.append(f"agent:        {agent}\n")
    if info.get("title") and info.get("name"):
        lines.append(f"name:         {_field(info['name'])}\n")
    lines.append(f"command:      {shlex.join(argv)}\n")
    lines.append(f"protocol:     {version}\n")
    caps = result.get("capabilities", result.get("agentCapabilities", {}))
    lines.extend(capability_table(caps))
    if not methods:
        lines.append("auth methods: none\n")
    else:
        lines.append("auth methods:\n")
        for method in methods:
            lines.append(f"  - {_field(method.summary())}\n")
    extra = {k: v for k, v in result.items() if k not in _INFO_KEYS}
    for key, value in extra.items():
        lines.append(f"{_field(key)}: {json.dumps(value, ensure_ascii=False)}\n")
    out.write(safe_text("".join(lines)))
    out.flush()
    return EXIT_OK


def capability_table(caps: object) -> list[str]:
    """The capabilities as lines of a two-column table, one row per leaf, named by
    its dotted path: ``yes`` for an empty object (v2: a capability object present
    is the capability supported; spec "Capabilities") and for ``true``, ``no`` for
    ``false``, else the value as JSON. ``--json`` keeps the object as received."""
    rows = _capability_rows(caps, "")
    if not rows:
        return ["capabilities: none\n"]
    width = max(len(path) for path, _ in rows)
    return ["capabilities:\n", *(f"  {path:<{width}}  {value}\n" for path, value in rows)]


def _capability_rows(value: object, path: str) -> list[tuple[str, str]]:
    if isinstance(value, Mapping) and (value or not path):
        rows: list[tuple[str, str]] = []
        for key, child in value.items():
            name = _field(key)
            rows.extend(_capability_rows(child, f"{path}.{name}" if path else name))
        return rows
    if not path:  # not an object at all: shown as it is
        return [("(value)", _field(json.dumps(value, ensure_ascii=False)))]
    if isinstance(value, Mapping) or value is True:
        return [(path, "yes")]
    if value is False:
        return [(path, "no")]
    if isinstance(value, str):
        return [(path, _field(value))]
    return [(path, _field(json.dumps(value, ensure_ascii=False)))]


def _field(value: object) -> str:
    # One line of agent text: a newline in a name must not forge another line.
    return str(value).replace("\n", "\\n").replace("\r", "\\r")


_INFO_KEYS = (
    "protocolVersion",
    "info",
    "capabilities",
    "authMethods",
    "agentInfo",
    "agentCapabilities",
)
