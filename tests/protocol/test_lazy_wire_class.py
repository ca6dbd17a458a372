"""``wire_class``: the generated classes are attrs classes, processed on first use."""

from __future__ import annotations

import pickle
from typing import Any

import attrs
import pytest

from acp_lite._lazy_attrs import is_processed as _built
from acp_lite.protocol._runtime import _FACTORY, WireObject, wire_class


def _pair() -> tuple[type[Any], type[Any], type[Any], type[Any]]:
    """A base and a subclass made by ``wire_class`` and their ``attrs.define`` twins."""

    # As the generator writes them (tools/gen_protocol_emit.py): the __init__ attrs
    # would write, spelled out.
    @wire_class
    class Base(WireObject):
        name: str
        kind: str | None = None
        extra: dict[str, Any] = attrs.field(factory=dict)

        def __init__(self, *, name: str, kind: str | None = None, extra: Any = _FACTORY):
            self.name, self.kind = name, kind
            self.extra = {} if extra is _FACTORY else extra

    @wire_class
    class Sub(Base):
        tag: str = "sub"

        def __init__(
            self, *, name: str, kind: str | None = None, extra: Any = _FACTORY, tag: str = "sub"
        ):
            self.name, self.kind, self.tag = name, kind, tag
            self.extra = {} if extra is _FACTORY else extra

    @attrs.define(kw_only=True, repr=False, eq=False, slots=True, weakref_slot=False)
    class TwinBase(WireObject):
        name: str
        kind: str | None = None
        extra: dict[str, Any] = attrs.field(factory=dict)

    @attrs.define(kw_only=True, repr=False, eq=False, slots=True, weakref_slot=False)
    class TwinSub(TwinBase):
        tag: str = "sub"

    return Base, Sub, TwinBase, TwinSub


def _shape(cls: type[Any]) -> list[tuple[Any, ...]]:
    return [(a.name, a.default, a.kw_only, a.init, a.inherited) for a in attrs.fields(cls)]


def test_processed_on_first_use_like_attrs_define() -> None:
    base, sub, twin_base, twin_sub = _pair()
    assert base.__slots__ == ("name", "kind", "extra") and sub.__slots__ == ("tag",)
    obj = sub(name="n")
    assert not _built(sub) and not _built(base)  # building an instance needs no attrs
    assert _shape(sub) == _shape(twin_sub)  # attrs processes Sub, then its base
    assert _built(sub) and _built(base)
    assert _shape(base) == _shape(twin_base)
    assert (obj.name, obj.kind, obj.extra, obj.tag) == ("n", None, {}, "sub")
    assert obj.extra is not sub(name="m").extra  # a factory, not a shared default
    assert not hasattr(obj, "__dict__")
    assert obj == sub(name="n") and obj != sub(name="m")
    assert repr(obj) == "Sub(name='n', kind=None, extra={}, tag='sub')"
    assert attrs.evolve(obj, kind="k").kind == "k"
    with pytest.raises(TypeError):
        sub(name="n", unknown=1)
    with pytest.raises(TypeError):
        sub()  # a required field


def test_equality_processes_the_class() -> None:
    _, sub, _, _ = _pair()
    assert sub(name="n") == sub(name="n") and _built(sub)


def test_fields_access_processes_the_class() -> None:
    _, sub, _, _ = _pair()
    assert not _built(sub)
    assert attrs.has(sub)
    assert attrs.fields(sub).tag.default == "sub"
    assert _built(sub)


def test_subclass_of_an_unprocessed_class() -> None:
    base, _, _, _ = _pair()

    class Mine(base):  # type: ignore[valid-type,misc]
        pass

    obj = Mine(name="n")
    assert obj.name == "n" and [a.name for a in attrs.fields(Mine)] == ["name", "kind", "extra"]


def test_decoded_generated_objects_pickle() -> None:
    from acp_lite.protocol import converter
    from acp_lite.protocol._generated import ResourceLink

    decoded = converter.structure({"type": "resource_link", "name": "n", "uri": "u"}, ResourceLink)
    assert pickle.loads(pickle.dumps(decoded)) == decoded
