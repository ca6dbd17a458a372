"""Pure v1 <-> v2 shape translations (JSON dicts in, JSON dicts out; no state).

ACP v1 (``tests/data/schema/v1/schema.json``) and v2 (``schema/v2/schema.json``)
name the same things differently. Each function here maps one v1 wire shape to
the v2 shape the rest of acp_lite understands, or a v2 request to its v1 form.
Unknown fields are kept as they are (v2 classes keep them in ``extra``), so
nothing the agent sent is dropped. The stateful part (turns, modes, ids) is in
:mod:`acp_lite.core.v1`.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "META_KEY",
    "TURN_TAGS",
    "V1_UPDATE_TAGS",
    "advertises_close",
    "auth_method",
    "command",
    "config_option",
    "idle",
    "initialize_params",
    "initialize_response",
    "is_v1_initialize",
    "mode_option",
    "tool_call",
]

#: The ``_meta`` key under which acp_lite marks what it made up from v1 data.
META_KEY = "acp_lite/v1"

#: The v1 SessionUpdate variants (schema v1, SessionUpdate).
V1_UPDATE_TAGS = frozenset(
    {
        "user_message_chunk",
        "agent_message_chunk",
        "agent_thought_chunk",
        "tool_call",
        "tool_call_update",
        "plan",
        "available_commands_update",
        "current_mode_update",
        "config_option_update",
        "session_info_update",
        "usage_update",
        "notice",
        "compaction_update",
        "compaction_summary_chunk",
    }
)
#: The v1 updates that show the agent took the prompt (turn content). The others
#: (available_commands_update, current_mode_update, config_option_update,
#: session_info_update, usage_update, notice, custom tags) may come at any time:
#: agents send the commands right after session/new, which can reach the client
#: after the first prompt was sent.
TURN_TAGS = frozenset(
    {
        "user_message_chunk",
        "agent_message_chunk",
        "agent_thought_chunk",
        "tool_call",
        "tool_call_update",
        "plan",
        "compaction_update",
        "compaction_summary_chunk",
    }
)


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


# ---------------------------------------------------------------------- initialize


def is_v1_initialize(result: object) -> bool:
    """Whether an ``initialize`` result is a v1 answer.

    v1 when ``protocolVersion`` is 1, or 2 without ``info`` (required in v2) and
    either with v1 field names (``agentInfo`` / ``agentCapabilities``) or without
    the v2 ``capabilities``: some agents echo the requested version but answer in
    v1 (notes/real-agents.md: detect by shape, not number); the Python SDK's
    example echo agent answers a bare ``{"protocolVersion": 2}``, which only v1
    can read. A 1 in the v2 shape (``info``, no v1 field) is not: what such an
    agent means is unknowable, so it stays an unsupported version; a 2 with
    ``capabilities`` but no ``info`` is a broken v2 answer.
    """
    if not isinstance(result, dict):
        return False
    version = result.get("protocolVersion")
    v1_fields = "agentInfo" in result or "agentCapabilities" in result
    if version == 1:
        return v1_fields or "info" not in result
    return version == 2 and "info" not in result and (v1_fields or "capabilities" not in result)


def advertises_close(result: object) -> bool:
    """Whether a v1 ``initialize`` result advertises ``session/close``
    (``agentCapabilities.sessionCapabilities.close``, an object: v1 makes the
    method optional, unlike v2 where it is a baseline session method)."""
    caps = _dict(_dict(result).get("agentCapabilities"))
    return isinstance(_dict(caps.get("sessionCapabilities")).get("close"), dict)


def initialize_params(params: Any) -> dict[str, Any]:
    """v2 ``initialize`` params -> v1 ``InitializeRequest`` (protocol version 1).

    ``info`` -> ``clientInfo``; ``capabilities`` -> ``clientCapabilities``:
    ``fs.readTextFile``, ``fs.writeTextFile`` and ``terminal`` are ``true`` only
    where the v2 params carry them as ``true`` in an extra ``clientCapabilities``
    member (what the IO layer adds when the user gave file or terminal handlers),
    else ``false``; ``auth.terminal`` and ``elicitation`` keep their value.
    """
    p = _dict(params)
    caps = _dict(p.get("capabilities"))
    auth = _dict(caps.get("auth"))
    served = _dict(p.get("clientCapabilities"))
    fs = _dict(served.get("fs"))
    # v2 advertises terminal auth with an object, v1 with a boolean.
    terminal = isinstance(auth.get("terminal"), dict) or auth.get("terminal") is True
    v1caps: dict[str, Any] = {
        "fs": {
            "readTextFile": _flag(fs.get("readTextFile")),
            "writeTextFile": _flag(fs.get("writeTextFile")),
        },
        "terminal": _flag(served.get("terminal")),
        "auth": {"terminal": terminal},
    }
    if isinstance(caps.get("elicitation"), dict):
        v1caps["elicitation"] = caps["elicitation"]
    if isinstance(caps.get("_meta"), dict):
        v1caps["_meta"] = caps["_meta"]
    out: dict[str, Any] = {"protocolVersion": 1, "clientCapabilities": v1caps}
    info = p.get("info", p.get("clientInfo"))
    if isinstance(info, dict):
        out["clientInfo"] = info
    if "_meta" in p:
        out["_meta"] = p["_meta"]
    return out


def _flag(value: Any) -> bool:
    return value is True


def initialize_response(result: dict[str, Any]) -> dict[str, Any]:
    """A v1 ``InitializeResponse`` -> a v2 one (``protocolVersion`` stays 1).

    ``agentInfo`` -> ``info``; ``agentCapabilities`` -> ``capabilities``:
    ``promptCapabilities`` booleans -> ``session.prompt`` objects,
    ``mcpCapabilities`` -> ``session.mcp`` (v1 agents all take stdio servers),
    ``sessionCapabilities.delete`` / ``additionalDirectories`` -> the v2 ones,
    ``loadSession`` (and ``sessionCapabilities.resume``) -> ``session.resume``;
    every v1 field is also kept (``loadSession``, ``list``, ``close``, ``sse`` ...)
    so the typed object's ``extra`` holds what v2 has no field for.
    """
    out: dict[str, Any] = {
        k: v for k, v in result.items() if k not in ("agentInfo", "agentCapabilities")
    }
    info = result.get("agentInfo", result.get("info"))
    out["info"] = info if isinstance(info, dict) else {"name": "unknown", "version": "unknown"}
    caps = _dict(result.get("agentCapabilities"))
    prompt = _dict(caps.get("promptCapabilities"))
    mcp = _dict(caps.get("mcpCapabilities"))
    sess = _dict(caps.get("sessionCapabilities"))
    kinds = ("image", "audio", "embeddedContext")
    v2prompt: dict[str, Any] = {k: {} for k in kinds if _flag(prompt.get(k))}
    v2mcp: dict[str, Any] = {"stdio": {}}
    if _flag(mcp.get("http")):
        v2mcp["http"] = {}
    if _flag(mcp.get("sse")):
        v2mcp["sse"] = {}  # no v2 field: kept in extra
    session: dict[str, Any] = {"prompt": v2prompt, "mcp": v2mcp}
    for key, value in sess.items():
        if isinstance(value, dict) or key == "_meta":
            session[key] = value
    if _flag(caps.get("loadSession")) or isinstance(sess.get("resume"), dict):
        session.setdefault("resume", {})
    v2caps: dict[str, Any] = {"session": session}
    if isinstance(caps.get("auth"), dict):
        v2caps["auth"] = caps["auth"]
    for key, value in caps.items():
        if key not in ("promptCapabilities", "mcpCapabilities", "sessionCapabilities", "auth"):
            v2caps[key] = value  # loadSession, _meta, custom fields
    out["capabilities"] = v2caps
    if isinstance(result.get("authMethods"), list):
        out["authMethods"] = [auth_method(m) for m in result["authMethods"]]
    return out


def auth_method(method: Any) -> Any:
    """v1 ``AuthMethod`` (``id``; ``type`` omitted for agent methods; ``env`` an
    object) -> v2 (``methodId``, ``type`` always, ``env`` a list of name/value)."""
    if not isinstance(method, dict):
        return method
    out = dict(method)
    if "methodId" not in out and "id" in out:
        out["methodId"] = out.pop("id")
    out.setdefault("type", "agent")
    env = out.get("env")
    if isinstance(env, dict):
        out["env"] = [{"name": k, "value": v} for k, v in env.items()]
    return out


# ---------------------------------------------------------------------- config options


def config_option(option: Any) -> Any:
    """v1 ``SessionConfigOption`` (``id``; groups have ``group``) -> v2 (``configId``,
    groups ``groupId``). Anything else is kept."""
    if not isinstance(option, dict):
        return option
    out = dict(option)
    if "configId" not in out and "id" in out:
        out["configId"] = out.pop("id")
    options = out.get("options")
    if isinstance(options, list):
        out["options"] = [_select_group(o) for o in options]
    return out


def _select_group(item: Any) -> Any:
    if isinstance(item, dict) and "group" in item and "groupId" not in item:
        out = dict(item)
        out["groupId"] = out.pop("group")
        return out
    return item


def mode_option(modes: dict[str, Any]) -> dict[str, Any]:
    """The v2 select config option (id ``mode``) standing for v1 ``modes``.

    Its ``_meta`` marks it as made up by acp_lite from the v1 ``SessionModeState``:
    setting it sends v1 ``session/set_mode``.
    """
    choices = []
    for mode in modes.get("availableModes") or ():
        if not isinstance(mode, dict):
            continue
        choice = {"value": mode.get("id"), "name": mode.get("name", mode.get("id"))}
        if isinstance(mode.get("description"), str):
            choice["description"] = mode["description"]
        if "_meta" in mode:
            choice["_meta"] = mode["_meta"]
        choices.append(choice)
    return {
        "configId": "mode",
        "name": "Mode",
        "category": "mode",
        "type": "select",
        "currentValue": modes.get("currentModeId"),
        "options": choices,
        "_meta": {META_KEY: {"synthesized": True, "from": "modes"}},
    }


# ---------------------------------------------------------------------- tool calls


def tool_call(fields: dict[str, Any], *, create: bool) -> dict[str, Any]:
    """v1 ``tool_call`` (``create``) or ``tool_call_update`` fields -> v2
    ``tool_call_update`` fields (without ``sessionUpdate``).

    A v1 ``tool_call`` creates the entity: its v1 defaults apply (``status``
    ``pending``, ``kind`` ``other``). Content is mapped item by item (diffs).
    """
    out = {k: v for k, v in fields.items() if k != "sessionUpdate"}
    if create:
        out.setdefault("status", "pending")
        out.setdefault("kind", "other")
    content = out.get("content")
    if isinstance(content, list):
        out["content"] = [_tool_content(c) for c in content]
    return out


def _tool_content(item: Any) -> Any:
    if not isinstance(item, dict) or item.get("type") != "diff":
        return item  # content and terminal items have the same shape in both versions
    path = item.get("path")
    new = item.get("newText")
    if not isinstance(path, str) or not isinstance(new, str):
        return item  # malformed: kept as is (the v2 decoder reports it)
    old = item.get("oldText")
    old = old if isinstance(old, str) else None
    change = {"operation": "add" if old is None else "modify", "path": path, "fileType": "text"}
    meta = dict(_dict(item.get("_meta")))
    # The full texts, which a patch with context lines does not carry.
    meta[META_KEY] = {"path": path, "oldText": old, "newText": new}
    out = {k: v for k, v in item.items() if k not in ("path", "oldText", "newText", "_meta")}
    out.update(
        {
            "changes": [change],
            "patch": {"format": "git_patch", "text": git_patch(path, old, new)},
            "_meta": meta,
        }
    )
    return out


#: The most work ``git_patch`` gives ``difflib``: the product of the line counts it
#: compares, once the common first and last lines are set aside. Past it the lines
#: between are one replacement: ``difflib`` is quadratic on some inputs (a
#: 128k-line rewrite took 69 s) and runs on the connection's thread.
DIFF_BUDGET = 1_000_000
_CONTEXT = 3


def git_patch(path: str, old: str | None, new: str) -> str:
    """A ``diff --git`` section (absolute paths, no ``a/`` ``b/`` prefixes: schema
    ``DiffPatchFormat``) turning ``old`` (``None``: the file is added) into ``new``.

    Lines end at ``\n`` only (as for git). The lines the texts share at their
    start and end are set aside in linear time; the rest is diffed by ``difflib``
    when ``len(a) * len(b)`` is within :data:`DIFF_BUDGET`, else it is one hunk
    removing the old lines and adding the new ones: still a valid patch, only a
    coarser one, and bounded work whatever the agent sent.
    """
    head = [f"diff --git {path} {path}\n"]
    if old is None:
        head.append("new file mode 100644\n")
    if old == new:
        return "".join(head)
    a, b = _lines(old or ""), _lines(new)
    body = [f"--- {'/dev/null' if old is None else path}\n+++ {path}\n"]
    for group in _groups(_opcodes(a, b)):
        i1, i2, j1, j2 = group[0][1], group[-1][2], group[0][3], group[-1][4]
        body.append(f"@@ -{_range(i1, i2)} +{_range(j1, j2)} @@\n")
        for tag, x1, x2, y1, y2 in group:
            if tag == "equal":
                body.extend(_marked(" ", a[x1:x2]))
                continue
            body.extend(_marked("-", a[x1:x2]))
            body.extend(_marked("+", b[y1:y2]))
    # An added empty file has no hunk, and then no ---/+++ lines (as git writes it).
    return "".join(head + body) if len(body) > 1 else "".join(head)


_Opcode = tuple[str, int, int, int, int]


def _lines(text: str) -> list[str]:
    # str.splitlines would also split at \r, \f, \x1c, U+2028 ...: not line ends
    # to git, and a piece without "\n" mid-file would break the patch.
    lines = [line + "\n" for line in text.split("\n")]
    lines[-1] = lines[-1][:-1]
    return lines if lines[-1] else lines[:-1]


def _opcodes(a: list[str], b: list[str]) -> list[_Opcode]:
    """difflib's opcodes for ``a`` -> ``b``, with bounded work (:data:`DIFF_BUDGET`)."""
    n = min(len(a), len(b))
    start = 0
    while start < n and a[start] == b[start]:
        start += 1
    end = 0
    while end < n - start and a[-1 - end] == b[-1 - end]:
        end += 1
    a_end, b_end = len(a) - end, len(b) - end
    middle: list[_Opcode]
    if (a_end - start) * (b_end - start) <= DIFF_BUDGET:
        import difflib  # only for a v1 agent's diffs

        matcher = difflib.SequenceMatcher(None, a[start:a_end], b[start:b_end])
        middle = [
            (tag, x1 + start, x2 + start, y1 + start, y2 + start)
            for tag, x1, x2, y1, y2 in matcher.get_opcodes()
        ]
    else:
        middle = [("replace", start, a_end, start, b_end)]
    ops = [("equal", 0, start, 0, start), *middle, ("equal", a_end, len(a), b_end, len(b))]
    return [op for op in ops if op[1] != op[2] or op[3] != op[4]]


def _groups(ops: list[_Opcode]) -> list[list[_Opcode]]:
    """The hunks: changes with up to :data:`_CONTEXT` lines around them, as
    ``difflib.SequenceMatcher.get_grouped_opcodes`` makes them."""
    n = _CONTEXT
    if not ops:
        return []
    if ops[0][0] == "equal":
        tag, i1, i2, j1, j2 = ops[0]
        ops[0] = tag, max(i1, i2 - n), i2, max(j1, j2 - n), j2
    if ops[-1][0] == "equal":
        tag, i1, i2, j1, j2 = ops[-1]
        ops[-1] = tag, i1, min(i2, i1 + n), j1, min(j2, j1 + n)
    groups: list[list[_Opcode]] = []
    group: list[_Opcode] = []
    for tag, i1, i2, j1, j2 in ops:
        if tag == "equal" and i2 - i1 > 2 * n:
            group.append((tag, i1, min(i2, i1 + n), j1, min(j2, j1 + n)))
            groups.append(group)
            group = []
            i1, j1 = max(i1, i2 - n), max(j1, j2 - n)
        group.append((tag, i1, i2, j1, j2))
    if group and not (len(group) == 1 and group[0][0] == "equal"):
        groups.append(group)
    return groups


def _range(start: int, stop: int) -> str:
    # A unified diff range (as difflib's): 1-based start, a count unless it is 1;
    # an empty range names the line before it.
    length = stop - start
    first = start + 1 if length else start
    return str(first) if length == 1 else f"{first},{length}"


def _marked(mark: str, lines: list[str]) -> list[str]:
    last = "\n\\ No newline at end of file\n"
    return [f"{mark}{line}" if line.endswith("\n") else f"{mark}{line}{last}" for line in lines]


# ---------------------------------------------------------------------- updates


def command(command: Any) -> Any:
    """v1 ``AvailableCommand`` -> v2 (tagged ``"type": "command"``; v1 has no tag)."""
    if isinstance(command, dict) and "type" not in command:
        return {"type": "command", **command}
    return command


def idle(
    stop: str | None, *, error: dict[str, Any] | None = None, meta: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The v2 idle ``state_update`` standing for a v1 turn's end (``background: []``:
    v1 reports no background work); ``meta``'s ``_meta`` (a v1 result's) is kept."""
    update: dict[str, Any] = {"sessionUpdate": "state_update", "state": "idle", "background": []}
    if stop is not None:
        update["stopReason"] = stop
    if error is not None:
        update["error"] = error
    if meta is not None and isinstance(meta.get("_meta"), dict):
        update["_meta"] = meta["_meta"]
    return update
