from __future__ import annotations

import importlib
import pkgutil
import types

import acp_lite
from acp_lite import errors


def test_str_names_method_session_and_stderr() -> None:
    exc = errors.AgentExited(
        "agent exited",
        returncode=3,
        session_id="s1",
        method="session/prompt",
        stderr_tail=["boom", "trace"],
    )
    text = str(exc)
    assert "method=session/prompt" in text and "session=s1" in text and "trace" in text
    assert exc.returncode == 3


def test_request_error_from_picks_subclass() -> None:
    assert isinstance(errors.request_error_from(-32601, "nope"), errors.MethodNotFound)
    assert isinstance(errors.request_error_from(-32800, "x"), errors.RequestCancelled)
    rej = errors.request_error_from(-32602, "bad", method="session/prompt")
    assert isinstance(rej, errors.PromptRejected) and rej.code == -32602
    assert "(code -32602)" in str(rej)
    plain = errors.request_error_from(-1, "custom", data={"a": 1})
    assert type(plain) is errors.RequestError and plain.data == {"a": 1}


def test_timeout_is_a_timeout_error() -> None:
    exc = errors.Timeout("waited", awaited="idle", state="running")
    assert isinstance(exc, TimeoutError) and exc.state == "running"


# --- one exception module (issue 22) -------------------------------------------------

#: Exception classes of acp_lite defined outside acp_lite.errors (by name: the CLI's
#: modules are moving), and why.
#: (acp_lite.testing, the reference agent, is not walked at all: it imports nothing
#: from acp_lite, so its own ScriptError, RpcError ... cannot live here.)
NOT_IN_ERRORS: dict[str, str] = {
    "CliError": "the acp-lite command's exit with a message and an "
    "exit code: its main() catches it, no library call raises it",
    # A probe's outcomes and its raw peer's waits: raised inside a probe function and
    # caught by the probe runner, which turns each into a Result (like pytest.skip);
    # acp_lite.probes exports them for people who write probes.
    "ProbeFailed": "a probe's failure outcome, caught by ProbeRun.run",
    "ProbeSkipped": "a probe's skip outcome, caught by ProbeRun.run",
    "ProbeTimeout": "a probe peer's wait that ran out, caught by ProbeRun.run",
    "PeerClosed": "the probed agent closed its output, caught by ProbeRun.run",
    "NegotiationFailed": "no protocol version from initialize, reported as ACP-INIT-000",
}

#: The homes the exceptions had before they moved to acp_lite.errors: still valid.
OLD_PATHS = (
    "acp_lite.protocol.WireError",
    "acp_lite.protocol._errors.WireError",
    "acp_lite.core.rpc.TooManyPendingRequests",
    "acp_lite.files.HandlerError",
    "acp_lite.files.PathNotAllowed",
    "acp_lite.cassettes.CassetteError",
    "acp_lite.cassettes._format.CassetteError",
    "acp_lite.turn.TurnFailed",
)


def _library_modules() -> list[types.ModuleType]:
    """acp_lite and every module under it, the reference agent and ``__main__``
    modules (which would run a program) aside."""
    found = [acp_lite]
    for info in pkgutil.walk_packages(acp_lite.__path__, "acp_lite."):
        name = info.name
        if name.rpartition(".")[2] == "__main__" or name.startswith("acp_lite.testing"):
            continue
        found.append(importlib.import_module(name))
    return found


def _exception_classes() -> dict[str, type[BaseException]]:
    """``module.Name`` -> class, for every public name of every library module that
    holds an exception class of acp_lite (defined there or imported)."""
    out: dict[str, type[BaseException]] = {}
    for module in _library_modules():
        for name, value in vars(module).items():
            if (
                isinstance(value, type)
                and issubclass(value, BaseException)
                and value.__module__.startswith("acp_lite")
                and not name.startswith("_")
            ):
                out[f"{module.__name__}.{name}"] = value
    return out


def _resolve(path: str) -> object:
    module, _, name = path.rpartition(".")
    return getattr(importlib.import_module(module), name)


def test_every_exception_lives_in_errors_and_is_exported_by_acp_lite() -> None:
    found = _exception_classes()
    # The walk sees the moved ones, in their old homes too (the check can fail).
    assert {"acp_lite.core.rpc.TooManyPendingRequests", "acp_lite.files.HandlerError"} <= set(found)
    assert any(cls.__name__ == "CliError" for cls in found.values())
    problems = []
    for where, cls in sorted(found.items()):
        if cls.__qualname__ in NOT_IN_ERRORS:
            continue
        if cls.__module__ != "acp_lite.errors":
            problems.append(f"{where}: defined in {cls.__module__}, not acp_lite.errors")
        if getattr(acp_lite, cls.__name__, None) is not cls:
            problems.append(f"{where}: acp_lite.{cls.__name__} is not this class")
        if cls.__name__ not in acp_lite.__all__ or cls.__name__ not in errors.__all__:
            problems.append(f"{where}: missing from acp_lite.__all__ or errors.__all__")
    assert not problems, "\n".join(problems)
    stale = sorted(set(NOT_IN_ERRORS) - {c.__qualname__ for c in found.values()})
    assert not stale, f"NOT_IN_ERRORS entries for classes that are gone: {stale}"


def test_errors_all_is_every_exception_class_of_errors() -> None:
    classes = {
        name
        for name, value in vars(errors).items()
        if isinstance(value, type) and issubclass(value, BaseException)
    }
    assert classes == set(errors.__all__) - {"request_error_from", "TurnOutcome"}


def test_handler_errors_use_the_error_codes() -> None:
    """errors.py spells its codes out (it sits below the protocol): they must be
    ErrorCode's."""
    from acp_lite.protocol import ErrorCode

    assert errors.HandlerError("x").code == ErrorCode.INTERNAL_ERROR
    not_allowed = errors.PathNotAllowed("x", path="../y")
    assert (not_allowed.code, not_allowed.data) == (ErrorCode.INVALID_PARAMS, {"path": "../y"})


def test_old_exception_paths_still_work() -> None:
    for path in OLD_PATHS:
        cls = _resolve(path)
        name = path.rpartition(".")[2]
        assert cls is getattr(acp_lite, name) is getattr(errors, name), path
