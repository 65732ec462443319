"""What a tune leaves in its directory: stats/tune.csv, stats/tune_set.csv,
stats/tune_options.csv, stats/tuned.toml, and the lines it prints (tune/tables.py and
tune/text.py render them; this module writes)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from fslab.results.store import write_atomic
from fslab.tune import tables, text
from fslab.tune.tuner import Tuned

if TYPE_CHECKING:
    from fslab.plan.schema import Campaign

TUNE_CSV, SET_CSV, OPTIONS_CSV, TUNED_TOML = ("tune.csv", "tune_set.csv", "tune_options.csv",
                                              "tuned.toml")


def write(out: Path, campaign: Campaign, tuned: list[Tuned]) -> list[str]:
    """Write the tables and tuned.toml under out/stats; the lines to print."""
    import tomli_w

    stats = out / "stats"
    stats.mkdir(parents=True, exist_ok=True)
    write_atomic(stats / TUNE_CSV, tables.tune_table(tuned).to_csv(index=False))
    write_atomic(stats / SET_CSV, tables.set_table(tuned).to_csv(index=False))
    write_atomic(stats / OPTIONS_CSV, tables.options_table(tuned).to_csv(index=False))
    write_atomic(stats / TUNED_TOML, tomli_w.dumps(text.tuned_campaign(campaign, tuned)))
    return [line for one in tuned for line in text.lines(one, campaign)]
