"""The type model of tools/gen_protocol.py: what ``gen_protocol.Generator`` derives
from the schema (classes, unions, resolved field types) and ``gen_protocol_emit.Emitter``
turns into source, with the naming helpers both use.
"""

from __future__ import annotations

import keyword
import re
from dataclasses import dataclass, field


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


FACTORY = "<factory>"  # a default made per instance (attrs.field(factory=dict))

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
    skip_invalid: bool = False  # x-deserialize-skip-invalid-items


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
