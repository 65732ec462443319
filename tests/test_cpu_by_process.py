"""scripts/cpu-by-process, what measured where make test's CPU goes (docs/design.md):
acct's packed CPU times read right. (A test that a spinner of 0.6 s is found under its
name passed on a quiet host and failed beside six busy loops: its record said 0.1 s. The
records' times are the kernel's tick samples, an estimate under contention; the script
says so, and no test holds it to more.)"""

from __future__ import annotations

from tests.conftest import load_script


def script():
    return load_script("cpu-by-process")


def test_acct_packed_times_unpack():
    comp_t = script().comp_t
    assert comp_t(100) == 100  # exponent 0: the mantissa
    assert comp_t((1 << 13) | 3) == 24  # exponent 1: × 8
    assert comp_t((2 << 13) | 0x1FFF) == 0x1FFF * 64
