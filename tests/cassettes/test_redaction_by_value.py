"""Redaction by value (issue 24, item 4): a secret found anywhere in a recorded
connection (an MCP header, an auth response, a flag, a URL, the agent's command
line, a credential-like variable) is gone from every line of the cassette, also
when a streamed reply splits it over two chunks; and ``acp-lite replay`` warns
when a cassette would have its client run commands or write files again."""

from __future__ import annotations

import contextlib
import io
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from acp_lite.cassettes import Cassette, Header, Record, Recording, Replayer, recording_of
from acp_lite.cassettes._redact import secrets_in_args, secrets_of
from acp_lite.cli import main


def _msg(**fields: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", **fields}


def _chunk(text: str, sid: str = "s1") -> dict[str, Any]:
    update = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}}
    return _msg(method="session/update", params={"sessionId": sid, "update": update})


BEARER = "tok-bearer-0123456789"
AUTH_TOKEN = "resp-token-9876543210"
URL_TOKEN = "urltok-abcdef123"
URL_PASSWORD = "pw-in-url-55555"
FLAG = "flag-secret-77777"
NEXT_ARG = "next-arg-secret-88888"
COMMAND_LINE = "cmdline-key-4444444"
PAT = "github-pat-1111111111"
AWS = "AKIAEXAMPLE000000"

SERVER = {
    "name": "tools",
    "type": "http",
    "url": f"https://user:{URL_PASSWORD}@mcp.example/api?token={URL_TOKEN}&mode=x",
    "headers": [{"name": "Authorization", "value": f"Bearer {BEARER}"}],
    "args": [f"--api-key={FLAG}", "--token", NEXT_ARG, "--verbose"],
}

#: Every secret, echoed back by the agent in one message after it was seen.
ALL = (BEARER, AUTH_TOKEN, URL_TOKEN, URL_PASSWORD, FLAG, NEXT_ARG, COMMAND_LINE, PAT, AWS)


def _session() -> list[Record]:
    lines = [
        ("send", _msg(id=0, method="authenticate", params={"methodId": "key"})),
        ("recv", _msg(id=0, result={"token": AUTH_TOKEN, "ok": True})),
        ("send", _msg(id=1, method="session/new", params={"cwd": "/w", "mcpServers": [SERVER]})),
        ("recv", _msg(id=1, result={"sessionId": "s1"})),
        ("send", _msg(id=2, method="session/prompt", params={"sessionId": "s1", "prompt": [
            {"type": "text", "text": f"use {BEARER} and {AUTH_TOKEN}"}]})),
        ("recv", _chunk("echo: " + " ".join(ALL))),
        # A secret split over two streamed chunks (and one more after it).
        ("recv", _chunk(f"here: {PAT[:7]}")),
        ("recv", _chunk(f"{PAT[7:]} and {AWS[:3]}")),
        ("recv", _chunk(f"{AWS[3:]}.")),
        ("recv", _msg(id=2, result={"stopReason": "end_turn"})),
    ]  # fmt: skip
    return [Record(d, 0.1 * i, m) for i, (d, m) in enumerate(lines)]


def _recorded() -> Recording:
    environ = {"GITHUB_PAT": PAT, "AWS_ACCESS_KEY_ID": AWS, "PATH": "/bin"}
    agent = f"my-agent --api-key {COMMAND_LINE} --model fast"
    return recording_of(_session(), agent=agent, environ=environ)


def test_every_secret_seen_is_gone_from_every_line() -> None:
    recording = _recorded()
    text = Cassette((recording,)).dumps()
    for secret in ALL:
        assert secret not in text, secret
    # The split secret: neither half is left, and the chunks read as the redacted whole.
    assert PAT[:7] not in text and PAT[7:] not in text and AWS[3:] not in text
    chunks = [r.message["params"]["update"]["content"]["text"] for r in recording.records[6:9]]
    assert "".join(chunks) == "here: <redacted:GITHUB_PAT> and <redacted:AWS_ACCESS_KEY_ID>."
    assert chunks[2] == "."  # each placeholder in the chunk where its secret began
    # Placeholders say what was redacted; what is no secret stays.
    assert recording.header.agent == "my-agent --api-key <redacted:api-key> --model fast"
    auth = recording.records[1].message["result"]
    assert auth == {"token": "<redacted:auth>", "ok": True}
    (server,) = recording.records[2].message["params"]["mcpServers"]
    assert server["headers"] == [{"name": "Authorization", "value": "<redacted:Authorization>"}]
    assert server["args"][-1] == "--verbose" and "mode=x" in server["url"]


def test_names_outside_the_old_patterns_are_credentials() -> None:
    environ = {"GITHUB_PAT": PAT, "AWS_ACCESS_KEY_ID": AWS, "HOME": "/home/u", "TERM": "xterm"}
    assert secrets_of(environ) == {
        PAT: "<redacted:GITHUB_PAT>",
        AWS: "<redacted:AWS_ACCESS_KEY_ID>",
    }
    argv = ["-H", f"Authorization: Bearer {BEARER}", f"https://h/x?access_token={URL_TOKEN}"]
    assert set(secrets_in_args(argv)) >= {BEARER, URL_TOKEN}


def test_the_replay_redacts_the_live_lines_as_the_recording_did() -> None:
    # The client sends the real header, then its token in a prompt: the replay learns
    # it from the first line, as the recording did, and the prompt matches. (The auth
    # token it got is the replay's placeholder.)
    recording = _recorded()
    replayer = Replayer(recording, secrets={"x" * 20: "<redacted:X>"})
    for record in _session():
        if record.direction == "send":
            line = json.dumps(record.message).replace(AUTH_TOKEN, "<redacted:auth>")
            replayer.receive_line(line.encode())
            assert not replayer.broken, replayer.verdict()
    assert replayer.verdict() is None


class _Fd(io.StringIO):
    """A standard stream on a file descriptor (what the stdio replay reads)."""

    def __init__(self, fd: int) -> None:
        super().__init__()
        self.fd = fd

    def fileno(self) -> int:
        return self.fd


def test_acp_lite_replay_warns_of_terminal_and_write_requests(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    acting = [
        ("recv", _msg(id=0, method="terminal/create", params={"sessionId": "s1", "command": "ls"})),
        ("recv", _msg(id=1, method="fs/write_text_file", params={"path": "/w/a", "content": ""})),
        ("recv", _msg(id=2, method="terminal/create", params={"sessionId": "s1", "command": "rm"})),
    ]  # fmt: skip
    path = tmp_path / "acting.acp.jsonl"
    records = [Record(d, 0.0, m) for d, m in acting]
    Cassette((Recording(Header(), tuple(records)),)).save(path)
    # stdin: a pipe the client already closed; stdout: a pipe (the replay closes both).
    read_in, write_in = os.pipe()
    os.close(write_in)
    read_out, write_out = os.pipe()
    err = io.StringIO()
    monkeypatch.setattr(sys, "stdin", _Fd(read_in))
    monkeypatch.setattr(sys, "stdout", _Fd(write_out))
    monkeypatch.setattr(sys, "stderr", err)
    try:
        main(["replay", str(path)])
    finally:
        for fd in (read_in, write_out, read_out):
            with contextlib.suppress(OSError):
                os.close(fd)
    warnings = [line for line in err.getvalue().splitlines() if "warning" in line]
    assert warnings == [
        f"acp-lite replay: warning: {path} holds agent requests that act on the client "
        "(1 fs/write_text_file, 2 terminal/create): replaying it sends them again, and a "
        "client that serves them runs the commands / writes the files"
    ]
