"""Properties of the replay engine and the redaction (Hypothesis)."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis_budget import examples

from acp_lite.cassettes import Header, Record, Recording, Replayer, redact_records

_text = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12)
_scalar = st.none() | st.booleans() | st.integers(-5, 5) | _text
_json: st.SearchStrategy[Any] = st.recursive(
    _scalar,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_text, inner, max_size=3),
    max_leaves=8,
)

# One step of a recorded connection: the client's request (answered at once or
# later), a client notification, or an agent notification.
_step = st.sampled_from(["request", "notification", "update", "answer"])


def _recording(steps: list[str], payloads: list[Any]) -> tuple[Recording, list[dict[str, Any]]]:
    """A recording of ``steps`` and the client messages it expects, in order."""
    records: list[Record] = []
    client: list[dict[str, Any]] = []
    open_ids: list[int] = []
    for n, (step, payload) in enumerate(zip(steps, payloads, strict=False)):
        params = {"n": n, "payload": payload}
        if step == "request":
            message = {"jsonrpc": "2.0", "id": n, "method": "_x/request", "params": params}
            open_ids.append(n)
        elif step == "notification":
            message = {"jsonrpc": "2.0", "method": "_x/note", "params": params}
        else:
            if step == "answer" and open_ids:
                reply = {"jsonrpc": "2.0", "id": open_ids.pop(0), "result": params}
            else:
                reply = {"jsonrpc": "2.0", "method": "_x/update", "params": params}
            records.append(Record("recv", float(n), reply))
            continue
        records.append(Record("send", float(n), message))
        client.append(message)
    return Recording(Header(), tuple(records)), client


def _expected(recording: Recording, offset: int) -> list[Any]:
    out = []
    for record in recording.records:
        if record.direction == "recv":
            message = dict(record.message)
            if "id" in message:
                message["id"] += offset
            out.append(message)
    return out


@settings(max_examples=examples(1))
@given(
    steps=st.lists(_step, max_size=12),
    payloads=st.lists(_scalar, min_size=12, max_size=12),
    offset=st.integers(0, 1000),
)
def test_a_client_that_sends_the_recorded_lines_gets_every_agent_line(
    steps: list[str], payloads: list[Any], offset: int
) -> None:
    """Whatever the interleaving: the agent's lines come out in recorded order, each
    response with the id the client used now, and nothing is left unplayed."""
    recording, client = _recording(steps, payloads)
    replayer = Replayer(recording, secrets={})
    got = [json.loads(o.line) for o in replayer.take()]
    for message in client:
        live = {**message, "id": message["id"] + offset} if "id" in message else message
        replayer.receive_line(json.dumps(live).encode())
        got += [json.loads(o.line) for o in replayer.take()]
    assert got == _expected(recording, offset)
    assert replayer.verdict() is None


@settings(max_examples=examples(1))
@given(
    steps=st.lists(_step, min_size=1, max_size=10),
    payloads=st.lists(_scalar, min_size=10, max_size=10),
    data=st.data(),
)
def test_a_changed_client_line_is_reported_where_it_changed(
    steps: list[str], payloads: list[Any], data: st.DataObject
) -> None:
    recording, client = _recording(steps, payloads)
    if not client:
        return
    changed = data.draw(st.integers(0, len(client) - 1))
    replayer = Replayer(recording, secrets={})
    for n, message in enumerate(client):
        if n == changed:
            # (The payloads are never floats.)
            message = {**message, "params": {**message["params"], "payload": 0.5}}
        replayer.receive_line(json.dumps(message).encode())
    assert [m.number for m in replayer.mismatches] == [changed + 1]
    report = replayer.verdict()
    assert report is not None and '+    "payload": 0.5' in report.splitlines()


@settings(max_examples=examples(2))
@given(
    value=_json,
    secret=st.text(st.characters(exclude_characters="\0"), min_size=4, max_size=8),
    where=st.integers(0, 3),
)
def test_no_secret_survives_redaction(value: Any, secret: str, where: int) -> None:
    """A credential's value is gone from every string of the record (keys too),
    wherever it is."""
    assume(secret not in "<redacted:K>")
    planted = {"a": [value, f"x{secret}y"], "b": {secret: secret * where}}
    message = {"jsonrpc": "2.0", "method": "_x", "params": planted}
    (out,) = redact_records([Record("send", 0.0, message)], secrets={secret: "<redacted:K>"})
    strings = list(_strings(out.message))
    assert any("<redacted:K>" in s for s in strings)
    assert not [s for s in strings if secret in s.replace("<redacted:K>", "\0")]


def _strings(value: Any) -> Any:
    """Every string of a JSON value, dict keys included."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)
    elif isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from _strings(item)
