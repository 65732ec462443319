"""Decisions at looks: a campaign that measures more where a question is not resolved
(`fslab run --resolve`) decides each primary pair at the first look where its interval
excludes 1 (faster or slower) or lies inside the margin (the same), at that look's own
level; a pair decided at a look keeps that answer and interval.

Error control: look k (1, 2, …) tests at α/2^k of the campaign's α — Bonferroni across
looks as well as across the campaign's primary pairs — so the chance of any false call
over every look is at most α/2 + α/4 + … < α, however many looks are taken and however
the size of the next one was chosen from the data before it (a union bound needs no
independence between looks). The first look of such a campaign is stricter than a plain
campaign's (α/2 instead of α): the price of the option to go on. Checked by simulation
(tests/run/test_resolve.py: A/A campaigns call a difference in ≤ 5 %; a true 1.2× is never
called the same within ±10 %).
"""

from __future__ import annotations

from fslab.analysis.pairs.model import ALPHA, IMPORTED, compare
from fslab.analysis.pairs.pair import decide
from fslab.analysis.step import Step
from fslab.core.pair import UNRESOLVED, Pair

METHOD = ("Resolve (--resolve): the campaign measured more iterations only where a primary "
          "question was unresolved, deciding each pair at the first look whose interval "
          "excludes 1 or lies inside the margin; look k tests at α/2^k (Bonferroni across "
          "looks and pairs), so every look together keeps the campaign's 95 %.")


def look_alpha(look: int, alpha: float = ALPHA) -> float:
    """The campaign-wide α that look `look` (1, 2, …) spends."""
    return alpha / 2 ** look


def at_looks(groups: dict[str, dict[int, float]], looks: list[int], family: int,
             margin: float, better: str, blocked_allowed: bool = True,
             not_blocks: str = IMPORTED, weights: dict[int, float] | None = None
             ) -> dict[tuple[str, str], tuple[Pair, int]]:
    """{(a, b): (the pair as decided, the look it was decided at, 1-based)}: each pair at
    its first deciding look, an undecided one at the last look (what an unresolved one
    needs is the caller's to ask, at its next look's level)."""
    out: dict[tuple[str, str], tuple[Pair, int]] = {}
    for number, until in enumerate(looks, start=1):
        seen = {name: {i: v for i, v in values.items() if i <= until}
                for name, values in groups.items()}
        found = compare(seen, blocked_allowed, look_alpha(number), family=family,
                        not_blocks=not_blocks, weights=weights, better=better)
        if isinstance(found, str):
            continue
        for pair in found.pairs:
            key = (pair.a, pair.b)
            if key in out and out[key][0].decision != UNRESOLVED:
                continue  # decided at an earlier look: its answer stands
            out[key] = (decide(pair, margin, needs=False), number)
    return out


# A method without a table of its own: stated where the campaign resolved (its looks);
# the comparisons decide at the looks (comparisons.compared_pairs).
STEP = Step("sequential", reads=(), makes=(), method=METHOD,
            stated=lambda done: bool(done["settings"].looks))
