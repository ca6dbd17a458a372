"""A model script: what a scripted model provider answers, as data (issue 23).

A :class:`ModelScript` is a list of *steps*; each request to the scripted model
(:class:`acp_lite.models.scripted.ScriptedModel`) uses up the first step not yet
used whose ``when`` (if any) matches it, so steps without ``when`` answer the
requests in order. A step with ``repeat = true`` is never used up (a catch-all).
Scripts are attrs objects and can be written as JSON or TOML
(:func:`load_model_script`); there every step is a table with a ``type`` key.

Steps (``type`` = ...):

================ ==============================================================
``reply``        answer ``text`` (streamed in ``chunks``: given, or a few words
                 each); ``chunk_delay`` seconds between chunks; ``truncated =
                 true`` ends it as cut off (``length`` / ``max_tokens`` /
                 ``MAX_TOKENS``).
``tool_calls``   ask the agent to run ``calls`` (each ``name``, ``arguments``: a
                 JSON object, optional ``id``), after optional ``text``.
``tool_call``    one call: ``name``, ``arguments``, ``id`` at the step's top level.
``refusal``      refuse with ``text`` (each API's refusal form).
``error``        answer HTTP ``status`` (429, 500, 529 ...) with ``message`` in
                 the provider's error shape; ``mid_stream = true``: a streamed
                 request gets 200, the stream's start, then the API's error event.
``hang``         stream ``text`` (may be empty), then send nothing more.
================ ==============================================================

Every step also takes ``delay`` (seconds before the answer: a stream's first
byte, or the whole response),
``repeat``, ``label`` (its name in messages) and ``when``, a table whose keys
must all hold: ``last_user_text_contains``, ``tool_result_for`` (a tool result
for that call id, or for a Gemini function of that name, is in the request),
``api`` (``openai_chat``, ``openai_responses``, ``anthropic``, ``gemini``),
``path_contains`` and ``model_contains``.

Script keys: ``name`` (named in every error), ``models`` (what ``/v1/models``
lists) and ``steps``. In TOML::

    name = "read then answer"
    [[steps]]
    type = "tool_call"
    name = "read_file"
    arguments = { path = "README.md" }
    id = "call_1"
    [[steps]]
    type = "reply"
    text = "The README says hello."
    when = { tool_result_for = "call_1" }
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, TypeAlias

import attrs

from acp_lite.errors import ModelScriptError
from acp_lite.jsontypes import JsonObject, JsonValue

if TYPE_CHECKING:
    from pathlib import Path

__all__ = [
    "APIS",
    "ErrorReply",
    "HangReply",
    "ModelScript",
    "ModelScriptError",
    "ModelStep",
    "Refusal",
    "Reply",
    "ToolCall",
    "ToolCalls",
    "When",
    "chunks_of",
    "load_model_script",
]

#: The provider APIs a ``when.api`` may name.
APIS = ("openai_chat", "openai_responses", "anthropic", "gemini")

_WORDS_PER_CHUNK = 3
_TOKEN = re.compile(r"\s*\S+\s*|\s+")


def chunks_of(text: str, words: int = _WORDS_PER_CHUNK) -> list[str]:
    """``text`` cut into pieces of ``words`` words (with their spacing); the
    pieces join back to ``text`` exactly. An empty text has no pieces."""
    tokens = _TOKEN.findall(text)
    return ["".join(tokens[i : i + words]) for i in range(0, len(tokens), words)]


@attrs.frozen(kw_only=True)
class When:
    """A predicate on the request: every key given must hold."""

    last_user_text_contains: str | None = None
    tool_result_for: str | None = None
    api: str | None = None
    path_contains: str | None = None
    model_contains: str | None = None

    def matches(
        self,
        *,
        api: str,
        path: str,
        model: str,
        last_user_text: str | None,
        tool_results: frozenset[str],
    ) -> bool:
        """Whether a request with these properties satisfies every key."""
        if self.last_user_text_contains is not None and (
            last_user_text is None or self.last_user_text_contains not in last_user_text
        ):
            return False
        if self.tool_result_for is not None and self.tool_result_for not in tool_results:
            return False
        if self.api is not None and self.api != api:
            return False
        if self.path_contains is not None and self.path_contains not in path:
            return False
        return self.model_contains is None or self.model_contains in model

    def describe(self) -> str:
        """The keys given, as ``key=value`` pairs."""
        given = {k: v for k, v in attrs.asdict(self).items() if v is not None}
        return ", ".join(f"{k}={v!r}" for k, v in given.items())


@attrs.frozen(kw_only=True)
class _Common:
    """Fields every step has (documented on the module)."""

    when: When | None = None
    delay: float = 0.0
    repeat: bool = False
    label: str | None = None


@attrs.frozen(kw_only=True)
class Reply(_Common):
    """Answer text, streamed in chunks."""

    TYPE: ClassVar[str] = "reply"
    text: str = ""
    chunks: tuple[str, ...] | None = None
    chunk_delay: float = 0.0
    truncated: bool = False

    def pieces(self) -> list[str]:
        """The chunks to stream: ``chunks`` if given, else ``text`` a few words each."""
        return list(self.chunks) if self.chunks is not None else chunks_of(self.text)

    def full_text(self) -> str:
        """The whole answer."""
        return "".join(self.chunks) if self.chunks is not None else self.text


@attrs.frozen(kw_only=True)
class ToolCall:
    """One tool call the agent must run: ``name`` and its JSON ``arguments``;
    ``id`` is chosen by the provider (deterministically) when not given."""

    name: str
    arguments: JsonObject = attrs.field(factory=dict)
    id: str | None = None

    def arguments_json(self) -> str:
        """The arguments as the JSON text the APIs send."""
        return json.dumps(self.arguments, separators=(",", ":"), sort_keys=False)


@attrs.frozen(kw_only=True)
class ToolCalls(_Common):
    """Ask the agent to run one or more tools (after optional text)."""

    TYPE: ClassVar[str] = "tool_calls"
    calls: tuple[ToolCall, ...]
    text: str = ""


@attrs.frozen(kw_only=True)
class Refusal(_Common):
    """Refuse, in the API's own refusal form."""

    TYPE: ClassVar[str] = "refusal"
    text: str = "I can't help with that."


@attrs.frozen(kw_only=True)
class ErrorReply(_Common):
    """Answer an HTTP error status in the provider's error shape."""

    TYPE: ClassVar[str] = "error"
    status: int = 500
    message: str = "scripted error"
    mid_stream: bool = False


@attrs.frozen(kw_only=True)
class HangReply(_Common):
    """Stream ``text`` (maybe none), then nothing more: the connection stays open."""

    TYPE: ClassVar[str] = "hang"
    text: str = ""


ModelStep: TypeAlias = Reply | ToolCalls | Refusal | ErrorReply | HangReply
"""One step of a :class:`ModelScript`."""

_STEP_TYPES: dict[str, type[ModelStep]] = {
    cls.TYPE: cls for cls in (Reply, ToolCalls, Refusal, ErrorReply, HangReply)
}
_COMMON = {"type", "when", "delay", "repeat", "label"}


def _fail(where: str, message: str) -> ModelScriptError:
    return ModelScriptError(f"{where}: {message}")


def _check_type(where: str, key: str, value: object, kinds: tuple[type, ...], what: str) -> None:
    # bool is an int: a number field must not take true/false.
    if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
        raise _fail(where, f"{key} must be {what}, not {value!r}")


def _when_from(where: str, data: object) -> When:
    if not isinstance(data, Mapping):
        raise _fail(where, f"when must be a table/object, not {data!r}")
    names = {f.name for f in attrs.fields(When)}
    unknown = sorted(set(data) - names)
    if unknown:
        raise _fail(where, f"unknown when key(s) {unknown}; known: {sorted(names)}")
    for key, value in data.items():
        _check_type(where, f"when.{key}", value, (str,), "a string")
    if data.get("api") is not None and data["api"] not in APIS:
        raise _fail(where, f"when.api must be one of {list(APIS)}, not {data['api']!r}")
    return When(**dict(data))


def _call_from(where: str, data: Mapping[str, Any]) -> ToolCall:
    if "name" not in data:
        raise _fail(where, "a tool call needs a name")
    _check_type(where, "name", data["name"], (str,), "a string")
    arguments = data.get("arguments", {})
    if not isinstance(arguments, Mapping):
        raise _fail(where, f"arguments must be a JSON object, not {arguments!r}")
    try:
        # A JSON round trip: rejects what no API could send, copies the rest.
        plain = json.loads(json.dumps(arguments))
    except (TypeError, ValueError) as exc:
        raise _fail(where, f"arguments must be JSON: {exc}") from None
    call_id = data.get("id")
    if call_id is not None:
        _check_type(where, "id", call_id, (str,), "a string")
    return ToolCall(name=data["name"], arguments=plain, id=call_id)


def _step_from(index: int, data: object) -> ModelStep:
    where = f"steps[{index}]"
    if not isinstance(data, Mapping):
        raise _fail(where, f"a step must be a table/object, not {data!r}")
    kind = data.get("type")
    where = f"steps[{index}] ({kind})"
    if kind == "tool_call":
        call_keys = {"name", "arguments", "id"}
        unknown = sorted(set(data) - _COMMON - call_keys - {"text"})
        if unknown:
            raise _fail(where, f"unknown key(s) {unknown}")
        rest = {k: v for k, v in data.items() if k not in call_keys}
        rest["type"] = "tool_calls"
        rest["calls"] = [{k: data[k] for k in call_keys if k in data}]
        return _step_from_known(where, rest)
    if kind not in _STEP_TYPES:
        raise _fail(
            f"steps[{index}]",
            f"unknown step type {kind!r}; known: {sorted([*_STEP_TYPES, 'tool_call'])}",
        )
    return _step_from_known(where, data)


def _step_from_known(where: str, data: Mapping[str, Any]) -> ModelStep:
    cls = _STEP_TYPES[data["type"]]
    names = {f.name for f in attrs.fields(cls)}
    unknown = sorted(set(data) - names - {"type"})
    if unknown:
        raise _fail(where, f"unknown key(s) {unknown}; known: {sorted(names)}")
    kwargs: dict[str, Any] = {k: v for k, v in data.items() if k != "type"}
    if kwargs.get("when") is not None:
        kwargs["when"] = _when_from(where, kwargs["when"])
    for key in ("delay", "chunk_delay"):
        if key in kwargs:
            _check_type(where, key, kwargs[key], (int, float), "a number of seconds")
            if kwargs[key] < 0:
                raise _fail(where, f"{key} must not be negative")
            kwargs[key] = float(kwargs[key])
    for key in ("repeat", "truncated", "mid_stream"):
        if key in kwargs:
            _check_type(where, key, kwargs[key], (bool,), "true or false")
    for key in ("text", "message", "label"):
        if key in kwargs and not (key == "label" and kwargs[key] is None):
            _check_type(where, key, kwargs[key], (str,), "a string")
    if cls is Reply and kwargs.get("chunks") is not None:
        chunks = kwargs["chunks"]
        if not isinstance(chunks, Sequence) or isinstance(chunks, str):
            raise _fail(where, f"chunks must be a list of strings, not {chunks!r}")
        for chunk in chunks:
            _check_type(where, "chunks[]", chunk, (str,), "a string")
        if "text" in kwargs and kwargs["text"] != "".join(chunks):
            raise _fail(where, "text and chunks disagree (give one, or chunks that join to text)")
        kwargs["chunks"] = tuple(chunks)
        kwargs.pop("text", None)
    if cls is ToolCalls:
        calls = kwargs.get("calls")
        if not isinstance(calls, Sequence) or isinstance(calls, str) or not calls:
            raise _fail(where, f"calls must be a non-empty list of tool calls, not {calls!r}")
        built = []
        for n, call in enumerate(calls):
            if not isinstance(call, Mapping):
                raise _fail(where, f"calls[{n}] must be a table/object, not {call!r}")
            built.append(_call_from(where if len(calls) == 1 else f"{where} calls[{n}]", call))
        kwargs["calls"] = tuple(built)
    if cls is ErrorReply and "status" in kwargs:
        status = kwargs["status"]
        _check_type(where, "status", status, (int,), "an HTTP status")
        if not 400 <= status <= 599:
            raise _fail(where, f"status must be an HTTP error status (400-599), not {status}")
    return cls(**kwargs)


def _step_to_dict(step: ModelStep) -> JsonObject:
    out: JsonObject = {"type": step.TYPE}
    for field in attrs.fields(type(step)):
        value = getattr(step, field.name)
        if value == field.default:
            continue
        if isinstance(value, When):
            out[field.name] = {k: v for k, v in attrs.asdict(value).items() if v is not None}
        elif field.name == "calls":
            out["calls"] = [
                {k: v for k, v in attrs.asdict(c).items() if v is not None} for c in value
            ]
        elif isinstance(value, tuple):
            out[field.name] = list(value)
        else:
            out[field.name] = value
    return out


@attrs.frozen(kw_only=True)
class ModelScript:
    """The steps a scripted model answers with (see the module docs)."""

    name: str = "model script"
    steps: tuple[ModelStep, ...] = ()
    models: tuple[str, ...] = ("scripted-model",)

    @classmethod
    def from_dict(cls, data: Mapping[str, object]) -> ModelScript:
        """Build a script from parsed JSON/TOML; raises :class:`ModelScriptError`
        naming the script and the step."""
        name = data.get("name", "model script")
        if not isinstance(name, str):
            raise ModelScriptError(f"model script: name must be a string, not {name!r}")
        try:
            unknown = sorted(set(data) - {"name", "steps", "models"})
            if unknown:
                raise ModelScriptError(f"unknown key(s) {unknown}; known: models, name, steps")
            steps = data.get("steps", [])
            if not isinstance(steps, Sequence) or isinstance(steps, str):
                raise ModelScriptError(f"steps must be a list, not {steps!r}")
            models = data.get("models", ["scripted-model"])
            if (
                not isinstance(models, Sequence)
                or isinstance(models, str)
                or not all(isinstance(m, str) for m in models)
            ):
                raise ModelScriptError(f"models must be a list of strings, not {models!r}")
            built = tuple(_step_from(i, s) for i, s in enumerate(steps))
        except ModelScriptError as exc:
            raise ModelScriptError(f"model script {name!r}: {exc}") from None
        return cls(name=name, steps=built, models=tuple(models))

    @classmethod
    def from_json(cls, text: str) -> ModelScript:
        """Build a script from JSON text."""
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise ModelScriptError(f"model script: not JSON: {exc}") from None
        if not isinstance(data, Mapping):
            raise ModelScriptError("model script: must be a JSON object")
        return cls.from_dict(data)

    def to_dict(self) -> JsonObject:
        """The script as JSON-ready data (``from_dict`` reads it back)."""
        steps: list[JsonValue] = [_step_to_dict(s) for s in self.steps]
        return {"name": self.name, "models": list(self.models), "steps": steps}

    def describe(self, index: int) -> str:
        """``steps[i] (type, label)``: how messages name step ``index``."""
        step = self.steps[index]
        label = f", {step.label!r}" if step.label else ""
        return f"steps[{index}] ({step.TYPE}{label})"


def load_model_script(path: str | Path) -> ModelScript:
    """Read a model script from a ``.json`` or ``.toml`` file."""
    from pathlib import Path

    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except OSError as exc:
        raise ModelScriptError(f"cannot read model script {file}: {exc}") from exc
    if file.suffix == ".toml":
        import tomllib

        try:
            data: object = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise ModelScriptError(f"{file}: not TOML: {exc}") from None
    else:
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise ModelScriptError(f"{file}: not JSON: {exc}") from None
    if not isinstance(data, Mapping):
        raise ModelScriptError(f"{file}: a model script must be an object/table")
    try:
        return ModelScript.from_dict(data)
    except ModelScriptError as exc:
        raise ModelScriptError(f"{file}: {exc}") from None
