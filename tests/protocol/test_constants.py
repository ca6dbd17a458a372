"""The spec's value sets have one home (acp_lite.protocol.constants, ErrorCode in
acp_lite.protocol.jsonrpc), checked here against the schema's generated aliases."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path
from typing import get_args

import attrs

import acp_lite.protocol
from acp_lite import errors
from acp_lite.protocol import _generated as g
from acp_lite.protocol import constants as c
from acp_lite.protocol.jsonrpc import ErrorCode

ROOT = Path(__file__).resolve().parents[2]


def test_stop_reasons_are_the_schemas() -> None:
    assert set(get_args(g.StopReason)) == c.STOP_REASONS
    assert {c.END_TURN, c.MAX_TOKENS, c.MAX_TURN_REQUESTS, c.REFUSAL, c.CANCELLED, c.ERROR} == (
        c.STOP_REASONS
    )


def test_states_are_the_state_update_tags() -> None:
    classes = (g.IdleStateUpdate, g.RunningStateUpdate, g.RequiresActionStateUpdate)
    tags = {attrs.fields(cls).state.default for cls in (*classes, g.UnknownStateUpdate)}
    assert tags == c.STATES == set(get_args(c.SessionState))
    assert {c.IDLE, c.RUNNING, c.REQUIRES_ACTION, c.UNKNOWN} == c.STATES
    assert {c.RUNNING, c.REQUIRES_ACTION} == c.BUSY_STATES


def test_error_codes_are_the_schemas() -> None:
    codes = {v for k, v in vars(ErrorCode).items() if k.isupper()}
    assert codes == set(get_args(g.KnownErrorCode))


def test_request_error_classes_use_the_error_codes() -> None:
    """errors.py sits below acp_lite.protocol (the protocol imports it, and the
    reference agent loads it without the protocol), so it spells its codes out:
    they must be ErrorCode's."""
    assert {
        errors.MethodNotFound: ErrorCode.METHOD_NOT_FOUND,
        errors.InvalidParams: ErrorCode.INVALID_PARAMS,
        errors.InternalError: ErrorCode.INTERNAL_ERROR,
        errors.RequestCancelled: ErrorCode.REQUEST_CANCELLED,
        errors.AuthRequired: ErrorCode.AUTH_REQUIRED,
        errors.ResourceNotFound: ErrorCode.RESOURCE_NOT_FOUND,
    } == {cls: cls.default_code for cls in errors._BY_CODE.values()}


def test_the_model_and_the_plugin_use_these_sets() -> None:
    from acp_lite.model import state
    from pytest_acp import conformance

    assert state.STOP_REASONS is c.STOP_REASONS and state.KNOWN_STATES is c.STATES
    assert conformance.KNOWN_STOP_REASONS is c.STOP_REASONS
    assert conformance.KNOWN_STATES is c.STATES


def test_constants_load_without_the_wire_types() -> None:
    code = (
        "import sys, acp_lite.protocol.constants\n"
        "print(sorted(m for m in sys.modules if m.startswith(('acp_lite', 'cattrs', 'attrs'))))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    loaded = ["acp_lite", "acp_lite._lazy_names", "acp_lite._version", "acp_lite.errors",
              "acp_lite.protocol", "acp_lite.protocol.constants"]  # fmt: skip
    assert out.stdout.strip() == str(loaded)


def test_lazy_protocol_exports_match_the_static_list() -> None:
    """acp_lite.protocol's ``__all__`` for type checkers (a literal list) and the
    lazy table it serves at runtime name the same hand-written names."""
    tree = ast.parse((ROOT / "acp_lite/protocol/__init__.py").read_text(encoding="utf-8"))
    static: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "__all__":
            assert isinstance(node.value, ast.List)
            static = {e.value for e in node.value.elts if isinstance(e, ast.Constant)}
    own = set(acp_lite.protocol._OWN)
    assert static == own
    assert set(acp_lite.protocol.__all__) == own | set(g.__all__)
    for name in acp_lite.protocol.__all__:
        assert getattr(acp_lite.protocol, name) is not None or name == "JSON_BACKEND"


def test_lazy_packages_still_reach_their_submodules() -> None:
    """``import acp_lite.protocol`` / ``acp_lite.model`` then attribute access, as
    when the packages imported their submodules eagerly."""
    code = (
        "import acp_lite.protocol as p, acp_lite.model as m\n"
        "print(p.jsonrpc.ErrorCode.METHOD_NOT_FOUND, p.constants.IDLE, m.session.SessionModel,"
        " m.state.KNOWN_STATES is p.STATES, hasattr(p, 'nope'), hasattr(m, 'nope'))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    assert out.stdout.split() == [
        "-32601",
        "idle",
        "<class",
        "'acp_lite.model.session.SessionModel'>",
        "True",
        "False",
        "False",
    ]
