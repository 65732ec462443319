"""Plug-ins (core/plugins.py): a workload with its own tool and a statistic, each one
module outside the package and one line ($FSLAB_PLUGINS), run end to end through the
command a user types: the suite listed, the missing tool named with its package, the
tool's raw file parsed into metrics, the statistic's table in stats/ and in the report.
The same two as fslab's own parts: one module each and one line each in core/lookups.py
(BUILTIN), counted against the package, as ARCHITECTURE.md states."""

from __future__ import annotations

import difflib
import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pandas as pd
import pytest

from fslab.core import plugins
from tests.conftest import fslab_here

# A workload whose tool (toytool, of the Debian package toy-tools) counts to N and says
# how long it took; its raw file, its parser and its package declared beside it.
TOY_WORKLOAD = '''
from __future__ import annotations

import json
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from fslab.core.metrics import Measurement
from fslab.host.system import require_tool
from fslab.parsers.raw_files import Parsed, RawKind, read_json
from fslab.workloads.base import Capabilities, RunOutput, Where
from fslab.workloads.suites import Suite

RAW_FILE = "toy.json"
PACKAGES = {"toytool": "toy-tools"}


@dataclass
class ToyWorkload(Capabilities):
    name: str = "toy_count"
    family: str = "toy"
    count: int = 1000
    PRIMARY = "ops_per_s"

    def check(self) -> None:
        require_tool("toytool")

    def required_bytes(self) -> int:
        return 0

    def render(self, where: Where) -> dict[str, str]:
        return {"command": f"toytool {self.count}"}

    def run(self, where: Where, run_dir: Path) -> RunOutput:
        start = time.perf_counter()
        done = subprocess.run([require_tool("toytool"), str(self.count)],
                              capture_output=True, text=True, check=True)
        (run_dir / RAW_FILE).write_text(json.dumps({
            "ops": int(done.stdout), "seconds": time.perf_counter() - start}))
        return RunOutput()


def _parse(files) -> Parsed:
    record = read_json(files, RAW_FILE)
    return Parsed("toy", [Measurement("count", "ops_per_s",
                                      record["ops"] / record["seconds"])])


KIND = RawKind("toy", "", lambda files: RAW_FILE in files.names(), _parse)
SUITE = Suite("toy", "Count to N with toytool.", None, {"toy_count": {}},
              {"toy_count": 1},
              lambda only, runtime, size, options, seed, published: [
                  ToyWorkload(count=int(options.get("count", 1000)))],
              options="count", keys=frozenset({"count"}))
'''

# A statistic: each target's fastest and slowest run per cell, and their ratio.
TOY_STATISTIC = '''
from fslab.analysis.statistic import Statistic


def _spread(measured):
    runs = measured.runs
    cells = runs.groupby(["target", "workload", "op", "metric"], observed=True)["value"]
    table = cells.agg(["min", "max"]).reset_index()
    table["max_over_min"] = table["max"] / table["min"]
    return table


STATISTIC = Statistic("run_spread", "Each cell's slowest and fastest run and their "
                      "ratio: how far one run can mislead.", _spread)
'''


CAMPAIGN = """
    name = "toy"
    iterations = 3
    ceiling = false
    [[target]]
    name = "a"
    fs = "null"
    [[target]]
    name = "b"
    fs = "null"
    [[workload]]
    preset = "toy"
    options = { count = 20000 }
"""


@pytest.fixture
def registered(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The two modules in a folder of their own, registered by one line each."""
    modules = tmp_path / "mine"
    modules.mkdir()
    (modules / "toy_workload.py").write_text(textwrap.dedent(TOY_WORKLOAD))
    (modules / "toy_statistic.py").write_text(textwrap.dedent(TOY_STATISTIC))
    monkeypatch.syspath_prepend(str(modules))
    monkeypatch.setenv(plugins.ENV, "toy_workload, toy_statistic")
    campaign = tmp_path / "toy.toml"
    campaign.write_text(textwrap.dedent(CAMPAIGN))
    return campaign


def _toytool(tmp_path: Path) -> Path:
    """A folder holding toytool, the toy workload's own tool."""
    tools = tmp_path / "bin"
    tools.mkdir()
    tool = tools / "toytool"
    tool.write_text("#!/bin/sh\ni=0\nwhile [ $i -lt $1 ]; do i=$((i+1)); done\necho $i\n")
    tool.chmod(0o755)
    return tools


def _with_tool(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", f"{_toytool(tmp_path)}:{os.environ['PATH']}")


def test_a_toy_workload_and_statistic_run_end_to_end(registered: Path, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch):
    listed = fslab_here("presets", "--json")
    assert listed.returncode == 0, listed.stderr
    assert "toy" in json.loads(listed.stdout)["presets"]

    out = tmp_path / "out"
    lab = ["--lab", str(tmp_path / "lab")]
    missing = fslab_here("run", str(registered), "--out", str(out), *lab)
    assert missing.returncode == 2
    assert "toytool not found: apt-get install toy-tools" in missing.stderr
    assert "Traceback" not in missing.stderr

    _with_tool(tmp_path, monkeypatch)
    ran = fslab_here("run", str(registered), "--out", str(out), *lab)
    assert ran.returncode == 0, ran.stderr + ran.stdout
    metrics = pd.read_parquet(out / "metrics.parquet")
    counted = metrics[(metrics["op"] == "count") & (metrics["metric"] == "ops_per_s")]
    assert len(counted) == 6 and (counted["value"] > 0).all()  # 2 targets × 3 iterations

    spread = pd.read_csv(out / "stats" / "run_spread.csv")
    assert set(spread["target"]) == {"a", "b"}
    assert (spread["max_over_min"] >= 1).all()
    methods = pd.read_csv(out / "stats" / "methods.csv")
    assert "run_spread" in set(methods["step"])

    reported = fslab_here("report", str(out))
    assert reported.returncode == 0, reported.stderr
    page = (out / "report.html").read_text()
    assert "id='statistic-run_spread'" in page and "how far one run can mislead" in page


def test_a_statistic_that_fails_is_one_line_and_the_analysis_stands(
        registered: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    broken = tmp_path / "mine" / "toy_broken.py"
    broken.write_text(TOY_STATISTIC.replace('"run_spread"', '"broken"').replace(
        "runs = measured.runs", "runs = measured.no_such_table"))
    monkeypatch.setenv(plugins.ENV, "toy_workload, toy_statistic, toy_broken")
    _with_tool(tmp_path, monkeypatch)
    out = tmp_path / "out"
    ran = fslab_here("run", str(registered), "--out", str(out), "--lab",
                     str(tmp_path / "lab"))
    assert ran.returncode == 0, ran.stderr
    verdicts = (out / "stats" / "verdicts.txt").read_text()
    assert "statistic broken failed: AttributeError" in verdicts
    assert (out / "stats" / "run_spread.csv").exists()
    assert not (out / "stats" / "broken.csv").exists()


def test_a_plugin_that_cannot_be_imported_is_one_line(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv(plugins.ENV, "no_such_plugin_module")
    listed = fslab_here("presets")
    assert listed.returncode == 2
    assert listed.stderr.strip().count("\n") == 0
    assert "plug-in 'no_such_plugin_module' (FSLAB_PLUGINS) cannot be imported" in listed.stderr


def test_a_declaration_of_the_wrong_type_is_one_line_naming_its_module(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    (tmp_path / "toy_wrong.py").write_text('SUITE = "randread"\n')
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv(plugins.ENV, "toy_wrong")
    listed = fslab_here("presets")
    assert listed.returncode == 2 and listed.stderr.strip().count("\n") == 0
    assert ("plug-in 'toy_wrong': its SUITE is a str, not fslab.workloads.suites.Suite"
            in listed.stderr)


def _differences(original: Path, copy: Path) -> tuple[set[str], dict[str, list[str]]]:
    """The files only `copy` has, and each changed file's added and removed lines."""
    def files(root: Path) -> dict[str, Path]:
        return {str(p.relative_to(root)): p for p in root.rglob("*")
                if p.is_file() and "__pycache__" not in p.parts}

    before, after = files(original), files(copy)
    changed = {}
    for name in sorted(before.keys() & after.keys()):
        lines = [line.rstrip("\n") for line in difflib.unified_diff(
            before[name].read_text().splitlines(), after[name].read_text().splitlines(),
            lineterm="") if line[:1] in "+-" and line[:3] not in ("+++", "---")]
        if lines:
            changed[name] = lines
    return set(after) - set(before), changed


def test_a_built_in_workload_and_statistic_are_one_module_and_one_line_each(tmp_path: Path):
    """ARCHITECTURE.md's counts for fslab's own parts: a workload with its own tool is one
    module and one line in core/lookups.py's BUILTIN, and so is a statistic. A copy of the
    package with exactly those two modules and two lines (counted against the package)
    lists the suite, names the missing tool's package, parses the tool's raw file into
    metrics, and writes and reports the statistic, through the command line."""
    package = Path(plugins.__file__).resolve().parents[1]
    copy = tmp_path / "src" / "fslab"
    shutil.copytree(package, copy, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    (copy / "workloads" / "toy.py").write_text(textwrap.dedent(TOY_WORKLOAD))
    (copy / "analysis" / "cells" / "run_spread.py").write_text(textwrap.dedent(TOY_STATISTIC))
    lookups = copy / "core" / "lookups.py"
    last = '    "fslab.analysis.cells.noise",\n'
    assert lookups.read_text().count(last) == 1
    lookups.write_text(lookups.read_text().replace(last, last + (
        '    "fslab.workloads.toy",\n    "fslab.analysis.cells.run_spread",\n')))

    new, changed = _differences(package, copy)
    assert new == {"workloads/toy.py", "analysis/cells/run_spread.py"}
    assert changed == {"core/lookups.py": ['+    "fslab.workloads.toy",',
                                           '+    "fslab.analysis.cells.run_spread",']}

    campaign, out = tmp_path / "toy.toml", tmp_path / "out"
    campaign.write_text(textwrap.dedent(CAMPAIGN))
    env = {**os.environ, "PYTHONPATH": str(copy.parent), plugins.ENV: ""}

    def fslab(*args: str, path: str = os.environ["PATH"]) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "fslab.cli", *args], capture_output=True,
                              text=True, cwd=tmp_path, env={**env, "PATH": path})

    listed = fslab("presets", "--json")
    assert listed.returncode == 0, listed.stderr
    assert "toy" in json.loads(listed.stdout)["presets"]  # only the copy has it
    lab = ["--lab", str(tmp_path / "lab")]
    missing = fslab("run", str(campaign), "--out", str(out), *lab)
    assert missing.returncode == 2, missing.stderr
    assert "toytool not found: apt-get install toy-tools" in missing.stderr

    ran = fslab("run", str(campaign), "--out", str(out), *lab,
                path=f"{_toytool(tmp_path)}:{os.environ['PATH']}")
    assert ran.returncode == 0, ran.stderr + ran.stdout
    metrics = pd.read_parquet(out / "metrics.parquet")
    assert len(metrics[(metrics["op"] == "count") & (metrics["metric"] == "ops_per_s")]) == 6
    assert "run_spread" in set(pd.read_csv(out / "stats" / "methods.csv")["step"])
    assert (pd.read_csv(out / "stats" / "run_spread.csv")["max_over_min"] >= 1).all()
    reported = fslab("report", str(out))
    assert reported.returncode == 0, reported.stderr
    assert "id='statistic-run_spread'" in (out / "report.html").read_text()


# A built-in analysis step (analysis/step.py): how many primary pairs each target won.
TOY_STEP = '''
import pandas as pd

from fslab.analysis.step import Step
from fslab.core.pair import FASTER, SLOWER


def _wins(pairs):
    won = {}
    for pair in pairs:
        if pair.primary and pair.decision in (FASTER, SLOWER):
            winner = pair.a if pair.decision == FASTER else pair.b
            won[winner] = won.get(winner, 0) + 1
    return pd.DataFrame(sorted(won.items()), columns=["target", "wins"])


STEP = Step("wins", reads=("pairs",), makes=("wins",), run=_wins,
            method="Wins: how many primary pairs each target was shown faster in.",
            tables={"wins": "wins.csv"})
'''


def test_a_built_in_analysis_step_is_one_module_and_one_line(tmp_path: Path):
    """ARCHITECTURE.md's count for a table of fslab's own analysis: one module declaring
    its STEP (name, what it reads, its method, its table) and one line in core/lookups.py's
    ANALYSIS_STEPS. A copy of the package with exactly those (counted against the
    package) analyses a stored campaign (tests/fixtures/pairs) with the step's table in
    stats/, its method in methods.csv, and the table under its method in the report."""
    import tarfile

    from tests.conftest import FIXTURES

    package = Path(plugins.__file__).resolve().parents[1]
    copy = tmp_path / "src" / "fslab"
    shutil.copytree(package, copy, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    (copy / "analysis" / "pairs" / "wins.py").write_text(textwrap.dedent(TOY_STEP))
    lookups = copy / "core" / "lookups.py"
    after = '    "fslab.analysis.pairs.aged",\n'
    assert lookups.read_text().count(after) == 1
    lookups.write_text(lookups.read_text().replace(
        after, after + '    "fslab.analysis.pairs.wins",\n'))
    new, changed = _differences(package, copy)
    assert new == {"analysis/pairs/wins.py"}
    assert changed == {"core/lookups.py": ['+    "fslab.analysis.pairs.wins",']}

    with tarfile.open(FIXTURES / "pairs" / "plain.tar.gz") as tar:
        tar.extractall(tmp_path, filter="data")
    out = tmp_path / "plain"
    env = {**os.environ, "PYTHONPATH": str(copy.parent), plugins.ENV: ""}
    for command in ("analyze", "report"):
        done = subprocess.run([sys.executable, "-m", "fslab.cli", command, str(out)],
                              capture_output=True, text=True, cwd=tmp_path, env=env)
        assert done.returncode == 0, done.stderr
    wins = pd.read_csv(out / "stats" / "wins.csv")
    assert dict(zip(wins["target"], wins["wins"], strict=True)) == {"c": 5}  # verdicts.txt
    methods = pd.read_csv(out / "stats" / "methods.csv")
    assert "wins" in set(methods["step"])
    page = (out / "report.html").read_text()
    assert "id='statistic-wins'" in page and "shown faster in" in page
