"""The rule behind direct blocking calls, declared where each method is written.

A method marked ``@outside_safe`` (``acp_lite.aio.outside``) may be run by the
blocking facade in the caller's thread, outside trio (``acp_lite.sync._direct``): it
never calls trio itself. A static scan (``ast``) of every module of ``acp_lite.aio``
checks each marked body:

* it names nothing of trio's (``trio``, a nursery, sleeping, clocks, cancel scopes,
  events: :data:`BANNED`), and has no ``async with`` / ``async for``;
* what it awaits is the connection's ``call`` / ``wait_response`` (which park the
  coroutine outside trio), or a method every definition of which in
  ``acp_lite.aio`` is marked too (so the rule holds all the way down).

The facade reads the mark (``blocking(...)``): its direct twins are exactly the
marked methods, which the last tests check at run time.
"""

from __future__ import annotations

import ast
import functools
import shutil
from dataclasses import dataclass
from pathlib import Path

import acp_lite.client as blocking
from acp_lite.aio import AsyncClient, AsyncSession
from acp_lite.aio.outside import is_outside_safe
from acp_lite.sync._mirror import mirrored_async

AIO = Path(__file__).resolve().parent.parent.parent / "acp_lite" / "aio"

#: What a marked body may await on anything: the connection's two request steps.
PRIMITIVES = frozenset({"call", "wait_response"})

#: Names (variables or attributes) a marked body must not mention: trio itself and
#: what only runs in trio.
BANNED = frozenset(
    {
        "trio",
        "nursery",
        "_nursery",
        "open_nursery",
        "start_soon",
        "sleep",
        "checkpoint",
        "current_time",
        "to_thread",
        "CancelScope",
        "move_on_after",
        "move_on_at",
        "fail_after",
        "Event",
        "session_changed",
        "wait_in_trio",
        "_changed_wait",
    }
)


@dataclass(frozen=True)
class Defn:
    where: str  # file:line
    name: str
    marked: bool
    node: ast.AsyncFunctionDef


def _is_mark(decorator: ast.expr) -> bool:
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    return (isinstance(target, ast.Name) and target.id == "outside_safe") or (
        isinstance(target, ast.Attribute) and target.attr == "outside_safe"
    )


@functools.cache
def _coroutines(text: str, name: str) -> tuple[ast.AsyncFunctionDef, ...]:
    # Each module's scan once per text (the checks only read the trees): the planted
    # copy of acp_lite/aio shares all but one module with the real one.
    tree = ast.parse(text, name)
    return tuple(node for node in ast.walk(tree) if isinstance(node, ast.AsyncFunctionDef))


def async_defs(root: Path) -> list[Defn]:
    """Every ``async def`` under ``root`` (methods and functions), marked or not."""
    out: list[Defn] = []
    for path in sorted(root.rglob("*.py")):
        where = path.relative_to(root).as_posix()
        for node in _coroutines(path.read_text(encoding="utf-8"), where):
            marked = any(_is_mark(d) for d in node.decorator_list)
            out.append(Defn(f"{where}:{node.lineno}", node.name, marked, node))
    return out


def _awaited_name(value: ast.expr) -> str | None:
    if isinstance(value, ast.Call):
        func = value.func
        if isinstance(func, ast.Attribute):
            return func.attr
        if isinstance(func, ast.Name):
            return func.id
    return None


def check(root: Path) -> list[str]:
    """Every breach of the rule under ``root``, one readable line each."""
    defs = async_defs(root)
    marked = {d.name for d in defs if d.marked}
    unmarked = {d.name for d in defs if not d.marked}
    problems: list[str] = []
    for d in defs:
        if not d.marked:
            continue
        for node in ast.walk(d.node):
            if node is not d.node and isinstance(node, ast.AsyncFunctionDef):
                problems.append(f"{d.where} {d.name}: defines a coroutine {node.name}")
            if isinstance(node, ast.AsyncWith | ast.AsyncFor):
                problems.append(f"{d.where} {d.name}: async with / async for")
            name = (
                node.id
                if isinstance(node, ast.Name)
                else node.attr
                if isinstance(node, ast.Attribute)
                else None
            )
            if name in BANNED:
                problems.append(f"{d.where} {d.name}: mentions {name}")
            if isinstance(node, ast.Await):
                awaited = _awaited_name(node.value)
                if awaited in PRIMITIVES:
                    continue
                if awaited not in marked or awaited in unmarked:
                    problems.append(
                        f"{d.where} {d.name}: awaits {ast.unparse(node.value)}, "
                        "which is not declared @outside_safe"
                    )
    return problems


def test_marked_methods_call_no_trio() -> None:
    defs = async_defs(AIO)
    marked = {d.name for d in defs if d.marked}
    # The scan sees the marks (a rename of the decorator would leave it blind).
    assert {"request", "new_session", "submit", "prompt", "status", "_request"} <= marked
    assert check(AIO) == []


def _plant(tmp_path: Path, code: str) -> Path:
    root = tmp_path / "aio"
    shutil.copytree(AIO, root, ignore=shutil.ignore_patterns("__pycache__"))
    path = root / "_session_methods.py"
    path.write_text(path.read_text(encoding="utf-8") + code, encoding="utf-8")
    return root


def test_planted_trio_calls_in_a_marked_method_fail(tmp_path: Path) -> None:
    """Guard against a check that cannot fail: trio called in marked bodies, directly
    and through an unmarked helper."""
    root = _plant(
        tmp_path,
        "\n\nclass Planted:\n"
        "    @outside_safe\n"
        "    async def naps(self) -> None:\n"
        "        await trio.sleep(0)\n\n"
        "    @outside_safe\n"
        "    async def waits(self) -> None:\n"
        "        await self._helper()\n\n"
        "    async def _helper(self) -> None:\n"
        "        pass\n\n"
        "    @outside_safe\n"
        "    async def spawns(self) -> None:\n"
        "        self._conn.nursery.start_soon(self._helper)\n"
        "        async with self._lock:\n"
        "            pass\n",
    )
    problems = check(root)
    assert any("naps: mentions trio" in p for p in problems), problems
    assert any("naps: awaits trio.sleep(0)" in p for p in problems), problems
    assert any("waits: awaits self._helper()" in p for p in problems), problems
    assert any("spawns: mentions nursery" in p for p in problems), problems
    assert any("spawns: async with" in p for p in problems), problems
    assert check(AIO) == []  # the planted code only


def test_the_facade_runs_exactly_the_marked_methods_directly() -> None:
    """``blocking(...)`` reads the mark: a twin is direct iff its method is marked, and
    every marked public method has a twin."""
    for acls, cls in ((AsyncClient, blocking.Client), (AsyncSession, blocking.Session)):
        twins = {}
        for name, member in vars(cls).items():
            amethod = mirrored_async(member)
            if amethod is not None:
                twins[name] = member
                assert member._acp_direct is is_outside_safe(amethod), name
        marked = {
            name
            for name in dir(acls)
            if not name.startswith("_") and is_outside_safe(getattr(acls, name))
        }
        assert marked, acls
        assert marked <= set(twins), (acls, marked - set(twins))
    assert not is_outside_safe(AsyncSession.wait_idle)  # waits on the model: trio
    assert not is_outside_safe(AsyncClient.list_sessions)  # reads trio's clock
