"""Imports only run downward (docs/architecture.md, "Layers").

A static scan (``ast``) of every module of ``acp_lite`` and ``pytest_acp``: each
``import`` / ``from ... import`` statement anywhere in the file (module level, inside
functions, under ``if TYPE_CHECKING:``) and each ``importlib.import_module("...")``
with a literal name is resolved to a module of the tree and checked against
:data:`LAYERS`.

Rules:

* every module is placed in exactly one layer (the longest matching prefix in
  :data:`LAYERS`): a new module that is not placed fails, so it gets a layer;
* a module may import from its own layer or below, never from above;
* imports under ``if TYPE_CHECKING:`` never run, so they may point upwards (for
  annotations only); they must still name placed modules;
* no module below the ``acp_lite.aio`` layer imports trio (statically, and a
  runtime check in a fresh interpreter catches trio pulled in by a dependency);
* ``acp_lite/__init__.py`` belongs to the top layer (it re-exports everything),
  but it runs before *any* ``acp_lite.*`` module: its eager module-level imports
  must therefore come from the bottom layer. Its lazy names (the ``_LAZY`` table,
  ``TYPE_CHECKING``) may point anywhere placed;
* ``acp_lite.testing`` (the reference agent) checks the client independently: it
  imports nothing from ``acp_lite`` outside itself (:data:`TESTING_MAY_IMPORT`),
  not even for annotations, and nothing outside it imports it (but the few
  modules in :data:`TESTING_IMPORTED_BY`).

:data:`ALLOWED_UPWARD` lists the known exceptions, one reason each.
"""

from __future__ import annotations

import ast
import functools
import gc
import json
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("acp_lite", "pytest_acp")

#: Module (or package) prefix -> layer, bottom (0) to top. A module's layer is
#: that of its longest matching prefix.
LAYERS: dict[str, int] = {
    # 0: leaf helpers: wire types and codec, errors, plain data, policies, hook specs
    "acp_lite.protocol": 0,
    "acp_lite.errors": 0,
    "acp_lite._lazy_attrs": 0,  # attrs decorators that defer attrs to first use
    "acp_lite._version": 0,  # the version constant
    "acp_lite._lazy_names": 0,  # PEP 562 lazy package names (acp_lite/__init__.py uses it)
    "acp_lite.auth": 0,  # plain data; errors name the ways to log in
    "acp_lite.limits": 0,
    "acp_lite.transcript": 0,
    "acp_lite.turn": 0,  # plain data; AsyncSession.run builds it, errors annotate with it
    "acp_lite.permissions": 0,
    "acp_lite.hookspec": 0,
    "acp_lite.files": 0,  # fs request handling: path confinement, LocalFiles (plain Python)
    "acp_lite.cassettes": 0,  # cassette format, redaction, matching, the sans-IO replay engine
    # 1: the session model
    "acp_lite.model": 1,
    "acp_lite.model.requests": 1,  # records of the agent's requests and their answers
    # 2: the sans-IO connection state machine (core replaces the legacy rpc engine)
    "acp_lite.core": 2,
    # 3: trio: transport, connection pump, AsyncClient / AsyncSession
    "acp_lite.aio": 3,
    "acp_lite.aio._turn_view": 3,  # builds Turn: the turn's events, requests, tool calls
    "acp_lite.cassettes.agent": 3,  # the replay engine over trio streams (in memory, stdio)
    # 4: the blocking facade
    "acp_lite.client": 4,
    "acp_lite._sync_session": 4,
    "acp_lite._portal": 4,
    "acp_lite._direct": 4,  # blocking request calls run in the caller's thread (one crossing)
    "acp_lite._mirror": 4,
    "acp_lite._memory_sync": 4,
    # 5: tools built on the library, and the package re-exports
    "acp_lite": 5,  # acp_lite/__init__.py only (submodules all have their own entry)
    "acp_lite.__main__": 5,
    "acp_lite.cli": 5,
    "acp_lite._cli_render": 5,
    "acp_lite._cli_login": 5,
    "acp_lite._cli_info": 5,
    "acp_lite._cli_base": 5,
    "acp_lite._cli_errors": 5,
    "acp_lite._cli_form": 5,  # prompt: the agent's elicitation forms on a terminal, or a policy
    "acp_lite._cli_cassette": 5,
    "acp_lite._cli_record": 5,
    "acp_lite.testing": 5,  # the reference agent: an island, see TESTING_MAY_IMPORT
    "pytest_acp": 5,
}

TRIO_FREE_BELOW = LAYERS["acp_lite.aio"]
"""Modules in layers below this one must not import trio."""

#: What acp_lite.testing may import from acp_lite outside acp_lite.testing. (At
#: runtime it also loads acp_lite/__init__.py, which imports acp_lite.errors: see
#: test_reference_agent_loads_no_client_code.)
TESTING_MAY_IMPORT: frozenset[str] = frozenset(
    # attrs' processing deferred to first use: the agent's script classes (a process
    # start builds only the few its script uses); the module imports attrs only.
    {"acp_lite._lazy_attrs"}
)

#: The modules outside acp_lite.testing that may import it -> reason. Keep small.
TESTING_IMPORTED_BY: dict[str, str] = {
    "pytest_acp._fake_agent": "the acp_fake_agent fixture runs its script in the reference "
    "agent in this process (InProcessAgent); the agent still imports no client code",
}

#: Known upward imports: (importing module, imported module) -> reason. Keep small.
ALLOWED_UPWARD: dict[tuple[str, str], str] = {}


# --- the checker --------------------------------------------------------------------


def _module_files(root: Path) -> dict[str, Path]:
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


def layer_of(module: str) -> int | None:
    """The layer of ``module`` (longest matching prefix), None if it is not placed."""
    parts = module.split(".")
    for n in range(len(parts), 0, -1):
        found = LAYERS.get(".".join(parts[:n]))
        if found is not None and (n > 1 or module == parts[0] or parts[0] != "acp_lite"):
            # The bare "acp_lite" entry places acp_lite/__init__.py only.
            return found
    return None


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


class _Import:
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
) -> Iterator[_Import]:
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

    def walk(node: ast.AST, typing_only: bool, eager: bool) -> Iterator[_Import]:
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
                yield _Import(alias.name, node.lineno, typing_only=typing_only, eager=eager)
        elif isinstance(node, ast.ImportFrom):
            base = absolute(node.level, node.module)
            for alias in node.names:
                target = f"{base}.{alias.name}" if alias.name != "*" else base
                yield _Import(target, node.lineno, typing_only=typing_only, eager=eager)
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute | ast.Name)
            and (node.func.attr if isinstance(node.func, ast.Attribute) else node.func.id)
            == "import_module"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            yield _Import(node.args[0].value, node.lineno, typing_only=typing_only, eager=eager)
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


_PARSED: dict[tuple[str, str], list[_Import]] = {}


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


def _file_imports(path: Path, module: str) -> list[_Import]:
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
            found += [_Import(t, n, typing_only=True, eager=False) for t, n in _lazy_table(tree)]
        _PARSED[key] = found
    return found


def _resolve(target: str, modules: dict[str, Path]) -> str | None:
    """The module of the tree that ``target`` names (``X.Y`` from ``from X import Y``
    is ``X`` unless ``Y`` is a submodule); None for a module outside PACKAGES."""
    if target.split(".")[0] not in PACKAGES:
        return None
    while target and target not in modules:
        target = target.rpartition(".")[0]
    return target or None


def _in(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def check_layering(root: Path) -> list[str]:
    """Every layering problem of the tree under ``root``, one readable line each."""
    modules = _module_files(root)
    problems: list[str] = []
    for module, path in sorted(modules.items()):
        where = path.relative_to(root).as_posix()
        layer = layer_of(module)
        if layer is None:
            problems.append(f"{where}: module {module} is in no layer: add it to LAYERS")
            continue
        found = _file_imports(path, module)
        for imp in found:
            line = f"{where}:{imp.lineno}: {module} (layer {layer}) imports {imp.target}"
            top = imp.target.split(".")[0]
            if top == "trio" and layer < TRIO_FREE_BELOW and not imp.typing_only:
                problems.append(f"{line}: no module below acp_lite.aio may import trio")
                continue
            target = _resolve(imp.target, modules)
            if target is None:
                continue
            if _in(module, "acp_lite.testing"):
                if not _in(target, "acp_lite.testing") and target not in TESTING_MAY_IMPORT:
                    problems.append(
                        f"{line}: the reference agent imports nothing from acp_lite "
                        "outside acp_lite.testing (TESTING_MAY_IMPORT)"
                    )
                continue
            if (
                _in(target, "acp_lite.testing")
                and not _in(module, "acp_lite.testing")
                and module not in TESTING_IMPORTED_BY
            ):
                problems.append(f"{line}: nothing outside acp_lite.testing imports it")
                continue
            target_layer = layer_of(target)
            if target_layer is None:
                problems.append(f"{line}: {target} is in no layer: add it to LAYERS")
                continue
            if module == "acp_lite" and imp.eager and not imp.typing_only and target_layer > 0:
                problems.append(
                    f"{line} (layer {target_layer}): acp_lite/__init__.py runs before every "
                    "acp_lite module, so it imports eagerly from layer 0 only (make it lazy)"
                )
                continue
            if target_layer <= layer or imp.typing_only or module == "acp_lite":
                continue
            if (module, target) in ALLOWED_UPWARD:
                continue
            problems.append(f"{line} (layer {target_layer}): upward import")
    return problems


# --- the tests ------------------------------------------------------------------------


def test_imports_only_run_downward() -> None:
    problems = check_layering(ROOT)
    assert not problems, "layering violations:\n" + "\n".join(problems)


def test_every_layer_entry_exists() -> None:
    """A stale entry would place nothing; the absent ones are listed on purpose."""
    modules = _module_files(ROOT)
    stale = [name for name in LAYERS if not any(_in(m, name) for m in modules)]
    assert not stale, f"LAYERS entries for modules that do not exist: {stale}"


def test_allowlist_is_needed() -> None:
    """An exception that no longer happens must leave ALLOWED_UPWARD."""
    saved = dict(ALLOWED_UPWARD)
    try:
        for key in saved:
            del ALLOWED_UPWARD[key]
            still_needed = any(
                f" {key[0]} " in p and "upward import" in p for p in check_layering(ROOT)
            )
            ALLOWED_UPWARD[key] = saved[key]
            assert still_needed, f"ALLOWED_UPWARD entry {key} is no longer needed"
    finally:
        ALLOWED_UPWARD.clear()
        ALLOWED_UPWARD.update(saved)


def _copy_tree(tmp_path: Path) -> Path:
    root = tmp_path / "tree"
    for package in PACKAGES:
        shutil.copytree(
            ROOT / package, root / package, ignore=shutil.ignore_patterns("__pycache__")
        )
    assert check_layering(root) == check_layering(ROOT)
    return root


def _plant(root: Path, rel: str, code: str) -> None:
    path = root / rel
    path.write_text(path.read_text(encoding="utf-8") + code, encoding="utf-8")


def test_planted_back_import_fails(tmp_path: Path) -> None:
    """Guard against a check that cannot fail: a model module importing aio."""
    root = _copy_tree(tmp_path)
    _plant(root, "acp_lite/model/session.py", "\nimport acp_lite.aio\n")
    problems = check_layering(root)
    assert any(
        p.startswith("acp_lite/model/session.py:")
        and "acp_lite.model.session (layer 1) imports acp_lite.aio" in p
        and "upward import" in p
        for p in problems
    ), problems


def test_planted_function_level_and_relative_imports_fail(tmp_path: Path) -> None:
    root = _copy_tree(tmp_path)
    _plant(root, "acp_lite/model/state.py", "\ndef _late():\n    from ..client import Client\n")
    _plant(
        root,
        "acp_lite/protocol/_unset.py",
        "\nimport importlib\nimportlib.import_module('acp_lite.core')\n",
    )
    problems = check_layering(root)
    late = "acp_lite.model.state (layer 1) imports acp_lite.client.Client"
    assert any(late in p and "upward import" in p for p in problems), problems
    assert any("acp_lite.protocol._unset (layer 0) imports acp_lite.core" in p for p in problems)


def test_planted_trio_and_unplaced_module_fail(tmp_path: Path) -> None:
    root = _copy_tree(tmp_path)
    _plant(root, "acp_lite/core/rpc.py", "\nif True:\n    import trio.lowlevel\n")
    (root / "acp_lite" / "newthing.py").write_text("X = 1\n", encoding="utf-8")
    problems = check_layering(root)
    assert any("acp_lite.core.rpc (layer 2) imports trio.lowlevel" in p for p in problems), problems
    assert any("module acp_lite.newthing is in no layer" in p for p in problems), problems


def test_planted_type_checking_import_is_allowed(tmp_path: Path) -> None:
    root = _copy_tree(tmp_path)
    _plant(
        root,
        "acp_lite/model/session.py",
        "\nfrom typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from acp_lite.aio import AsyncSession\n",
    )
    assert check_layering(root) == check_layering(ROOT)


def test_planted_reference_agent_import_fails(tmp_path: Path) -> None:
    root = _copy_tree(tmp_path)
    _plant(root, "acp_lite/testing/_wire.py", "\nfrom acp_lite.protocol import UNSET\n")
    _plant(root, "pytest_acp/_views.py", "\nfrom acp_lite.testing import script\n")
    problems = check_layering(root)
    assert any(
        "acp_lite.testing._wire (layer 5) imports acp_lite.protocol.UNSET" in p for p in problems
    ), problems
    assert any("pytest_acp._views (layer 5) imports acp_lite.testing" in p for p in problems)


def test_planted_eager_import_in_package_init_fails(tmp_path: Path) -> None:
    root = _copy_tree(tmp_path)
    _plant(root, "acp_lite/__init__.py", "\nfrom acp_lite.model import SessionModel as _M\n")
    problems = check_layering(root)
    assert any(
        "acp_lite (layer 5) imports acp_lite.model.SessionModel" in p and "eagerly" in p
        for p in problems
    ), problems


# --- runtime: trio is not even pulled in by a dependency ------------------------------


def _trio_free_modules() -> list[str]:
    return sorted(
        m
        for m in _module_files(ROOT)
        if (layer := layer_of(m)) is not None and layer < TRIO_FREE_BELOW
    )


#: The runtime checks, in the order one fresh interpreter runs them: (check, modules
#: imported in turn, prefix watched). The reference agent goes first, while nothing
#: else is loaded; acp_lite.aio last, as it loads trio.
_RUNTIME_CHECKS: list[tuple[str, list[str], str]] = [
    ("agent", ["acp_lite.testing.agent", "acp_lite.testing"], "acp_lite"),
    ("sans_io", _trio_free_modules(), "trio"),
    ("aio", ["acp_lite.aio"], "trio"),
]


@functools.cache
def _loaded_after() -> dict[str, Any]:
    """For each check of :data:`_RUNTIME_CHECKS`, for each of its modules (imported in
    turn), the modules matching the watched prefix first loaded by it; then the wire
    classes built and whether cattrs is loaded (see the script). One interpreter
    runs them all: starting one costs more than the checks."""
    code = (
        "import sys, importlib, json\n"
        "out = {}\n"
        f"for check, modules, watch in {_RUNTIME_CHECKS!r}:\n"
        "    out[check] = {}\n"
        "    for name in modules:\n"
        "        before = set(sys.modules)\n"
        "        importlib.import_module(name)\n"
        "        new = set(sys.modules) - before\n"
        "        out[check][name] = sorted(m for m in new if m.startswith(watch))\n"
        # Which wire classes attrs has processed once a blocking client is importable:
        # a connection needs none (decoding fills slots; see protocol._runtime).
        "import acp_lite.client, acp_lite.protocol._generated as g\n"
        "from acp_lite.protocol._runtime import _built\n"
        "def built():\n"
        "    cs = [getattr(g, n) for n in g.__all__]\n"
        "    return sorted(c.__name__ for c in cs if isinstance(c, type)\n"
        "                  and '__wire_fields__' in vars(c) and _built(c))\n"
        "out['wire_built'] = built()\n"
        "g.TextContent(text='x') == g.TextContent(text='x')\n"
        "out['wire_built_after_use'] = built()\n"
        # A connection's conversions do not import cattrs (tests/protocol/
        # test_converter_direct.py); a tuple does, which shows the check can fail.
        "from acp_lite.protocol import converter, decode_line, TextContent\n"
        "converter.unstructure({'a': [TextContent(text='t')]})\n"
        "converter.structure({'type': 'text', 'text': 't'}, TextContent)\n"
        "out['cattrs_after_conversions'] = 'cattrs' in sys.modules\n"
        "converter.unstructure((TextContent(text='t'),))\n"
        "out['cattrs_after_a_tuple'] = 'cattrs' in sys.modules\n"
        "print(json.dumps(out))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    result: dict[str, Any] = json.loads(out.stdout)
    return result


def test_sans_io_modules_do_not_load_trio() -> None:
    modules = _trio_free_modules()
    assert "acp_lite.model" in modules and "acp_lite.core.rpc" in modules
    loaded = _loaded_after()["sans_io"]
    assert list(loaded) == modules
    bad = {m: [t for t in v if t == "trio" or t.startswith("trio.")] for m, v in loaded.items()}
    bad = {m: v for m, v in bad.items() if v}
    assert not bad, f"importing these loads trio: {bad}"


def test_runtime_check_detects_trio() -> None:
    """Guard against a check that cannot fail: trio itself must be detected. (It runs
    after the sans-IO modules: if one of them loaded trio, that test fails first.)"""
    loaded = _loaded_after()["aio"]
    assert "trio" in loaded["acp_lite.aio"]


def test_client_import_runs_attrs_on_no_wire_class() -> None:
    """Importing the blocking client leaves every generated wire class unprocessed by
    attrs (that was most of the start-up time); they are processed on first use."""
    assert _loaded_after()["wire_built"] == []
    assert _loaded_after()["wire_built_after_use"] == ["TextContent"]  # the check can fail


def test_reference_agent_loads_no_client_code() -> None:
    """The reference agent process loads only acp_lite/__init__.py (which imports
    acp_lite.errors, the version constant and its lazy-names helper) and the
    deferred-attrs decorators besides acp_lite.testing."""
    loaded = _loaded_after()["agent"]
    outside = sorted({m for v in loaded.values() for m in v if not _in(m, "acp_lite.testing")})
    assert outside == [
        "acp_lite",
        "acp_lite._lazy_attrs",
        "acp_lite._lazy_names",
        "acp_lite._version",
        "acp_lite.errors",
    ]
