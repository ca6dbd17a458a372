"""``acp-lite prompt``: the agent's elicitation forms (``elicitation/create``).

On a terminal the form is shown and answered field by field (spec "Elicitation",
"User interaction requirements": the client names the agent asking, offers clear
decline and cancel controls, and lets the user review and change the answers
before sending them; fields start at their schema ``default``). Otherwise, or with
``--elicitation decline|cancel|accept_defaults``, a policy answers and a status
line says what was answered.

Field kinds are those of the form schema: text (``string``, with ``enum`` /
``oneOf`` choices), ``number`` / ``integer``, ``boolean`` and multi-select
(``array`` of choices).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from acp_lite.cli.render import safe_text

if TYPE_CHECKING:
    from acp_lite.cli.ui import Ui

__all__ = ["elicitation_handler", "parse_field"]

ELICITATION_CHOICES = ("ask", "decline", "cancel", "accept_defaults")


class _EndOfInput(Exception):
    """Nobody can answer (end of input): the form is dismissed (``cancel``)."""


def _choices(prop: Mapping[str, Any]) -> list[tuple[Any, str]]:
    """(value, label) of a field's choices: ``enum`` (labels from ``enumNames``) or
    ``oneOf`` / ``anyOf`` items with ``const`` and ``title``; for an ``array``, of its
    ``items``."""
    if prop.get("type") == "array" and isinstance(prop.get("items"), Mapping):
        prop = prop["items"]
    enum = prop.get("enum")
    if isinstance(enum, list):
        names = prop.get("enumNames")
        labels = names if isinstance(names, list) and len(names) == len(enum) else enum
        return [(v, str(label)) for v, label in zip(enum, labels, strict=True)]
    for key in ("oneOf", "anyOf"):
        items = prop.get(key)
        if isinstance(items, list):
            return [
                (i["const"], str(i.get("title", i["const"])))
                for i in items
                if isinstance(i, Mapping) and "const" in i
            ]
    return []


def _kind(prop: Mapping[str, Any]) -> str:
    kind = prop.get("type")
    if kind == "array":
        return "choices"
    if _choices(prop):
        return "choice"
    return kind if kind in ("number", "integer", "boolean") else "text"


def parse_field(prop: Mapping[str, Any], text: str) -> Any:
    """The value typed for one field, or ``ValueError`` saying why it is not one."""
    kind = _kind(prop)
    choices = _choices(prop)
    if kind in ("choice", "choices"):
        picked: list[Any] = []
        for part in text.replace(",", " ").split():
            if not (part.isdigit() and 1 <= int(part) <= len(choices)):
                raise ValueError(f"not a choice: {part!r} (1-{len(choices)})")
            picked.append(choices[int(part) - 1][0])
        if kind == "choice":
            if len(picked) != 1:
                raise ValueError(f"choose one of 1-{len(choices)}")
            return picked[0]
        low, high = prop.get("minItems"), prop.get("maxItems")
        if isinstance(low, int) and len(picked) < low:
            raise ValueError(f"choose at least {low}")
        if isinstance(high, int) and len(picked) > high:
            raise ValueError(f"choose at most {high}")
        return picked
    if kind == "boolean":
        answer = text.strip().lower()
        if answer in ("y", "yes", "true"):
            return True
        if answer in ("n", "no", "false"):
            return False
        raise ValueError("answer y or n")
    if kind in ("number", "integer"):
        try:
            number: float | int = int(text) if kind == "integer" else float(text)
        except ValueError:
            raise ValueError(f"not {'an integer' if kind == 'integer' else 'a number'}") from None
        low, high = prop.get("minimum"), prop.get("maximum")
        if isinstance(low, int | float) and number < low:
            raise ValueError(f"must be at least {low}")
        if isinstance(high, int | float) and number > high:
            raise ValueError(f"must be at most {high}")
        return number
    short, long = prop.get("minLength"), prop.get("maxLength")
    if isinstance(short, int) and len(text) < short:
        raise ValueError(f"needs at least {short} characters")
    if isinstance(long, int) and len(text) > long:
        raise ValueError(f"takes at most {long} characters")
    return text


def _shown(prop: Mapping[str, Any], value: Any) -> str:
    """A value as the user sees it (choice labels, y/n)."""
    labels = {repr(v): label for v, label in _choices(prop)}
    if isinstance(value, bool):
        return "y" if value else "n"
    if isinstance(value, list):
        return ", ".join(labels.get(repr(v), str(v)) for v in value)
    return labels.get(repr(value), str(value))


class _Form:
    """One form on the terminal: the ui's error stream and stdin."""

    def __init__(self, ui: Ui) -> None:
        self.ui = ui

    def say(self, text: str) -> None:
        with self.ui.lock:
            self.ui.err.write(safe_text(text) + "\n")
            self.ui.err.flush()

    def read(self, prompt: str) -> str:
        with self.ui.lock:
            self.ui.err.write(safe_text(prompt))
            self.ui.err.flush()
        line = self.ui.read_answer()
        if not line:
            with self.ui.lock:
                self.ui.err.write("\n")
            raise _EndOfInput
        return line.rstrip("\n")

    def menu(self, prompt: str, keys: Sequence[str], default: str) -> str:
        why = ""
        while True:
            answer = self.read(f"{why}{prompt} [{default}]: ").strip().lower() or default
            if answer in keys:
                return answer
            why = f"not a choice: {answer!r}; "

    def field(self, name: str, prop: Mapping[str, Any], required: bool, current: Any) -> Any:
        kind = _kind(prop)
        label = str(prop.get("title") or name)
        notes = [kind if kind != "choices" else "several choices"]
        if required:
            notes.append("required")
        description = prop.get("description")
        if description:
            self.say(f"  {label}: {description}")
        for number, (_, choice) in enumerate(_choices(prop), 1):
            self.say(f"    {number}) {choice}")
        hint = "" if current is None else f" (default: {_shown(prop, current)})"
        why = ""
        while True:
            text = self.read(f"  {why}{label} [{', '.join(notes)}]{hint}: ")
            if (not text.strip() and kind != "text") or not text:
                if current is not None:
                    return current
                if not required:
                    return None
                why = "a value is required; "
                continue
            try:
                return parse_field(prop, text)
            except ValueError as exc:
                why = f"{exc}; "

    def ask(self, request: Any, agent: str) -> dict[str, Any]:
        message = str(getattr(request, "message", "") or "")
        self.ui.renderer.line(f"question from {agent}: {message}", "1")
        schema = getattr(request, "requested_schema", None)
        properties = getattr(schema, "properties", None)
        if not isinstance(properties, Mapping):
            properties = {}
        required = set(getattr(schema, "required", None) or ())
        title = getattr(schema, "title", None)
        if title:
            self.say(f"  {title}")
        self.say("  a) answer the form  d) decline  c) cancel")
        first = self.menu("choose a, d or c", ("a", "d", "c"), "a")
        if first != "a":
            return {"action": "decline" if first == "d" else "cancel"}
        values: dict[str, Any] = {}
        for name, prop in properties.items():
            if isinstance(prop, Mapping) and prop.get("default") is not None:
                values[str(name)] = prop["default"]
        while True:
            for name, prop in properties.items():
                if not isinstance(prop, Mapping):
                    continue
                value = self.field(str(name), prop, name in required, values.get(str(name)))
                if value is None:
                    values.pop(str(name), None)
                else:
                    values[str(name)] = value
            # Spec: the user reviews and may change the answers before they are sent.
            self.say("  review:")
            for name, prop in properties.items():
                if isinstance(prop, Mapping) and str(name) in values:
                    label = prop.get("title") or name
                    self.say(f"    {label}: {_shown(prop, values[str(name)])}")
            self.say("  s) send  e) edit  d) decline  c) cancel")
            answer = self.menu("choose s, e, d or c", ("s", "e", "d", "c"), "s")
            if answer == "s":
                return {"action": "accept", "content": values}
            if answer != "e":
                return {"action": "decline" if answer == "d" else "cancel"}


def _why_not_accepted(request: Any) -> str:
    """Why ``accept_defaults`` declined: the required fields that have no default."""
    from acp_lite import permissions

    defaults = permissions.field_defaults(request)
    schema = getattr(request, "requested_schema", None)
    missing = [str(n) for n in getattr(schema, "required", None) or () if n not in defaults]
    return f" (no default for the required {', '.join(missing)})" if missing else ""


def elicitation_handler(
    ui: Ui,
    policy: str | None,
    interactive: bool,
    agent: Callable[[], str],
    before: Callable[[Any], None],
) -> Callable[[Any, Any], Any]:
    """The ``on_elicitation`` callback of ``prompt``: the form on a terminal (policy
    ``ask``, the default there), else the named policy (default ``decline``).
    ``agent()`` names the agent asking; ``before(session)`` shows what came first."""
    from acp_lite import permissions

    def handle(request: Any, session: Any) -> Any:
        if session is not None:
            before(session)
        message = str(getattr(request, "message", "") or "")
        mode = getattr(request, "mode", None)
        answer: dict[str, Any]
        if (policy is None or policy == "ask") and interactive and mode == "form":
            try:
                answer = _Form(ui).ask(request, agent())
            except _EndOfInput:
                answer = {"action": "cancel"}
            except (ValueError, TypeError, KeyError) as exc:
                # A schema this form cannot show (the agent's data): say so, dismiss it.
                ui.status(f"elicitation: cannot show this form ({exc}) -> cancel")
                answer = {"action": "cancel"}
        else:
            name = "decline" if policy in (None, "ask") else policy
            response = permissions.elicitation_policy(name)(request, session)
            answer = {"action": response.action}
            if isinstance(response.content, dict):
                answer["content"] = response.content
            shown = answer["action"]
            if "content" in answer:
                shown += " " + ", ".join(f"{k}={v!r}" for k, v in answer["content"].items())
            elif name == "accept_defaults":
                shown += _why_not_accepted(request)
            ui.status(f"elicitation: {message} -> {shown}")
        ui.elicitation(request, answer)
        return answer

    return handle
