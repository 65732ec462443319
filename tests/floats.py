"""Floats in the tests: the same quantity computed two ways is compared within a
tolerance, never bit for bit. A sum taken in another order (rows a Parquet reader or a
cache handed back in another order, a set's order, a SQL aggregate's threads) differs in
its last digit: 0.09407610415122875 against 0.09407610415122873 failed `make test` two
times in three (issue 63).

Two checks keep that out of the suite (docs/design.md, "Tests that pass every time"):
- At run time (a pytest plugin; tests/conftest.py loads it): `==` written in a test
  between two of fslab's records (dataclasses, named tuples) that are equal only because
  floats carrying rounding (more than 12 significant digits) agree to the last bit fails
  the test, naming the record and the field. Compare them with `close` (a tolerance), or,
  when bit-equality is the claim (a record written and read back, the same call made
  twice on the same rows), say so with `same_bits`.
- Read off the source (tests/test_floats.py): an assert comparing an aggregate (sum,
  mean, ...) with `==` to anything but a literal, with neither pytest.approx nor a
  `# exact: <why>` comment on it.
"""

from __future__ import annotations

import dataclasses
import math
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path

import numpy as np
import pytest

TESTS = str(Path(__file__).resolve().parent)
HERE = str(Path(__file__).resolve())
DIGITS = 12  # a float a test writes as a literal has fewer significant digits


def rounded(value: float) -> bool:
    """Whether `value` carries rounding: more than DIGITS significant digits (a sum,
    a quotient), not a number a person writes (1.25, 0.05, 3e9)."""
    return math.isfinite(value) and float(f"{value:.{DIGITS}g}") != value


def _floats(value: object, where: str, depth: int = 0) -> Iterator[tuple[str, float]]:
    """Every float inside a record (its fields, tuples, lists, mappings, arrays)."""
    if depth > 6:
        return
    if isinstance(value, float | np.floating):
        yield where, float(value)
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        for field in dataclasses.fields(value):
            yield from _floats(getattr(value, field.name), f"{where}.{field.name}", depth + 1)
    elif isinstance(value, tuple) and hasattr(value, "_fields"):
        for name, inner in zip(value._fields, value, strict=True):
            yield from _floats(inner, f"{where}.{name}", depth + 1)
    elif isinstance(value, list | tuple):
        for index, inner in enumerate(value[:100]):
            yield from _floats(inner, f"{where}[{index}]", depth + 1)
    elif isinstance(value, Mapping):
        for key, inner in list(value.items())[:100]:
            yield from _floats(inner, f"{where}[{key!r}]", depth + 1)
    elif isinstance(value, np.ndarray) and value.dtype.kind == "f":
        for index, inner in enumerate(value.ravel()[:100]):
            yield f"{where}[{index}]", float(inner)


def close(a: object, b: object, rel: float = 1e-9, abs_: float = 0.0) -> bool:
    """`a` equals `b` with every float within `rel` (NaN equal to NaN): records, named
    tuples, sequences, mappings and arrays compared member by member."""
    if isinstance(a, float | np.floating) or isinstance(b, float | np.floating):
        if not isinstance(a, int | float | np.number) or not isinstance(b, int | float |
                                                                        np.number):
            return False
        x, y = float(a), float(b)
        return (math.isnan(x) and math.isnan(y)) or math.isclose(x, y, rel_tol=rel,
                                                                 abs_tol=abs_)
    if dataclasses.is_dataclass(a) and not isinstance(a, type):
        return type(a) is type(b) and all(
            close(getattr(a, f.name), getattr(b, f.name), rel, abs_)
            for f in dataclasses.fields(a))
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return bool(np.allclose(a, b, rtol=rel, atol=abs_, equal_nan=True))  # type: ignore[arg-type]
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return a.keys() == b.keys() and all(close(a[k], b[k], rel, abs_) for k in a)
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return (type(a) is type(b) and len(a) == len(b)
                and all(close(x, y, rel, abs_) for x, y in zip(a, b, strict=True)))
    return bool(a == b)


def same_bits(a: object, b: object) -> bool:
    """`a == b`, bit for bit, said on purpose: for one computation done twice the same
    way (a record written and read back, the same call on the same rows in the same
    order). Never for one quantity computed two ways: that is `close`."""
    return bool(a == b)


class Guard:
    """What the current test compared exactly (records with rounded floats)."""

    def __init__(self) -> None:
        self.active = False
        self.found: list[str] = []

    def saw(self, record: object) -> None:
        caller = sys._getframe(2)
        filename = caller.f_code.co_filename
        if not filename.startswith(TESTS) or filename == HERE:
            return
        inexact = [(where, value) for where, value in _floats(record, type(record).__name__)
                   if rounded(value)]
        if inexact:
            where, value = inexact[0]
            place = f"{Path(filename).relative_to(Path(TESTS).parent)}:{caller.f_lineno}"
            self.found.append(f"{place}: {type(record).__name__} records compared with == "
                              f"({where} = {value!r} carries rounding)")


GUARD = Guard()


def _guarded(original):  # any __eq__
    def __eq__(self, other):
        result = original(self, other)
        if result is True and GUARD.active:
            GUARD.saw(self)
        return result

    __eq__.guarded = True  # type: ignore[attr-defined]
    return __eq__


_patched: set[str] = set()
_seen = [0]  # how many modules were loaded at the last look


def guard_records() -> None:
    """Wrap the equality of every record class of fslab's modules loaded so far."""
    if len(sys.modules) == _seen[0]:
        return
    _seen[0] = len(sys.modules)
    for name, module in list(sys.modules.items()):
        if not name.startswith("fslab") or name in _patched or module is None:
            continue
        _patched.add(name)
        for cls in list(vars(module).values()):
            if not isinstance(cls, type) or cls.__module__ != name:
                continue
            record = dataclasses.is_dataclass(cls) and "__eq__" in vars(cls)
            named = issubclass(cls, tuple) and hasattr(cls, "_fields")
            if (record or named) and not getattr(cls.__eq__, "guarded", False):
                cls.__eq__ = _guarded(cls.__eq__)  # type: ignore[method-assign]


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    guard_records()
    GUARD.found.clear()
    GUARD.active = True
    try:
        result = yield
    finally:
        GUARD.active = False
    if GUARD.found:
        raise AssertionError(
            "exact equality of floats that carry rounding (a sum in another order differs "
            "in its last digit): compare with tests.floats.close, or say same_bits when "
            "it is one computation done twice the same way:\n  "
            + "\n  ".join(dict.fromkeys(GUARD.found)))
    return result
