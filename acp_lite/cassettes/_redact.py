"""Keeping secrets out of cassettes.

Three kinds of secret are replaced by placeholders before a cassette is written:

* the values of environment variables whose names look like credentials
  (``*_KEY``, ``*_TOKEN``, ``*SECRET*``, ``*PASSWORD*``, any case), wherever they
  appear in a string (``<redacted:OPENAI_API_KEY>``);
* the payloads of the auth requests (v2 ``auth/login``, v1 ``authenticate``):
  every parameter but the method id;
* the values of MCP server ``env`` entries and ``headers`` whose names look like
  credentials (``session/new`` and the other session-opening requests carry them).

More redaction: pass ``redactors`` (callables that edit a record's message in
place), or, under pytest, implement the ``pytest_acp_cassette_redact`` hook.
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import attrs

from acp_lite.cassettes._format import Record

__all__ = [
    "CREDENTIAL_PATTERNS",
    "MIN_SECRET_LENGTH",
    "Redactor",
    "looks_like_credential",
    "redact_records",
    "secrets_of",
]

CREDENTIAL_PATTERNS = ("*_KEY", "*_TOKEN", "*SECRET*", "*PASSWORD*")
"""Environment variable names whose values are secrets (``fnmatch``, upper-cased)."""

MIN_SECRET_LENGTH = 4
"""Shorter values are left alone: replacing every ``"1"`` would wreck the cassette."""

AUTH_METHODS = frozenset({"auth/login", "authenticate"})

#: The one auth parameter that says *which* way to log in, not with what.
_AUTH_KEEP = frozenset({"methodId"})

Redactor = Callable[[Record], Record | None]
"""Extra redaction: returns the record to write (edited, or a new one), or ``None``
to keep it as it is."""


def looks_like_credential(name: str) -> bool:
    """Whether an environment variable (or header) name looks like a credential."""
    upper = name.upper().replace("-", "_")
    return any(fnmatch.fnmatchcase(upper, pattern) for pattern in CREDENTIAL_PATTERNS)


def secrets_of(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """Secret value -> placeholder, for the credential-like variables of
    ``environ`` (default: this process's environment)."""
    env = os.environ if environ is None else environ
    found: dict[str, str] = {}
    for name, value in env.items():
        if looks_like_credential(name) and len(value) >= MIN_SECRET_LENGTH:
            found[value] = f"<redacted:{name}>"
    return found


def _replace(value: Any, secrets: Mapping[str, str]) -> Any:
    if isinstance(value, str):
        # Longest first: a secret that contains another is replaced whole.
        for secret in sorted(secrets, key=len, reverse=True):
            if secret in value:
                value = value.replace(secret, secrets[secret])
        return value
    if isinstance(value, list):
        return [_replace(v, secrets) for v in value]
    if isinstance(value, dict):
        return {_replace(k, secrets): _replace(v, secrets) for k, v in value.items()}
    return value


def _redact_named_values(value: Any) -> Any:
    """``[{"name": "API_KEY", "value": "..."}]`` lists (MCP env and headers)."""
    if isinstance(value, list):
        return [_redact_named_values(v) for v in value]
    if isinstance(value, dict):
        out = {k: _redact_named_values(v) for k, v in value.items()}
        name = out.get("name")
        if isinstance(name, str) and "value" in out and looks_like_credential(name):
            out["value"] = f"<redacted:{name}>"
        return out
    return value


def _redact_message(message: Any) -> Any:
    if not isinstance(message, dict):
        return message
    method = message.get("method")
    params = message.get("params")
    if method in AUTH_METHODS and isinstance(params, dict):
        kept = {k: (v if k in _AUTH_KEEP else "<redacted:auth>") for k, v in params.items()}
        return {**message, "params": kept}
    if isinstance(params, dict) and "mcpServers" in params:
        return {**message, "params": _redact_named_values(params)}
    return message


def redact_records(
    records: Iterable[Record],
    *,
    secrets: Mapping[str, str] | None = None,
    redactors: Iterable[Redactor] = (),
) -> list[Record]:
    """``records`` with secrets replaced (see the module docstring). ``secrets``:
    value -> placeholder (default: :func:`secrets_of` this process's environment)."""
    table = secrets_of() if secrets is None else dict(secrets)
    extra = list(redactors)
    out: list[Record] = []
    for record in records:
        if record.raw is not None:
            record = attrs.evolve(record, raw=_replace(record.raw, table))
        elif record.direction != "exit":
            record = attrs.evolve(record, message=_replace(_redact_message(record.message), table))
        for redactor in extra:
            changed = redactor(record)
            if changed is not None:
                record = changed
        out.append(record)
    return out
