"""The results directory's format and its history (fslab.core.dirformat): what each
version changed, read by results/store.py when a directory is made or opened."""

from __future__ import annotations

from fslab.core.dirformat import DirFormat

FORMAT = DirFormat("results", "format.json", unstamped=0, history={
    1: "runs/<id>/run.json with measurements, metrics.parquet (columns of "
       "fslab.core.metrics.COLUMNS, including sample and note)",
    2: "one observation per fio section (a multi-section job's rows carry the workload "
       "<workload>/<section>); pairwise ratio = ratio of geometric means (log-scale model, "
       "Bonferroni); cache_bound in summary.csv; DIR/ceiling/ holds the raw-device runs",
    3: "an import keeps its files as runs: a copy of each beside its run.json (source, "
       "kind, tool, fields) under <run_id>/ in runs/import-NNNNN.zip, so `fslab reparse` "
       "parses them again; runs.csv is no longer written (format 2 imports are still read "
       "through it); run.json is one typed record (core/record.RunRecord)",
    4: "an aging run (fslab age) is a results directory: runs/aging/ holds the engine's raw "
       "output, its rows are per-operation latency by section of the run (note 'section') "
       "and the probes' states (note 'probe', sample = operations done); aging "
       "directories of aging format 1-2 are upgraded in place when opened (aging/legacy.py)",
    5: "a cell is fields, not a name to take apart: metrics.parquet and run.json carry "
       "target_base (the target as declared) and job (the job, /section for one section of "
       "a job file) beside target and workload (their names with the cell's levels); older "
       "directories get them read off their names once, when loaded (results/legacy_cells.py)",
    6: "a failed run has a kind, not a sentence to read: run.json and the runs table carry "
       "failure (provision, refused, no_space, unsupported, tool, timeout, error; '' for a "
       "run that measured) and tool_said (a refusing mkfs's or mount's own words, the "
       "kernel's among them); run.json carries steps, the seconds of each step of the run "
       "(core/stopwatch.py); older directories get the kinds read off their reasons once, "
       "when loaded (results/legacy_failures.py)",
})
