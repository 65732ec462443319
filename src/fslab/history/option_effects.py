"""A host's history of option effects: what each tune sitting measured of its options, kept
in the catalogue, so the host learns how far an option's effect moves between sittings.

A file system's ratio to another moves between sittings (history/sittings.py reads that
spread from campaigns); an option's effect moves too, and by its own amount — fsync-heavy
jobs most (ext4's `-I 128` measured 1.23× in one sitting and 0.94–1.07× half an hour
later: docs/tune.md). A tune's `change` is a promise about the next sitting, so each tune
sitting (`fslab tune … --catalogue C`, `fslab tune --again DIR --catalogue C`) records
its options' contrasts — the recommendation against itself without each change: the log
ratio, its standard error and the rounds it rests on — and, for a --subject-to bound, the
bounded metric's level of the recommendation and the reference.

Storage: one Parquet file per sitting and question, C/option_effects/<sitting>-<digest>
.parquet, written under a temporary name and renamed into place (a reader sees the whole
file or none; writers never wait on each other; recording a sitting again replaces its
file with the same rows), beside the catalogue's parts (history/parts.py) in the same
directory. A single-file catalogue of an earlier fslab has no such folder: nothing is
recorded there, and it has no option history.

The spread (`option_spread`): the tunes this host sat two or more sittings of, each tune
question one group (its options the questions, their contrasts over the sittings), read
by the repeat interval's rule (analysis/sittings/repeat.py: the method of moments per
group, pooled by precision, shrunk toward the stated prior τ0 = 0.05 on 2 df) — the host's
option spread, and each file system and workload kind's own shrunk toward it. A tune's
own sittings are left out when it is the one being pooled. The sitting that chose an
option is in the history too: its contrast was selected as a winner, which can only make
the spread read larger (the side that promises less).
"""

from __future__ import annotations

import hashlib
import math
import os
from collections.abc import Collection, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from fslab.analysis.sittings.repeat import HistoryGroup, for_workload, spread_between_sittings
from fslab.history.catalogue import is_legacy, resolve_path
from fslab.history.writing import writable

if TYPE_CHECKING:
    import pandas as pd

    from fslab.core.environment_record import SittingSpread

FOLDER = "option_effects"
OPTION, LEVEL = "option", "level"  # a row's kind: an option's contrast, a metric's level


@dataclass(frozen=True)
class Contrast:
    """One sitting's measure of one option (an OPTION row: `name` the factor, `what` its
    level) or of a bounded metric's level (a LEVEL row: `name` the metric, `what` the
    configuration): the log ratio (or log value), its standard error, the rounds."""

    kind: str
    tune: str  # the tune question: its first sitting's confirmation (history/identity.py)
    sitting: str  # this sitting's confirmation
    started: str
    host: str
    fs: str
    target: str
    workload: str
    name: str
    what: str
    estimate: float
    se: float
    rounds: int


def workload_key(fs: str, workload: str) -> str:
    """The spread's finer key: a file system and a workload kind."""
    return f"{fs}:{workload}"


def record(catalogue: Path | None, rows: Sequence[Contrast]) -> Path | None:
    """Write one sitting's rows of one question (module doc); the file, or None where
    there is nothing to write or no folder to write it to (a single-file catalogue)."""
    import pandas as pd

    if not rows:
        return None
    root = resolve_path(catalogue)
    if is_legacy(root):
        return None
    writable(root)
    first = rows[0]
    key = hashlib.sha256(f"{first.tune}\0{first.target}\0{first.workload}".encode())
    file = root / FOLDER / f"{first.sitting}-{key.hexdigest()[:12]}.parquet"
    file.parent.mkdir(parents=True, exist_ok=True)
    partial = file.with_name(f".{file.name}.{os.getpid()}")
    pd.DataFrame([asdict(r) for r in rows]).to_parquet(partial, index=False)
    os.replace(partial, file)
    return file


def read(catalogue: Path | None, host: str) -> pd.DataFrame:
    """Every row this host recorded (empty: none, or no catalogue)."""
    import duckdb
    import pandas as pd

    root = resolve_path(catalogue)
    folder = root / FOLDER
    if is_legacy(root) or not folder.is_dir() or not any(folder.glob("*.parquet")):
        return pd.DataFrame(columns=list(Contrast.__dataclass_fields__))
    pattern = str(folder / "*.parquet").replace("'", "''")
    with duckdb.connect() as db:
        return db.execute(f"SELECT * FROM read_parquet('{pattern}', union_by_name = true) "
                          "WHERE host = $host ORDER BY tune, target, workload, kind, name, "
                          "what, started, sitting", {"host": host}).df()


def option_spread(catalogue: Path | None, host: str, kind: str = OPTION,
                  leave_out: Collection[str] = ()) -> SittingSpread | None:
    """The host's between-sitting spread of option effects (kind OPTION) or of bounded
    metrics' levels (LEVEL), each file system and workload kind's beside it (keyed by
    workload_key); None when no tune of this host has two sittings (`leave_out`: tunes
    not to count — the one being pooled)."""
    rows = read(catalogue, host)
    rows = rows[(rows["kind"] == kind) & ~rows["tune"].isin(list(leave_out))]
    groups = []
    sittings: set[str] = set()
    for (_, fs, _, workload), question in rows.groupby(
            ["tune", "fs", "target", "workload"], sort=True):
        estimates, ses = [], []
        for _, one in question.groupby(["name", "what"], sort=True):
            kept = one[[math.isfinite(float(s)) and float(s) > 0 for s in one["se"]]]
            if kept["sitting"].nunique() >= 2:
                estimates.append([float(v) for v in kept["estimate"]])
                ses.append([float(v) for v in kept["se"]])
                sittings.update(str(s) for s in kept["sitting"])
        if estimates:
            groups.append(HistoryGroup(workload_key(str(fs), str(workload)), estimates,
                                       ses, contrasts=len(estimates)))
    if not groups:
        return None
    return spread_between_sittings(groups, len(sittings))


def spread_for(catalogue: Path | None, host: str, fs: str, workload: str,
               kind: str = OPTION, leave_out: Collection[str] = ()) -> SittingSpread | None:
    """The spread a tune question of this file system and workload kind reads: its own
    where the history has it, else the host's (analysis.sittings.repeat.for_workload);
    None without a history."""
    spread = option_spread(catalogue, host, kind, leave_out)
    return None if spread is None else for_workload(spread, workload_key(fs, workload))
