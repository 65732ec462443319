"""Reading fio's output: the JSON object among other text, json+ bins as numpy arrays,
or fio's normal (text) output in the JSON's shape. Aggregation is `fio.py`'s."""

from __future__ import annotations

import json
from typing import cast

import numpy as np
import orjson

from fslab.core.errors import UserError
from fslab.parsers.fio_json import DIRECTIONS, FioResult
from fslab.parsers.fio_text import parse_fio_text


class FioParseError(UserError, ValueError):
    """The text holds no fio JSON result."""


def extract_json(text: str | bytes) -> FioResult:
    """Return the fio JSON object in `text`, skipping non-JSON lines before and after it."""
    raw = text.encode() if isinstance(text, str) else text
    start, end = raw.find(b"{"), raw.rfind(b"}")
    if 0 <= start < end:  # the common case, parsed fast; odd texts fall through to a scan
        try:
            obj = orjson.loads(memoryview(raw)[start:end + 1])
        except orjson.JSONDecodeError:
            obj = None
        if isinstance(obj, dict) and ("jobs" in obj or "client_stats" in obj):
            return cast(FioResult, obj)  # fio's JSON: every key read defensively
    text = raw.decode(errors="replace")
    decoder = json.JSONDecoder()
    position = 0
    while True:
        start = text.find("{", position)
        if start < 0:
            raise FioParseError("no JSON object found in fio output")
        try:
            obj, _ = decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            position = start + 1
            continue
        if isinstance(obj, dict) and ("jobs" in obj or "client_stats" in obj):
            return cast(FioResult, obj)
        position = start + 1


BIN_TEXT = b'"0123456789:, \t\r\n'  # every byte a json+ bins object may hold


def load_fio(raw: bytes | str) -> FioResult:
    """`extract_json`, with json+ latency bins read by numpy rather than as Python objects.

    A json+ file holds thousands of bins; as dicts of str → int they cost more to build
    and merge than the rest of the file. Each bins object is cut out of the text and
    parsed as numbers in one numpy call, leaving an index in its place; objects that
    are not plainly numeric are left to the JSON parser. Either way, `parse_fio` gives
    the same measurements (a test holds them equal).
    """
    raw = raw.encode() if isinstance(raw, str) else raw
    if b"{" not in raw and b"(groupid=" in raw:  # fio's normal (text) output
        return load_fio_text(raw)
    raw, arrays = _cut_bins(raw) if b'"bins"' in raw else (raw, [])
    try:
        data = extract_json(raw)
    except FioParseError:
        if b"(groupid=" in raw:
            return load_fio_text(raw)
        raise
    jobs = data.get("jobs") or data.get("client_stats") or []
    if arrays and isinstance(jobs, list):
        for job in (j for j in jobs if isinstance(j, dict)):
            for stats in (job.get(d) for d in (*DIRECTIONS, "sync")):
                for block in stats.values() if isinstance(stats, dict) else ():
                    index = block.get("bins") if isinstance(block, dict) else None
                    if type(index) is int and 0 <= index < len(arrays):
                        block["bins"] = arrays[index]
    return data


def load_fio_text(raw: bytes) -> FioResult:
    """fio's normal output in the JSON's shape (parsers.fio_text), or FioParseError."""
    try:
        data = parse_fio_text(raw.decode(errors="replace"))
    except (ValueError, KeyError, IndexError) as exc:
        raise FioParseError(f"fio text output with a figure fslab cannot read: {exc}") from None
    if not data["jobs"]:
        raise FioParseError("no fio job found in the text")
    return data


def _cut_bins(raw: bytes) -> tuple[bytes, list[tuple[np.ndarray, np.ndarray]]]:
    """The text with each numeric `"bins": {...}` replaced by `"bins": <index>`, and the
    (latencies, counts) arrays in index order. Found with bytes.find: a regex over a
    36 KB file costs more than the numbers it would save."""
    pieces: list[bytes] = []
    arrays: list[tuple[np.ndarray, np.ndarray]] = []
    position = 0
    while (at := raw.find(b'"bins"', position)) >= 0:
        opening = raw.find(b"{", at)
        closing = raw.find(b"}", opening)
        inner = raw[opening + 1:closing]
        pairs = inner.count(b":")
        numbers = None
        if (opening > 0 and closing > 0 and raw[at + 6:opening].strip() == b":" and pairs
                and not inner.translate(None, BIN_TEXT)):
            numbers = np.fromstring(inner.translate(None, b'"').replace(b":", b","),
                                    dtype=np.int64, sep=",")
        if numbers is None or len(numbers) != 2 * pairs:
            pieces.append(raw[position:at + 6])  # not plain numbers: the JSON parser's
            position = at + 6
            continue
        arrays.append((numbers[0::2].astype(float), numbers[1::2].astype(float)))
        pieces += [raw[position:at], b'"bins": %d' % (len(arrays) - 1)]
        position = closing + 1
    pieces.append(raw[position:])
    return b"".join(pieces), arrays


