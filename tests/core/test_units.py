"""Sizes parse like fio's; values print with the right unit labels."""

import pytest

from fslab.core.errors import UserError
from fslab.core.units import format_ns, format_rate, format_value, parse_duration, parse_size


@pytest.mark.parametrize(("text", "expected"), [
    ("4k", 4096), ("4K", 4096), ("1M", 1024**2), ("2G", 2 * 1024**3), ("512MiB", 512 * 1024**2),
    ("1.5G", int(1.5 * 1024**3)), ("100", 100), (4096, 4096), ("3 gb", 3 * 1024**3),
])
def test_parse_size(text, expected):
    assert parse_size(text) == expected


@pytest.mark.parametrize("text", ["12Q", "", "G", "-1G", "0", "1.2.3M", True])
def test_parse_size_rejects(text):
    with pytest.raises(UserError, match="bad size"):
        parse_size(text)


def test_parse_duration():
    assert parse_duration("30") == 30
    assert parse_duration("2m") == 120
    assert parse_duration(5) == 5
    with pytest.raises(UserError):
        parse_duration("0")
    with pytest.raises(UserError):
        parse_duration("5x")


def test_latency_labels_are_not_confused():
    assert format_ns(850) == "850 ns"
    assert format_ns(81_900) == "81.9 µs"
    assert format_ns(2_500_000) == "2.5 ms"
    assert format_ns(3e9) == "3 s"


def test_rates_are_binary():
    assert format_rate(188 * 1024**2) == "188 MiB/s"
    assert format_rate(2.5 * 1024**3) == "2.5 GiB/s"
    assert format_value(48_200, "1/s") == "48.2 k"
    assert format_value(float("nan"), "ns") == "–"
