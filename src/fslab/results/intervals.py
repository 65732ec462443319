"""DIR/intervals.parquet: every fio run's per-interval values (parsers/fio_logs.py) as one
tidy table — run_id, target, workload, op, metric, t_s, value — rebuilt from the runs'
raw logs at the end of a campaign and by `fslab reparse`, so the report can draw a
warm-up, a cliff or a stall."""

from __future__ import annotations

from typing import TYPE_CHECKING

from fslab.parsers.fio_logs import interval_rows
from fslab.results.store import ResultsDir, write_atomic

if TYPE_CHECKING:
    import pandas as pd

INTERVALS_FILE = "intervals.parquet"
OLDER_FILE = "series.parquet"  # its name before stats format 7 (read, never written)
COLUMNS = ["run_id", "target", "workload", "iteration", "op", "metric", "t_s", "value"]


def write_intervals(results: ResultsDir) -> int:
    """Rebuild intervals.parquet from the runs' raw logs; the number of rows (0: no run kept
    logs, and no file is written)."""
    import io

    import pandas as pd

    frames = []
    for record in results.run_records():
        if record.status != "ok" or record.imported:
            continue
        try:
            rows = interval_rows(results.raw_files(record))
        except OSError:
            continue
        if rows:
            frames.append(pd.DataFrame(rows).assign(
                run_id=record.run_id, target=record.target, workload=record.workload,
                iteration=record.iteration))
    if not frames:
        return 0
    table = pd.concat(frames, ignore_index=True)[COLUMNS]
    buffer = io.BytesIO()
    table.to_parquet(buffer, index=False)
    write_atomic(results.path / INTERVALS_FILE, buffer.getvalue())
    (results.path / OLDER_FILE).unlink(missing_ok=True)
    return len(table)


def load_intervals(results: ResultsDir) -> pd.DataFrame | None:
    """intervals.parquet (or an older directory's series.parquet), or None where the runs
    kept no logs."""
    import pandas as pd

    for name in (INTERVALS_FILE, OLDER_FILE):
        if (results.path / name).exists():
            return pd.read_parquet(results.path / name)
    return None
