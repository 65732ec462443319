"""The suite compares no floats computed in two orders for exact equality
(tests/floats.py): the static rule over every test module, and the run-time guard of
records, each shown to catch what it is for."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path
from typing import NamedTuple

import pytest

from tests import floats

TESTS = Path(__file__).resolve().parent
AGGREGATES = {"sum", "fsum", "mean", "median", "std", "var", "prod", "average", "nansum",
              "nanmean", "cumsum", "agg", "aggregate"}
TOLERANT = ("approx", "isclose", "allclose", "close(")
EXACT = "# exact:"  # on the assert's lines: why these values are exact (counts, integers)


def _aggregate(node: ast.AST) -> bool:
    """An expression that sums (or averages) something other than truth values."""
    for call in ast.walk(node):
        if not isinstance(call, ast.Call):
            continue
        func = call.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        if name not in AGGREGATES:
            continue
        counted = call.func.value if isinstance(func, ast.Attribute) else (
            call.args[0] if call.args else None)
        if isinstance(counted, ast.GeneratorExp):
            counted = counted.elt
        if _integer(counted):
            continue  # a count: an integer
        return True
    return False


def _integer(node: ast.AST | None) -> bool:
    """A truth, an integer literal, a length (or lengths mapped): what sums to an int."""
    if isinstance(node, ast.Compare | ast.BoolOp):
        return True
    if isinstance(node, ast.Constant):
        return isinstance(node.value, int)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        return node.func.id in ("len", "int") or (
            node.func.id == "map" and bool(node.args)
            and isinstance(node.args[0], ast.Name) and node.args[0].id in ("len", "int"))
    return False


def exact_aggregates(source: str) -> list[int]:
    """Lines of asserts that compare an aggregate with == or != to a computed value,
    without a tolerance or an `# exact:` reason."""
    lines = source.splitlines()
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Assert):
            continue
        text = "\n".join(lines[node.lineno - 1:node.end_lineno])
        if EXACT in text:
            continue
        for compare in ast.walk(node.test):
            if not isinstance(compare, ast.Compare):
                continue
            operands = [compare.left, *compare.comparators]
            for index, op in enumerate(compare.ops):
                if not isinstance(op, ast.Eq | ast.NotEq):
                    continue
                pair = operands[index:index + 2]
                if any(isinstance(side, ast.Constant) for side in pair):
                    continue
                if any(t in ast.unparse(side) for side in pair for t in TOLERANT):
                    continue
                if any(_aggregate(side) for side in pair):
                    found.append(compare.lineno)
    return found


def test_no_test_compares_an_aggregate_exactly():
    found = [f"{path.relative_to(TESTS.parent)}:{line}"
             for path in sorted(TESTS.rglob("test_*.py"))
             for line in exact_aggregates(path.read_text())]
    assert not found, ("an aggregate compared with == (a sum in another order differs in "
                       "its last digit): use pytest.approx, or say why it is exact with "
                       f"'{EXACT} ...' on the assert: {found}")


def test_the_static_rule_finds_a_sum_compared_exactly_and_leaves_counts_alone():
    source = '''
def test_x(runs, spent, lines):
    assert spent.measured_s == runs["measured_s"].sum()
    assert spent.share == pytest.approx(runs["measured_s"].mean())
    assert sum("faster" in line for line in lines) == (runs["status"] == "ok").sum()
    assert sum(sizes) == 3
    assert sum(h[3] for h in lines) == spent.free  # exact: byte counts
    assert runs.iops == 2 * sum(map(len, lines.values()))
'''
    assert exact_aggregates(source) == [3]


@dataclasses.dataclass(frozen=True)
class Spread:
    tau: float
    sittings: int


class Shared(NamedTuple):
    share: float
    low: float


def test_the_guard_fails_records_with_rounded_floats_compared_exactly(monkeypatch):
    """A record type as fslab's are, guarded as the plugin guards them; compared here,
    in a test: caught when a field carries rounding, not for round literals, and not
    through `close` or `same_bits`."""
    for cls in (Spread, Shared):
        monkeypatch.setattr(cls, "__eq__", floats._guarded(cls.__eq__))
    summed = sum([0.1, 0.2, 0.3])  # 0.6000000000000001: rounding
    found = []
    monkeypatch.setattr(floats.GUARD, "found", found)
    assert Spread(summed, 3) == Spread(summed, 3)
    assert Shared(summed, 0.5) == Shared(summed, 0.5)
    assert Spread(0.25, 3) == Spread(0.25, 3)  # a literal: nothing to round
    assert floats.close(Spread(summed, 3), Spread(0.6, 3))
    assert floats.same_bits(Spread(summed, 3), Spread(summed, 3))
    assert [line.split(": ", 1)[1] for line in found] == [
        "Spread records compared with == (Spread.tau = 0.6000000000000001 carries rounding)",
        "Shared records compared with == (Shared.share = 0.6000000000000001 carries "
        "rounding)"]
    found.clear()


def test_close_takes_records_members_and_nan():
    assert floats.close({"a": [1.0, float("nan")]}, {"a": [1.0 + 1e-12, float("nan")]})
    assert not floats.close(Spread(0.1, 3), Spread(0.1, 4))
    assert not floats.close([0.1], (0.1,))
    assert floats.rounded(0.1 + 0.2) and not floats.rounded(0.3) and not floats.rounded(3e9)


@pytest.mark.parametrize("value", [float("inf"), float("nan")])
def test_what_is_not_finite_carries_no_rounding(value):
    assert not floats.rounded(value)
