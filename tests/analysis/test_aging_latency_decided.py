"""The thesis's comparisons decided (stats/aging_latency.csv), on simulated agings with
known ratios: each aging's median latency per operation is the truth of its cell (file
system × level of age × fstrim) times a factor every aging of its iteration shares (the
machine's drift, which a pair cancels) and one of its own. The table's intervals cover
the truth all at once in ≥ 90 % of campaigns (the claim: 95 %;
benchmarks/aging_latency_coverage runs 400), and its words follow the truth: a real
1.3× is 'slower', never 'faster'; a real 1.0× at this precision 'equivalent'."""

from __future__ import annotations

import math

import numpy as np

from fslab.analysis.factors.aging_latency import FILE_SYSTEM, latency_table
from fslab.analysis.statistic import Measured
from fslab.core.record import RunRecord
from fslab.core.run_parts import WorkloadMetadata

OPS = ("read", "create", "delete", "append")
# The truth, a/b of the median latency: ext4 against xfs, thesis-99 against thesis-80,
# untrimmed (fstrim=0) against trimmed, per operation (1: no difference).
TRUTH = {FILE_SYSTEM: {"delete": 1.3}, "age": {"create": 1.25}, "fstrim": {"append": 1.2}}
SETTINGS = {"margin": 0.1, "sweep": {"age": ["fresh", "thesis-80", "thesis-99"],
                                     "fstrim": ["1", "0"]},
            "factors": {"age": "target", "fstrim": "target"}}


def log_truth(fs: str, level: str, trim: str, op: str) -> float:
    return (math.log(TRUTH[FILE_SYSTEM].get(op, 1.0)) * (fs == "ext4")
            + math.log(TRUTH["age"].get(op, 1.0)) * (level == "thesis-99")
            + math.log(TRUTH["fstrim"].get(op, 1.0)) * (trim == "0"))


def simulated(seed: int, iterations: int = 8, drift: float = 0.2,
              own: float = 0.02) -> list[RunRecord]:
    """The records of one campaign's agings (the run each aged place was made for)."""
    rng = np.random.default_rng(seed)
    records = []
    for iteration in range(1, iterations + 1):
        shared = rng.normal(0, drift)
        for fs in ("ext4", "xfs"):
            for level in ("thesis-80", "thesis-99"):
                for trim in ("1", "0"):
                    medians = {op: [1e5 * math.exp(log_truth(fs, level, trim, op) + shared
                                                   + rng.normal(0, own)), 1000]
                               for op in OPS}
                    name = f"{fs} age={level} fstrim={trim}"
                    records.append(RunRecord(
                        run_id=f"i{iteration:03d}-{name}", target=name, target_base=fs,
                        iteration=iteration, levels={"age": level, "fstrim": trim},
                        workload_metadata=WorkloadMetadata(more={"aging": {
                            "medians": medians, "latency": {}}})))
    return records


def table_of(seed: int, **kwargs: float):
    import pandas as pd

    return latency_table(Measured(pd.DataFrame(), pd.DataFrame(), SETTINGS,
                                  tuple(simulated(seed, **kwargs))))


def truth_of(row) -> float:
    return TRUTH[row.comparison].get(row.op, 1.0)


def test_the_comparisons_are_the_theses_and_each_is_a_pair_of_agings():
    table = table_of(0)
    assert len(table) == 3 * 4 * len(OPS) and set(table["family"]) == {48}
    assert set(table["n"]) == {8}
    fs = table[(table["comparison"] == FILE_SYSTEM) & (table["op"] == "delete")]
    assert set(fs["a"]) == {"ext4"} and set(fs["b"]) == {"xfs"}
    assert set(fs["at"]) == {"age=thesis-80 fstrim=1", "age=thesis-80 fstrim=0",
                             "age=thesis-99 fstrim=1", "age=thesis-99 fstrim=0"}
    ages = table[table["comparison"] == "age"]
    assert set(zip(ages["a"], ages["b"], strict=True)) == {("thesis-99", "thesis-80")}
    trims = table[table["comparison"] == "fstrim"]
    assert set(zip(trims["a"], trims["b"], strict=True)) == {("0", "1")}  # off over on
    row = fs.iloc[0]
    assert row["thesis_table"] == "7.2 (SSD)" and abs(row["thesis_ratio"] - 0.049 / 0.097) < 1e-9
    assert row["detail"].startswith(f"delete, ext4 against xfs at {row['at']}: ")


def test_the_intervals_cover_the_truth_and_the_words_follow_it():
    campaigns, all_covered = 40, 0
    words: dict[float, list[str]] = {1.0: [], 1.2: [], 1.25: [], 1.3: []}
    for seed in range(campaigns):
        table = table_of(seed)
        covered = [row.ratio_ci_low <= truth_of(row) <= row.ratio_ci_high
                   for row in table.itertuples()]
        all_covered += all(covered)
        for row in table.itertuples():
            words[truth_of(row)].append(row.decision)
    assert all_covered >= 0.9 * campaigns
    for truth in (1.2, 1.25, 1.3):  # a's latency higher: slower, never faster
        assert "faster" not in words[truth] and "equivalent" not in words[truth]
        assert words[truth].count("slower") >= 0.8 * len(words[truth])
    same = words[1.0]  # a false faster or slower: within the family's 5 %
    assert same.count("faster") + same.count("slower") <= 0.05 * len(same)
    assert same.count("equivalent") >= 0.8 * len(same)


def test_one_aging_per_cell_has_no_interval_and_says_so():
    table = table_of(1, iterations=1)
    assert set(table["decision"]) == {"unresolved"} and set(table["n"]) == {1}
    assert table["ratio_ci_low"].isna().all() and (table["note"] != "").all()


def test_an_aging_short_of_its_level_is_left_out():
    import pandas as pd

    records = simulated(2, iterations=4)
    short = next(r for r in records if r.iteration == 3 and r.target_base == "ext4")
    short.workload_metadata.more["aging"]["short"] = "out of space"
    table = latency_table(Measured(pd.DataFrame(), pd.DataFrame(), SETTINGS, tuple(records)))
    cell = dict(short.levels)
    rows = table[(table["comparison"] == FILE_SYSTEM)
                 & (table["at"] == f"age={cell['age']} fstrim={cell['fstrim']}")]
    assert set(rows["n"]) == {3} and set(table["n"]) == {3, 4}
