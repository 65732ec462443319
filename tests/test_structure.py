"""The package's shape: layers in the declared order (import-linter), imports written as
text too (core/lookups.py), no import circles, no oversized modules, no dead code."""

from __future__ import annotations

import ast
import functools
import importlib
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from fslab.core.lookups import LOOKUPS, Lookup

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "fslab"
MAX_LINES = 420  # "no module over ~400 lines"


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def module_imports(path: Path, everywhere: bool = False) -> set[str]:
    """fslab modules imported when `path` is imported: module level only (imports inside
    functions run later), TYPE_CHECKING blocks left out; or, `everywhere`, every import
    the module names anywhere (inside functions and for type checking too)."""
    tree = _parsed(path)
    found: set[str] = set()
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]

    def visit(nodes: list[ast.stmt]) -> None:
        for node in nodes:
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test) \
                    and not everywhere:
                continue
            if isinstance(node, ast.Import):
                found.update(a.name for a in node.names if a.name.startswith("fslab"))
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1]
                                    + ([base] if base else []))
                if base.startswith("fslab"):
                    found.add(base)
                    found.update(f"{base}.{a.name}" for a in node.names)
            elif isinstance(node, ast.If | ast.Try):
                visit(node.body + node.orelse + [s for h in getattr(node, "handlers", [])
                                                 for s in h.body])

    visit([node for node in ast.walk(tree) if isinstance(node, ast.Import | ast.ImportFrom)]
          if everywhere else tree.body)
    return found


@functools.cache
def _parsed(path: Path) -> ast.Module:
    """A module's syntax tree, parsed once a session (never changed by a reader)."""
    return ast.parse(path.read_text())


def graph(everywhere: bool = False) -> dict[str, set[str]]:
    """A fresh graph each call (a test may change it), of imports read once a session."""
    return {name: set(targets) for name, targets in _graph(everywhere).items()}


@functools.cache
def _graph(everywhere: bool) -> dict[str, frozenset[str]]:
    modules = {module_name(p): p for p in PACKAGE.rglob("*.py")}
    return {name: frozenset(m for m in module_imports(path, everywhere)
                            if m in modules and m != name)
            for name, path in modules.items()}


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    found, state = [], {}

    def walk(node: str, stack: list[str]) -> None:
        state[node] = "open"
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == "open":
                found.append([*stack[stack.index(nxt):], nxt])
            elif nxt not in state:
                walk(nxt, [*stack, nxt])
        state[node] = "done"

    for node in sorted(edges):
        if node not in state:
            walk(node, [node])
    return found


def test_no_import_circles():
    edges = graph()
    assert edges.get("fslab.run.runner")  # the walker sees imports
    assert cycles(edges) == []


def test_no_import_circles_even_through_imports_inside_functions():
    """A function-level or type-checking import back is still a circle of ideas: the
    modules cannot be understood (or moved) one without the other."""
    edges = graph(everywhere=True)
    assert "fslab.analysis.pipeline" in edges["fslab.api"]  # imports in functions seen
    for targets in edges.values():  # `from fslab import system` names system, not the
        targets.discard("fslab")    # package face (which re-exports api for users)
    assert cycles(edges) == []


def test_the_cycle_finder_finds_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == [["a", "b", "c", "a"]]


def test_no_module_is_oversized():
    big = {module_name(p): n for p in PACKAGE.rglob("*.py")
           if (n := len(p.read_text().splitlines())) > MAX_LINES}
    assert big == {}


def unit_of(module: str) -> str:
    """The folder (subpackage) a module sits in, or the module itself at the top."""
    parts = module.split(".")
    return ".".join(parts[:2]) if len(parts) > 2 or is_folder(module) else module


def is_folder(unit: str) -> bool:
    return (PACKAGE / unit.split(".")[1]).is_dir()


def folder_graph(edges: dict[str, set[str]]) -> dict[str, set[str]]:
    """The imports between folders (and top-level modules): a unit imports another when
    any of its modules imports any of the other's."""
    units: dict[str, set[str]] = {}
    for module, targets in edges.items():
        if module != "fslab":
            here = unit_of(module)
            units.setdefault(here, set()).update(
                unit_of(t) for t in targets if t != "fslab" and unit_of(t) != here)
    return units


def folder_cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Loops of any length between folders, counting every import a module names."""
    return cycles(folder_graph(edges))


def test_the_folder_cycle_finder_finds_a_three_folder_loop():
    planted = {"fslab.targets.null": {"fslab.workloads.scan"},
               "fslab.workloads.scan": {"fslab.probes.freespace"},
               "fslab.probes.freespace": {"fslab.targets.profiles"}}
    assert folder_cycles(planted) == [["fslab.probes", "fslab.targets", "fslab.workloads",
                                       "fslab.probes"]]
    planted["fslab.probes.freespace"] = set()
    assert folder_cycles(planted) == []


def test_no_folder_loop_of_any_length():
    """Folders (and top-level modules) form no loop of any length, counting every import
    a module names (inside functions and for type checking too)."""
    assert folder_cycles(graph(everywhere=True)) == []


def lint_imports(root: Path, source: Path) -> subprocess.CompletedProcess[str]:
    """import-linter over the package at `source`, with the contracts of `root`'s
    pyproject.toml (ARCHITECTURE.md's layers)."""
    return subprocess.run([str(Path(sys.executable).parent / "lint-imports"), "--config",
                           str(root / "pyproject.toml"), "--no-cache"],
                          cwd=root, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(source)})


def test_no_import_runs_against_the_declared_layers():
    """Every import of src/fslab obeys ARCHITECTURE.md's order (import-linter's layers
    contract, direction and not only loops), the CLI goes through api, and analysis's
    rooms import downwards too."""
    done = lint_imports(PACKAGE.parents[1], PACKAGE.parent)
    assert done.returncode == 0, done.stdout[-3000:]
    assert "3 kept, 0 broken" in done.stdout


def test_a_planted_upward_import_fails_the_layers(tmp_path):
    copy = tmp_path / "src"
    shutil.copytree(PACKAGE, copy / "fslab",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    shutil.copy(PACKAGE.parents[1] / "pyproject.toml", tmp_path / "pyproject.toml")
    units = copy / "fslab" / "core" / "units.py"
    units.write_text(units.read_text() + "\nimport fslab.api  # planted: core imports api\n")
    done = lint_imports(tmp_path, copy)
    assert done.returncode != 0
    assert "fslab.core is not allowed to import fslab.api" in done.stdout


def layer_contracts() -> list[list[list[str]]]:
    """pyproject.toml's layers contracts (the stages', analysis's rooms'), each a list of
    floors from the top, a floor the full names of the packages on it (siblings: `|`)."""
    config = tomllib.loads((PACKAGE.parents[1] / "pyproject.toml").read_text())
    found = []
    for contract in config["tool"]["importlinter"]["contracts"]:
        if contract["type"] != "layers":
            continue
        for container in contract.get("containers", [""]):
            prefix = f"{container}." if container else ""
            found.append([[prefix + name.strip() for name in floor.split("|")]
                          for floor in contract["layers"]])
    return found


def placed(module: str, floors: list[list[str]]) -> tuple[int, str] | None:
    """(floor, package) of `module` in one contract, or None when the contract has no
    place for it."""
    for index, floor in enumerate(floors):
        for package in floor:
            if module == package or module.startswith(package + "."):
                return index, package
    return None


def upward(reader: str, module: str) -> list[str]:
    """The contracts an import of `module` by `reader` would break: it must go to a lower
    floor, or stay in the reader's own package (never to a sibling on its floor)."""
    broken = []
    for floors in layer_contracts():
        here, there = placed(reader, floors), placed(module, floors)
        if here and there and not (there[0] > here[0] or there[1] == here[1]):
            broken.append(f"{reader} -> {module}")
    return broken


def lookup_faults(lookup: Lookup) -> list[str]:
    """What is wrong with one lookup by name: a name that does not exist, or one that
    goes up the layers. A plug-in's declarations are read by layers below it (core's
    registry, and each reader below the plug-in): that is the one sanctioned inversion,
    because the plug-in module imports the contract type of each of its declarations
    (Suite, RawKind, Statistic) downward — so for a plug-in, each declaration's type must
    lie on the plug-in's floor or below."""
    from fslab.core.plugins import DECLARATIONS

    faults = []
    for name in lookup.names:
        module, _, attribute = name.partition(":")
        if importlib.util.find_spec(module) is None:
            faults.append(f"{name}: no such module")
            continue
        if attribute and not hasattr(importlib.import_module(module), attribute):
            faults.append(f"{name}: no such attribute")
        if not module.startswith("fslab."):
            continue  # a library loaded ahead: no layer of fslab's
        if not lookup.plugins:
            faults += upward(lookup.reader, module)
            continue
        loaded = importlib.import_module(module)
        declared = [getattr(loaded, d) for d in DECLARATIONS if hasattr(loaded, d)]
        if not declared:
            faults.append(f"{name}: declares none of {', '.join(DECLARATIONS)}")
        faults += [fault for value in declared if type(value).__module__.startswith("fslab.")
                   for fault in upward(module, type(value).__module__)]
    return faults


def test_every_lookup_by_name_is_in_the_table_exists_and_goes_down_the_layers():
    """import-linter cannot see an import written as text: every module that imports by
    name reads its names from core/lookups.py, and the layer test reads that table."""
    by_text = {module_name(p) for p in PACKAGE.rglob("*.py") if "import_module(" in p.read_text()}
    assert by_text == {lookup.reader for lookup in LOOKUPS}
    assert [fault for lookup in LOOKUPS for fault in lookup_faults(lookup)] == []
    assert any(lookup.plugins and "fslab.workloads.bonnie" in lookup.names
               for lookup in LOOKUPS)


def test_a_lookup_up_the_layers_or_of_nothing_is_found():
    assert lookup_faults(Lookup("fslab.core.units", ("fslab.api:run",))) == [
        "fslab.core.units -> fslab.api"]
    assert lookup_faults(Lookup("fslab.plan.order", ("fslab.report.html",))) == [
        "fslab.plan.order -> fslab.report.html"]  # a sibling on the same floor
    assert lookup_faults(Lookup("fslab.analysis.cells.noise", ("fslab.analysis.verdicts",))) \
        == ["fslab.analysis.cells.noise -> fslab.analysis.verdicts"]  # a room up
    assert lookup_faults(Lookup("fslab.api", ("fslab.plan.nothing", "fslab.plan.order:nothing"))) \
        == ["fslab.plan.nothing: no such module", "fslab.plan.order:nothing: no such attribute"]


def vulture(root: Path, *paths: str) -> subprocess.CompletedProcess[str]:
    """vulture with `root`'s pyproject.toml settings (what it cannot see is declared there)."""
    return subprocess.run([str(Path(sys.executable).parent / "vulture"), *paths],
                          cwd=root, capture_output=True, text=True)


@pytest.fixture(scope="module")
def planted_vulture(tmp_path_factory) -> subprocess.CompletedProcess[str]:
    """vulture over a copy of src/fslab with one unused function planted in it: one run
    for both tests below (a second run over the package took 1.2 s of the check tier)."""
    root = tmp_path_factory.mktemp("vulture")
    copy = root / "src" / "fslab"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    shutil.copy(PACKAGE.parents[1] / "pyproject.toml", root / "pyproject.toml")
    units = copy / "core" / "units.py"
    units.write_text(units.read_text() + "\n\ndef never_called() -> int:\n    return 1\n")
    return vulture(root)


def test_no_dead_code(planted_vulture):
    """No function, class, constant or field of src/fslab that nothing uses: vulture
    finds nothing in the package but the function planted in its copy."""
    found = [line for line in planted_vulture.stdout.splitlines() if line.strip()]
    assert any("never_called" in line for line in found), planted_vulture.stderr[-3000:]
    assert [line for line in found if "never_called" not in line] == [], \
        planted_vulture.stdout[-3000:]


def test_a_planted_unused_function_is_found(planted_vulture):
    assert planted_vulture.returncode != 0 and "never_called" in planted_vulture.stdout


def defined(path: Path, name: str) -> bool:
    """Whether a module of src/fslab defines `name` (a function or class; `Class.method`)."""
    scope: list[ast.stmt] = _parsed(path).body
    for part in name.split("."):
        found = [node for node in scope if isinstance(
            node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and node.name == part]
        if not found:
            return False
        scope = found[0].body
    return True


def test_the_call_chain_of_fslab_run_names_functions_that_exist():
    """ARCHITECTURE.md's chain of `fslab run`, from the CLI to verdicts.txt: every
    `file:function` it names is there (a step renamed or moved fails here)."""
    text = (PACKAGE.parents[1] / "ARCHITECTURE.md").read_text()
    chain = text.split("## The call chain of `fslab run`")[1].split("## ")[0]
    steps = re.findall(r"([\w/]+\.py):([\w.]+(?:, [\w.]+)*)", chain)
    assert len(steps) >= 20 and ("analysis/pipeline.py", "write_analysis") in steps
    missing = [f"{file}:{name}" for file, names in steps for name in names.split(", ")
               if not (PACKAGE / file).exists() or not defined(PACKAGE / file, name)]
    assert missing == []
    assert not defined(PACKAGE / "run" / "runner.py", "Runner.no_such_step")
