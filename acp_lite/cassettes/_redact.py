"""Keeping secrets out of cassettes.

Secrets are found by *name* first, then replaced by *value* everywhere:

* the values of environment variables whose names look like credentials
  (:data:`CREDENTIAL_PATTERNS`: ``*_KEY``, ``*_TOKEN``, ``*SECRET*``,
  ``*PASSWORD*``, ``*_PAT``, ``*ACCESS_KEY*``, ``AUTHORIZATION`` ..., any case;
  ``<redacted:OPENAI_API_KEY>``);
* the payloads of the auth requests (v2 ``auth/login``, v1 ``authenticate``):
  every parameter but the method id, and every string of the agent's *response*
  to them (a token it hands back), ``<redacted:auth>``;
* MCP servers (``session/new`` and the other session-opening requests) and the
  agent's ``terminal/create`` requests: ``env`` entries and ``headers`` whose
  names look like credentials (``Authorization: Bearer X`` counts, and so does
  ``X`` alone), credential-like query parameters and the password of a ``url``,
  and credential-like flags in ``args`` (``--api-key=X``, ``--token X``);
* the same flags and URLs on the recorded agent's own command line (the header);
* wherever they occur, values shaped like well-known credentials, whatever names
  them (:data:`CREDENTIAL_SHAPES`: ``sk-...`` API keys, GitHub / GitLab / Slack
  tokens, AWS access key ids, Google API keys, JWTs, ``Bearer X``),
  ``<redacted:credential>``: a transcript read in another shell (``acp-lite
  cassette from-transcript``) no longer knows the variables that held them.

Each value found anywhere in the connection is then replaced wherever it occurs in
the cassette, in every line, earlier ones too (values found in a message must be
:data:`MIN_LEARNED_LENGTH` long, the environment's :data:`MIN_SECRET_LENGTH`).
A streamed reply can split a secret over two chunks: consecutive ``session/update``
chunks of one session and kind are redacted in their joined text, the placeholder
going to the chunk where the secret began and the rest of it cut from the chunks
after (their joined text then reads as the redacted whole; no chunk is dropped).

More redaction: pass ``redactors`` (callables that edit a record's message in
place), or, under pytest, implement the ``pytest_acp_cassette_redact`` hook.
"""

from __future__ import annotations

import bisect
import fnmatch
import os
import re
import shlex
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import attrs

from acp_lite.cassettes._format import Record

__all__ = [
    "CREDENTIAL_PATTERNS",
    "CREDENTIAL_SHAPES",
    "MIN_LEARNED_LENGTH",
    "MIN_SECRET_LENGTH",
    "Redactor",
    "looks_like_credential",
    "redact_command",
    "redact_records",
    "secrets_in",
    "secrets_in_args",
    "secrets_of",
    "secrets_shaped",
]

CREDENTIAL_PATTERNS = (
    *("*_KEY", "KEY", "*APIKEY", "*_KEY_ID", "*ACCESS_KEY*", "*_TOKEN", "TOKEN"),
    *("*SECRET*", "*PASSWORD*", "*PASSWD*", "*_PAT", "PAT", "*CREDENTIAL*", "*COOKIE*"),
    *("AUTH", "*_AUTH", "*AUTHORIZATION", "SIG", "SIGNATURE"),
)
"""Names (environment variables, headers, flags, query parameters) whose values are
secrets (``fnmatch``, upper-cased, ``-`` read as ``_``)."""

CREDENTIAL_SHAPES = re.compile(
    r"""(?<![A-Za-z0-9_-])(?:
        sk-(?:ant-|proj-|svcacct-)?[A-Za-z0-9_-]{20,}       # OpenAI, Anthropic keys
      | gh[pousr]_[A-Za-z0-9]{30,} | github_pat_[A-Za-z0-9_]{30,}  # GitHub tokens
      | glpat-[A-Za-z0-9_-]{20,}                              # GitLab tokens
      | xox[abposr]-[A-Za-z0-9-]{10,}                         # Slack tokens
      | (?:AKIA|ASIA)[0-9A-Z]{16}                             # AWS access key ids
      | AIza[0-9A-Za-z_-]{35}                                 # Google API keys
      | eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}  # JWTs
    )(?![A-Za-z0-9_-])
    | (?i:\bbearer\s+)(?P<bearer>[A-Za-z0-9._~+/=-]{16,})""",
    re.VERBOSE,
)
"""Values that are credentials by their shape alone, in any text (``bearer``: the
token after ``Bearer``), found whatever names them."""

MIN_SECRET_LENGTH = 4
"""Shorter values are left alone: replacing every ``"1"`` would wreck the cassette."""

MIN_LEARNED_LENGTH = 8
"""Values found in messages (not the environment) are replaced everywhere only from
this length: an auth result's ``"ok"`` is no secret to hunt through the file."""

AUTH_METHODS = frozenset({"auth/login", "authenticate"})

#: The one auth parameter that says *which* way to log in, not with what.
_AUTH_KEEP = frozenset({"methodId"})

_BEARER = re.compile(r"^(?:authorization:\s*)?(?:bearer|basic|token)\s+(\S+)$", re.IGNORECASE)

Redactor = Callable[[Record], Record | None]
"""Extra redaction: returns the record to write (edited, or a new one), or ``None``
to keep it as it is."""


def looks_like_credential(name: str) -> bool:
    """Whether an environment variable (or header, flag, query parameter) name
    looks like a credential."""
    upper = name.strip().lstrip("-").upper().replace("-", "_")
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


def _add(found: dict[str, str], value: object, name: str) -> None:
    if isinstance(value, str) and len(value) >= MIN_LEARNED_LENGTH:
        found.setdefault(value, f"<redacted:{name}>")
        bearer = _BEARER.match(value.strip())
        if bearer and len(bearer.group(1)) >= MIN_LEARNED_LENGTH:
            found.setdefault(bearer.group(1), f"<redacted:{name}>")


def _secrets_in_url(text: str, found: dict[str, str]) -> None:
    if "://" not in text:
        return
    try:
        parts = urlsplit(text.strip())
        password = parts.password
    except ValueError:
        return
    _add(found, password, "url")
    for key, value in parse_qsl(parts.query) + parse_qsl(parts.fragment):
        if looks_like_credential(key):
            _add(found, value, key)


def secrets_in_args(argv: Sequence[str]) -> dict[str, str]:
    """Secret value -> placeholder in a command line: the values of credential-like
    flags (``--api-key=X``, ``--token X``) and ``NAME=X`` words, bearer tokens
    (``Authorization: Bearer X``), URL passwords and credential-like query values."""
    found: dict[str, str] = {}
    for i, arg in enumerate(argv):
        if not isinstance(arg, str):
            continue
        _secrets_in_url(arg, found)
        _add_bearer(arg, found)
        name, sep, value = arg.partition("=")
        if sep and looks_like_credential(name):
            _add(found, value, name.lstrip("-"))
        elif arg.startswith("-") and not sep and looks_like_credential(arg) and i + 1 < len(argv):
            _add(found, argv[i + 1], arg.lstrip("-"))
        header, colon, rest = arg.partition(":")
        if colon and looks_like_credential(header) and " " not in header.strip():
            _add(found, rest.strip(), header.strip())
    return found


def _add_bearer(text: str, found: dict[str, str]) -> None:
    bearer = _BEARER.match(text.strip())
    if bearer:
        _add(found, bearer.group(1), "Authorization")


def _named(entries: object, found: dict[str, str]) -> None:
    """``[{"name": "API_KEY", "value": "..."}]`` lists (MCP env and headers) and
    ``{"API_KEY": "..."}`` maps."""
    if isinstance(entries, list):
        for entry in entries:
            if isinstance(entry, dict):
                name, value = entry.get("name"), entry.get("value")
                if isinstance(name, str) and looks_like_credential(name):
                    _add(found, value, name)
                elif isinstance(value, str):
                    _add_bearer(value, found)
    elif isinstance(entries, dict):
        _named([{"name": k, "value": v} for k, v in entries.items()], found)


def _servers(value: object, found: dict[str, str]) -> None:
    """The secrets of an MCP server (or a terminal request): env, headers, url, args."""
    if not isinstance(value, dict):
        return
    for key in ("env", "headers"):
        _named(value.get(key), found)
    url = value.get("url")
    if isinstance(url, str):
        _secrets_in_url(url, found)
    args = value.get("args")
    if isinstance(args, list):
        found.update({k: v for k, v in secrets_in_args(args).items() if k not in found})


def _strings(value: object) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)


def _auth_request_ids(records: Sequence[Record]) -> set[str]:
    ids = set()
    for record in records:
        m = record.message
        if record.direction == "send" and isinstance(m, dict) and m.get("method") in AUTH_METHODS:
            ids.add(repr(m.get("id")))
    return ids


def _is_auth_response(record: Record, auth_ids: set[str]) -> bool:
    m = record.message
    return (
        record.direction == "recv"
        and isinstance(m, dict)
        and "method" not in m
        and "result" in m
        and repr(m.get("id")) in auth_ids
    )


def secrets_shaped(texts: Iterable[str]) -> dict[str, str]:
    """Secret value -> placeholder, for the values in ``texts`` shaped like
    credentials (:data:`CREDENTIAL_SHAPES`)."""
    found: dict[str, str] = {}
    search = CREDENTIAL_SHAPES.finditer
    for text in texts:
        for match in search(text):
            found.setdefault(match.group("bearer") or match.group(), "<redacted:credential>")
    return found


def secrets_in(records: Iterable[Record]) -> dict[str, str]:
    """Secret value -> placeholder, for the secrets the messages of ``records``
    carry themselves (see the module docstring)."""
    listed = list(records)
    auth_ids = _auth_request_ids(listed)
    found: dict[str, str] = {}
    shaped: dict[str, str] = {}
    for record in listed:
        raw = record.raw
        texts = [raw] if isinstance(raw, str) else _strings(record.message)
        for secret, placeholder in secrets_shaped(texts).items():
            shaped.setdefault(secret, placeholder)
        m = record.message
        if not isinstance(m, dict):
            continue
        params = m.get("params")
        if m.get("method") in AUTH_METHODS and isinstance(params, dict):
            for key, value in params.items():
                if key not in _AUTH_KEEP:
                    for text in _strings(value):
                        _add(found, text, "auth")
        elif _is_auth_response(record, auth_ids):
            for text in _strings(m["result"]):
                _add(found, text, "auth")
        if isinstance(params, dict):
            servers = params.get("mcpServers")
            for server in servers if isinstance(servers, list) else []:
                _servers(server, found)
            if m.get("method") == "terminal/create":
                _servers(params, found)
                command = params.get("command")
                if isinstance(command, str):
                    _secrets_in_url(command, found)
    # Named ones first: their placeholder says what the value was.
    for secret, placeholder in shaped.items():
        found.setdefault(secret, placeholder)
    return found


def _pattern(secrets: Mapping[str, str]) -> re.Pattern[str] | None:
    # Longest first: a secret that contains another is replaced whole.
    if not secrets:
        return None
    return re.compile("|".join(re.escape(s) for s in sorted(secrets, key=len, reverse=True)))


def _replace(value: Any, secrets: Mapping[str, str], pattern: re.Pattern[str] | None) -> Any:
    if pattern is None:
        return value
    if isinstance(value, str):
        return pattern.sub(lambda m: secrets[m.group()], value)
    if isinstance(value, list):
        return [_replace(v, secrets, pattern) for v in value]
    if isinstance(value, dict):
        return {
            _replace(k, secrets, pattern): _replace(v, secrets, pattern) for k, v in value.items()
        }
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


def _redact_message(message: Any, auth_response: bool) -> Any:
    if not isinstance(message, dict):
        return message
    method = message.get("method")
    params = message.get("params")
    if method in AUTH_METHODS and isinstance(params, dict):
        kept = {k: (v if k in _AUTH_KEEP else "<redacted:auth>") for k, v in params.items()}
        return {**message, "params": kept}
    if auth_response:
        return {**message, "result": _all_strings(message["result"])}
    if isinstance(params, dict) and ("mcpServers" in params or method == "terminal/create"):
        return {**message, "params": _redact_named_values(params)}
    return message


def _all_strings(value: Any) -> Any:
    if isinstance(value, str):
        return "<redacted:auth>"
    if isinstance(value, list):
        return [_all_strings(v) for v in value]
    if isinstance(value, dict):
        return {k: _all_strings(v) for k, v in value.items()}
    return value


# -- secrets split across streamed chunks ----------------------------------------------


def _chunk(record: Record) -> tuple[tuple[str, str, str], dict[str, Any], str] | None:
    """A streamed text chunk: (its run key, the dict holding its text, the key)."""
    m = record.message
    if record.direction != "recv" or not isinstance(m, dict) or "id" in m:
        return None
    params = m.get("params")
    update = params.get("update") if isinstance(params, dict) else None
    if not isinstance(update, dict) or not str(update.get("sessionUpdate", "")).endswith("chunk"):
        return None
    content = update.get("content")
    holder: dict[str, Any] | None = None
    if isinstance(content, dict) and isinstance(content.get("text"), str):
        holder = content
    elif isinstance(update.get("text"), str):
        holder = update
    if holder is None:
        return None
    assert isinstance(params, dict)
    key = (str(m.get("method")), str(params.get("sessionId")), str(update["sessionUpdate"]))
    return key, holder, "text"


def _split_texts(
    texts: list[str], secrets: Mapping[str, str], pattern: re.Pattern[str]
) -> list[str]:
    """``texts`` (consecutive chunks) with the secrets of their joined text replaced:
    each placeholder in the chunk where its secret began, the secret cut from all."""
    joined = "".join(texts)
    starts = [0]
    for text in texts:
        starts.append(starts[-1] + len(text))
    out: list[list[str]] = [[] for _ in texts]

    def chunk_of(pos: int) -> int:
        return min(max(bisect.bisect_right(starts, pos) - 1, 0), len(texts) - 1)

    def keep(a: int, b: int) -> None:
        i = chunk_of(a)
        while a < b:
            end = min(b, starts[i + 1])
            if end > a:
                out[i].append(joined[a:end])
            a, i = end, i + 1

    pos = 0
    for match in pattern.finditer(joined):
        keep(pos, match.start())
        out[chunk_of(match.start())].append(secrets[match.group()])
        pos = match.end()
    keep(pos, len(joined))
    return ["".join(parts) for parts in out]


def _redact_chunk_runs(records: list[Record], secrets: Mapping[str, str]) -> list[Record]:
    pattern = _pattern(secrets)
    if pattern is None:
        return records
    out = list(records)
    i = 0
    while i < len(out):
        first = _chunk(out[i])
        if first is None:
            i += 1
            continue
        j = i + 1
        while j < len(out) and (nxt := _chunk(out[j])) is not None and nxt[0] == first[0]:
            j += 1
        if j - i > 1:
            _redact_run(out, i, j, secrets, pattern)
        i = j
    return out


def _redact_run(
    out: list[Record], i: int, j: int, secrets: Mapping[str, str], pattern: re.Pattern[str]
) -> None:
    copies = [_copy(out[k].message) for k in range(i, j)]
    holders = [_chunk(attrs.evolve(out[i + n], message=c)) for n, c in enumerate(copies)]
    texts = [h[1][h[2]] for h in holders if h is not None]
    fixed = _split_texts(texts, secrets, pattern)
    if fixed == texts:
        return
    for n, (holder, text) in enumerate(zip(holders, fixed, strict=True)):
        assert holder is not None
        holder[1][holder[2]] = text
        out[i + n] = attrs.evolve(out[i + n], message=copies[n])


def _copy(value: Any) -> Any:
    if isinstance(value, list):
        return [_copy(v) for v in value]
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    return value


def redact_records(
    records: Iterable[Record],
    *,
    secrets: Mapping[str, str] | None = None,
    redactors: Iterable[Redactor] = (),
) -> list[Record]:
    """``records`` with secrets replaced (see the module docstring). ``secrets``:
    value -> placeholder (default: :func:`secrets_of` this process's environment);
    the secrets the records carry themselves (:func:`secrets_in`) are added."""
    listed = list(records)
    table = secrets_of() if secrets is None else dict(secrets)
    for value, placeholder in secrets_in(listed).items():
        table.setdefault(value, placeholder)
    auth_ids = _auth_request_ids(listed)
    pattern = _pattern(table)
    extra = list(redactors)
    out: list[Record] = []
    for record in _redact_chunk_runs(listed, table):
        if record.raw is not None:
            record = attrs.evolve(record, raw=_replace(record.raw, table, pattern))
        elif record.direction != "exit":
            message = _redact_message(record.message, _is_auth_response(record, auth_ids))
            record = attrs.evolve(record, message=_replace(message, table, pattern))
        for redactor in extra:
            changed = redactor(record)
            if changed is not None:
                record = changed
        out.append(record)
    return out


def redact_command(agent: str, secrets: Mapping[str, str]) -> tuple[str, dict[str, str]]:
    """The agent command line ``agent`` redacted, and the secrets it carried (to
    replace in the recording too)."""
    try:
        argv = shlex.split(agent)
    except ValueError:
        argv = agent.split()
    table = dict(secrets)
    for value, placeholder in secrets_in_args(argv).items():
        table.setdefault(value, placeholder)
    return _replace(agent, table, _pattern(table)), table
