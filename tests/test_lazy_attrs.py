"""``acp_lite._lazy_attrs``: record classes attrs processes on first use, then the same
as ``attrs.define`` / ``attrs.frozen`` would have made them."""

from __future__ import annotations

import copy
import inspect
import pickle
import threading
import weakref
from typing import Any

import attrs
import pytest

from acp_lite import _lazy_attrs as lazy_attrs
from acp_lite._lazy_attrs import LAZY_FIELDS as _LAZY_FIELDS


def _built(cls: type) -> bool:
    return cls.__dict__["__attrs_attrs__"] is not _LAZY_FIELDS


def _shape(cls: type) -> list[tuple[Any, ...]]:
    return [
        (a.name, a.default, a.kw_only, a.init, a.eq, a.type, a.alias) for a in attrs.fields(cls)
    ]


@lazy_attrs.frozen
class Frozen:
    name: str
    items: tuple[int, ...] = attrs.field(factory=tuple)
    kind: str | None = None


@attrs.frozen
class FrozenTwin:
    name: str
    items: tuple[int, ...] = attrs.field(factory=tuple)
    kind: str | None = None


@lazy_attrs.define(eq=False)
class Mutable:
    name: str
    seen: list[int] = attrs.field(factory=list)


@lazy_attrs.frozen(kw_only=True)
class OwnRepr:
    name: str

    def __repr__(self) -> str:
        return f"<{self.name}>"


# Module-level so pickle finds them; each test uses its own class, so the order of
# tests does not decide which ones attrs has processed yet.
@lazy_attrs.frozen
class Unpickled:
    name: str


@lazy_attrs.frozen
class Introspected:
    name: str
    kind: str = "k"


def test_frozen_matches_attrs_frozen() -> None:
    assert not _built(Frozen)
    assert Frozen.__dict__["__slots__"] == ("name", "items", "kind", "__weakref__")
    obj = Frozen("n")
    assert _built(Frozen)
    assert _shape(Frozen) == _shape(FrozenTwin)
    assert repr(obj) == repr(FrozenTwin("n")).replace("FrozenTwin", "Frozen")
    assert obj == Frozen("n") and obj != Frozen("m") and hash(obj) == hash(Frozen("n"))
    assert obj.items is not Frozen("x").items or obj.items == ()
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        obj.name = "m"  # type: ignore[misc]
    assert not hasattr(obj, "__dict__") and weakref.ref(obj)() is obj
    assert attrs.evolve(obj, kind="k").kind == "k"
    assert pickle.loads(pickle.dumps(obj)) == obj == copy.deepcopy(obj)
    match obj:
        case Frozen("n", items):
            assert items == ()
        case _:  # pragma: no cover - the match above must hold
            pytest.fail("positional match")
    with pytest.raises(TypeError):
        Frozen()  # type: ignore[call-arg]


def test_define_keeps_its_options_and_own_methods() -> None:
    a = Mutable("n")
    a.seen.append(1)
    assert a.seen == [1] and Mutable("n").seen == []
    assert a != Mutable("n", [1])  # eq=False: identity
    a.name = "m"
    assert repr(a) == "Mutable(name='m', seen=[1])"
    assert repr(OwnRepr(name="x")) == "<x>"  # written by the class: kept
    with pytest.raises(TypeError):
        OwnRepr("x")  # type: ignore[call-arg]  # kw_only


def test_unpickling_and_introspection_process_the_class() -> None:
    data = pickle.dumps(Unpickled("n"))
    # As in a process that has made none yet: unpickling is the first use.
    Unpickled.__attrs_attrs__ = _LAZY_FIELDS  # type: ignore[assignment]
    Unpickled.__setstate__ = lazy_attrs._LazyMember("__setstate__")  # type: ignore[attr-defined]
    assert pickle.loads(data) == Unpickled("n")
    assert not _built(Introspected)
    assert str(inspect.signature(Introspected)) == "(name: 'str', kind: 'str' = 'k') -> None"
    assert _built(Introspected) and attrs.has(Introspected)


def test_unsupported_classes_are_refused() -> None:
    with pytest.raises(TypeError, match="no base classes"):

        @lazy_attrs.frozen
        class Sub(Frozen):
            extra: int = 0

    with pytest.raises(TypeError, match="super"):

        @lazy_attrs.define
        class UsesSuper:
            name: str

            def describe(self) -> str:
                return super().__repr__()

    with pytest.raises(TypeError, match="__init__"):

        @lazy_attrs.define
        class OwnInit:
            name: str

            def __init__(self) -> None:
                self.name = "n"

    with pytest.raises(TypeError, match="slotted"):
        lazy_attrs.define(slots=False)


def test_first_use_from_many_threads_at_once() -> None:
    @lazy_attrs.frozen
    class Shared:
        name: str

    barrier = threading.Barrier(8)
    seen: list[str] = []

    def use() -> None:
        barrier.wait()
        obj = Shared("n")
        seen.append(f"{obj!r} {obj == Shared('n')} {attrs.fields(Shared)[0].name}")

    threads = [threading.Thread(target=use) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert seen == ["Shared(name='n') True name"] * 8


def test_instances_made_without_init_behave_as_attrs() -> None:
    """Hot paths make objects with ``object.__new__`` and fill the slots: the class
    is processed as soon as such an object is compared, shown, hashed or pickled."""

    @lazy_attrs.frozen
    class Made:
        name: str

    @lazy_attrs.define
    class Filled:
        name: str

    frozen_obj = object.__new__(Made)
    object.__setattr__(frozen_obj, "name", "n")
    assert not _built(Made)
    assert repr(frozen_obj) == "Made(name='n')" and _built(Made)
    assert frozen_obj == Made("n") and hash(frozen_obj) == hash(Made("n"))
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        frozen_obj.name = "m"  # type: ignore[misc]
    mutable = object.__new__(Filled)
    mutable.name = "n"  # the first use: processes the class, then sets the slot
    assert _built(Filled) and mutable == Filled("n")
    with pytest.raises(TypeError):
        hash(mutable)  # attrs.define with eq: unhashable
    match mutable:
        case Filled(name):
            assert name == "n"
        case _:  # pragma: no cover - the match above must hold
            pytest.fail("positional match")


def test_a_plain_subclass_processes_its_deferred_base() -> None:
    """A class extending a deferred one (without the decorator) finds the base's
    members and fields: looking them up through it processes the base."""

    @lazy_attrs.define
    class Base:
        name: str

    class Plain(Base):
        __slots__ = ()

    assert not lazy_attrs.is_processed(Base)
    made = Plain("n")  # the base's __init__, through the subclass
    assert lazy_attrs.is_processed(Base)
    assert made.name == "n" and [a.name for a in attrs.fields(Plain)] == ["name"]


def test_one_deferral_serves_records_and_wire_classes() -> None:
    """The wire classes wait on the same placeholder and lock as the records (one
    deferred-attrs mechanism, not two)."""
    from acp_lite.protocol import _generated as g

    assert g.TextContent.__dict__["__attrs_attrs__"] is lazy_attrs.LAZY_FIELDS or (
        lazy_attrs.is_processed(g.TextContent)
    )
    assert isinstance(g.TextContent.__dict__["__lazy_attrs__"], lazy_attrs.Deferred)
    assert isinstance(Mutable.__dict__["__lazy_attrs__"], lazy_attrs.Deferred)


def test_init_hooks_run_as_attrs_runs_them() -> None:
    """``__attrs_pre_init__`` / ``__attrs_post_init__`` run, as with attrs.define (the
    twin attrs builds carries them, or its ``__init__`` would skip them silently)."""
    calls: list[str] = []

    @lazy_attrs.frozen
    class Checked:
        value: int

        def __attrs_pre_init__(self) -> None:
            calls.append("pre")

        def __attrs_post_init__(self) -> None:
            calls.append(f"post {self.value}")
            if self.value < 0:
                raise ValueError("negative")

    assert Checked(1).value == 1 and calls == ["pre", "post 1"]
    with pytest.raises(ValueError, match="negative"):
        Checked(-1)
