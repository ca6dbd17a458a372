"""Scripts for the reference agent: what it does for each prompt.

A :class:`Script` holds one :class:`Turn` per prompt (counted per session; the
last turn repeats for later prompts; no turns at all means "echo the prompt").
A turn is an ordered list of *steps*. Scripts are plain attrs objects and can
also be written as JSON or TOML (:func:`load_script`); there every step is a
table with a ``type`` key.

What a turn does (each part can be switched off to write a broken agent):

1. report ``state_update`` ``running`` (turn key ``running = false`` skips it);
2. insert the prompt: respond to ``session/prompt`` with ``{"messageId": ...}``
   and report the ``user_message`` -- unless the turn has an explicit
   ``insert`` or ``reject`` step, which then decides when that happens;
3. run the steps; a ``session/cancel`` is honoured between steps and
   interrupts waits (``sleep``, ``wait_for_cancel``, ``wait_for_prompt``,
   ``permission``, ``elicit``, ``text`` delays);
4. report ``idle`` with ``stop_reason`` (turn key, default ``end_turn``); a
   ``fail`` step ends with ``error``, a cancel with ``cancel_stop_reason``
   (default ``cancelled``), a ``stop`` step with its own reason; ``idle =
   false`` never reports it. Tool calls left unfinished by a failure or a
   cancel get ``failed`` / ``cancelled`` first.

Steps (``type`` = ...):

=================== ==============================================================
``update``          ``update`` (a raw ``SessionUpdate`` dict) as one
                    ``session/update``; ``session_id`` overrides the session.
``text``            stream ``text`` (or the list ``chunks``) as
                    ``agent_message_chunk`` (``thought = true``: thought chunks);
                    ``delay`` seconds between chunks; ``message_id`` optional.
``echo``            stream the prompt's text back word by word (``prefix``).
``insert``          insert the prompt now; ``respond = false`` defers the
                    response to a ``respond`` step (or the end of the turn);
                    ``user_message = false`` omits the echo (broken);
                    ``response_first = false`` sends the update first;
                    ``message_id`` chooses the id (default ``user-<n>``).
``respond``         send the deferred prompt response (inserting first if needed).
``reject``          answer the prompt with a JSON-RPC error (``code``,
                    ``message``, ``data``): not inserted. As the first step no
                    foreground work starts; later, the work ends with ``error``.
``permission``      ``session/request_permission`` (``title``, ``description``,
                    ``options``, ``tool_call``), reporting ``requires_action``
                    while it waits; then runs ``branches[<option id>]``, else
                    ``branches[<option kind>]``, else ``branches["default"]``.
                    The ``cancelled`` outcome runs ``branches["cancelled"]``,
                    and without one ends the work ``cancelled``. A
                    ``session/cancel`` withdraws the request (``$/cancel_request``).
``elicit``          ``elicitation/create`` in form mode (``message``,
                    ``schema``); branches on the action (``accept``,
                    ``decline``, ``cancel``, ``default``), or runs
                    ``branches["unsupported"]`` if the client lacks the form
                    capability.
``sleep``           wait ``seconds``.
``wait_for_cancel`` wait until ``session/cancel`` (at most ``timeout`` seconds).
``wait_for_prompt`` wait until another prompt of the session is waiting (held, or
                    inserted into this work), at most ``timeout`` seconds
                    (default 10): a deterministic "while busy" window for tests.
``ignore_cancel``   (broken) read ``session/cancel`` and go on: wait until the
                    client cancelled and then sent a request the agent answered
                    (at most ``timeout`` seconds, default 10), then carry on as if
                    not cancelled. The answer proves the cancel was read before
                    the work went on. Steps before it are not ended by a cancel
                    (their waits are cut short).
``fail``            end the work: idle ``stopReason: error`` with ``error``
                    ``{code, message, data}``.
``stop``            end the work now with ``stop_reason``.
``background``      start background work (``kind`` = ``tool_call`` or
                    ``terminal``, ``id``, ``title``, ``seconds``,
                    ``cancellable``): announced, listed in ``background``;
                    finalised, then unlisted. ``tool_call/cancel`` /
                    ``terminal/cancel`` stop it early.
``flood``           ``count`` agent_message_chunks as fast as possible.
``exit``            exit the process with ``code``.
``stderr``          write ``text`` to stderr.
``raw``             write ``text`` (or ``hex`` bytes) ``repeat`` times to
                    stdout, then a newline unless ``newline = false``.
``ignore_sigterm``  ignore SIGTERM from now on.
``hang``            block this turn forever, ignoring cancel.
=================== ==============================================================

Strings in steps may use placeholders: ``{{turn}}`` (1-based prompt number in
the session), ``{{session_id}}``, ``{{message_id}}`` (the user message id) and
``{{prompt_text}}``. Entity ids must stay unique per session, so scripts that
name ids write e.g. ``"toolCallId": "call-{{turn}}"``.

Script-level keys: ``name``, ``description``, ``turns``, ``while_busy``
(``hold``: a prompt sent during active work is held until the next turn;
``insert``: it is inserted at once and its steps run in the same foreground
work), ``page_size`` for ``session/list``, ``sessions`` (pre-existing sessions:
``sessionId``, ``cwd``, ``title``, ``history`` = updates to replay),
``session_updates`` (raw updates sent for every new session *before* the
``session/new`` response, which the spec allows), ``auth_required``,
``protocol_version`` (answer another version, for tests),
``unresponsive`` (methods never answered), ``ignore_sigterm``, ``linger``
(seconds to stay alive after stdin closes; ``-1`` = forever).

Expectations (a fake agent that checks its client; ``_expect.py`` lists the
events it reports): with ``expect = "ordered"`` (or ``"unordered"``) each turn
is played once, for the prompt that matches it, instead of by prompt number:
turn keys ``prompt`` (the exact prompt text), ``prompt_pattern`` (a regular
expression searched in it) and ``label`` (its name in reports; a
``permission`` step takes a ``label`` too). Ordered, a prompt must match the
first turn still owed; unordered, any. A prompt that matches none is rejected
(-32602), and requests for methods other than ``initialize``, ``session/new``,
``session/prompt``, ``session/close`` (``auth/*`` with ``auth_required``) and
those listed in ``allowed_methods`` get -32601. ``initialize_result`` holds
keys that replace those of the ``initialize`` answer.

In Python::

    refuse = [Stop(stop_reason="refusal")]
    Script(turns=[Turn(steps=[Text(chunks=["Hello", " world"]),
                              Permission(branches={"reject_once": refuse})])])

The same in TOML (a turn may also be a bare list of steps, as in JSON)::

    [[turns]]
    steps = [
      { type = "text", chunks = ["Hello", " world"] },
      { type = "permission", branches.reject_once = [
          { type = "stop", stop_reason = "refusal" } ] },
    ]

and JSON: ``{"turns": [[{"type": "text", "text": "Hello"}, {"type": "fail"}]]}``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, TypeAlias

import attrs

from acp_lite import _lazy_attrs as lazy_attrs
from acp_lite.jsontypes import JsonObject, JsonValue

if TYPE_CHECKING:
    from pathlib import Path

__all__ = [
    "DEFAULT_PERMISSION_OPTIONS",
    "Background",
    "Echo",
    "Elicit",
    "Exit",
    "Fail",
    "Flood",
    "Hang",
    "IgnoreCancel",
    "IgnoreSigterm",
    "Insert",
    "Permission",
    "Raw",
    "Reject",
    "Respond",
    "Script",
    "ScriptError",
    "Sleep",
    "Stderr",
    "Step",
    "Stop",
    "Text",
    "Turn",
    "Update",
    "WaitForCancel",
    "WaitForPrompt",
    "load_script",
]


class ScriptError(ValueError):
    """A script file or dict is malformed; the message says where."""


# Field metadata marking nested steps, so loading/dumping can recurse.
_STEPS = {"acp_steps": "list"}
_BRANCHES = {"acp_steps": "branches"}

DEFAULT_PERMISSION_OPTIONS: tuple[dict[str, str], ...] = (
    {"optionId": "allow", "name": "Allow once", "kind": "allow_once"},
    {"optionId": "allow_always", "name": "Always allow", "kind": "allow_always"},
    {"optionId": "reject", "name": "Reject", "kind": "reject_once"},
)


@lazy_attrs.frozen(kw_only=True)
class Update:
    """Emit one raw ``session/update`` payload."""

    TYPE: ClassVar[str] = "update"
    update: Mapping[str, object]
    session_id: str | None = None


@lazy_attrs.frozen(kw_only=True)
class Text:
    """Stream text as agent message (or thought) chunks."""

    TYPE: ClassVar[str] = "text"
    text: str = ""
    chunks: list[str] | None = None
    thought: bool = False
    message_id: str | None = None
    delay: float = 0.0


@lazy_attrs.frozen(kw_only=True)
class Echo:
    """Stream the prompt's text back, word by word."""

    TYPE: ClassVar[str] = "echo"
    prefix: str = ""
    delay: float = 0.0


@lazy_attrs.frozen(kw_only=True)
class Insert:
    """Insert the prompt (assign its messageId) and, by default, respond."""

    TYPE: ClassVar[str] = "insert"
    respond: bool = True
    user_message: bool = True
    response_first: bool = True
    message_id: str | None = None


@lazy_attrs.frozen(kw_only=True)
class Respond:
    """Send the prompt response that an ``Insert(respond=False)`` deferred."""

    TYPE: ClassVar[str] = "respond"


@lazy_attrs.frozen(kw_only=True)
class Reject:
    """Answer the prompt with a JSON-RPC error: it is not inserted."""

    TYPE: ClassVar[str] = "reject"
    code: int = -32603
    message: str = "Prompt rejected by the script"
    data: JsonValue = None


@lazy_attrs.frozen(kw_only=True)
class Permission:
    """Ask ``session/request_permission`` and branch on the chosen option."""

    TYPE: ClassVar[str] = "permission"
    title: str = "Allow this tool call?"
    description: str | None = None
    options: Sequence[Mapping[str, object]] = attrs.field(
        factory=lambda: [dict(o) for o in DEFAULT_PERMISSION_OPTIONS]
    )
    tool_call: Mapping[str, object] | None = None
    requires_action: bool = True
    branches: dict[str, list[Step]] = attrs.field(factory=dict, metadata=_BRANCHES)
    label: str | None = None


@lazy_attrs.frozen(kw_only=True)
class Elicit:
    """Ask ``elicitation/create`` (form mode) and branch on the action."""

    TYPE: ClassVar[str] = "elicit"
    message: str = "Please fill in the form"
    schema: Mapping[str, object] = attrs.field(
        factory=lambda: {
            "type": "object",
            "properties": {"name": {"type": "string", "title": "Name"}},
            "required": ["name"],
        }
    )
    requires_action: bool = True
    branches: dict[str, list[Step]] = attrs.field(factory=dict, metadata=_BRANCHES)


@lazy_attrs.frozen(kw_only=True)
class Sleep:
    """Wait; a ``session/cancel`` interrupts the wait."""

    TYPE: ClassVar[str] = "sleep"
    seconds: float


@lazy_attrs.frozen(kw_only=True)
class WaitForCancel:
    """Wait until the client cancels (or ``timeout`` seconds pass)."""

    TYPE: ClassVar[str] = "wait_for_cancel"
    timeout: float | None = None


@lazy_attrs.frozen(kw_only=True)
class WaitForPrompt:
    """Wait until another prompt of the session arrives (or ``timeout`` seconds pass).

    A window "while the work runs" that lasts exactly until the client's next
    prompt, where a ``Sleep`` would have to guess how long the client needs.
    """

    TYPE: ClassVar[str] = "wait_for_prompt"
    timeout: float = 10.0


@lazy_attrs.frozen(kw_only=True)
class IgnoreCancel:
    """(Broken) Go on after a cancel, once a request sent after it was answered: the
    answer proves the cancel was read (input is read in order), not crossed."""

    TYPE: ClassVar[str] = "ignore_cancel"
    timeout: float = 10.0


@lazy_attrs.frozen(kw_only=True)
class Fail:
    """End the foreground work with ``stopReason: error``."""

    TYPE: ClassVar[str] = "fail"
    code: int = -32603
    message: str = "The scripted work failed"
    data: JsonValue = None


@lazy_attrs.frozen(kw_only=True)
class Stop:
    """End the foreground work now with the given stop reason."""

    TYPE: ClassVar[str] = "stop"
    stop_reason: str | None = "end_turn"


@lazy_attrs.frozen(kw_only=True)
class Background:
    """Start background work that outlives the turn."""

    TYPE: ClassVar[str] = "background"
    id: str
    kind: str = "tool_call"  # or "terminal"
    title: str = "Background task"
    seconds: float = 0.5
    cancellable: bool = True


@lazy_attrs.frozen(kw_only=True)
class Flood:
    """Stream ``count`` agent_message_chunk updates as fast as possible."""

    TYPE: ClassVar[str] = "flood"
    count: int
    text: str = "x"
    batch: int = 2000


@lazy_attrs.frozen(kw_only=True)
class Exit:
    """Exit the agent process with ``code`` (a crash when non-zero)."""

    TYPE: ClassVar[str] = "exit"
    code: int = 1


@lazy_attrs.frozen(kw_only=True)
class Stderr:
    """Write free-form text to stderr."""

    TYPE: ClassVar[str] = "stderr"
    text: str


@lazy_attrs.frozen(kw_only=True)
class Raw:
    """Write raw bytes to stdout (garbage, partial or oversize lines)."""

    TYPE: ClassVar[str] = "raw"
    text: str = ""
    hex: str | None = None
    repeat: int = 1
    newline: bool = True

    def payload(self) -> bytes:
        """The bytes to write, newline included."""
        unit = bytes.fromhex(self.hex) if self.hex is not None else self.text.encode()
        return unit * self.repeat + (b"\n" if self.newline else b"")


@lazy_attrs.frozen(kw_only=True)
class IgnoreSigterm:
    """Ignore SIGTERM from now on (for shutdown-ladder tests)."""

    TYPE: ClassVar[str] = "ignore_sigterm"


@lazy_attrs.frozen(kw_only=True)
class Hang:
    """Block this turn forever; even a cancel gets no answer."""

    TYPE: ClassVar[str] = "hang"


Step: TypeAlias = (
    Update
    | Text
    | Echo
    | Insert
    | Respond
    | Reject
    | Permission
    | Elicit
    | Sleep
    | WaitForCancel
    | WaitForPrompt
    | IgnoreCancel
    | Fail
    | Stop
    | Background
    | Flood
    | Exit
    | Stderr
    | Raw
    | IgnoreSigterm
    | Hang
)

STEP_TYPES: dict[str, type[Any]] = {
    cls.TYPE: cls
    for cls in (
        Update,
        Text,
        Echo,
        Insert,
        Respond,
        Reject,
        Permission,
        Elicit,
        Sleep,
        WaitForCancel,
        WaitForPrompt,
        IgnoreCancel,
        Fail,
        Stop,
        Background,
        Flood,
        Exit,
        Stderr,
        Raw,
        IgnoreSigterm,
        Hang,
    )
}


@lazy_attrs.frozen(kw_only=True)
class Turn:
    """What the agent does for one prompt."""

    steps: list[Step] = attrs.field(factory=list, metadata=_STEPS)
    running: bool = True
    idle: bool = True
    stop_reason: str | None = "end_turn"
    cancel_stop_reason: str | None = "cancelled"
    # With the script's ``expect``: which prompt this turn answers, and its name.
    prompt: str | None = None
    prompt_pattern: str | None = None
    label: str | None = None

    def inserts_explicitly(self) -> bool:
        """Whether a top-level step decides insertion (else it happens first)."""
        return any(isinstance(s, Insert | Reject) for s in self.steps)


@lazy_attrs.frozen(kw_only=True)
class Script:
    """The whole behaviour of one agent process."""

    name: str = "custom"
    description: str = ""
    turns: list[Turn] = attrs.field(factory=list)
    while_busy: str = attrs.field(
        default="hold", validator=attrs.validators.in_(("hold", "insert"))
    )
    page_size: int = 5
    sessions: Sequence[Mapping[str, object]] = attrs.field(factory=list)
    session_updates: Sequence[Mapping[str, object]] = attrs.field(factory=list)
    auth_required: bool = False
    protocol_version: int | None = None
    unresponsive: list[str] = attrs.field(factory=list)
    ignore_sigterm: bool = False
    linger: float = 0.0
    expect: str | None = attrs.field(
        default=None, validator=attrs.validators.in_((None, "ordered", "unordered"))
    )
    allowed_methods: list[str] = attrs.field(factory=list)
    initialize_result: Mapping[str, object] | None = None

    def turn_for(self, number: int) -> Turn | None:
        """The turn for the session's ``number``-th prompt (1-based); None = echo."""
        if not self.turns:
            return None
        return self.turns[min(number, len(self.turns)) - 1]

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Script:
        """Build a script from parsed JSON/TOML; raises :class:`ScriptError`."""
        data = dict(data)
        turns = data.pop("turns", [])
        if not isinstance(turns, list):
            raise ScriptError("'turns' must be a list")
        data["turns"] = [_turn_from(t, f"turns[{i}]") for i, t in enumerate(turns)]
        script: Script = _build(cls, data, "script")
        return script

    def to_dict(self) -> JsonObject:
        """The JSON-compatible form that :meth:`from_dict` reads back."""
        return _dump(self)

    def to_json(self) -> str:
        """The script as one line of JSON (e.g. for ``--script-json``)."""
        return json.dumps(self.to_dict(), separators=(",", ":"))


def load_script(path: str | Path) -> Script:
    """Load a script from a ``.json`` or ``.toml`` file."""
    # Imported here, not at the top: the agent process loads this module at every
    # start, and most agents never read a script file.
    import tomllib
    from pathlib import Path

    path = Path(path)
    try:
        if path.suffix == ".toml":
            with path.open("rb") as f:
                data: Any = tomllib.load(f)
        else:
            data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ScriptError(f"cannot read script {path}: {exc}") from exc
    if not isinstance(data, dict):
        raise ScriptError(f"{path}: a script must be an object/table")
    try:
        return Script.from_dict(data)
    except ScriptError as exc:
        raise ScriptError(f"{path}: {exc}") from None


def _turn_from(data: Any, where: str) -> Turn:
    if isinstance(data, list):  # shorthand: a bare list of steps
        data = {"steps": data}
    if not isinstance(data, dict):
        raise ScriptError(f"{where}: a turn must be a list of steps or a table")
    turn: Turn = _build(Turn, dict(data), where)
    return turn


def _step_from(data: Any, where: str) -> Step:
    if not isinstance(data, dict) or not isinstance(data.get("type"), str):
        raise ScriptError(f"{where}: a step must be a table with a string 'type'")
    data = dict(data)
    kind = data.pop("type")
    cls = STEP_TYPES.get(kind)
    if cls is None:
        known = ", ".join(sorted(STEP_TYPES))
        raise ScriptError(f"{where}: unknown step type {kind!r} (known: {known})")
    step: Step = _build(cls, data, f"{where} ({kind})")
    return step


def _build(cls: type[Any], data: dict[str, Any], where: str) -> Any:
    fields = {f.name: f for f in attrs.fields(cls)}
    unknown = sorted(set(data) - set(fields))
    if unknown:
        raise ScriptError(f"{where}: unknown key(s) {', '.join(unknown)}")
    for name, value in list(data.items()):
        nested = fields[name].metadata.get("acp_steps")
        if nested == "list":
            if not isinstance(value, list):
                raise ScriptError(f"{where}.{name}: must be a list of steps")
            data[name] = [_step_from(s, f"{where}.{name}[{i}]") for i, s in enumerate(value)]
        elif nested == "branches":
            if not isinstance(value, dict):
                raise ScriptError(f"{where}.{name}: must map a choice to a list of steps")
            data[name] = {
                key: [_step_from(s, f"{where}.{name}.{key}[{i}]") for i, s in enumerate(steps)]
                for key, steps in value.items()
            }
    try:
        return cls(**data)
    except (TypeError, ValueError) as exc:
        raise ScriptError(f"{where}: {exc}") from None


def _dump(obj: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if hasattr(type(obj), "TYPE"):
        out["type"] = obj.TYPE
    for field in attrs.fields(type(obj)):
        value = getattr(obj, field.name)
        if value == field.default or (
            isinstance(field.default, attrs.Factory)  # type: ignore[arg-type]
            and value == field.default.factory()
        ):
            continue
        nested = field.metadata.get("acp_steps")
        if nested == "list" or field.name == "turns":
            out[field.name] = [_dump(s) for s in value]
        elif nested == "branches":
            out[field.name] = {k: [_dump(s) for s in v] for k, v in value.items()}
        else:
            out[field.name] = value
    return out
