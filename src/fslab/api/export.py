"""`fslab export`: a results directory's metrics or verdicts as one tidy table."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from fslab.analysis.cells.observations import per_run
from fslab.api.results import _current_analysis, open_results
from fslab.core.errors import UserError
from fslab.report.export import FORMATS, TABLES, metrics_table, rendered, verdicts_table
from fslab.results.store import write_atomic

if TYPE_CHECKING:
    from collections.abc import Callable

    import pandas as pd


def export_table(results_dir: Path, table: str = "metrics",
                 say: Callable[[str], object] = print) -> pd.DataFrame:
    """The `table` ("metrics" or "verdicts") of a results directory as a DataFrame; the
    verdicts from stats/, analysed once first where stats/ is missing or stale (`say`
    tells so)."""
    if table not in TABLES:
        raise UserError(f"unknown table {table!r}: use {' or '.join(TABLES)}")
    results = open_results(results_dir)
    name = results.campaign_settings().name or results.path.name
    if table == "verdicts":
        return verdicts_table(_current_analysis(results, say).pairwise, name)

    return metrics_table(per_run(results.load_metrics()), name)


def export(results_dir: Path, form: str, out: Path | None = None, table: str = "metrics",
           say: Callable[[str], object] = print) -> tuple[str, list[Path]]:
    """Export as `form` ("csv" or "json"): (the text, when `out` is None; the files
    written otherwise). `out` an existing directory: both tables, metrics.FORM and
    verdicts.FORM in it; a file: the one `table`."""
    if form not in FORMATS:
        raise UserError(f"unknown format {form!r}: use {' or '.join(FORMATS)}")

    if out is None:
        return rendered(export_table(results_dir, table, say), form), []
    pairs = ([(name, out / f"{name}.{form}") for name in TABLES] if out.is_dir()
             else [(table, out)])
    for name, path in pairs:
        write_atomic(path, rendered(export_table(results_dir, name, say), form))
    return "", [path for _, path in pairs]
