"""The import scanner behind tests/test_import_boundary.py: every import of every
module of the tree, found statically (``ast``), with where it runs.

Each ``import`` / ``from ... import`` statement anywhere in a file (module level,
inside functions, under ``if TYPE_CHECKING:``) and each
``importlib.import_module("...")`` with a literal name is an :class:`Import`.
"""

from __future__ import annotations

import ast
import gc
import re
from collections.abc import Iterator
from pathlib import Path

PACKAGES = ("acp_lite", "pytest_acp")


def module_files(root: Path) -> dict[str, Path]:
    """Dotted module name -> file, for every module of PACKAGES under ``root``."""
    out: dict[str, Path] = {}
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            rel = path.relative_to(root).with_suffix("")
            parts = list(rel.parts)
            if parts[-1] == "__init__":
                parts.pop()
            out[".".join(parts)] = path
    return out


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


class Import:
    def __init__(self, target: str, lineno: int, *, typing_only: bool, eager: bool) -> None:
        self.target = target
        self.lineno = lineno
        self.typing_only = typing_only  # under `if TYPE_CHECKING:`
        self.eager = eager  # runs when the module is imported (module level)


#: The fields of a statement that hold statements (or handlers / match cases, which
#: hold statements): the only places an ``import`` statement can be.
_BODIES = ("body", "orelse", "finalbody", "handlers", "cases")


def _imports(
    tree: ast.Module, module: str, is_package: bool, *, calls: bool = True
) -> Iterator[Import]:
    """Every import in ``tree``, with ``from X import Y`` yielding ``X.Y`` (resolved
    against the tree later) and relative imports made absolute.

    ``calls=False`` skips the expressions (where only ``import_module(...)`` calls
    can be) and walks statements only: for a file whose text never says
    ``import_module``, the same result at a fraction of the cost.
    """

    def absolute(level: int, name: str | None) -> str:
        if not level:
            return name or ""
        base = module.split(".") if is_package else module.split(".")[:-1]
        base = base[: len(base) - (level - 1)]
        return ".".join([*base, name] if name else base)

    def walk(node: ast.AST, typing_only: bool, eager: bool) -> Iterator[Import]:
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for child in node.body:
                yield from walk(child, True, eager)
            for child in node.orelse:
                yield from walk(child, typing_only, eager)
            return
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            eager = False
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield Import(alias.name, node.lineno, typing_only=typing_only, eager=eager)
        elif isinstance(node, ast.ImportFrom):
            base = absolute(node.level, node.module)
            for alias in node.names:
                target = f"{base}.{alias.name}" if alias.name != "*" else base
                yield Import(target, node.lineno, typing_only=typing_only, eager=eager)
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute | ast.Name)
            and (node.func.attr if isinstance(node.func, ast.Attribute) else node.func.id)
            == "import_module"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            yield Import(node.args[0].value, node.lineno, typing_only=typing_only, eager=eager)
        if calls:
            children: Iterator[ast.AST] = ast.iter_child_nodes(node)
        else:
            children = (
                child
                for field in node._fields
                if field in _BODIES
                for child in getattr(node, field)
                if isinstance(child, ast.stmt | ast.excepthandler | ast.match_case)
            )
        for child in children:
            yield from walk(child, typing_only, eager)

    yield from walk(tree, False, True)


def _lazy_table(tree: ast.Module) -> list[tuple[str, int]]:
    """The module names in acp_lite/__init__.py's ``_LAZY`` table (lazy re-exports)."""
    out: list[tuple[str, int]] = []
    for node in tree.body:
        target = node.target if isinstance(node, ast.AnnAssign) else None
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
        value = getattr(node, "value", None)
        if isinstance(target, ast.Name) and target.id == "_LAZY" and isinstance(value, ast.Dict):
            for v in value.values:
                if isinstance(v, ast.Constant) and isinstance(v.value, str):
                    out.append((v.value, v.lineno))
    return out


_PARSED: dict[tuple[str, str], list[Import]] = {}


#: Where the part of a file that can hold imports ends: the first line after the last
#: "import" that starts a new top-level statement (column 0, not a closing bracket,
#: not a comment).
_NEXT_TOP_LEVEL = re.compile(r"\n(?=[^\s)\]}#])")


def _parse_importing_part(text: str, filename: str) -> ast.Module:
    """The syntax tree of ``text`` up to the top-level statement holding its last
    ``import`` (the word, in ``import``, ``from ... import``, ``import_module`` or
    ``__import__``): no statement after it can import anything, and the statements
    before it, which decide TYPE_CHECKING and function scope, are all kept. Line
    numbers are the file's. Where that prefix does not parse on its own (it ends
    inside a string, say), the whole file is parsed.

    _generated.py (700 kB, ~a million nodes) has its imports in its first 60 lines.
    """
    last = text.rfind("import")
    if last < 0:
        return ast.Module(body=[], type_ignores=[])
    end = _NEXT_TOP_LEVEL.search(text, last)
    if end is not None:
        try:
            return ast.parse(text[: end.start() + 1], filename=filename)
        except SyntaxError:
            pass
    # A big tree: without the cyclic GC rescanning the nodes while they are made,
    # parsing takes a third less time.
    gc.disable()
    try:
        return ast.parse(text, filename=filename)
    finally:
        gc.enable()


def file_imports(path: Path, module: str) -> list[Import]:
    """The imports of one file (cached by content: the copies of the tree in the
    planted-import tests differ from it in one file)."""
    text = path.read_text(encoding="utf-8")
    key = (module, text)
    found = _PARSED.get(key)
    if found is None:
        if module == "acp_lite":  # also read for its _LAZY table, wherever that is
            tree = ast.parse(text, filename=str(path))
        else:
            tree = _parse_importing_part(text, str(path))
        calls = "import_module" in text
        found = list(_imports(tree, module, path.name == "__init__.py", calls=calls))
        if module == "acp_lite":
            found += [Import(t, n, typing_only=True, eager=False) for t, n in _lazy_table(tree)]
        _PARSED[key] = found
    return found


def resolve(target: str, modules: dict[str, Path]) -> str | None:
    """The module of the tree that ``target`` names (``X.Y`` from ``from X import Y``
    is ``X`` unless ``Y`` is a submodule); None for a module outside PACKAGES."""
    if target.split(".")[0] not in PACKAGES:
        return None
    while target and target not in modules:
        target = target.rpartition(".")[0]
    return target or None


def inside(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def import_graph(root: Path) -> dict[str, dict[str, int]]:
    """Module -> {module of the tree it imports -> line of the first such import}:
    every import counts, in functions and under ``TYPE_CHECKING`` too (a circle that
    only annotations or a deferred import close is still a circle to a reader)."""
    modules = module_files(root)
    graph: dict[str, dict[str, int]] = {}
    for module, path in modules.items():
        edges: dict[str, int] = {}
        for imp in file_imports(path, module):
            target = resolve(imp.target, modules)
            if target is not None and target != module:
                edges.setdefault(target, imp.lineno)
        graph[module] = edges
    return graph


def circles(graph: dict[str, dict[str, int]]) -> list[frozenset[str]]:
    """The import circles of ``graph``: its strongly connected sets of two or more
    modules (Tarjan's algorithm, iterative), sorted by their first module."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, {})))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                members = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    members.add(member)
                    if member == node:
                        break
                if len(members) > 1:
                    found.append(frozenset(members))
    return sorted(found, key=lambda c: sorted(c))


def private_imports(root: Path) -> list[tuple[str, str, int]]:
    """(module, what it imports, line) for every import of a ``_private`` name or
    module from outside the package that holds it: ``acp_lite.core._receive`` is
    for the modules of ``acp_lite.core`` (and its subpackages), ``acp_lite._version``
    for those of ``acp_lite``; a dunder is not private."""
    out: list[tuple[str, str, int]] = []
    for module, path in module_files(root).items():
        for imp in file_imports(path, module):
            parts = imp.target.split(".")
            if parts[0] not in PACKAGES:
                continue
            for i, part in enumerate(parts):
                if part.startswith("_") and not part.startswith("__"):
                    if not inside(module, ".".join(parts[:i])):
                        out.append((module, imp.target, imp.lineno))
                    break
    return sorted(out)
