"""DIR/series.parquet: every fio run's per-interval series (parsers/fio_logs.py) as one
tidy table — run_id, target, workload, op, metric, t_s, value — rebuilt from the runs'
raw logs at the end of a campaign and by `fslab reparse`, so the report can draw a
warm-up, a cliff or a stall."""

from __future__ import annotations

from typing import TYPE_CHECKING

from fslab.parsers.fio_logs import series_rows
from fslab.results.store import ResultsDir, write_atomic

if TYPE_CHECKING:
    import pandas as pd

SERIES_FILE = "series.parquet"
COLUMNS = ["run_id", "target", "workload", "iteration", "op", "metric", "t_s", "value"]


def write_series(results: ResultsDir) -> int:
    """Rebuild series.parquet from the runs' raw logs; the number of rows (0: no run kept
    logs, and no file is written)."""
    import io

    import pandas as pd

    frames = []
    for record in results.run_records():
        if record.status != "ok" or record.imported:
            continue
        try:
            rows = series_rows(results.raw_files(record))
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
    write_atomic(results.path / SERIES_FILE, buffer.getvalue())
    return len(table)


def load_series(results: ResultsDir) -> pd.DataFrame | None:
    """series.parquet, or None where the runs kept no logs."""
    import pandas as pd

    path = results.path / SERIES_FILE
    return pd.read_parquet(path) if path.exists() else None
