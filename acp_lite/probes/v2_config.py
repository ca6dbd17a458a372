"""Probes of v2 session config options (``session-config-options.mdx``; see
:mod:`acp_lite.probes.v2_session`)."""

from __future__ import annotations

from acp_lite.jsontypes import JsonObject, JsonValue
from acp_lite.probes._context import ProbeContext
from acp_lite.probes._peer import Line
from acp_lite.probes._registry import probe
from acp_lite.probes._v2_session_helpers import (
    _CONFIG,
    INVALID_PARAMS,
    _error,
    _expect_error,
    _new_params,
    _req,
    _result,
)

__all__: list[str] = []

# -- config options ---------------------------------------------------------------------


def _configured_session(ctx: ProbeContext) -> tuple[str, list[JsonObject], Line]:
    """A new session and its config options (skipped when it advertises none)."""
    line = ctx.call("session/new", _new_params(ctx))
    result = _result(line) or {}
    session_id = result.get("sessionId")
    if not isinstance(session_id, str):
        ctx.fail("session/new returned no sessionId", line)
    options = result.get("configOptions")
    if not isinstance(options, list) or not options:
        ctx.skip("the new session advertises no config options")
    return session_id, [o for o in options if isinstance(o, dict)], line


def _select(options: list[JsonObject]) -> JsonObject | None:
    for option in options:
        if option.get("type") == "select" and isinstance(option.get("options"), list):
            return option
    return None


def _values(option: JsonObject) -> list[JsonValue | None]:
    """The values of a select option (flat or grouped)."""
    out: list[JsonValue | None] = []
    items = option.get("options")
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, dict):
            continue
        group = item.get("options")
        if isinstance(group, list):
            out.extend(g.get("value") for g in group if isinstance(g, dict))
        else:
            out.append(item.get("value"))
    return out


def _set(
    ctx: ProbeContext, session_id: str, config_id: JsonValue, kind: str, value: JsonValue
) -> Line:
    params: JsonObject = {
        "sessionId": session_id,
        "configId": config_id,
        "type": kind,
        "value": value,
    }
    return ctx.call("session/set_config_option", params)


def _set_current(ctx: ProbeContext, session_id: str, option: JsonObject) -> Line:
    """Set ``option`` to its current value (a valid request that changes nothing)."""
    kind = "boolean" if option.get("type") == "boolean" else "id"
    return _set(ctx, session_id, option.get("configId"), kind, option.get("currentValue"))


def _current(options: JsonValue | None, config_id: JsonValue) -> JsonValue | None:
    for option in options if isinstance(options, list) else []:
        if isinstance(option, dict) and option.get("configId") == config_id:
            return option.get("currentValue")
    return None


@probe(
    _req(
        "ACP-CONFIG-001",
        "mandatory",
        "Every config option has a default (currentValue); a select option's currentValue "
        "is one of its values.",
        f"{_CONFIG} (Default Values and Graceful Degradation); schema SessionConfigSelect",
    )
)
def config_defaults(ctx: ProbeContext) -> None:
    _, options, line = _configured_session(ctx)
    for option in options:
        config_id = option.get("configId")
        if "currentValue" not in option:
            ctx.fail(f"config option {config_id!r} has no currentValue", line)
        if option.get("type") == "select" and option.get("currentValue") not in _values(option):
            ctx.fail(
                f"select option {config_id!r} has currentValue {option.get('currentValue')!r}, "
                "not one of its values",
                line,
            )


@probe(
    _req(
        "ACP-CONFIG-002",
        "mandatory",
        "session/set_config_option with an unknown configId is rejected with -32602.",
        "schema SetSessionConfigOptionRequest",
    )
)
def config_unknown_id(ctx: ProbeContext) -> None:
    session_id, _, _ = _configured_session(ctx)
    line = _set(ctx, session_id, "acp_lite_probe_no_such_option", "id", "x")
    _expect_error(ctx, line, "an unknown configId", INVALID_PARAMS)


@probe(
    _req(
        "ACP-CONFIG-003",
        "mandatory",
        "session/set_config_option with a value that is not one of a select option's values "
        "is rejected with -32602.",
        f"schema SetSessionConfigOptionRequest; {_CONFIG} (From the Client)",
    )
)
def config_invalid_value(ctx: ProbeContext) -> None:
    session_id, options, _ = _configured_session(ctx)
    option = _select(options)
    if option is None:
        ctx.skip("the session has no select config option")
    line = _set(ctx, session_id, option.get("configId"), "id", "acp_lite_probe_no_such_value")
    _expect_error(ctx, line, "an invalid select value", INVALID_PARAMS)


@probe(
    _req(
        "ACP-CONFIG-004",
        "mandatory",
        "A rejected session/set_config_option leaves the configuration unchanged.",
        "schema SetSessionConfigOptionRequest",
    )
)
def config_rejected_unchanged(ctx: ProbeContext) -> None:
    session_id, options, _ = _configured_session(ctx)
    option = _select(options)
    if option is None:
        ctx.skip("the session has no select config option")
    others = [o for o in options if o is not option and o.get("type") in ("select", "boolean")]
    if not others:
        ctx.skip("the session has a single config option (no way to read the state back)")
    config_id, before = option.get("configId"), option.get("currentValue")
    rejected = _set(ctx, session_id, config_id, "id", "acp_lite_probe_no_such_value")
    if _error(rejected) is None:
        ctx.skip("the invalid value was accepted (ACP-CONFIG-003)")
    line = _set_current(ctx, session_id, others[0])
    result = _result(line)
    if result is None:
        ctx.fail("setting an option to its current value was rejected", line)
    after = _current(result.get("configOptions"), config_id)
    ctx.check(
        after == before,
        f"after a rejected change, {config_id!r} is {after!r}, not {before!r}",
        rejected,
        line,
    )


@probe(
    _req(
        "ACP-CONFIG-005",
        "mandatory",
        "A successful session/set_config_option responds with the complete list of "
        "configuration options and their current values, showing the new value.",
        f"{_CONFIG} (From the Client)",
    )
)
def config_set_full_state(ctx: ProbeContext) -> None:
    session_id, options, _ = _configured_session(ctx)
    option = _select(options)
    if option is None:
        ctx.skip("the session has no select config option")
    config_id = option.get("configId")
    values = [v for v in _values(option) if v != option.get("currentValue")]
    value = values[0] if values else option.get("currentValue")
    line = _set(ctx, session_id, config_id, "id", value)
    result = _result(line)
    if result is None:
        ctx.fail(f"setting {config_id!r} to {value!r} was rejected", line)
    got = result.get("configOptions")
    if not isinstance(got, list):
        ctx.fail("the set_config_option result has no configOptions array", line)
    wanted = {o.get("configId") for o in options}
    seen = {o.get("configId") for o in got if isinstance(o, dict)}
    missing = sorted(str(i) for i in wanted - seen)
    ctx.check(not missing, f"the set_config_option result lacks options {missing}", line)
    now = _current(got, config_id)
    ctx.check(now == value, f"after setting {config_id!r} to {value!r} it is {now!r}", line)


@probe(
    _req(
        "ACP-CONFIG-006",
        "mandatory",
        "session/set_config_option with a value type the Agent does not support is "
        "rejected with -32602.",
        "schema SetSessionConfigOptionRequest (other)",
    )
)
def config_unsupported_type(ctx: ProbeContext) -> None:
    session_id, options, _ = _configured_session(ctx)
    option = _select(options) or options[0]
    line = _set(
        ctx, session_id, option.get("configId"), "_acp_lite_probe_type", option.get("currentValue")
    )
    _expect_error(ctx, line, "an unsupported value type", INVALID_PARAMS)
