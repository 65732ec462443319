"""The command line only parses and prints (issue 63): no function of cli/ is longer than
30 lines of body, every exit code is an ExitCode, and a run option is its flag, its field
of RunOptions and the code that reads it — nothing in between to keep equal."""

from __future__ import annotations

import ast
import dataclasses
import inspect
from pathlib import Path

from fslab.api.campaigns import PLAN_FLAGS
from fslab.api.tuning import TuneFlags
from fslab.cli import age, run, tune
from fslab.plan.schema import Overrides
from fslab.run.orchestrator import RunOptions

CLI = Path(run.__file__).parent
LONGEST = 30  # lines of a CLI function's body, its docstring left out


def bodies() -> dict[str, int]:
    """{module:function: lines of its body} of every function in cli/."""
    found = {}
    for path in sorted(CLI.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                body = node.body
                if isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                    body = body[1:]  # the docstring
                if body:
                    found[f"{path.stem}:{node.name}"] = (body[-1].end_lineno or 0) - \
                        body[0].lineno + 1
    return found


def test_no_cli_function_body_is_longer_than_thirty_lines():
    found = bodies()
    assert len(found) > 30 and found["run:run"] > 10  # it measured the commands
    longest = max(found, key=found.__getitem__)
    assert found[longest] <= LONGEST, f"{longest}: {found[longest]} lines"


def test_the_measure_counts_a_long_body():
    """The measure sees a body past 30 lines and leaves the docstring out."""
    text = "def f():\n    '''doc\n\n    more'''\n" + "    x = 1\n" * 31
    (node,) = ast.parse(text).body
    assert isinstance(node, ast.FunctionDef)
    assert node.body[-1].end_lineno - node.body[1].lineno + 1 == 31


def test_every_exit_code_is_an_exit_code():
    """typer.Exit and sys.exit take an ExitCode member, never a bare number."""
    for path in sorted(CLI.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and ast.unparse(node.func) in ("typer.Exit",
                                                                        "sys.exit"):
                (code,) = node.args
                assert ast.unparse(code).startswith("ExitCode."), \
                    f"{path.name}:{node.lineno}: {ast.unparse(node)}"


def flags_of(command) -> set[str]:
    return set(inspect.signature(command).parameters)


# What the api asks of a run that is no flag of `fslab run`, and the flags that are not
# run options (the campaign's: Overrides; where it goes; what the command prints).
API_ONLY = {"analyse", "summarise"}
NOT_OPTIONS = {"campaign_file", "out", "dry_run", "lab", "sweep", "label", "job_file", "size",
               "no_ceiling", "as_published"}


def test_a_run_option_is_its_flag_and_its_field():
    """Every field of RunOptions is a flag of `fslab run` by the same name (cli/run.py
    passes each on by that name), and every flag is a run option or a campaign setting:
    a new run option costs its flag, its field and the code that reads it."""
    options = {f.name for f in dataclasses.fields(RunOptions)}
    flags = flags_of(run.run)
    assert options - API_ONLY <= flags | {"confirmed_devices"}, options - flags
    campaign = {f.name for f in dataclasses.fields(Overrides)}
    assert flags <= options | campaign | NOT_OPTIONS | {"confirm_device"}, \
        flags - options - campaign - NOT_OPTIONS
    source = inspect.getsource(run.run)
    for name in options - API_ONLY - {"confirmed_devices"}:
        assert f"{name}={name}" in source or name == "budget", name


def test_the_plan_flags_are_the_campaign_settings():
    """--again refuses every flag that changes the plan: each Overrides field but --out
    and --seed has its flag in PLAN_FLAGS, and each of those is a flag of `fslab run`."""
    assert set(PLAN_FLAGS) == {f.name for f in dataclasses.fields(Overrides)} - {"out", "seed"}
    shown = run.run.__wrapped__ if hasattr(run.run, "__wrapped__") else run.run
    source = inspect.getsource(shown)
    for flag in PLAN_FLAGS.values():
        assert f'"{flag}"' in source or flag.lstrip("-").replace("-", "_") in source, flag


def test_tune_and_age_take_typed_flags():
    """`fslab tune` and `fslab age` hand the api one typed record of their flags, not a
    dict."""
    assert "TuneFlags(" in inspect.getsource(tune.tune)
    assert {f.name for f in dataclasses.fields(TuneFlags)} >= {"again", "catalogue", "out"}
    source = inspect.getsource(age.age)
    assert "AgingFlags(" in source and "dict(" not in source
