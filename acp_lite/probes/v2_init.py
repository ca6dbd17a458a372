"""Probes of initialization and authentication, for v2 agents.

Written from ``docs-v2-draft/initialization.mdx``, ``docs-v2-draft/authentication.mdx``
and the v2 schema (``InitializeRequest``, ``InitializeResponse``, ``AuthMethod``,
``ErrorCode``). Where the docs and the schema differ the schema wins (spec README):
a requested version below every version the agent supports fails with -32022
(``InitializeResponse.protocolVersion``), where the older docs say "respond with
the latest version it supports".

The probes judging what any initialize answers read the shared connection's
(its lines are their evidence); those that must ask differently send their own
(``fresh``).
"""

from __future__ import annotations

from acp_lite.jsontypes import JsonObject, JsonValue
from acp_lite.probes._context import PROBE_CLIENT_INFO, ProbeContext
from acp_lite.probes._peer import Line, ProbeTimeout
from acp_lite.probes._registry import probe, probe_requirement

__all__: list[str] = []

_INIT = "docs-v2-draft/initialization.mdx"
_AUTH = "docs-v2-draft/authentication.mdx"
_RPC = "JSON-RPC 2.0"
_UNSUPPORTED_VERSION = -32022
_AUTH_REQUIRED = -32000


_req = probe_requirement


# -- helpers ---------------------------------------------------------------------------


def _initialize(ctx: ProbeContext, params: JsonObject) -> Line:
    return ctx.call("initialize", params)


def _params(version: int, capabilities: JsonObject | None = None) -> JsonObject:
    return {
        "protocolVersion": version,
        "capabilities": capabilities or {},
        "info": PROBE_CLIENT_INFO,
    }


def _connection_initialize(ctx: ProbeContext) -> Line:
    """The response to this connection's initialize: the runner's on a shared connection
    (found in the log, so it is the evidence), else one the probe sends now."""
    if ctx.init:
        for line in ctx.peer.log:
            if line.direction == "sent" and line.method == "initialize":
                return ctx.peer.response(line.obj.get("id"), timeout=ctx.timeout)
    return _initialize(ctx, _params(ctx.protocol_version))


def _sent_capabilities(ctx: ProbeContext, response: Line) -> JsonObject:
    """The client capabilities of the initialize that ``response`` answers."""
    for line in ctx.peer.log[: response.index]:
        if line.direction == "sent" and line.obj.get("id") == response.obj.get("id"):
            params = line.obj.get("params")
            caps = params.get("capabilities") if isinstance(params, dict) else None
            return caps if isinstance(caps, dict) else {}
    return {}


def _result(ctx: ProbeContext, line: Line, what: str = "initialize") -> JsonObject:
    result = line.obj.get("result")
    if not isinstance(result, dict):
        error = line.obj.get("error")
        code = error.get("code") if isinstance(error, dict) else None
        ctx.fail(f"{what} answered with no result object (error code {code!r})", line)
    return result


def _code(line: Line) -> object:
    error = line.obj.get("error")
    return error.get("code") if isinstance(error, dict) else None


def _is_version(value: JsonValue | None) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 65535


def _object_or_null(value: JsonValue | None) -> bool:
    return value is None or isinstance(value, dict)


def _auth_methods(init: JsonObject) -> list[JsonObject]:
    methods = init.get("authMethods")
    if not isinstance(methods, list):
        return []
    return [m for m in methods if isinstance(m, dict) and isinstance(m.get("methodId"), str)]


def _agent_method(ctx: ProbeContext) -> str:
    """The methodId of the first advertised ``agent`` method (else the probe skips)."""
    for method in _auth_methods(ctx.init):
        if method.get("type") == "agent":
            method_id = method.get("methodId")
            assert isinstance(method_id, str)
            return method_id
    ctx.skip("the agent advertises no `agent` authentication method")


# -- initialize ------------------------------------------------------------------------


@probe(
    _req(
        "ACP-INIT-001",
        "mandatory",
        "The initialize result has the chosen protocolVersion (an integer 0-65535) and "
        "info with the required name and version strings (title a string or null).",
        f"{_INIT} (Implementation Information); schema/v2 InitializeResponse, Implementation",
    ),
)
def initialize_required_fields(ctx: ProbeContext) -> None:
    line = _connection_initialize(ctx)
    result = _result(ctx, line)
    ctx.check(
        _is_version(result.get("protocolVersion")),
        f"protocolVersion is {result.get('protocolVersion')!r}, not an integer 0-65535",
        line,
    )
    info = result.get("info")
    ctx.check(isinstance(info, dict), "the initialize result has no info object", line)
    assert isinstance(info, dict)
    for key in ("name", "version"):
        ctx.check(
            isinstance(info.get(key), str), f"info.{key} is {info.get(key)!r}, not a string", line
        )
    title = info.get("title")
    ctx.check(title is None or isinstance(title, str), f"info.title is {title!r}", line)


@probe(
    _req(
        "ACP-INIT-002",
        "mandatory",
        "If the Agent supports the requested version, it MUST respond with the same version.",
        f"{_INIT} (Version Negotiation)",
    ),
    isolation="fresh",
)
def supported_version_echoed(ctx: ProbeContext) -> None:
    line = _initialize(ctx, _params(ctx.protocol_version))
    got = _result(ctx, line).get("protocolVersion")
    ctx.check(
        got == ctx.protocol_version,
        f"asked for version {ctx.protocol_version} (which the agent chose before), "
        f"the agent answered {got!r}",
        line,
    )


@probe(
    _req(
        "ACP-INIT-003",
        "mandatory",
        "A client asking for a newer version than the agent's gets a result with the "
        "agent's latest version (the highest it supports at or below the one requested).",
        f"{_INIT} (Version Negotiation); schema/v2 InitializeResponse.protocolVersion",
    ),
    isolation="fresh",
)
def newer_version_gets_latest(ctx: ProbeContext) -> None:
    line = _initialize(ctx, _params(999))
    got = _result(ctx, line, "initialize at version 999").get("protocolVersion")
    ctx.check(
        _is_version(got) and isinstance(got, int) and ctx.protocol_version <= got <= 999,
        f"asked for version 999, the agent answered {got!r} (it supports "
        f"{ctx.protocol_version}, so its latest is at least that and at most 999)",
        line,
    )


@probe(
    _req(
        "ACP-INIT-004",
        "mandatory",
        "When no version the agent supports is at or below the requested one, "
        "initialization fails with error -32022 (unsupported protocol version).",
        "schema/v2 InitializeResponse.protocolVersion, ErrorCode -32022 (the schema "
        f"supersedes {_INIT} Version Negotiation here)",
    ),
    isolation="fresh",
)
def too_old_version_rejected(ctx: ProbeContext) -> None:
    line = _initialize(ctx, _params(0))
    result = line.obj.get("result")
    if isinstance(result, dict):
        got = result.get("protocolVersion")
        ctx.check(
            got == 0,
            f"asked for version 0, the agent answered version {got!r}: above the requested "
            "version, where the schema requires error -32022",
            line,
        )
        return
    ctx.check(
        _code(line) == _UNSUPPORTED_VERSION,
        f"initialize at version 0 failed with code {_code(line)!r}, not -32022",
        line,
    )


@probe(
    _req(
        "ACP-INIT-005",
        "advisory",
        "The -32022 error's data is an UnsupportedProtocolVersionErrorData: requested "
        "(the client's version) and supported (the agent's versions).",
        "schema/v2 ErrorCode -32022, UnsupportedProtocolVersionErrorData",
    ),
    isolation="fresh",
)
def unsupported_version_data(ctx: ProbeContext) -> None:
    line = _initialize(ctx, _params(0))
    if _code(line) != _UNSUPPORTED_VERSION:
        ctx.skip("initialize at version 0 did not fail with -32022")
    error = line.obj.get("error")
    data = error.get("data") if isinstance(error, dict) else None
    ctx.check(isinstance(data, dict), f"the -32022 error has data {data!r}, not an object", line)
    assert isinstance(data, dict)
    ctx.check(
        data.get("requested") == 0,
        f"data.requested is {data.get('requested')!r}, not the requested 0",
        line,
    )
    supported = data.get("supported")
    ctx.check(
        isinstance(supported, list) and all(_is_version(v) for v in supported),
        f"data.supported is {supported!r}, not a list of protocol versions",
        line,
    )
    assert isinstance(supported, list)
    ctx.check(
        ctx.protocol_version in supported,
        f"data.supported {supported!r} lacks version {ctx.protocol_version}, which the "
        "agent negotiated",
        line,
    )


#: Capability objects of the v2 schema: where each may appear, and its known members
#: (each an object or null: ``{}`` advertises, omitted or null does not).
_CAPABILITY_TREE: dict[str, tuple[str, ...]] = {
    "": ("session", "nes", "auth", "_meta"),
    "session": ("prompt", "mcp", "delete", "additionalDirectories", "_meta"),
    "session.prompt": ("image", "audio", "embeddedContext", "_meta"),
    "session.mcp": ("stdio", "http", "_meta"),
}


@probe(
    _req(
        "ACP-INIT-006",
        "mandatory",
        "The agent's capabilities are objects: session, nes and auth, and their nested "
        "capabilities (prompt, mcp, delete, ...), are each an object or null, never a "
        "boolean.",
        f"{_INIT} (Agent Capabilities); schema/v2 AgentCapabilities, SessionCapabilities",
    ),
)
def capabilities_shape(ctx: ProbeContext) -> None:
    line = _connection_initialize(ctx)
    result = _result(ctx, line)
    if "capabilities" not in result:
        return  # the default is {}
    caps = result.get("capabilities")
    ctx.check(isinstance(caps, dict), f"capabilities is {caps!r}, not an object", line)
    for path, members in _CAPABILITY_TREE.items():
        node: JsonValue | None = caps
        for key in path.split(".") if path else ():
            node = node.get(key) if isinstance(node, dict) else None
        if not isinstance(node, dict):
            continue
        for member in members:
            value = node.get(member)
            where = f"capabilities.{path + '.' if path else ''}{member}"
            ctx.check(_object_or_null(value), f"{where} is {value!r}, not an object or null", line)


@probe(
    _req(
        "ACP-INIT-007",
        "mandatory",
        "authMethods, when present, is an array of methods each with a type "
        "discriminator, a methodId and a name (strings), the methodIds unique.",
        f"{_AUTH} (Advertising Authentication, Authentication method types); schema/v2 AuthMethod",
    ),
)
def auth_methods_shape(ctx: ProbeContext) -> None:
    line = _connection_initialize(ctx)
    result = _result(ctx, line)
    if "authMethods" not in result:
        return
    methods = result.get("authMethods")
    ctx.check(isinstance(methods, list), f"authMethods is {methods!r}, not an array", line)
    assert isinstance(methods, list)
    ids: list[str] = []
    for n, method in enumerate(methods):
        ctx.check(isinstance(method, dict), f"authMethods[{n}] is not an object", line)
        assert isinstance(method, dict)
        for key in ("type", "methodId", "name"):
            ctx.check(
                isinstance(method.get(key), str),
                f"authMethods[{n}].{key} is {method.get(key)!r}, not a string",
                line,
            )
        method_id = method.get("methodId")
        assert isinstance(method_id, str)
        ctx.check(method_id not in ids, f"methodId {method_id!r} appears twice", line)
        ids.append(method_id)


@probe(
    _req(
        "ACP-INIT-008",
        "mandatory",
        "Agents MUST advertise a terminal authentication method only when the client "
        "enabled capabilities.auth.terminal.",
        f"{_AUTH} (Authentication method types); schema/v2 AuthMethodTerminal",
    ),
)
def no_terminal_method_unasked(ctx: ProbeContext) -> None:
    line = _connection_initialize(ctx)
    auth = _sent_capabilities(ctx, line).get("auth")
    if isinstance(auth, dict) and auth.get("terminal") is not None:
        ctx.skip("this connection's client advertised capabilities.auth.terminal")
    methods = _result(ctx, line).get("authMethods")
    for method in methods if isinstance(methods, list) else []:
        if isinstance(method, dict) and method.get("type") == "terminal":
            ctx.fail(
                f"the agent advertised terminal method {method.get('methodId')!r} to a "
                "client without capabilities.auth.terminal",
                line,
            )


@probe(
    _req(
        "ACP-INIT-009",
        "mandatory",
        "Unknown client capabilities, fields and _meta keys in initialize are ignored: "
        "the agent answers as it does without them.",
        f"{_INIT} (Capabilities: new capabilities are not a breaking change); "
        "docs-v2-draft/extensibility.mdx (_meta: MUST NOT assign meaning to unknown keys)",
    ),
    isolation="fresh",
)
def unknown_client_fields_ignored(ctx: ProbeContext) -> None:
    capabilities: JsonObject = {
        "futureCapability": {"depth": {}},
        "_acpLiteProbe": {"x": 1},
        "auth": {"futureAuth": {}},
        "_meta": {"acp-lite.dev/probe": True},
    }
    params = _params(ctx.protocol_version, capabilities)
    params["futureField"] = {"x": [1, 2]}
    params["_meta"] = {"acp-lite.dev/probe": "unknown"}
    params["info"] = {**PROBE_CLIENT_INFO, "futureInfo": 1}
    line = _initialize(ctx, params)
    got = _result(ctx, line, "initialize with unknown fields").get("protocolVersion")
    ctx.check(
        got == ctx.protocol_version,
        f"with unknown fields, initialize answered version {got!r}, not {ctx.protocol_version}",
        line,
    )


@probe(
    _req(
        "ACP-INIT-010",
        "mandatory",
        "A second initialize on an initialized connection is answered (a result or an "
        "error, the spec leaves which to the agent), and the connection keeps working.",
        f"{_RPC} section 4 (the Server MUST reply to a request); {_INIT}",
    ),
    isolation="connection",
)
def second_initialize_answered(ctx: ProbeContext) -> None:
    line = _initialize(ctx, _params(ctx.protocol_version))
    ctx.check(line.is_response, "the second initialize got no response", line)
    after = ctx.call("_acp_lite_probe/no_such_method", {})
    ctx.check(after.is_response, "the connection stopped answering", after)


@probe(
    _req(
        "ACP-INIT-011",
        "mandatory",
        "A request sent before initialize is answered (a result or an error), and "
        "initialize still succeeds after it.",
        f"{_RPC} section 4 (the Server MUST reply to a request); {_INIT}",
    ),
    isolation="fresh",
)
def request_before_initialize(ctx: ProbeContext) -> None:
    ctx.call("session/new", {"cwd": ctx.cwd})
    line = _initialize(ctx, _params(ctx.protocol_version))
    _result(ctx, line, "initialize after an earlier request")


@probe(
    _req(
        "ACP-INIT-012",
        "mandatory",
        "initialize without the optional capabilities field (default {}) succeeds.",
        "schema/v2 InitializeRequest (required: protocolVersion, info; capabilities "
        f"default {{}}); {_INIT} (Capabilities are OPTIONAL)",
    ),
    isolation="fresh",
)
def initialize_without_capabilities(ctx: ProbeContext) -> None:
    params: JsonObject = {"protocolVersion": ctx.protocol_version, "info": PROBE_CLIENT_INFO}
    line = _initialize(ctx, params)
    _result(ctx, line, "initialize without capabilities")


# -- authentication --------------------------------------------------------------------


@probe(
    _req(
        "ACP-AUTH-001",
        "mandatory",
        "An agent advertising authMethods MUST implement auth/logout: it is not answered "
        "-32601, and a success is an (empty) result object.",
        f"{_AUTH} (Advertising Authentication, Logging Out); schema/v2 LogoutAuthRequest",
    ),
    isolation="connection",
)
def logout_implemented(ctx: ProbeContext) -> None:
    if not _auth_methods(ctx.init):
        ctx.skip("the agent advertises no authMethods")
    line = ctx.call("auth/logout", {})
    ctx.check(_code(line) != -32601, "auth/logout is not implemented (-32601)", line)
    if "result" in line.obj:
        ctx.check(isinstance(line.obj["result"], dict), "auth/logout's result is no object", line)


@probe(
    _req(
        "ACP-AUTH-002",
        "mandatory",
        "An agent advertising an `agent` authentication method MUST implement auth/login "
        "for it: it is not answered -32601, and a success is an (empty) result object.",
        f"{_AUTH} (Advertising Authentication, Agent-handled authentication); "
        "schema/v2 LoginAuthRequest",
    ),
    isolation="connection",
)
def login_implemented(ctx: ProbeContext) -> None:
    method_id = _agent_method(ctx)
    try:
        line = ctx.call("auth/login", {"methodId": method_id})
    except ProbeTimeout:
        ctx.skip(f"auth/login with {method_id!r} did not answer (an interactive login?)")
    ctx.check(_code(line) != -32601, "auth/login is not implemented (-32601)", line)
    if "result" in line.obj:
        ctx.check(isinstance(line.obj["result"], dict), "auth/login's result is no object", line)


@probe(
    _req(
        "ACP-AUTH-003",
        "advisory",
        "auth/login with a methodId the agent did not advertise is answered with an "
        "error (the methodId must be one of the advertised methods).",
        f"schema/v2 LoginAuthRequest.methodId; {_AUTH} (Agent-handled authentication)",
    ),
)
def login_unknown_method(ctx: ProbeContext) -> None:
    if not _auth_methods(ctx.init):
        ctx.skip("the agent advertises no authMethods (clients MUST NOT call auth/login)")
    line = ctx.call("auth/login", {"methodId": "acp-lite-probe-no-such-method"})
    ctx.check("error" in line.obj, "auth/login with an unadvertised methodId succeeded", line)


def _gated(ctx: ProbeContext) -> Line:
    """A session/new that fails with auth_required (else the probe skips)."""
    line = ctx.call("session/new", {"cwd": ctx.cwd})
    if _code(line) != _AUTH_REQUIRED:
        ctx.skip("session/new does not require authentication on this agent")
    return line


def _login(ctx: ProbeContext, method_id: str) -> None:
    try:
        line = ctx.call("auth/login", {"methodId": method_id})
    except ProbeTimeout:
        ctx.skip(f"auth/login with {method_id!r} did not answer (an interactive login?)")
    if "result" not in line.obj:
        ctx.skip(f"auth/login with {method_id!r} did not succeed (no credentials here?)")


@probe(
    _req(
        "ACP-AUTH-004",
        "mandatory",
        "After a successful auth/login the client can create sessions without an "
        "auth_required (-32000) error.",
        f"{_AUTH} (Agent-handled authentication); schema/v2 ErrorCode -32000",
    ),
    isolation="connection",
)
def login_authenticates(ctx: ProbeContext) -> None:
    method_id = _agent_method(ctx)
    _gated(ctx)
    _login(ctx, method_id)
    line = ctx.call("session/new", {"cwd": ctx.cwd})
    ctx.check(
        _code(line) != _AUTH_REQUIRED,
        "session/new still fails with auth_required after a successful auth/login",
        line,
    )


@probe(
    _req(
        "ACP-AUTH-005",
        "mandatory",
        "After a successful auth/logout, authentication-gated requests require "
        "authentication again (auth_required, -32000).",
        f"{_AUTH} (Logging Out); schema/v2 ErrorCode -32000",
    ),
    isolation="connection",
)
def logout_deauthenticates(ctx: ProbeContext) -> None:
    method_id = _agent_method(ctx)
    _gated(ctx)
    _login(ctx, method_id)
    ctx.result("session/new", {"cwd": ctx.cwd})
    logout = ctx.call("auth/logout", {})
    if "result" not in logout.obj:
        ctx.fail("auth/logout failed", logout)
    line = ctx.call("session/new", {"cwd": ctx.cwd})
    ctx.check(
        _code(line) == _AUTH_REQUIRED,
        f"after auth/logout session/new got {'a result' if 'result' in line.obj else _code(line)!r}"
        ", not auth_required (-32000)",
        line,
    )
