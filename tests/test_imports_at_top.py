"""Dependencies in sight (issue 63): every module of src/fslab imports fslab at its top, so
its first lines say what it needs, and an import circle shows as one (tests/
test_structure.py finds those). Two imports of fslab stay inside functions, each for its
reason (ALLOWED); the heavy libraries (pandas, scipy, plotly, duckdb, statsmodels, pyarrow,
numpy) may load inside a function and are not counted here. And a name is imported from
the module it lives in: no module passes on what it only imports (no re-export facades)."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "src" / "fslab"
HEAVY = ("pandas", "scipy", "plotly", "duckdb", "statsmodels", "pyarrow", "numpy")

# (reader, what it imports inside a function) -> why it may. A reader ending in "." is
# every module of that folder.
ALLOWED = {
    ("fslab.cli.", "fslab.api"):
        "the command line parses its arguments before it loads the api (and pandas, "
        "pydantic and the stages under it): `fslab --help` stays under 0.25 s "
        "(benchmarks/cli_startup)",
    ("fslab", "fslab.api"):
        "the package's face (fslab.run, fslab.analyze, fslab.load, fslab.cleanup) loads "
        "the api on first use: at its top it would be an import up from every module "
        "of the package, and `import fslab.core.units` would load all of fslab",
}


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported(node: ast.Import | ast.ImportFrom, reader: str, package: bool) -> list[str]:
    """The fslab modules an import statement names (`from fslab import api`: fslab.api)."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names if a.name.split(".")[0] == "fslab"]
    base = node.module or ""
    if node.level:
        here = reader.split(".") if package else reader.split(".")[:-1]
        base = ".".join(here[: len(here) - node.level + 1] + ([base] if base else []))
    if base.split(".")[0] != "fslab":
        return []
    return [f"{base}.{a.name}" for a in node.names] if base == "fslab" else [base]


def inner_imports(tree: ast.Module, reader: str, package: bool = False
                  ) -> list[tuple[int, str]]:
    """(line, module) of every import of fslab inside a function of a module."""
    found = []
    for function in ast.walk(tree):
        if isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
            for node in ast.walk(function):
                if isinstance(node, ast.Import | ast.ImportFrom):
                    found += [(node.lineno, name) for name in imported(node, reader, package)]
    return sorted(set(found))


def allowed(reader: str, module: str) -> bool:
    return any(module == target
               and (reader == where or (where.endswith(".") and reader.startswith(where)))
               for where, target in ALLOWED)


# An import that does not start its line at column 0 (indented, after `;` or a one-line
# `def f(): import x`): only a module with one can import inside a function, and only
# those are parsed (parsing all of src/fslab took 1-3 s of the check tier).
MAYBE_INNER = re.compile(r"^[ \t]+(?:from|import)[ \t]|[;:][ \t]*(?:from|import)[ \t]", re.M)


def hidden_imports() -> list[str]:
    """'path:line imports module' for every import of fslab inside a function of
    src/fslab that ALLOWED does not name."""
    out = []
    for path in sorted(PACKAGE.rglob("*.py")):
        source = path.read_text()
        if not MAYBE_INNER.search(source):
            continue
        reader = module_name(path)
        tree = ast.parse(source)
        for line, module in inner_imports(tree, reader, path.name == "__init__.py"):
            if not allowed(reader, module):
                out.append(f"{path.relative_to(PACKAGE.parent)}:{line} imports {module}")
    return out


def test_fslab_is_imported_at_the_top_of_every_module():
    assert hidden_imports() == []


def test_an_import_of_fslab_inside_a_function_is_found_wherever_it_hides():
    planted = ("def f():\n"
               "    from fslab.core.units import parse_size\n"
               "    if True:\n"
               "        import fslab.host.system\n"
               "    def inner():\n"
               "        from . import stopwatch\n"
               "    return parse_size('1k')\n"
               "from fslab.core import errors\n")  # at the top: not counted
    assert inner_imports(ast.parse(planted), "fslab.core.planted") == [
        (2, "fslab.core.units"), (4, "fslab.host.system"), (6, "fslab.core")]
    assert MAYBE_INNER.search("def g(): from fslab.core import units\n")
    assert MAYBE_INNER.search(planted) and not MAYBE_INNER.search("from fslab import core\n")
    assert inner_imports(ast.parse("import pandas\ndef f():\n    import scipy\n"),
                         "fslab.x") == []


def test_only_the_named_edges_are_allowed():
    assert allowed("fslab.cli.run", "fslab.api") and allowed("fslab", "fslab.api")
    assert not allowed("fslab.cli.run", "fslab.api.campaigns")
    assert not allowed("fslab.report.html", "fslab.api")
    assert not allowed("fslab.client", "fslab.api")  # a module beside cli/ is not in it
    assert inner_imports(ast.parse("def f():\n    from fslab import api\n"),
                         "fslab.cli.x") == [(2, "fslab.api")]


def test_the_command_line_loads_neither_the_api_nor_a_heavy_library():
    """What `fslab --help` imports: the CLI's modules and what they render with, none of
    the api or the libraries under it (the 0.25 s of benchmarks/cli_startup)."""
    probe = ("import sys, fslab.cli.main; print(sorted(m for m in sys.modules if "
             f"m.split('.')[0] in {HEAVY!r} or m.startswith('fslab.api')))")
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                            check=True).stdout.strip()
    assert loaded == "[]"


# `from fslab... import NAMES` wherever it stands (a test's imports come inside its
# functions): the module and the names' text, comments left in (they go below).
FROM_FSLAB = re.compile(
    r"^[ \t]*from (fslab[\w.]*) import[ \t]+(\((?:[^()#]|#[^\n]*)*\)|[^\n#]*)", re.M)


def from_imports(source: str) -> list[tuple[int, str, str, str]]:
    """(line, module, name, the name it is bound to) of every `from fslab` import in a
    source, read off its text (parsing every module of src, tests and benchmarks took
    3 s of the check tier)."""
    found = []
    for match in FROM_FSLAB.finditer(source):
        line = source.count("\n", 0, match.start()) + 1
        names = re.sub(r"#[^\n]*", "", match.group(2)).strip("() \t\n\\")
        for item in filter(None, (part.strip() for part in names.split(","))):
            name, _, bound = item.partition(" as ")
            found.append((line, match.group(1), name.strip(), bound.strip() or name.strip()))
    return found


def through_facades(sources: dict[Path, str]) -> list[str]:
    """'path:line name via module' for every name imported from a module of src/fslab
    that only imports it (a package's __init__, its face, may gather its parts)."""
    passed_on = {module_name(p): {bound for *_, bound in from_imports(source)}
                 for p, source in sources.items()
                 if p.is_relative_to(PACKAGE) and p.name != "__init__.py"}
    return [f"{path.relative_to(REPO)}:{line} {name} via {module}"
            for path, source in sources.items()
            for line, module, name, _ in from_imports(source)
            if name in passed_on.get(module, ())]


def test_every_name_is_imported_from_the_module_it_lives_in():
    """No re-export facades: src, tests and benchmarks import a name from where it is
    defined, so a module's imports say where its parts live."""
    files = [*PACKAGE.rglob("*.py"), *(REPO / "tests").rglob("*.py"),
             *(p for p in (REPO / "benchmarks").iterdir() if p.is_file())]
    assert through_facades({p: p.read_text() for p in files}) == []


def test_a_name_imported_through_a_facade_is_found():
    sweep = PACKAGE / "plan" / "sweep.py"
    planted = REPO / "tests" / "planted.py"
    sources = {sweep: sweep.read_text(),
               planted: "def test():\n"
                        "    from fslab.plan.sweep import (  # (a comment)\n"
                        "        UserError as Refused,\n"
                        "        Factor,\n"
                        "    )\n"}
    assert from_imports(sources[planted]) == [(2, "fslab.plan.sweep", "UserError", "Refused"),
                                              (2, "fslab.plan.sweep", "Factor", "Factor")]
    assert through_facades(sources) == ["tests/planted.py:2 UserError via fslab.plan.sweep"]
