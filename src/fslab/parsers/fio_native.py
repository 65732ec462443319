"""fio JSON files read by fslab's native extension (`native/`, Rust), when it is built.

An import of 10,000 fio files spends most of its time turning JSON into Python objects
and adding them up. The extension reads each file, parses only the fields fslab uses
and aggregates the jobs exactly as `parsers.fio.parse_fio` does, on several threads
and outside the GIL. It takes only the plain case; every other file (dd, bonnie++, old
fio, odd types, unreadable) is left to the Python parser, which gives the result or the
reason. `make test` builds it; without it (no Rust toolchain) imports are slower, not
different. FSLAB_NATIVE=0 turns it off.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from types import ModuleType

import numpy as np


def extension() -> ModuleType | None:
    """The native module, or None when it is not built or is turned off."""
    if os.environ.get("FSLAB_NATIVE", "1") == "0":
        return None
    try:
        import fslab_native
    except ImportError:
        return None
    return fslab_native


@dataclass
class FioBatch:
    """Measurements of the files the extension parsed, one entry per row.

    `parsed[i]` tells whether file i was parsed (else it is the Python parser's);
    `jobname` and `tool` are per file; rows carry their file's index in `file`, and
    op, metric and host as codes into the name lists.
    """

    parsed: np.ndarray  # bool, per file
    jobname: list[str]
    tool: list[str]
    file: np.ndarray  # int64, per row
    op: np.ndarray  # int32 codes into op_names, per row
    metric: np.ndarray  # into metric_names
    host: np.ndarray  # into host_names
    value: np.ndarray  # float64, per row
    op_names: list[str]
    metric_names: list[str]
    host_names: list[str]


def read_fio_files(native: ModuleType, paths: list[str], threads: int) -> FioBatch:
    """Parse `paths` with the extension (the GIL is released while it reads)."""
    out = native.read_fio_files(paths, threads)

    def array(key: str, dtype: type, to: type = np.int32) -> np.ndarray:
        return np.frombuffer(out[key], dtype=dtype).astype(to)

    return FioBatch(
        parsed=array("parsed", np.uint8, bool), jobname=out["jobname"], tool=out["tool"],
        file=array("file", np.uint32, np.int64), op=array("op", np.uint8),
        metric=array("metric", np.uint8), host=array("host", np.uint32),
        value=np.frombuffer(out["value"], dtype=np.float64),
        op_names=out["ops"], metric_names=out["metrics"], host_names=out["hosts"],
    )
