"""Each sitting's pairs, derived once and kept beside the catalogue's parts.

A campaign started with --catalogue reads its host's between-sitting spread from every
sitting of the host (history/sittings.py), and each sitting's pairs are the one model of
pairs fitted on its runs (analysis.pairs.comparisons): refitting them all at every start
cost 1.7 s of CPU at 25 campaigns and grew with the catalogue (benchmarks/
sittings_startup). A sitting's runs never change — a campaign added again is a new
version, with its own `added` time — so its pairs are written once, as
DIR/derived/sitting_pairs/<campaign id>-<digest of added and DERIVED_VERSION>.parquet
(atomically: a reader sees a whole file or none), and read from there after. A file for
a version no longer current is never read again. A single-file catalogue of an earlier
fslab, or one this process cannot write, is fitted each time, as before.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from fslab.history.catalogue import is_legacy, resolve_path

if TYPE_CHECKING:
    import pandas as pd

DERIVED, FOLDER = "derived", "sitting_pairs"
# Bumped when what a sitting's pairs are changes (the model of pairs, SITTING_PAIRS'
# columns): files of an earlier version are then not read.
DERIVED_VERSION = "2"  # 2: SITTING_PAIRS gained iterations (issue 58)


def _file(root: Path, campaign_id: str, added: str) -> Path:
    digest = hashlib.sha256(f"{added}\0{DERIVED_VERSION}".encode()).hexdigest()[:16]
    return root / DERIVED / FOLDER / f"{campaign_id}-{digest}.parquet"


def cached_pairs(path: Path | None, sittings: pd.DataFrame,
                 fit: Callable[[list[str]], dict[str, pd.DataFrame]]) -> list[pd.DataFrame]:
    """The sittings' rows of SITTING_PAIRS (`sittings`: each one's campaign_id and
    added): those derived before read in one pass, the others fitted (`fit`: campaign ids
    → their rows) and written for next time."""
    root = resolve_path(path)
    keep = root.is_dir() and not is_legacy(root)
    files = {str(r.campaign_id): _file(root, str(r.campaign_id), str(r.added))
             for r in sittings.itertuples()}
    there = {c: f for c, f in files.items() if f.exists()} if keep else {}
    read = _read(list(there.values())) if there else None
    missing = [c for c in files if read is None or c not in there]
    fitted = fit(missing) if missing else {}
    if keep:
        for campaign, frame in fitted.items():
            _write(files[campaign], frame)
    return ([read] if read is not None else []) + list(fitted.values())


def _read(files: list[Path]) -> pd.DataFrame | None:
    """The rows of these derived files, in one pass (None: they do not read)."""
    import duckdb

    listed = ", ".join("'" + str(f).replace("'", "''") + "'" for f in files)
    try:
        return duckdb.connect().execute(
            f"SELECT * FROM read_parquet([{listed}], union_by_name = true)").df()
    except duckdb.Error:
        return None


def _write(file: Path, frame: pd.DataFrame) -> None:
    """One sitting's derived pairs, atomically; a catalogue this process cannot write
    keeps none."""
    import os

    try:
        file.parent.mkdir(parents=True, exist_ok=True)
        partial = file.with_name(f".{file.name}.{os.getpid()}")
        frame.to_parquet(partial, index=False)
        os.replace(partial, file)
    except OSError:
        return
