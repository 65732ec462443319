"""A campaign as its results directory recorded it: campaign.toml (written by
plan.schema.Campaign.to_dict), read back typed, each value parsed once, for the stages
below the plan that read it — the analysis, the report, compare, the history. Every
resolved campaign.toml reads; one of an older fslab, an import's (none) or an aging run's
gets the defaults for what it lacks. The whole table stays beside the values (`table`)
for the readers of their own: a statistic plug-in (analysis.statistic.Measured.settings),
the history's signatures, an aging run's own settings.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from fslab.core.cell_keys import declared_levels
from fslab.core.units import DEFAULT_MARGIN, parse_margin


class LookCell(NamedTuple):
    """A cell a round of --resolve measures: up to which iteration, at what run length
    (seconds; 0: the campaign's runtime) and with what weight its iterations enter the
    pairs' estimates (a run's precision relative to the campaign's own runs: a longer
    run is not the same observation as a short one; run/resolve.py plans both)."""

    target: str
    workload: str
    last: int
    runtime: int = 0
    weight: float = 1.0


@dataclass(frozen=True)
class CampaignSettings:
    """What campaign.toml says that the stages after the run read (module doc)."""

    name: str = ""
    iterations: int = 0  # 0: not recorded (an import)
    runtime: int = 0  # seconds per fio job; 0: not recorded
    seed: int | None = None  # of the run order; None: not recorded
    fresh: str = ""  # a fresh file system per: iteration, run or campaign
    primary: tuple[str, ...] = ()  # the metrics the verdicts answer, in order of preference
    margin: float = DEFAULT_MARGIN  # the same within this (a fraction)
    pilot: int = 0  # an adaptive campaign's pilot iterations (left out of the estimates)
    looks: tuple[int, ...] = ()  # --resolve: the iterations at each look
    look_cells: tuple[tuple[LookCell, ...], ...] = ()  # the cells each later round measured
    scopes: dict[str, str] = field(default_factory=dict)  # [factors]: target or job
    levels: dict[str, list[str]] = field(default_factory=dict)  # each factor's, in order
    aging: dict[str, object] = field(default_factory=dict)  # an aging run's [aging] table
    studies: dict[str, str] = field(default_factory=dict)  # job -> the study of its preset
    table: dict[str, object] = field(default_factory=dict)  # campaign.toml as it is

    @classmethod
    def from_table(cls, table: Mapping[str, Any]) -> CampaignSettings:
        """The settings of a resolved campaign.toml's table."""
        resolve = table.get("resolve") or {}
        return cls(
            name=str(table.get("name", "")), iterations=int(table.get("iterations", 0) or 0),
            runtime=int(table.get("runtime", 0) or 0),
            seed=int(table["seed"]) if table.get("seed") is not None else None,
            fresh=str(table.get("fresh", "")),
            primary=tuple(str(m) for m in table.get("primary", ())),
            margin=parse_margin(table.get("margin", DEFAULT_MARGIN)),
            pilot=int(table.get("pilot", 0) or 0),
            looks=tuple(int(n) for n in resolve.get("looks", ())),
            look_cells=tuple(tuple(LookCell(str(c[0]), str(c[1]), *c[2:]) for c in cells)
                             for cells in resolve.get("cells", ())),
            scopes={str(k): str(v) for k, v in (table.get("factors") or {}).items()},
            levels=declared_levels(table), aging=dict(table.get("aging") or {}),
            studies=_studies(table.get("workload")), table=dict(table))

    @classmethod
    def read(cls, path: Path) -> CampaignSettings:
        """The settings in a campaign.toml (the defaults where there is none, or it does
        not read)."""
        import tomllib

        try:
            return cls.from_table(tomllib.loads(path.read_text()))
        except (OSError, ValueError):
            return cls()

    @property
    def weights(self) -> dict[str, dict[int, float]]:
        """{workload: {iteration: weight}} of a campaign that resolves: each later round's
        runs at the weight its plan gave them (their precision relative to the campaign's
        own runs, run/resolve.py); the campaign's own iterations weigh 1 and are left out."""
        out: dict[str, dict[int, float]] = {}
        for number, cells in enumerate(self.look_cells):
            start = self.looks[number] if number < len(self.looks) else 0
            for cell in cells:
                for iteration in range(start + 1, int(cell.last) + 1):
                    out.setdefault(cell.workload, {})[iteration] = float(cell.weight)
        return out


def _studies(entries: Any) -> dict[str, str]:
    """{job: the study its preset comes from} from a resolved campaign's [[workload]]
    tables (each names its jobs and, from a study's preset, the study)."""
    out: dict[str, str] = {}
    for entry in entries if isinstance(entries, list) else ():
        if isinstance(entry, dict) and entry.get("study"):
            out.update({str(job): str(entry["study"]) for job in entry.get("jobs") or ()})
    return out
