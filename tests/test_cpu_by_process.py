"""scripts/cpu-by-process, what measured where make test's CPU goes (docs/design.md):
acct's packed CPU times read right, and a process the command did not wait for, that
burnt a known share of CPU, is found under its own name."""

from __future__ import annotations

import importlib.machinery
import importlib.util
import subprocess
import sys

from tests.conftest import REPO, requires

SCRIPT = REPO / "scripts" / "cpu-by-process"


def script():
    loader = importlib.machinery.SourceFileLoader("cpu_by_process", str(SCRIPT))
    spec = importlib.util.spec_from_loader("cpu_by_process", loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def test_acct_packed_times_unpack():
    comp_t = script().comp_t
    assert comp_t(100) == 100  # exponent 0: the mantissa
    assert comp_t((1 << 13) | 3) == 24  # exponent 1: × 8
    assert comp_t((2 << 13) | 0x1FFF) == 0x1FFF * 64


def test_a_process_no_one_waited_for_is_counted_under_its_name(tmp_path):
    """The command starts a child it leaves to init (as a FUSE mount leaves its daemon),
    which spins 0.6 s of CPU and ends before the command: the record of its end names it
    with its CPU, where time(1) and the command's own rusage see nothing."""
    requires(root=True)
    spin, done = tmp_path / "spinner", tmp_path / "done"
    spin.write_text("import pathlib, sys, time\nend = time.process_time() + 0.6\n"
                    "while time.process_time() < end:\n    pass\n"
                    "pathlib.Path(sys.argv[1]).touch()\n")
    command = (f"('{sys.executable}' '{spin}' '{done}' &); "
               f"while [ ! -e '{done}' ]; do sleep 0.05; done; sleep 0.5")
    out = subprocess.run([sys.executable, str(SCRIPT), "--", "sh", "-c", command],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    spun = [float(line.split()[0]) for line in out.stdout.splitlines()
            if line.startswith(" ") and line.split()[-1] == "python"]
    assert spun and max(spun) >= 0.55, out.stdout
