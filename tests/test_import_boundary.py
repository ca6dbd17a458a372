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

import functools
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from import_scan import (
    PACKAGES,
    circles,
    file_imports,
    import_graph,
    inside,
    module_files,
    private_imports,
    resolve,
)

ROOT = Path(__file__).resolve().parent.parent

#: Module (or package) prefix -> layer, bottom (0) to top. A module's layer is
#: that of its longest matching prefix. docs/architecture.md draws this map
#: (tests/test_layer_map.py checks that it draws exactly these entries).
LAYERS: dict[str, int] = {
    # 0: leaf helpers: wire types and codec, errors, plain data, policies, hook specs
    "acp_lite.protocol": 0,
    "acp_lite.errors": 0,
    "acp_lite._lazy_attrs": 0,  # attrs decorators that defer attrs to first use
    "acp_lite._version": 0,  # the version constant
    "acp_lite._lazy_names": 0,  # PEP 562 lazy package names (acp_lite/__init__.py uses it)
    "acp_lite.auth": 0,  # plain data; errors name the ways to log in
    "acp_lite.jsontypes": 0,  # the JSON value type aliases
    "acp_lite.limits": 0,
    "acp_lite.options": 0,  # what every way of connecting takes alike (argv, limits)
    "acp_lite.transcript": 0,
    "acp_lite.turn": 0,  # plain data; AsyncSession.run builds it
    "acp_lite.permissions": 0,
    "acp_lite.hookspec": 0,
    "acp_lite.files": 0,  # fs request handling: path confinement, LocalFiles (plain Python)
    "acp_lite.cassettes": 0,  # cassette format, redaction, matching, the sans-IO replay engine
    "acp_lite.models": 0,  # the scripted model provider: script, provider APIs (plain Python)
    "acp_lite.conformance": 0,  # the requirement catalogue and the report (plain data)
    # 1: the session model
    "acp_lite.model": 1,
    # 2: the sans-IO connection state machine (core replaces the legacy rpc engine)
    "acp_lite.core": 2,
    # 3: trio: transport, connection pump, AsyncClient / AsyncSession
    "acp_lite.aio": 3,
    "acp_lite.cassettes.agent": 3,  # the replay engine over trio streams (in memory, stdio)
    "acp_lite.models.server": 3,  # the model server: HTTP/1.1 on trio and h11 (models extra)
    "acp_lite.models.home": 3,  # an agent's temporary home: writes a profile's files (no trio)
    "acp_lite.models.upstream": 3,  # forwarding to a real provider, recording (trio, h11)
    # 4: the blocking facade
    "acp_lite.sync": 4,  # Client, Session, the portal, direct calls, mirrors, in-memory
    "acp_lite.client": 4,  # the public names of acp_lite.sync, at their old path
    # 5: tools built on the library, and the package re-exports
    "acp_lite": 5,  # acp_lite/__init__.py only (submodules all have their own entry)
    "acp_lite.__main__": 5,
    "acp_lite.probes": 5,  # active conformance probes: a raw line peer, the suites, the runner
    "acp_lite.grading": 5,  # grading clients: the ACP-CLIENT-* requirements, runs, the judge
    "acp_lite.view": 5,  # `acp-lite view`: a transcript as one HTML page (plain Python, no trio)
    "acp_lite.cli": 5,  # the acp-lite command: one module per command, shared helpers in base
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
    {
        "acp_lite._lazy_attrs",
        # The JSON type aliases of its scripts' open values: names for annotations,
        # no behaviour (the module imports nothing).
        "acp_lite.jsontypes",
    }
)

#: The modules outside acp_lite.testing that may import it -> reason. Keep small.
TESTING_IMPORTED_BY: dict[str, str] = {
    "pytest_acp._fake_agent": "the acp_fake_agent fixture runs its script in the reference "
    "agent in this process (InProcessAgent); the agent still imports no client code",
    "acp_lite.grading.runs": "runs the grading agent (acp_lite.testing.grade_agent) and "
    "puts the files its scenarios name in the client's directory (constants only)",
    "acp_lite.grading.judge": "compares the client's reply with what each grading scenario "
    "must leave (constants of acp_lite.testing.grade_scenarios)",
    "acp_lite.grading": "lists the grading scenarios' names (acp_lite.testing.grade_scenarios)",
    "acp_lite.cli.scenarios": "`acp-lite scenarios` lists the reference agent's scenarios and "
    "`--scenario` checks a name against them before an agent starts (names only)",
}

#: Known upward imports: (importing module, imported module) -> reason. Keep small.
ALLOWED_UPWARD: dict[tuple[str, str], str] = {}


#: Import circles not broken yet -> how to break it: none left (issue 22), and it
#: stays empty. Every import counts (in functions and under TYPE_CHECKING too); a
#: new circle fails test_no_new_import_circle: break it by moving the shared piece
#: down, not by deferring an import.
KNOWN_CIRCLES: dict[frozenset[str], str] = {}

#: Imports of a ``_private`` name or module from outside the package that holds it,
#: not replaced by a public name yet: (importing module, what it imports). None left
#: (issue 22), and it stays empty; a new one fails test_no_new_private_import.
KNOWN_PRIVATE_IMPORTS: frozenset[tuple[str, str]] = frozenset()


# --- the checker --------------------------------------------------------------------


def layer_of(module: str) -> int | None:
    """The layer of ``module`` (longest matching prefix), None if it is not placed."""
    parts = module.split(".")
    for n in range(len(parts), 0, -1):
        found = LAYERS.get(".".join(parts[:n]))
        if found is not None and (n > 1 or module == parts[0] or parts[0] != "acp_lite"):
            # The bare "acp_lite" entry places acp_lite/__init__.py only.
            return found
    return None


def check_layering(root: Path) -> list[str]:
    """Every layering problem of the tree under ``root``, one readable line each."""
    modules = module_files(root)
    problems: list[str] = []
    for module, path in sorted(modules.items()):
        where = path.relative_to(root).as_posix()
        layer = layer_of(module)
        if layer is None:
            problems.append(f"{where}: module {module} is in no layer: add it to LAYERS")
            continue
        found = file_imports(path, module)
        for imp in found:
            line = f"{where}:{imp.lineno}: {module} (layer {layer}) imports {imp.target}"
            top = imp.target.split(".")[0]
            if top == "trio" and layer < TRIO_FREE_BELOW and not imp.typing_only:
                problems.append(f"{line}: no module below acp_lite.aio may import trio")
                continue
            target = resolve(imp.target, modules)
            if target is None:
                continue
            if inside(module, "acp_lite.testing"):
                if not inside(target, "acp_lite.testing") and target not in TESTING_MAY_IMPORT:
                    problems.append(
                        f"{line}: the reference agent imports nothing from acp_lite "
                        "outside acp_lite.testing (TESTING_MAY_IMPORT)"
                    )
                continue
            if (
                inside(target, "acp_lite.testing")
                and not inside(module, "acp_lite.testing")
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
    modules = module_files(ROOT)
    stale = [name for name in LAYERS if not any(inside(m, name) for m in modules)]
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


# --- circles and private names --------------------------------------------------------


def _describe(circle: frozenset[str], graph: dict[str, dict[str, int]]) -> str:
    edges = [
        f"    {a}:{line} imports {b}"
        for a in sorted(circle)
        for b, line in sorted(graph[a].items())
        if b in circle
    ]
    return "circle of " + ", ".join(sorted(circle)) + ":\n" + "\n".join(edges)


def _new_circles(root: Path) -> list[str]:
    graph = import_graph(root)
    return [_describe(c, graph) for c in circles(graph) if c not in KNOWN_CIRCLES]


def test_no_new_import_circle() -> None:
    """No import circle anywhere, function-level and TYPE_CHECKING imports included
    (a circle that is still being broken is in KNOWN_CIRCLES)."""
    found = _new_circles(ROOT)
    assert not found, "import circles:\n" + "\n".join(found)


def test_known_circles_still_exist() -> None:
    """A circle that was broken (or changed) must leave KNOWN_CIRCLES."""
    now = set(circles(import_graph(ROOT)))
    stale = [sorted(c) for c in KNOWN_CIRCLES if c not in now]
    assert not stale, f"KNOWN_CIRCLES entries that are no longer circles: {stale}"


def test_planted_circles_fail(tmp_path: Path) -> None:
    """Guard against a check that cannot fail: a circle closed by a function-level
    import, and one closed by a TYPE_CHECKING import."""
    root = _copy_tree(tmp_path)
    _plant(root, "acp_lite/limits.py", "\ndef _late():\n    import acp_lite.permissions\n")
    _plant(
        root,
        "acp_lite/permissions.py",
        "\nfrom typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from acp_lite import limits\n",
    )
    found = _new_circles(root)
    assert any(
        "circle of acp_lite.limits, acp_lite.permissions:" in c
        and "acp_lite.limits:" in c
        and "imports acp_lite.permissions" in c
        for c in found
    ), found


def _new_private(root: Path) -> list[str]:
    return [
        f"{module}:{line} imports {target}"
        for module, target, line in private_imports(root)
        if (module, target) not in KNOWN_PRIVATE_IMPORTS
    ]


def test_no_new_private_import() -> None:
    """No module takes a ``_private`` name from outside the package that holds it."""
    found = _new_private(ROOT)
    assert not found, "private names imported across packages:\n" + "\n".join(found)


def test_known_private_imports_still_happen() -> None:
    now = {(module, target) for module, target, _ in private_imports(ROOT)}
    stale = sorted(KNOWN_PRIVATE_IMPORTS - now)
    assert not stale, f"KNOWN_PRIVATE_IMPORTS entries that no longer happen: {stale}"


def test_planted_private_import_fails(tmp_path: Path) -> None:
    root = _copy_tree(tmp_path)
    _plant(root, "acp_lite/aio/_peer.py", "\nfrom acp_lite.core.rpc import _Pending\n")
    _plant(root, "pytest_acp/_views.py", "\nimport acp_lite._version\n")
    _plant(root, "acp_lite/core/rpc.py", "\nfrom acp_lite.core._receive import LineReceiver\n")
    found = _new_private(root)
    assert any("acp_lite.aio._peer:" in f and "acp_lite.core.rpc._Pending" in f for f in found)
    assert any("pytest_acp._views:" in f and "acp_lite._version" in f for f in found), found
    assert not any(f.startswith("acp_lite.core.rpc:") for f in found), found


# --- runtime: trio is not even pulled in by a dependency ------------------------------


def _trio_free_modules() -> list[str]:
    return sorted(
        m
        for m in module_files(ROOT)
        if (layer := layer_of(m)) is not None and layer < TRIO_FREE_BELOW
    )


#: The runtime checks, in the order one fresh interpreter runs them: (check, modules
#: imported in turn, prefixes watched). The reference agent goes first, while nothing
#: else is loaded; acp_lite.aio last, as it loads trio. The sans-IO modules (the
#: model provider's acp_lite.models among them) load neither trio nor h11.
_RUNTIME_CHECKS: list[tuple[str, list[str], str | tuple[str, ...]]] = [
    ("agent", ["acp_lite.testing.agent", "acp_lite.testing"], "acp_lite"),
    ("sans_io", _trio_free_modules(), ("trio", "h11")),
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
        "from acp_lite._lazy_attrs import is_processed\n"
        "def built():\n"
        "    cs = [getattr(g, n) for n in g.__all__]\n"
        "    return sorted(c.__name__ for c in cs if isinstance(c, type)\n"
        "                  and '__lazy_attrs__' in vars(c) and is_processed(c))\n"
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
        # The model server (h11, the models extra) is nobody's import: after all the
        # above (the client, acp_lite.aio, the sans-IO acp_lite.models) it is not
        # loaded, nor h11; importing it loads h11, which shows the check can fail.
        "import acp_lite.models\n"
        "def server_modules():\n"
        "    return sorted(m for m in sys.modules if m.split('.')[0] == 'h11'\n"
        "                  or m == 'acp_lite.models.server')\n"
        "out['model_server_modules'] = server_modules()\n"
        "import acp_lite.models.server\n"
        "out['model_server_modules_after_import'] = server_modules()\n"
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
    assert "acp_lite.models" in modules and "acp_lite.models.http" in modules
    bad = {m: [t for t in v if t.split(".")[0] in ("trio", "h11")] for m, v in loaded.items()}
    bad = {m: v for m, v in bad.items() if v}
    assert not bad, f"importing these loads trio or h11: {bad}"


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
    acp_lite.errors, the version constant and its lazy-names helper), the
    deferred-attrs decorators and the JSON type aliases besides acp_lite.testing."""
    loaded = _loaded_after()["agent"]
    outside = sorted({m for v in loaded.values() for m in v if not inside(m, "acp_lite.testing")})
    assert outside == [
        "acp_lite",
        "acp_lite._lazy_attrs",
        "acp_lite._lazy_names",
        "acp_lite._version",
        "acp_lite.errors",
        "acp_lite.jsontypes",
    ]


def test_the_client_never_loads_the_model_server() -> None:
    """Importing acp_lite, the blocking and trio clients and the sans-IO
    acp_lite.models loads neither acp_lite.models.server nor h11 (its extra)."""
    assert _loaded_after()["model_server_modules"] == []
    after = _loaded_after()["model_server_modules_after_import"]
    assert "h11" in after and "acp_lite.models.server" in after  # the check can fail
