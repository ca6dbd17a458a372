"""Example payloads for the wire-layer tests: harvested from the spec texts and generated
from the schema. Imported by the tests in this directory (not a test module itself)."""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs
import jsonschema
import referencing
from referencing.jsonschema import DRAFT202012

DATA = Path(__file__).resolve().parent.parent / "data"
SCHEMA_PATH = DATA / "schema" / "v2" / "schema.unstable.json"
STABLE_SCHEMA_PATH = DATA / "schema" / "v2" / "schema.json"
SPEC_FILES = sorted((DATA / "spec" / "seeds").glob("*.txt")) + sorted(
    (DATA / "spec" / "docs-v2-draft").glob("*.mdx")
)


@functools.cache
def schema(stable: bool = False) -> dict[str, Any]:
    path = STABLE_SCHEMA_PATH if stable else SCHEMA_PATH
    loaded: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return loaded


@functools.cache
def _registry(stable: bool) -> referencing.Registry[Any]:
    """The schema as one resource, crawled once and shared by every validator."""
    resource = referencing.Resource.from_contents(schema(stable), DRAFT202012)
    return referencing.Registry().with_resource(_URI, resource).crawl()


_URI = "urn:acp-v2-schema"


@functools.cache
def validator(definition: str | None, stable: bool = False) -> jsonschema.Draft202012Validator:
    """A validator for one ``$defs`` entry (``None``: the root, i.e. any JSON-RPC message)."""
    ref = f"{_URI}#" if definition is None else f"{_URI}#/$defs/{definition}"
    return jsonschema.Draft202012Validator({"$ref": ref}, registry=_registry(stable))


@functools.cache
def _variants(
    definition: str | None, stable: bool
) -> tuple[str, dict[str, jsonschema.Draft202012Validator]] | None:
    """For a definition that is nothing but an ``anyOf`` of variants each tagged by one
    ``const`` property (``SessionUpdate``): the tag and a validator per tag value."""
    d = schema(stable)["$defs"].get(definition or "")
    if not d or set(d) - {"description", "anyOf"}:
        return None
    tag, table = None, {}
    for n, alt in enumerate(d["anyOf"]):
        consts = [
            (key, p["const"])
            for key, p in alt.get("properties", {}).items()
            if isinstance(p, dict) and isinstance(p.get("const"), str)
        ]
        if len(consts) != 1:
            continue  # the open "other" variant: only the whole union checks it
        ((key, value),) = consts
        if tag not in (None, key) or value in table:
            return None
        tag = key
        ref = f"{_URI}#/$defs/{definition}/anyOf/{n}"
        table[value] = jsonschema.Draft202012Validator({"$ref": ref}, registry=_registry(stable))
    return (tag, table) if tag is not None else None


def _errors(value: Any, definition: str | None, stable: bool) -> Iterator[Any]:
    variants = _variants(definition, stable)
    if variants is not None and isinstance(value, dict):
        tag, table = variants
        variant = table.get(value[tag]) if isinstance(value.get(tag), str) else None
        if variant is not None and variant.is_valid(value):
            # anyOf holds when one variant does: skip trying the others before it.
            return iter(())
    return validator(definition, stable).iter_errors(value)


def schema_errors(value: Any, definition: str | None) -> list[str]:
    """Validation errors of ``value`` against the v2 schema: ``schema.unstable.json``
    (stable + drafts) always, and ``schema.json`` (stable) when it has the definition."""
    stable = definition is None or definition in schema(stable=True)["$defs"]
    return [
        f"{'stable' if s else 'unstable'} {'/'.join(map(str, e.absolute_path))}: {e.message[:200]}"
        for s in ((False, True) if stable else (False,))
        for e in _errors(value, definition, s)
    ]


# ---------------------------------------------------------------- harvested examples


@attrs.frozen
class SpecExample:
    file: str
    line: int
    value: Any

    @property
    def key(self) -> str:
        return f"{self.file}:{self.line}"


def harvest() -> list[SpecExample]:
    """Every ```json code block of the seeds and the v2 draft docs, parsed."""
    out = []
    for path in SPEC_FILES:
        text = path.read_text(encoding="utf-8")
        for m in re.finditer(r"```json[^\n]*\n(.*?)```", text, re.S):
            line = text[: m.start()].count("\n") + 1
            out.append(SpecExample(path.name, line, json.loads(m.group(1))))
    return out


# ---------------------------------------------------------------- generated examples

MODES = ("full", "min", "null")
_MAX_DEPTH = 5


def _defs() -> dict[str, Any]:
    defs: dict[str, Any] = schema()["$defs"]
    return defs


def _is_null(p: Any) -> bool:
    return isinstance(p, dict) and p.get("type") == "null"


def value_for(p: dict[str, Any], mode: str, depth: int) -> Any:
    """A schema-valid value for property schema ``p``."""
    if "$ref" in p:
        return def_example(p["$ref"].rsplit("/", 1)[-1], mode, depth + 1)
    if "const" in p:
        return p["const"]
    if _is_null(p):
        return None
    if "allOf" in p and len(p["allOf"]) == 1 and "properties" not in p:
        return value_for(p["allOf"][0], mode, depth)
    alts = p.get("anyOf") or p.get("oneOf")
    if alts and "properties" not in p and p.get("type") != "object":
        usable = [a for a in alts if not _is_null(a) and a.get("title") not in ("other", "Other")]
        return value_for(usable[0] if usable else alts[0], mode, depth)
    ty = p.get("type")
    if isinstance(ty, list):
        ty = next(t for t in ty if t != "null")
    if ty == "string":
        return "s"
    if ty == "integer":
        return max(int(p.get("minimum", 1)), 1)
    if ty == "number":
        return 0.5
    if ty == "boolean":
        return True
    if ty == "array":
        return [value_for(p.get("items", {}), mode, depth + 1)]
    if ty == "object" or "properties" in p:
        return object_example(p, mode, depth)
    return {"any": [1, "x", None]}


def object_example(d: dict[str, Any], mode: str, depth: int, variant: int = 0) -> dict[str, Any]:
    out: dict[str, Any] = {}
    required = set(d.get("required", []))
    for key, p in d.get("properties", {}).items():
        if key in required:
            out[key] = value_for(p, mode, depth)
        elif mode == "min" or depth > _MAX_DEPTH:
            continue
        elif mode == "null" and _nullable(p):
            out[key] = None
        else:
            out[key] = value_for(p, mode, depth)
    for sub in d.get("allOf", []):
        out.update(value_for(sub, mode, depth))
    alts = d.get("anyOf") or d.get("oneOf")
    if alts:
        out.update(object_example(alts[variant], mode, depth))
    return out


def _nullable(p: dict[str, Any]) -> bool:
    ty = p.get("type")
    if isinstance(ty, list) and "null" in ty:
        return True
    return any(_is_null(a) for a in p.get("anyOf", []))


def def_example(name: str, mode: str, depth: int = 0, variant: int = 0) -> Any:
    d = _defs()[name]
    if "properties" in d or d.get("type") == "object":
        return object_example(d, mode, depth, variant)
    alts = d.get("anyOf") or d.get("oneOf")
    if alts:
        alt = alts[variant]
        if alt.get("title") == "other" and "properties" in alt:
            # A custom variant: an "_"-prefixed tag plus whatever it carries.
            tag = next(k for k, p in alt["properties"].items() if p.get("type") == "string")
            out = object_example(alt, mode, depth)
            out[tag] = "_custom"
            out["_custom_field"] = {"kept": [1, None]}
            return out
        return value_for(alt, mode, depth)
    return value_for(d, mode, depth)


def variant_count(name: str) -> int:
    d = _defs()[name]
    alts = d.get("anyOf") or d.get("oneOf")
    return len(alts) if alts else 1


def generated_examples(names: list[str]) -> Iterator[tuple[str, str, int, Any]]:
    """(definition, mode, variant, example) for every mode and variant of ``names``."""
    for name in names:
        for variant in range(variant_count(name)):
            for mode in MODES:
                yield name, mode, variant, def_example(name, mode, 0, variant)


TAG_KEYS = frozenset({"type", "sessionUpdate", "state", "operation", "outcome", "mode", "action"})


def added_tags(example: dict[str, Any], back: Any) -> dict[str, Any]:
    """Keys ``back`` has beyond ``example``: the variant tag a tagged-variant class adds when
    it is structured on its own (outside its union, the tag is implied)."""
    assert isinstance(back, dict)
    extra = {k: v for k, v in back.items() if k not in example}
    assert set(extra) <= TAG_KEYS and all(isinstance(v, str) for v in extra.values()), extra
    assert {k: v for k, v in back.items() if k in example} == example
    return extra


def unrecognized_parts(obj: Any, path: str = "$") -> list[str]:
    """Paths of Unrecognized* objects (and non-empty ``extra``) inside a wire object."""
    out = []
    if attrs.has(type(obj)):
        if type(obj).__name__.startswith("Unrecognized"):
            out.append(f"{path}: {type(obj).__name__} {getattr(obj, 'error', '')}")
        for f in attrs.fields(type(obj)):
            val = getattr(obj, f.name)
            if f.name == "extra" and val:
                out.append(f"{path}.extra: {sorted(val)}")
            elif f.name != "raw":
                out.extend(unrecognized_parts(val, f"{path}.{f.name}"))
    elif isinstance(obj, list):
        for i, item in enumerate(obj):
            out.extend(unrecognized_parts(item, f"{path}[{i}]"))
    return out
