#!/usr/bin/env python3
"""Generate ``acp_lite/protocol/_generated.py`` from the ACP v2 JSON schema.

Usage::

    python tools/gen_protocol.py            # rewrite the module
    python tools/gen_protocol.py --check    # exit 1 when the committed module is stale

The schema is ``tests/data/schema/v2/schema.unstable.json`` (stable v2 + draft extras).
What the generator emits (docs/architecture.md, "Wire layer"):

* one attrs class per object definition; field names are snake_case, ``_meta`` -> ``meta``;
  every optional field defaults to ``UNSET``; ``extra`` keeps unknown keys;
* string enums become ``str`` aliases plus a ``Literal`` of the known values;
* tagged unions (``anyOf`` of ``{tag: const} + $ref`` plus an ``other`` fallback) become a
  union alias of variant classes (each with a ``Literal`` tag field) and an
  ``Unrecognized<Union>`` class that keeps the raw payload;
* definitions mixing own properties with variants (``DiffChange``, ``SessionConfigOption``,
  ``IdleStateUpdate`` ...) become ONE flat class: the variant-only properties are optional;
* straight-line structure / unstructure functions per class (no per-field converter
  dispatch: the notification path is hot), registered on the cattrs converter.
"""

from __future__ import annotations

import argparse
import json
import keyword
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SCHEMA = ROOT / "tests" / "data" / "schema" / "v2" / "schema.unstable.json"
OUT = ROOT / "acp_lite" / "protocol" / "_generated.py"

# JSON-RPC envelopes: acp_lite/protocol/jsonrpc.py owns those.
SKIP = {
    "AgentRequest",
    "AgentResponse",
    "AgentNotification",
    "ClientRequest",
    "ClientResponse",
    "ClientNotification",
    "ProxyRequest",
    "ProxyResponse",
    "ProxyNotification",
}

# A definition that is both a tagged-union variant (which gains a tag field) and used
# elsewhere without the tag keeps its fields in a base class under another name; the
# tagged variant subclasses it under the schema name (docs/architecture.md).
RENAMES = {
    "ToolCallUpdate": "ToolCall",
    "RunningStateUpdate": "RunningState",
    "IdleStateUpdate": "IdleState",
    "RequiresActionStateUpdate": "RequiresActionState",
    "UnknownStateUpdate": "UnknownState",
}
# Name of the fallback class of a union when "Unrecognized" + union name does not fit.
FALLBACK_NAMES = {"StateUpdate": "UnrecognizedState"}
# Literal aliases of known enum values are named after the schema definition, except:
LITERAL_NAMES = {"ErrorCode": "KnownErrorCode"}  # jsonrpc.ErrorCode holds the constants
# A tagged union nested in SessionUpdate (state_update split by `state`) gets this name.
INNER_NAMES = {"StateUpdate": "SessionStateUpdate"}
# Unions whose fallback also keeps the structuring error of a known-but-malformed tag.
LENIENT_UNIONS = {"SessionUpdate"}

PATCH_CLASS_RE = re.compile(
    r"patch semantics|Omitted fields leave|patch that entity|patch the previous fields".replace(
        " ", r"\s+"
    )
)
PATCH_FIELD_RE = re.compile(
    r"patch semantics|Omitted leaves|Omitted means unchanged|Omission means no change"
    r"|omission leaves|Omission leaves".replace(" ", r"\s+")
)


def snake(name: str) -> str:
    if name == "_meta":
        return "meta"
    s = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()
    if keyword.iskeyword(s):
        s += "_"
    return s


def camel_tag(tag: str) -> str:
    return "".join(p[:1].upper() + p[1:] for p in tag.split("_"))


# --------------------------------------------------------------------------- type model


@dataclass(frozen=True)
class T:
    """A resolved field type."""

    kind: str  # str int float bool any dict list class union prims
    name: str = ""  # class / union name, or a documenting alias for primitives
    item: T | None = None
    prims: tuple[str, ...] = ()

    def ann(self) -> str:
        if self.kind in ("str", "int", "float", "bool"):
            return self.name or self.kind
        if self.kind == "any":
            return "Any"
        if self.kind == "dict":
            return "dict[str, Any]"
        if self.kind == "list":
            assert self.item is not None
            return f"list[{self.item.ann()}]"
        if self.kind == "prims":
            return self.name or " | ".join(self.prims)
        return self.name


PRIMS = ("str", "int", "float", "bool")

PRIM_CHECK = {
    "str": "type({v}) is not str",
    "int": "type({v}) is not int",
    "float": "(type({v}) is not float and type({v}) is not int)",
    "bool": "type({v}) is not bool",
    "dict": "type({v}) is not dict",
}


@dataclass
class Field:
    wire: str
    py: str
    t: T
    required: bool
    nullable: bool
    default_on_error: bool
    doc: str
    tag_value: str | None = None  # a Literal tag field with this default


@dataclass
class ClassDef:
    name: str
    doc: str
    fields: list[Field]
    base: str | None = None
    fallback_of: str | None = None  # union name for Unrecognized* classes
    lenient: bool = False
    extra_background: bool = False
    patch_fields: list[str] = field(default_factory=list)


@dataclass
class UnionDef:
    name: str
    doc: str
    tag: str = ""  # wire key; "" for an untagged union (try variants in order)
    variants: dict[str, str] = field(default_factory=dict)  # tag value -> class or union
    untagged: list[T] = field(default_factory=list)
    fallback: str | None = None
    lenient: bool = False


class Generator:
    def __init__(self, schema: dict[str, Any]) -> None:
        self.defs: dict[str, Any] = schema["$defs"]
        self.classes: dict[str, ClassDef] = {}
        self.unions: dict[str, UnionDef] = {}
        self.aliases: dict[str, tuple[str, str]] = {}  # name -> (annotation, doc)
        self.literals: dict[str, tuple[list[Any], str]] = {}
        self.refcount: dict[str, int] = {}
        self._count_refs()

    # ---------------------------------------------------------------- classification

    def _count_refs(self) -> None:
        def walk(node: Any) -> None:
            if isinstance(node, dict):
                ref = node.get("$ref")
                if isinstance(ref, str):
                    n = ref.rsplit("/", 1)[-1]
                    self.refcount[n] = self.refcount.get(n, 0) + 1
                for v in node.values():
                    walk(v)
            elif isinstance(node, list):
                for v in node:
                    walk(v)

        for name, d in self.defs.items():
            if name not in SKIP:
                walk(d)

    def kind_of(self, name: str) -> str:
        d = self.defs[name]
        if name in SKIP:
            return "skip"
        variants = d.get("anyOf") or d.get("oneOf")
        if "properties" in d:
            return "flat" if variants else "class"
        if variants:
            known = [v for v in variants if str(v.get("title")).lower() not in ("other", "unknown")]
            if all("const" in v for v in known) and all(
                v.get("type") in ("string", "integer") for v in variants
            ):
                return "enum"
            if self._tagged(name) is not None:
                return "tagged"
            if any("properties" in v for v in variants):
                return "flat"
            return "untagged"
        if d.get("type") in ("string", "integer", "number", "boolean"):
            return "prim"
        if "allOf" in d and len(d["allOf"]) == 1:
            return "alias"
        return "any"

    def _tagged(self, name: str) -> str | None:
        """The tag key when ``name`` is a pure tagged union, else None."""
        d = self.defs[name]
        tag: str | None = None
        for v in d.get("anyOf", []):
            if v.get("title") == "other":
                continue
            props = v.get("properties", {})
            if not props:
                if "allOf" in v and set(v) <= {"title", "description", "allOf"}:
                    continue  # an untagged variant (MultiSelectItems "titled")
                return None
            if len(props) != 1 or len(v.get("allOf", [])) != 1:
                return None
            ((key, p),) = props.items()
            if "const" not in p or (tag is not None and key != tag):
                return None
            tag = key
        return tag

    # ---------------------------------------------------------------- types

    def ref_type(self, name: str) -> T:
        kind = self.kind_of(name)
        d = self.defs[name]
        if kind in ("class", "flat"):
            self.build_class(name)
            return T("class", self.py_name(name))
        if kind == "tagged":
            self.build_tagged(name)
            return T("union", name)
        if kind == "enum":
            consts = [v["const"] for v in d.get("anyOf") or d["oneOf"] if "const" in v]
            base = "int" if isinstance(consts[0], int) else "str"
            self.literals[LITERAL_NAMES.get(name, name)] = (consts, d.get("description", ""))
            return T(base)
        if kind == "prim":
            prim = {"string": "str", "integer": "int", "number": "float", "boolean": "bool"}
            self.aliases[name] = (prim[d["type"]], d.get("description", ""))
            return T(prim[d["type"]], name)
        if kind == "alias":
            return self.prop_type(d["allOf"][0])[0]
        if kind == "untagged":
            return self.build_untagged(name)
        return T("any")

    def prop_type(self, p: dict[str, Any]) -> tuple[T, bool]:
        """Resolve a property schema to (type, nullable)."""
        if "$ref" in p:
            return self.ref_type(p["$ref"].rsplit("/", 1)[-1]), False
        if "allOf" in p and len(p["allOf"]) == 1:
            return self.prop_type(p["allOf"][0])
        alts = p.get("anyOf") or p.get("oneOf")
        if alts:
            nullable = any(a.get("type") == "null" for a in alts)
            rest = [a for a in alts if a.get("type") != "null"]
            if len(rest) == 1:
                t, n = self.prop_type(rest[0])
                return t, nullable or n
            ts = [self.prop_type(a)[0] for a in rest]
            if all(t.kind in ("str", "int", "float", "bool") for t in ts):
                return T("prims", prims=tuple(dict.fromkeys(t.kind for t in ts))), nullable
            return T("any"), nullable
        ty = p.get("type")
        nullable = False
        if isinstance(ty, list):
            nullable = "null" in ty
            rest = [x for x in ty if x != "null"]
            ty = rest[0] if len(rest) == 1 else None
        if "x-deserialize-default-on-null" in p:
            nullable = True
        if ty == "string":
            return T("str"), nullable
        if ty == "integer":
            return T("int"), nullable
        if ty == "number":
            return T("float"), nullable
        if ty == "boolean":
            return T("bool"), nullable
        if ty == "object":
            return T("dict"), nullable
        if ty == "array":
            item = self.prop_type(p["items"])[0] if "items" in p else T("any")
            return T("list", item=item), nullable
        if ty == "null":
            return T("null"), True
        return T("any"), nullable

    def py_name(self, name: str) -> str:
        return RENAMES.get(name, name)

    # ---------------------------------------------------------------- builders

    def fields_of(self, d: dict[str, Any], required: set[str], optional: bool) -> list[Field]:
        out = []
        for wire, p in d.get("properties", {}).items():
            t, nullable = self.prop_type(p)
            if "const" in p and p.get("type") == "string":
                t = T("str")
            out.append(
                Field(
                    wire=wire,
                    py=snake(wire),
                    t=t,
                    required=(wire in required) and not optional,
                    nullable=nullable,
                    default_on_error=bool(p.get("x-deserialize-default-on-error"))
                    or bool(p.get("x-deserialize-skip-invalid-items")),
                    doc=p.get("description", ""),
                )
            )
        return out

    def build_class(self, name: str) -> None:
        py = self.py_name(name)
        if py in self.classes:
            return
        d = self.defs[name]
        cls = ClassDef(name=py, doc=d.get("description", ""), fields=[])
        self.classes[py] = cls  # before recursing: types can be recursive
        fields = self.fields_of(d, set(d.get("required", [])), optional=False)
        variants = d.get("anyOf") or d.get("oneOf") or []
        if variants:
            fields = self._merge(fields, self._flatten_variants(variants))
            consts: dict[str, list[Any]] = {}
            for v in variants:
                for key, p in v.get("properties", {}).items():
                    if isinstance(p.get("const"), str):
                        consts.setdefault(key, []).append(p["const"])
            for key, vals in consts.items():
                lit = "StopReason" if key == "stopReason" else py + camel_tag(snake(key))
                self.literals[lit] = (vals, f"Known ``{key}`` values of ``{py}``.")
        cls.fields = fields
        self._patch_fields(cls)

    def _flatten_variants(self, variants: list[dict[str, Any]]) -> list[Field]:
        """Properties of every variant, optional unless every variant requires them."""
        per_variant: list[list[Field]] = []
        for v in variants:
            fs = self.fields_of(v, set(v.get("required", [])), optional=False)
            for sub in v.get("allOf", []):
                if "$ref" in sub:
                    target = self.defs[sub["$ref"].rsplit("/", 1)[-1]]
                    inner = self.fields_of(target, set(target.get("required", [])), False)
                    inner_vars = target.get("anyOf") or target.get("oneOf") or []
                    if inner_vars:
                        inner = self._merge(inner, self._flatten_variants(inner_vars))
                    fs = self._merge(fs, inner)
            for key in ("oneOf", "anyOf"):
                if key in v and "properties" not in v.get(key, [{}])[0]:
                    fs = self._merge(fs, self._flatten_variants(v[key]))
            per_variant.append(fs)
        merged: list[Field] = []
        for fs in per_variant:
            merged = self._merge(merged, fs)
        for f in merged:
            f.required = all(any(g.wire == f.wire and g.required for g in fs) for fs in per_variant)
            if any(g.wire == f.wire and g.nullable for fs in per_variant for g in fs):
                f.nullable = True
        return merged

    def _merge(self, a: list[Field], b: list[Field]) -> list[Field]:
        out = {f.wire: Field(**vars(f)) for f in a}
        for f in b:
            g = out.get(f.wire)
            if g is None:
                out[f.wire] = Field(**vars(f))
                continue
            if f.t.kind == "null":
                g.nullable = True
            elif g.t.kind == "null":
                g.t = f.t
            elif g.t.kind == f.t.kind and g.t.kind in PRIMS:
                pass
            elif g.t.kind in (*PRIMS, "prims") and f.t.kind in (*PRIMS, "prims"):
                kinds = (g.t.prims or (g.t.kind,)) + (f.t.prims or (f.t.kind,))
                g.t = T("prims", prims=tuple(dict.fromkeys(kinds)))
            elif g.t != f.t:
                g.t = T("any")
            g.nullable = g.nullable or f.nullable
            g.default_on_error = g.default_on_error or f.default_on_error
            g.required = g.required or f.required
            if not g.doc:
                g.doc = f.doc
        return list(out.values())

    def _patch_fields(self, cls: ClassDef) -> None:
        whole = bool(PATCH_CLASS_RE.search(cls.doc))
        for f in cls.fields:
            if f.required or f.tag_value is not None:
                continue
            if PATCH_FIELD_RE.search(f.doc) or (
                whole and "Omitted and `null` are equivalent" not in f.doc
            ):
                cls.patch_fields.append(f.py)

    def build_tagged(self, name: str, outer: tuple[str, str] | None = None) -> None:
        """Build a tagged union; ``outer`` = (tag key, tag value) of an enclosing union."""
        if name in self.unions and outer is None:
            return
        d = self.defs[name]
        tag = self._tagged(name)
        assert tag is not None
        u = UnionDef(name=name, doc=d.get("description", ""), tag=tag)
        if outer is None:
            self.unions[name] = u
            u.lenient = name in LENIENT_UNIONS
        for v in d["anyOf"]:
            if v.get("title") == "other":
                continue
            ref = v["allOf"][0]["$ref"].rsplit("/", 1)[-1]
            if not v.get("properties"):
                u.untagged.append(self.ref_type(ref))
                continue
            value = v["properties"][tag]["const"]
            if outer is None and self.kind_of(ref) == "tagged" and name == "SessionUpdate":
                # state_update: split by the inner tag (docs/architecture.md).
                inner = self.build_inner(ref, (tag, value))
                u.variants[value] = inner
                continue
            u.variants[value] = self.variant_class(name, tag, value, ref, outer)
        u.fallback = self.fallback_class(name, tag, outer, d)
        if outer is not None:
            self.unions[u.name] = u

    def build_inner(self, name: str, outer: tuple[str, str]) -> str:
        """A nested tagged union carried inside an outer one (SessionUpdate/state_update)."""
        self.build_tagged(name)  # the plain (nested) union and its base classes
        inner_name = INNER_NAMES.get(name, f"{name}As{camel_tag(outer[1])}")
        d = self.defs[name]
        tag = self._tagged(name)
        assert tag is not None
        u = UnionDef(name=inner_name, doc=d.get("description", ""), tag=tag)
        for v in d["anyOf"]:
            if v.get("title") == "other":
                continue
            ref = v["allOf"][0]["$ref"].rsplit("/", 1)[-1]
            value = v["properties"][tag]["const"]
            base = self.unions[name].variants[value]
            cls = ClassDef(name=ref, doc=v.get("description", ""), fields=[], base=base)
            cls.fields = [
                Field(outer[0], snake(outer[0]), T("str"), False, False, False, "", outer[1])
            ]
            self.classes[ref] = cls
            u.variants[value] = ref
        fb = "Unrecognized" + name
        self._fallback(fb, name, tag, outer, d, lenient=False)
        u.fallback = fb
        self.unions[inner_name] = u
        return inner_name

    def variant_class(
        self, union: str, tag: str, value: str, ref: str, outer: tuple[str, str] | None
    ) -> str:
        self.build_class(ref)
        base = self.py_name(ref)
        name = camel_tag(value) if union == "SessionUpdate" else base
        tagf = Field(tag, snake(tag), T("str"), False, False, False, "", value)
        if name == base and self.refcount.get(ref, 0) <= 1:
            cls = self.classes[base]
            cls.fields = [tagf] + [f for f in cls.fields if f.wire != tag]
            return base
        if name == base:
            raise SystemExit(f"{ref}: tagged variant of {union} also used elsewhere; add RENAMES")
        cls = ClassDef(name=name, doc=self.defs[ref].get("description", ""), fields=[tagf])
        cls.base = base
        cls.patch_fields = list(self.classes[base].patch_fields)
        self.classes[name] = cls
        return name

    def fallback_class(
        self, union: str, tag: str, outer: tuple[str, str] | None, d: dict[str, Any]
    ) -> str | None:
        if not any(v.get("title") == "other" for v in d["anyOf"]):
            return None
        name = FALLBACK_NAMES.get(union, "Unrecognized" + union)
        self._fallback(name, union, tag, outer, d, lenient=union in LENIENT_UNIONS)
        return name

    def _fallback(
        self,
        name: str,
        union: str,
        tag: str,
        outer: tuple[str, str] | None,
        d: dict[str, Any],
        lenient: bool,
    ) -> None:
        doc = next(v for v in d["anyOf"] if v.get("title") == "other").get("description", "")
        fields = []
        if outer is not None:
            fields.append(
                Field(outer[0], snake(outer[0]), T("str"), False, False, False, "", outer[1])
            )
        fields.append(Field(tag, snake(tag), T("str"), True, False, False, f"The `{tag}` value."))
        cls = ClassDef(name=name, doc=doc, fields=fields, fallback_of=union, lenient=lenient)
        cls.extra_background = union == "StateUpdate"
        self.classes[name] = cls

    def build_untagged(self, name: str) -> T:
        d = self.defs[name]
        alts = d.get("anyOf") or d.get("oneOf")
        ts = [self.prop_type(a)[0] for a in alts]
        if all(t.kind in ("str", "int", "float", "bool") for t in ts):
            t = T("prims", prims=tuple(dict.fromkeys(t.kind for t in ts)))
            self.aliases[name] = (t.ann(), d.get("description", ""))
            return T("prims", name=name, prims=t.prims)
        if any(t.kind == "any" for t in ts):
            self.aliases[name] = ("Any", d.get("description", ""))
            return T("any", name=name)
        if name not in self.unions:
            self.unions[name] = UnionDef(name=name, doc=d.get("description", ""), untagged=ts)
        return T("union", name)

    def run(self) -> None:
        for name in self.defs:
            if self.kind_of(name) != "skip":
                self.ref_type(name)
        for cls in self.classes.values():
            assert "extra" not in {f.py for f in cls.fields}, cls.name
            for f in cls.fields:
                if f.t.kind == "null":
                    f.t = T("any")
        self.methods = []
        for name, d in self.defs.items():
            if "x-method" in d and name not in SKIP:
                self.methods.append((d["x-method"], d["x-side"], name))


# --------------------------------------------------------------------------- emitter

HEADER = '''\
# GENERATED FILE: DO NOT EDIT.
# Generated by tools/gen_protocol.py from tests/data/schema/v2/schema.unstable.json
# (ACP v2 schema, Apache-2.0, see tests/data/schema/LICENSE). Regenerate with:
#     python tools/gen_protocol.py
# tests/protocol/test_generated_fresh.py fails when this file is stale.
"""ACP v2 wire types, generated from the JSON schema (docs/architecture.md, "Wire layer").

Every optional field defaults to ``UNSET`` (omitted on the wire), so omitted, ``null``
(``None``) and a value round-trip exactly. ``extra`` keeps keys the schema does not name.
Invalid values of fields the schema marks ``x-deserialize-default-on-error`` read as
``UNSET`` and are kept verbatim in ``extra`` (re-emitted unchanged).

Patch fields (omitted = unchanged, ``null`` = clear, value = replace), per the schema
descriptions; also in ``PATCH_FIELDS``:

{patch_doc}
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final, Literal, TypeAlias

import attrs

from acp_lite.protocol._errors import WireError
from acp_lite.protocol._unset import UNSET, Unset

'''


def doc_literal(text: str, indent: str) -> str:
    text = text.strip().replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
    if not text:
        return ""
    if text.endswith('"'):
        text += " "
    lines = [line.rstrip() for line in text.split("\n")]
    body = "\n".join([lines[0], *((indent + line) if line else "" for line in lines[1:])])
    if len(lines) > 1:
        body += "\n" + indent
    return f'{indent}"""{body}"""\n'


class Emitter:
    def __init__(self, g: Generator) -> None:
        self.g = g
        self.out: list[str] = []
        self.tables: list[str] = []

    def w(self, s: str = "") -> None:
        self.out.append(s)

    def all_fields(self, cls: ClassDef) -> list[Field]:
        if cls.base is None:
            return cls.fields
        base = self.all_fields(self.g.classes[cls.base])
        own = {f.wire for f in cls.fields}
        return cls.fields + [f for f in base if f.wire not in own]

    def order(self) -> list[str]:
        """Classes ordered so that bases come first."""
        done: list[str] = []
        seen: set[str] = set()

        def visit(n: str) -> None:
            if n in seen:
                return
            seen.add(n)
            b = self.g.classes[n].base
            if b:
                visit(b)
            done.append(n)

        for n in sorted(self.g.classes):
            visit(n)
        return done

    def union_order(self) -> list[UnionDef]:
        """Union aliases ordered so that a union used as a member is defined first."""
        done: list[UnionDef] = []
        seen: set[str] = set()

        def visit(n: str) -> None:
            if n in seen or n not in self.g.unions:
                return
            seen.add(n)
            u = self.g.unions[n]
            for m in [*u.variants.values(), *(t.name for t in u.untagged)]:
                visit(m)
            done.append(u)

        for n in sorted(self.g.unions):
            visit(n)
        return done

    def emit(self) -> str:
        g = self.g
        patch = {n: c.patch_fields for n, c in sorted(g.classes.items()) if c.patch_fields}
        patch_doc = "\n".join(f"* ``{n}``: {', '.join(fs)}" for n, fs in patch.items())
        self.w(HEADER.replace("{patch_doc}", patch_doc))
        for name, (ann, doc) in sorted(g.aliases.items()):
            self.w(f"{name}: TypeAlias = {ann}")
            self.w(doc_literal(doc, ""))
        for name, (consts, doc) in sorted(g.literals.items()):
            vals = ", ".join(json.dumps(c) for c in consts)
            self.w(f"{name}: TypeAlias = Literal[{vals}]")
            note = "Known values (fields are typed ``str``/``int``: unknown values are kept)."
            self.w(doc_literal(f"{note}\n\n{doc}", ""))
        for n in self.order():
            self.emit_class(g.classes[n])
        for u in self.union_order():
            members = list(
                dict.fromkeys(
                    [*u.variants.values(), *(t.ann() for t in u.untagged)]
                    + ([u.fallback] if u.fallback else [])
                )
            )
            self.w(f"{u.name}: TypeAlias = {' | '.join(members)}")
            self.w(doc_literal(u.doc, ""))
        self.w("\n# ---------------------------------------------------------------- structure\n")
        self.emit_helpers()
        for n in self.order():
            self.emit_structure(g.classes[n])
        for u in sorted(g.unions.values(), key=lambda u: u.name):
            self.emit_union_structure(u)
        self.out.extend(self.tables)
        self.w("\n# ---------------------------------------------------------------- unstructure\n")
        for n in self.order():
            self.emit_unstructure(g.classes[n])
        self.emit_tables(patch)
        return "\n".join(self.out) + "\n"

    # ---------------------------------------------------------------- classes

    def emit_class(self, cls: ClassDef) -> None:
        base = f"({cls.base})" if cls.base else ""
        self.w("@attrs.define(kw_only=True)")
        self.w(f"class {cls.name}{base}:")
        doc = cls.doc
        if cls.patch_fields:
            doc += "\n\nPatch fields: " + ", ".join(f"``{f}``" for f in cls.patch_fields) + "."
        if cls.fallback_of:
            doc += (
                f"\n\nStands for any ``{cls.fallback_of}`` variant this library does not know;"
                " ``raw`` is the whole payload, re-emitted unchanged."
            )
        self.out.append(doc_literal(doc or cls.name, "    ").rstrip("\n"))
        self.w()
        for f in cls.fields:
            self.w(f"    {f.py}: {self.field_ann(f)}{self.field_default(f)}")
            if f.doc:
                self.out.append(doc_literal(f.doc, "    ").rstrip("\n"))
        if cls.fallback_of:
            self.w("    raw: dict[str, Any] = attrs.field(factory=dict)")
            self.w('    """The payload exactly as received."""')
            if cls.extra_background:
                self.w("    background: list[BackgroundWork] | Unset | None = UNSET")
                self.w('    """``background`` read from ``raw`` when it is well-formed."""')
            if cls.lenient:
                self.w("    error: str | None = None")
                self.w(
                    '    """Why a known tag failed to structure, or why the tag is missing (then'
                    ' the tag reads ``\'\'``); ``None`` for a well-formed unknown tag."""'
                )
        elif cls.base is None:
            self.w("    extra: dict[str, Any] = attrs.field(factory=dict)")
            self.w('    """Keys the schema does not define, re-emitted unchanged."""')
        self.w("\n")

    def field_ann(self, f: Field) -> str:
        if f.tag_value is not None:
            return f"Literal[{json.dumps(f.tag_value)}]"
        ann = f.t.ann()
        if ann == "Any":
            return "Any" if f.required else "Any | Unset"
        if not f.required:
            ann += " | Unset"
        if f.nullable:
            ann += " | None"
        return ann

    def field_default(self, f: Field) -> str:
        if f.tag_value is not None:
            return f" = {json.dumps(f.tag_value)}"
        return "" if f.required else " = UNSET"

    # ---------------------------------------------------------------- structure

    def emit_helpers(self) -> None:
        self.w("""\
_new: Any = object.__new__


def _bad(cls: str, key: str, value: Any, want: str) -> WireError:
    shown = repr(value)
    if len(shown) > 60:
        shown = shown[:57] + "..."
    return WireError(f"{cls}.{key}: expected {want}, got {type(value).__name__} {shown}")


def _required(cls: str, key: str, d: dict[str, Any], want: str) -> WireError:
    return _bad(cls, key, d[key], want) if key in d else _missing(cls, key)


_TAGGED: Final = object()  # passed by union dispatchers: the tag is already checked


def _missing(cls: str, key: str) -> WireError:
    return WireError(f"{cls}: required key {key!r} is missing")


def _not_object(cls: str, value: Any) -> WireError:
    return WireError(f"{cls}: expected a JSON object, got {type(value).__name__}")


def _list_of(cls: str, key: str, v: Any, check: Callable[[Any], bool], want: str) -> Any:
    if type(v) is not list:
        raise _bad(cls, key, v, "an array")
    for item in v:
        if not check(item):
            raise _bad(cls, key, item, want)
    return v


def _struct_list(cls: str, key: str, v: Any, fn: Callable[[Any], Any]) -> list[Any]:
    if type(v) is not list:
        raise _bad(cls, key, v, "an array")
    return [fn(item) for item in v]


def _extra(d: dict[str, Any], known: frozenset[str]) -> dict[str, Any]:
    return {k: v for k, v in d.items() if k not in known}


def _is_str(v: Any) -> bool:
    return type(v) is str


def _is_int(v: Any) -> bool:
    return type(v) is int


def _is_float(v: Any) -> bool:
    return type(v) is float or type(v) is int


def _is_bool(v: Any) -> bool:
    return type(v) is bool


def _is_dict(v: Any) -> bool:
    return type(v) is dict


def _is_any(v: Any) -> bool:
    return True

""")

    def check_expr(self, t: T, v: str) -> str | None:
        """A boolean expression that is True when ``v`` does NOT have primitive type ``t``."""
        if t.kind in PRIM_CHECK:
            return PRIM_CHECK[t.kind].format(v=v)
        if t.kind == "prims":
            return " and ".join(PRIM_CHECK[p].format(v=v) for p in t.prims)
        return None

    def conv_lines(self, cls: str, f: Field, t: T, v: str, ind: str) -> list[str]:
        """Statements validating / converting ``v`` (in place) for type ``t``."""
        k = f.wire
        if t.kind == "any":
            return []
        chk = self.check_expr(t, v)
        if chk is not None:
            return [f"{ind}if {chk}:", f"{ind}    raise _bad({cls!r}, {k!r}, {v}, {t.kind!r})"]
        if t.kind in ("class", "union"):
            return [f"{ind}{v} = _s_{t.name}({v})"]
        if t.kind == "list":
            assert t.item is not None
            it = t.item
            if it.kind in ("class", "union"):
                return [f"{ind}{v} = _struct_list({cls!r}, {k!r}, {v}, _s_{it.name})"]
            checker = {
                "str": "_is_str",
                "int": "_is_int",
                "float": "_is_float",
                "bool": "_is_bool",
                "dict": "_is_dict",
                "any": "_is_any",
            }.get(it.kind)
            if checker is None:  # list of lists or prims: rare, accept any JSON array items
                checker = "_is_any"
            return [f"{ind}_list_of({cls!r}, {k!r}, {v}, {checker}, {it.kind!r})"]
        raise AssertionError(t)

    def emit_structure(self, cls: ClassDef) -> None:
        n = cls.name
        fields = self.all_fields(cls)
        w = self.w
        w(f"def _s_{n}(d: Any, _: Any = None) -> {n}:")
        w("    if type(d) is not dict:")
        w(f"        raise _not_object({n!r}, d)")
        if cls.fallback_of:
            tagf = next(f for f in fields if f.tag_value is None)
            w(f"    tag = d.get({tagf.wire!r})")
            w("    if type(tag) is not str:")
            w(f"        raise _bad({n!r}, {tagf.wire!r}, tag, 'a string')")
            args = [f"{tagf.py}=tag", "raw=d"]
            for f in fields:
                if f.tag_value is not None:
                    w(f"    if d.get({f.wire!r}) != {f.tag_value!r}:")
                    w(f"        raise _bad({n!r}, {f.wire!r}, d.get({f.wire!r}), {f.tag_value!r})")
            if cls.extra_background:
                w('    bg = d.get("background", UNSET)')
                w("    if bg is not UNSET and bg is not None:")
                w("        try:")
                w(f'            bg = _struct_list({n!r}, "background", bg, _s_BackgroundWork)')
                w("        except WireError:")
                w("            bg = UNSET")
                args.append("background=bg")
            w(f"    return {n}({', '.join(args)})")
            w("\n")
            return
        keys = "frozenset({" + ", ".join(f"{f.wire!r}" for f in fields) + "})"
        w(f"    extra = {{}} if d.keys() <= _K_{n} else _extra(d, _K_{n})")
        for i, f in enumerate(fields):
            v = f"v{i}"
            if f.tag_value is not None:
                # A union dispatcher that already matched the tag passes _TAGGED.
                tag = repr(f.tag_value)
                w(f"    if _ is not _TAGGED and d.get({f.wire!r}, {tag}) != {tag}:")
                w(f"        raise _bad({n!r}, {f.wire!r}, d.get({f.wire!r}), {f.tag_value!r})")
                continue
            chk = self.check_expr(f.t, v)
            if f.required and not f.nullable and chk is not None:
                w(f"    {v} = d.get({f.wire!r})")
                w(f"    if {chk}:")
                w(f"        raise _required({n!r}, {f.wire!r}, d, {f.t.kind!r})")
                continue
            if f.required:
                w(f"    {v} = d.get({f.wire!r}, UNSET)")
                w(f"    if {v} is UNSET:")
                w(f"        raise _missing({n!r}, {f.wire!r})")
                conv = self.conv_lines(n, f, f.t, v, "    ")
                chk = self.check_expr(f.t, v)
                if f.nullable and chk is not None:
                    w(f"    if {v} is not None and {chk}:")
                    w(f"        raise _bad({n!r}, {f.wire!r}, {v}, {f.t.kind!r})")
                    continue
                if f.nullable and conv:
                    w(f"    if {v} is not None:")
                    conv = ["    " + line for line in conv]
                self.out.extend(conv)
                continue
            w(f"    {v} = d.get({f.wire!r}, UNSET)")
            conv = self.conv_lines(n, f, f.t, v, "        ")
            if not conv:
                continue
            cond = f"{v} is not UNSET" + (f" and {v} is not None" if f.nullable else "")
            chk = self.check_expr(f.t, v)
            if not f.default_on_error and chk is not None:
                w(f"    if {cond} and {chk}:")
                w(f"        raise _bad({n!r}, {f.wire!r}, {v}, {f.t.kind!r})")
            elif f.default_on_error and chk is not None:
                # Schema: invalid value reads as the default; we keep it in `extra`.
                w(f"    if {cond} and {chk}:")
                w(f"        extra[{f.wire!r}] = {v}")
                w(f"        {v} = UNSET")
            elif f.default_on_error:
                w(f"    if {cond}:")
                w("        try:")
                self.out.extend("    " + line for line in conv)
                w("        except WireError:")
                w(f"            extra[{f.wire!r}] = {v}")
                w(f"            {v} = UNSET")
            else:
                w(f"    if {cond}:")
                self.out.extend(conv)
        # object.__new__ + slot stores: ~3x cheaper than the keyword __init__ (hot path).
        w(f"    o: {n} = _new({n})")
        for i, f in enumerate(fields):
            w(f"    o.{f.py} = {repr(f.tag_value) if f.tag_value is not None else f'v{i}'}")
        w("    o.extra = extra")
        w("    return o")
        w("")
        w(f"_K_{n}: Final = {keys}")
        w("\n")

    def emit_union_structure(self, u: UnionDef) -> None:
        w = self.w
        w(f"def _s_{u.name}(d: Any, _: Any = None) -> {u.name}:")
        if u.tag:
            w("    if type(d) is not dict:")
            w(f"        raise _not_object({u.name!r}, d)")
            w(f"    tag: Any = d.get({u.tag!r})")
            w(f"    fn = _T_{u.name}.get(tag) if type(tag) is str else None")
            w("    if fn is None:")
            if u.lenient:
                w("        if type(tag) is not str:")
                w(f"            msg = {'missing or non-string ' + repr(u.tag)!r}")
                w(f"            return {u.fallback}({snake(u.tag)}='', raw=d, error=msg)")
            if u.untagged:
                w("        if tag is None:")
                for t in u.untagged:
                    w("            try:")
                    w(f"                return _s_{t.name}(d)")
                    w("            except WireError:")
                    w("                pass")
            if u.fallback:
                w(f"        return _s_{u.fallback}(d)")
            else:
                w(f"        raise _bad({u.name!r}, {u.tag!r}, tag, 'a known tag')")
            if u.lenient:
                w("    try:")
                w("        return fn(d, _TAGGED)  # type: ignore[no-any-return]")
                w("    except WireError as exc:")
                w(f"        return {u.fallback}({snake(u.tag)}=tag, raw=d, error=str(exc))")
            else:
                w("    return fn(d, _TAGGED)  # type: ignore[no-any-return]")
            table = ", ".join(f"{k!r}: _s_{v}" for k, v in u.variants.items())
            self.tables.append(
                f"_T_{u.name}: Final[dict[str, Callable[[Any, Any], Any]]] = {{{table}}}"
            )
        else:
            for t in u.untagged:
                w("    try:")
                if t.kind == "list":
                    assert t.item is not None
                    w(f"        return _struct_list({u.name!r}, 'item', d, _s_{t.item.name})")
                else:
                    w(f"        return _s_{t.name}(d)")
                w("    except WireError:")
                w("        pass")
            w(f"    raise WireError({u.name + ': matches none of its variants'!r})")
        w("\n")

    # ---------------------------------------------------------------- unstructure

    def unconv(self, t: T, v: str) -> str | None:
        if t.kind in ("class", "union"):
            return f"_u_any({v})"
        if t.kind == "list" and t.item is not None and t.item.kind in ("class", "union"):
            return f"[_u_any(i) for i in {v}]"
        return None

    def emit_unstructure(self, cls: ClassDef) -> None:
        n = cls.name
        w = self.w
        fields = self.all_fields(cls)
        w(f"def _u_{n}(o: {n}) -> dict[str, Any]:")
        if cls.fallback_of:
            w("    return dict(o.raw)")
            w("\n")
            return
        first = [f for f in fields if f.required or f.tag_value is not None]
        items = []
        for f in first:
            conv = self.unconv(f.t, f"o.{f.py}") if f.tag_value is None else None
            if conv and f.nullable:
                conv = f"None if o.{f.py} is None else {conv}"
            items.append(f"{f.wire!r}: {conv or 'o.' + f.py}")
        w(f"    d: dict[str, Any] = {{{', '.join(items)}}}")
        for i, f in enumerate(fields):
            if f in first:
                continue
            conv = self.unconv(f.t, f"v{i}")
            if conv is None:
                w(f"    if o.{f.py} is not UNSET:")
                w(f"        d[{f.wire!r}] = o.{f.py}")
            else:
                w(f"    v{i} = o.{f.py}")
                w(f"    if v{i} is not UNSET:")
                if f.nullable:
                    w(f"        d[{f.wire!r}] = None if v{i} is None else {conv}")
                else:
                    w(f"        d[{f.wire!r}] = {conv}")
        w("    if o.extra:")
        w("        d.update(o.extra)")
        w("    return d")
        w("\n")

    def emit_tables(self, patch: dict[str, list[str]]) -> None:
        g = self.g
        w = self.w
        w("def _u_any(o: Any) -> Any:")
        w("    fn = UNSTRUCTURE.get(type(o))")
        w("    if fn is None:")
        w("        if type(o) is list:")
        w("            return [_u_any(i) for i in o]")
        w("        return o")
        w("    return fn(o)")
        w("\n")
        names = self.order()
        w("STRUCTURE: Final[dict[Any, Callable[[Any, Any], Any]]] = {")
        for n in names:
            w(f"    {n}: _s_{n},")
        for u in sorted(g.unions):
            w(f"    {u}: _s_{u},")
        w("}")
        w('"""Fast structure function per wire type (class or union alias)."""')
        w("")
        w("UNSTRUCTURE: Final[dict[type, Callable[[Any], dict[str, Any]]]] = {")
        for n in names:
            w(f"    {n}: _u_{n},")
        w("}")
        w('"""Unstructure function per wire class."""')
        w("")
        w("UNIONS: Final[tuple[Any, ...]] = (" + "".join(f"{u}, " for u in sorted(g.unions)) + ")")
        w('"""Every union alias (registered on the converter as a whole)."""')
        w("")
        w("DEFINITIONS: Final[dict[str, Any]] = {")
        for name in g.defs:
            if g.kind_of(name) in ("class", "flat", "tagged") or (
                g.kind_of(name) == "untagged" and name in g.unions
            ):
                w(f"    {name!r}: {g.ref_type(name).name},")
        w("}")
        w('"""Schema definition name -> wire class or union alias (for tests and tools)."""')
        w("")
        w("PATCH_FIELDS: Final[dict[str, tuple[str, ...]]] = {")
        for n, fs in patch.items():
            w(f"    {n!r}: ({''.join(repr(f) + ', ' for f in fs)}),")
        w("}")
        w('"""Class name -> fields with patch semantics (omitted / null / value)."""')
        w("")
        w("METHOD_TYPES: Final[dict[str, dict[str, Any]]] = {")
        table: dict[str, dict[str, str]] = {}
        for method, side, name in g.methods:
            entry = table.setdefault(method, {"side": side})
            kind = "result" if name.endswith("Response") else "params"
            t = g.ref_type(name)
            entry[kind] = t.ann() if t.kind in ("class", "union") else "None"
            entry.setdefault("kind", "request")
            if name.endswith("Notification"):
                entry["kind"] = "notification"
        for method in sorted(table):
            e = table[method]
            w(
                f"    {method!r}: {{'side': {e['side']!r}, 'kind': {e['kind']!r}, "
                f"'params': {e.get('params', 'None')}, 'result': {e.get('result', 'None')}}},"
            )
        w("}")
        w('"""Method -> side that handles it ("agent", "client", "protocol", "proxy"),')
        w('kind ("request" / "notification"), params and result types (None = untyped)."""')
        w("")
        exported = sorted({*g.classes, *g.unions, *g.aliases} | set(g.literals))
        w("__all__ = [")
        for n in [
            *exported,
            "DEFINITIONS",
            "METHOD_TYPES",
            "PATCH_FIELDS",
            "STRUCTURE",
            "UNIONS",
            "UNSTRUCTURE",
        ]:
            w(f"    {n!r},")
        w("]")


def ruff_format(source: str) -> str:
    ruff = Path(sys.executable).parent / "ruff"
    cmd = [str(ruff)] if ruff.exists() else [sys.executable, "-m", "ruff"]
    base = [*cmd, "--config", str(ROOT / "pyproject.toml")]
    fixed = (
        subprocess.run(
            [
                *base[:1],
                "check",
                *base[1:],
                "--select",
                "I,F401,RUF022",
                "--fix",
                "--quiet",
                "--stdin-filename",
                str(OUT),
                "-",
            ],
            input=source,
            capture_output=True,
            text=True,
            check=False,
        ).stdout
        or source
    )
    out = subprocess.run(
        [*base[:1], "format", *base[1:], "--stdin-filename", str(OUT), "-"],
        input=fixed,
        capture_output=True,
        text=True,
        check=True,
    )
    return out.stdout


def generate(schema: dict[str, Any] | None = None) -> str:
    """Return the source of ``_generated.py`` for ``schema`` (default: the test-data copy)."""
    if schema is None:
        schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    g = Generator(schema)
    g.run()
    return ruff_format(Emitter(g).emit())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true", help="fail if the module is stale")
    args = ap.parse_args(argv)
    src = generate()
    if args.check:
        if OUT.read_text(encoding="utf-8") != src:
            print(f"{OUT} is stale: run python tools/gen_protocol.py", file=sys.stderr)
            return 1
        return 0
    OUT.write_text(src, encoding="utf-8")
    print(f"wrote {OUT} ({src.count(chr(10))} lines)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
