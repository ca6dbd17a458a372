#!/usr/bin/env python3
"""Generate ``acp_lite/protocol/_generated.py`` from the ACP v2 JSON schema.

Usage::

    python tools/gen_protocol.py            # rewrite the module
    python tools/gen_protocol.py --check    # exit 1 when the committed module is stale

The schema is ``tests/data/schema/v2/schema.unstable.json`` (stable v2 + draft extras).
What the generator emits (docs/architecture.md, "Wire layer"):

* one attrs class per object definition; field names are snake_case, ``_meta`` -> ``meta``;
  every optional field defaults to ``UNSET``; ``extra`` keeps unknown keys;
* string enums are typed plain ``str`` (unknown values survive); a ``Literal`` alias named
  after the schema definition lists the known values;
* tagged unions (``anyOf`` of ``{tag: const} + $ref`` plus an ``other`` fallback) become a
  union alias of variant classes (each with a ``Literal`` tag field) and an
  ``Unrecognized<Union>`` class that keeps the raw payload;
* definitions mixing own properties with variants (``DiffChange``, ``SessionConfigOption``,
  ``IdleStateUpdate`` ...) become ONE flat class: the variant-only properties are optional;
* straight-line structure / unstructure functions per class (no per-field converter
  dispatch: the notification path is hot), registered on the cattrs converter.

The schema analysis lives here; the type model in ``tools/gen_protocol_types.py``, the
source emitter in ``tools/gen_protocol_emit.py``.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
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

sys.path.insert(0, str(Path(__file__).resolve().parent))  # its modules, when imported
from gen_protocol_emit import Emitter  # noqa: E402
from gen_protocol_types import PRIMS, ClassDef, Field, T, UnionDef, camel_tag, snake  # noqa: E402


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
                    skip_invalid=bool(p.get("x-deserialize-skip-invalid-items")),
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
            g.skip_invalid = g.skip_invalid or f.skip_invalid
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
