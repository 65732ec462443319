"""The stored results directories of tests/fixtures/pairs (made by its make_fixtures.py
before the pair record, issue 54) analysed again: every table a pair reaches —
pairwise.csv, tests, ranking, headline, best, effects, the verdicts and `fslab compare` —
has the columns it had (more allowed) and the same values. pairwise.csv's columns are a
contract with users' scripts."""

from __future__ import annotations

import io
import math
import tarfile
from pathlib import Path

import pandas as pd
import pytest

from fslab import api
from tests.conftest import FIXTURES
from tests.floats import same_bits

STORED = FIXTURES / "pairs"
CAMPAIGNS = ("plain", "resolving", "sweep", "import")


def unpacked(tmp_path: Path, name: str) -> Path:
    with tarfile.open(STORED / f"{name}.tar.gz") as tar:
        tar.extractall(tmp_path, filter="data")
    return tmp_path / name


def same_table(stored: pd.DataFrame, found: pd.DataFrame, what: str) -> None:
    """`found` has every column of `stored` (more allowed), the same rows, the same
    values (numbers to 1e-9 relative, NaN as NaN)."""
    missing = [c for c in stored.columns if c not in found.columns]
    assert not missing, f"{what}: columns gone: {missing}"
    assert len(found) == len(stored), what
    for column in stored.columns:
        for row, (old, new) in enumerate(zip(stored[column], found[column], strict=True)):
            if isinstance(old, float) and math.isnan(old):
                assert isinstance(new, float) and math.isnan(new), (what, column, row, new)
            elif isinstance(old, float) or isinstance(new, float):
                assert math.isclose(float(old), float(new), rel_tol=1e-9), (
                    what, column, row, old, new)
            else:
                assert old == new, (what, column, row, old, new)


@pytest.mark.parametrize("name", CAMPAIGNS)
def test_a_stored_campaign_analysed_again_gives_the_same_tables(tmp_path, name):
    results = unpacked(tmp_path, name)
    api.analyze(results)
    stats = results / "stats"
    kept = STORED / name
    for table in sorted(kept.glob("*.csv")):
        same_table(pd.read_csv(table), pd.read_csv(stats / table.name), f"{name}/{table.name}")
    assert (stats / "verdicts.txt").read_text() == (kept / "verdicts.txt").read_text()


def test_compare_of_two_stored_campaigns_gives_the_same_cells(tmp_path):
    base, new = unpacked(tmp_path, "plain"), unpacked(tmp_path, "resolving")
    cells, _ = api.compare(base, new, within_sitting=True)  # the stored rule: iterations
    stored = pd.read_csv(STORED / "compare.csv")
    same_table(stored, pd.read_csv(io.StringIO(cells.to_csv(index=False))),
               "compare")


def test_a_pair_reads_back_from_its_row_and_turns_around():
    """Every pair of a stored campaign's pairwise.csv: from_row(to_row) is the record
    itself; a row with a column fslab does not know and without `better` (a file of
    another fslab) still reads, its direction its metric's; seen from b and back it is
    the same pair, and its advantage is in the metric's direction."""
    from fslab.core.pair import FASTER, SLOWER, Pair, pairs_of, table_of

    stored = pd.read_csv(STORED / "plain" / "pairwise.csv")
    pairs = pairs_of(stored.assign(repeat_low=0.9))
    assert len(pairs) == len(stored) and all(p.better == "higher" for p in pairs)
    written = table_of(pairs).to_csv(index=False)
    same_table(stored, pd.read_csv(io.StringIO(written)), "round trip")
    for pair in pairs:
        assert same_bits(Pair.from_row(pair.to_row()), pair)  # a record read back
        back = pair.seen_from(pair.b).seen_from(pair.a)
        assert math.isclose(back.ratio, pair.ratio, rel_tol=1e-12) and back.decision == \
            pair.decision
    decided = next(p for p in pairs if p.decision in (FASTER, SLOWER))
    turned = decided.seen_from(decided.b)
    assert {decided.decision, turned.decision} == {FASTER, SLOWER}
    latency = Pair(a="x", b="y", metric="clat_mean_ns", better="lower", ratio=0.5,
                   ratio_ci_low=0.4, ratio_ci_high=0.625)
    assert latency.advantage == (2.0, 1.6, 2.5)  # x takes half y's time: 2× better


def test_the_analysis_carries_its_pairs_and_reads_them_back_from_pairwise_csv(tmp_path):
    """An analysis holds its pairs as records (`Analysis.pairs`); pairwise.csv is their
    table; stats/ read back gives the same records, every field (NaN as NaN)."""
    from dataclasses import fields

    from fslab.core.pair import Pair
    from fslab.results.stats_files import load_analysis
    from fslab.results.store import ResultsDir

    results = unpacked(tmp_path, "resolving")
    done = api.analysed(results)
    assert done.pairs and all(isinstance(p, Pair) for p in done.pairs)
    assert any(p.primary and p.decision for p in done.pairs)
    written = (results / "stats" / "pairwise.csv").read_text()
    assert done.pairwise.to_csv(index=False) == written
    back = load_analysis(ResultsDir.open(results))
    assert back is not None and len(back.pairs) == len(done.pairs)
    for made, read in zip(done.pairs, back.pairs, strict=True):
        for field in fields(Pair):
            old, new = getattr(made, field.name), getattr(read, field.name)
            if isinstance(old, float) and math.isnan(old):
                assert math.isnan(new), field.name
            elif isinstance(old, float):
                assert math.isclose(old, new, rel_tol=1e-12), (field.name, old, new)
            else:
                assert old == new, (field.name, old, new)
