"""The between-sitting spread from both sources: what is known before (the host's history
τ̃ on its degrees of freedom, else the stated prior) and what the sittings themselves show,
combined at every k — and the two intervals read from it. Arrays in, numbers out.

The model (the normal–normal hierarchical model of meta-analysis): sitting i gives the
log ratio y_i of a question from n_i iterations,

    y_i = μ + u_i + e_i,   u_i ~ N(0, τ²) the sitting's own effect,   e_i ~ N(0, σ²/n_i),

σ² the per-iteration variance of the log ratio, pooled over the sittings (Σ d_i n_i s_i² /
Σ d_i on D = Σ d_i degrees of freedom, d_i sitting i's own): a sitting is weighted by what
it measured, w_i = 1/(τ² + σ²/n_i), never by how steady its own few iterations happened to
look (weights from each sitting's own s_i favoured the steady-looking ones: 90 % coverage
at τ = 0, docs/statistics.md; HKSJ exceeds its level when the precisions differ: Röver,
Knapp & Friede, BMC Med Res Methodol 15:99, 2015).

What is known before is a scaled inverse-χ² prior on τ², ν̃ τ̃²/τ² ~ χ²(ν̃) — the form the
host's history takes (analysis/sittings/repeat.py: τ̃ on ν̃ = 2 + the history's df), and
the stated prior τ0 = 0.05 on 2 df (repeat.PRIOR) where there is no history. The sittings'
own disagreement enters through the likelihood of τ with μ integrated out (a flat prior on
μ), and the posterior of τ is a one-dimensional integral, done on a grid in log τ as the
bayesmeta package does it (Röver, "Bayesian random-effects meta-analysis using the
bayesmeta R package", J Stat Softw 93(6), 2020; for very few studies a weakly informative
prior on τ is what makes the answer usable: Röver et al., Res Synth Methods 12:448, 2021):

    p(τ | y) ∝ p(τ) · Π (τ² + v_i)^(-1/2) · (Σ w_i)^(-1/2) · exp(−Q(τ)/2),
    Q(τ) = Σ w_i (y_i − μ̂(τ))²,   μ̂(τ) = Σ w_i y_i / Σ w_i,   v_i = σ̂²/n_i.

Given τ, μ is N(μ̂(τ), 1/Σ w_i) and the next sitting's estimate, of m iterations, is
N(μ̂(τ), τ² + σ²/m + 1/Σ w_i); σ² is itself estimated on D df, so each is a t whose df is
Welch–Satterthwaite's share of σ²'s part in its variance (a t on D at τ = 0, a normal when
τ dominates). The mean's interval and the next sitting's are the central quantiles of
these t's mixed over the posterior of τ. A sitting of agreeing sittings narrows τ's
posterior toward 0, and one that disagrees moves it up: a second sitting that agrees makes
the answer surer, one that disagrees makes it wider. With one sitting the posterior is
the prior (the repeat interval's case).

**The Q rule.** The history is borrowed only while the sittings agree with it: Cochran's
Q at τ̃, Q(τ̃) ~ χ²(k − 1) if the history is right; past its 1 − Q_LEVEL quantile the
sittings disagree beyond what τ̃ allows, and its weight falls to the stated prior's (τ̃ —
or τ0 if larger — on PRIOR_DF), so the sittings' own spread decides. Not for `compare`
(analysis/across/compare.py): there the two sittings' difference is the change being
judged, and a Q test against τ̃ is the change test itself.

**One spread for a campaign's questions** (`shared_spread`, `spread_for_job`). A sitting
moves each target's level on each workload (the simulator's `sitting`: τ = √2 S for every
pair), so the primary questions of one pool share τ, and each question's τ is read from
all of them: the likelihood of τ is the sum of the questions' own, each workload's
weighted by the independent contrasts its pairs hold over its questions (targets less
the groups they fall in: three pairs of three targets hold two, ln(a/c) = ln(a/b) +
ln(b/c); a workload's ops and metrics move together, as the history counts them,
analysis/sittings/repeat.py). Two sittings of nine questions then say as much of τ as
six pairs of sittings, not one: without it two sittings that agree could not show that
they agree, and a second sitting left fslab less sure than the first (issue 58: 5 of 9
decided against the first sitting's 6, the next sitting's interval ×/÷1.5 where the
sittings moved 1–7 %). It assumes the workloads share τ, which the host's history does
not (repeat.for_workload): each workload is tested against the others' τ (its own left
out; Cochran's Q of its questions, weighted as the likelihood is, on (k − 1) df per
contrast: `disagreement_p`), and one whose questions disagree beyond it at the Q_LEVEL
reads its own questions alone while the others leave it out. A question whose own
sittings disagree beyond the shared τ (its Q at the posterior median) reads its own
likelihood. Both tests have little power at two or three sittings — a workload apart is
caught in about half the pools at two sittings — so the shared τ can sit below a noisy
workload's or target's: benchmarks/pool_shared gives the coverage that costs, per
scenario and for the noisier questions alone (docs/statistics.md).
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import special

from fslab.analysis.sittings.repeat import PRIOR, PRIOR_DF, PRIOR_TAU
from fslab.core.environment_record import SittingSpread

# The Q test's level: below it the sittings are taken to disagree with the history
# (benchmarks/pool_spread, 400 replicates: with τ twice the history's, the mean's interval
# covered 89.8 % at two sittings and 93.2 % at six with the rule, 86.2 % and 89.0 % with
# the history always borrowed; where the history is right a drop costs width, not
# coverage: 95.8–97.8 % either way).
Q_LEVEL = 0.10
# The grid of τ (log ratio): from far below any spread a host has shown to far above.
GRID = np.geomspace(1e-5, 5.0, 480)
HISTORY, STATED, NOT_BORROWED = "history", "stated prior", "stated prior: history not borrowed"


@dataclass(frozen=True, eq=False)
class SharedSpread:
    """What a pool's questions together say of τ (module doc): the log-likelihood of τ on
    GRID summed over them and weighted by `contrasts / questions`."""

    log_likelihood: np.ndarray
    questions: int  # the questions it sums
    contrasts: float  # the independent contrasts they hold


@dataclass(frozen=True)
class SittingEstimate:
    """One sitting's answer to a question: its log ratio, standard error, the iterations
    it rests on and that standard error's degrees of freedom."""

    estimate: float
    se: float
    iterations: int
    df: float


@dataclass(frozen=True, eq=False)
class Between:
    """k sittings of one question with the between-sitting spread from both sources
    (module doc): the posterior of τ on GRID and, per τ, the mean's and the variance of
    its estimate. Its methods give the intervals; fields say what it rests on."""

    k: int
    estimate: float  # μ̂: the posterior mean of μ
    se: float  # the posterior SD of μ
    tau: float  # τ's posterior median (log scale)
    tau_high: float  # τ's 95 % upper bound
    within: float  # σ̂²: the pooled per-iteration variance of the log ratio
    within_df: float  # D
    iterations: tuple[int, ...]  # n_i
    prior: SittingSpread  # what was known before, as used (tau, tau_df, sittings)
    source: str  # HISTORY, STATED or NOT_BORROWED
    history_tau: float  # τ̃ the history offered (NaN: none)
    q: float  # Cochran's Q at τ̃ (NaN: no history, or one sitting)
    q_p: float  # its p-value on k − 1 df
    weights: tuple[float, ...]  # each sitting's share of μ̂ at τ's posterior median
    shared: int  # the questions τ was read from (1: this one alone)
    shared_q_p: float  # the Q test of this question against the shared τ (NaN: not shared)
    _posterior: np.ndarray  # p(τ | y) on GRID, summing to 1
    _centres: np.ndarray  # μ̂(τ)
    _variances: np.ndarray  # Var(μ̂ | τ)
    _within: np.ndarray  # its σ² part (for the t's df)

    @property
    def borrowed(self) -> bool:
        """Whether the host's history was borrowed (not the stated prior)."""
        return self.source == HISTORY

    def mean_interval(self, level: float) -> tuple[float, float]:
        """(low, high): μ's central 1 − level interval (log scale)."""
        return self._interval(self._variances, self._within, level)

    def two_sided_p(self, value: float = 0.0) -> float:
        """Twice μ's posterior tail beyond `value` on the side it lies: with a flat prior
        on μ, the p of "μ = value" that the mean's interval inverts (it excludes `value`
        at exactly the levels above this)."""
        keep = self._posterior > 1e-12 * self._posterior.max()
        dfs = satterthwaite_df(self._variances[keep], self._within[keep], self.within_df)
        below = float((self._posterior[keep] * special.stdtr(
            dfs, (value - self._centres[keep]) / np.sqrt(self._variances[keep]))).sum()
            / self._posterior[keep].sum())
        return min(1.0, 2 * min(below, 1 - below))

    def next_interval(self, level: float, iterations: float) -> tuple[float, float]:
        """(low, high): where the next sitting's estimate, of `iterations`, should fall
        at 1 − level: variance τ² + σ²/m + Var(μ̂), mixed over τ (log scale)."""
        noise = self.within / max(iterations, 1.0)
        return self._interval(self._variances + GRID ** 2 + noise, self._within + noise,
                              level)

    def _interval(self, variances: np.ndarray, within: np.ndarray, level: float
                  ) -> tuple[float, float]:
        keep = self._posterior > 1e-12 * self._posterior.max()
        return mixture_interval(self._centres[keep], variances[keep],
                                satterthwaite_df(variances[keep], within[keep],
                                                 self.within_df),
                                self._posterior[keep], level)


def known_before(history: SittingSpread | None) -> SittingSpread:
    """The history's spread where it rests on earlier sittings, else the stated prior."""
    return history if history is not None and history.sittings > 0 else PRIOR


def pooled_within(sittings: Sequence[SittingEstimate]) -> tuple[float, float]:
    """(σ̂², D): each sitting's per-iteration variance n_i s_i² pooled by its df."""
    dfs = np.array([max(s.df, 0.0) for s in sittings])
    each = np.array([s.iterations * s.se ** 2 for s in sittings])
    if dfs.sum() <= 0:
        return float(each.mean()), 1.0
    return float((dfs * each).sum() / dfs.sum()), float(dfs.sum())


def cochran_q(estimates: np.ndarray, variances: np.ndarray) -> float:
    """Cochran's Q of these estimates about their weighted mean (weights 1/variance)."""
    w = 1.0 / variances
    centre = float((w * estimates).sum() / w.sum())
    return float((w * (estimates - centre) ** 2).sum())


def between_sittings(sittings: Sequence[SittingEstimate], history: SittingSpread | None,
                     q_rule: bool = True, shared: SharedSpread | None = None) -> Between:
    """k ≥ 1 sittings of one question and what is known before (`history`: the host's
    spread for this question, None or one of no sittings: the stated prior) → Between
    (module doc). `q_rule`: drop the history when the sittings disagree beyond it (off
    only where their disagreement is the question itself). `shared`: what the pool's
    questions together say of τ (shared_spread over the same sittings), read in place of
    this question's own unless its sittings disagree beyond it."""
    from scipy import stats  # scipy.stats: 0.5 s to import

    if not sittings:
        raise ValueError("the spread needs at least one sitting")
    y, v = _observed(sittings)
    within, within_df = pooled_within(sittings)
    known = known_before(history)
    source = HISTORY if known.sittings > 0 else STATED
    q = q_p = math.nan
    if source == HISTORY and len(y) >= 2:
        q = cochran_q(y, known.tau ** 2 + v)
        q_p = float(stats.chi2.sf(q, len(y) - 1))
        if q_rule and q_p < Q_LEVEL:
            known = SittingSpread(max(known.tau, PRIOR_TAU), PRIOR_DF, 0)
            source = NOT_BORROWED
    tau2 = GRID[:, None] ** 2
    w = 1.0 / (tau2 + v[None, :])
    total = w.sum(axis=1)
    centres = (w * y).sum(axis=1) / total
    log_prior = _log_prior(known)
    log_like = _log_likelihood(y, v)
    read_from, shared_q_p = 1, math.nan
    if shared is not None and shared.questions > 1 and len(y) >= 2:
        tau_shared = _median(_normalised(log_prior + shared.log_likelihood))
        shared_q_p = float(stats.chi2.sf(cochran_q(y, tau_shared ** 2 + v), len(y) - 1))
        if shared_q_p >= Q_LEVEL:
            log_like, read_from = shared.log_likelihood, shared.questions
    posterior = _normalised(log_prior + log_like)
    variances = 1.0 / total
    within_part = (w * w * v[None, :]).sum(axis=1) / total ** 2
    median = _median(posterior)
    high = float(GRID[min(int(np.searchsorted(np.cumsum(posterior), 0.95)), len(GRID) - 1)])
    mean = float((posterior * centres).sum())
    spread = float((posterior * (variances + centres ** 2)).sum()) - mean ** 2
    at = 1.0 / (median ** 2 + v)
    return Between(
        k=len(y), estimate=mean, se=math.sqrt(max(spread, 0.0)), tau=median, tau_high=high,
        within=within, within_df=within_df,
        iterations=tuple(int(s.iterations) for s in sittings), prior=known, source=source,
        history_tau=history.tau if history is not None and history.sittings > 0 else math.nan,
        q=q, q_p=q_p, weights=tuple(float(x) for x in at / at.sum()), shared=read_from,
        shared_q_p=shared_q_p, _posterior=posterior, _centres=centres, _variances=variances,
        _within=within_part)


Group = tuple[Sequence[Sequence[SittingEstimate]], float]  # a job's questions, contrasts


def shared_spread(groups: Sequence[Group]) -> SharedSpread:
    """What these groups of questions (each a job's: its questions over the same
    sittings and the independent contrasts they hold) together say of τ (module doc):
    each job's log-likelihoods of τ summed and weighted by its contrasts over its
    questions, the jobs' added."""
    total = np.zeros_like(GRID)
    questions, contrasts = 0, 0.0
    for group, held in groups:
        usable = [q for q in group if len(q) >= 2]
        if not usable:
            continue
        counted = min(max(held, 1.0), len(usable))
        for sittings in usable:
            total += _log_likelihood(*_observed(sittings)) * counted / len(usable)
        questions += len(usable)
        contrasts += counted
    return SharedSpread(total, questions, contrasts)


def spread_for_job(jobs: Mapping[Hashable, Group], job: Hashable) -> SharedSpread:
    """What a pool's questions say of τ as `job`'s questions read it (module doc): each
    job is tested against the τ of the others (its own left out, the stated prior before
    them); a job that disagrees beyond it reads its own questions alone, and the others
    read every job that agrees."""
    if len(jobs) < 2:
        return shared_spread(list(jobs.values()))
    apart = {name for name, (questions, contrasts) in jobs.items()
             if disagreement_p(questions, contrasts, shared_tau(shared_spread(
                 [g for other, g in jobs.items() if other != name]))) < Q_LEVEL}
    if job in apart:
        return shared_spread([jobs[job]])
    return shared_spread([g for name, g in jobs.items() if name not in apart])


def shared_tau(shared: SharedSpread, history: SittingSpread | None = None) -> float:
    """τ's posterior median from what known before (`history`, else the stated prior)
    and what the questions together say (`shared`)."""
    return _median(_normalised(_log_prior(known_before(history)) + shared.log_likelihood))


def disagreement_p(questions: Sequence[Sequence[SittingEstimate]], contrasts: float,
                   tau: float) -> float:
    """The p of Cochran's Q of these questions' sittings at `tau`, summed and weighted by
    their contrasts as shared_spread weighs them, on (k − 1) df per contrast: whether a
    group of questions (one job's) moves between sittings more than `tau` allows."""
    usable = [q for q in questions if len(q) >= 2]
    if not usable:
        return math.nan
    total = df = 0.0
    weight = min(max(contrasts, 1.0), len(usable)) / len(usable)
    for sittings in usable:
        y, v = _observed(sittings)
        total += weight * cochran_q(y, tau ** 2 + v)
        df += weight * (len(y) - 1)
    from scipy import stats  # scipy.stats: 0.5 s to import

    return float(stats.chi2.sf(total, df))


def _observed(sittings: Sequence[SittingEstimate]) -> tuple[np.ndarray, np.ndarray]:
    """(y, v): the sittings' log ratios and each one's noise variance σ̂²/n_i (module
    doc), as every reading of τ takes them."""
    y = np.array([s.estimate for s in sittings], dtype=float)
    n = np.array([max(s.iterations, 1) for s in sittings], dtype=float)
    within, _ = pooled_within(sittings)
    return y, np.maximum(within / n, 1e-24)


def _log_likelihood(y: np.ndarray, v: np.ndarray) -> np.ndarray:
    """log p(y | τ) on GRID with μ integrated out (a flat prior on μ; module doc)."""
    w = 1.0 / (GRID[:, None] ** 2 + v[None, :])
    total = w.sum(axis=1)
    centres = (w * y).sum(axis=1) / total
    q_tau = (w * (y[None, :] - centres[:, None]) ** 2).sum(axis=1)
    return 0.5 * (np.log(w).sum(axis=1) - np.log(total) - q_tau)


def _log_prior(known: SittingSpread) -> np.ndarray:
    """The scaled inverse-χ² prior of τ² (module doc), per log τ on GRID."""
    nu, scale2 = known.tau_df, known.tau ** 2
    return -nu * np.log(GRID) - nu * scale2 / (2 * GRID ** 2)


def _normalised(log_density: np.ndarray) -> np.ndarray:
    density = np.exp(log_density - log_density.max())
    return density / density.sum()


def _median(posterior: np.ndarray) -> float:
    return float(GRID[min(int(np.searchsorted(np.cumsum(posterior), 0.5)), len(GRID) - 1)])


def satterthwaite_df(variances: np.ndarray, within: np.ndarray, within_df: float
                     ) -> np.ndarray:
    """Each component's t df: its variance's share that rests on σ̂² (D df), the rest
    known given τ (Welch–Satterthwaite: D · (total / σ² part)²)."""
    share = np.maximum(within, 1e-300)
    return np.minimum(within_df * (variances / share) ** 2, 1e7)


def mixture_interval(centres: np.ndarray, variances: np.ndarray, dfs: np.ndarray,
                     weights: np.ndarray, level: float) -> tuple[float, float]:
    """The central 1 − level interval of Σ weights_j · t(dfs_j; centres_j, √variances_j)."""
    from scipy import optimize  # 0.3 s to import, for this interval alone

    scales = np.sqrt(variances)
    weights = weights / weights.sum()

    def cdf(x: float) -> float:
        return float((weights * special.stdtr(dfs, (x - centres) / scales)).sum())

    reach = float(scales.max()) * 1e3 + 1.0
    lo, hi = float(centres.min()) - reach, float(centres.max()) + reach
    low = optimize.brentq(lambda x: cdf(x) - level / 2, lo, hi, xtol=1e-12)
    high = optimize.brentq(lambda x: cdf(x) - (1 - level / 2), lo, hi, xtol=1e-12)
    return float(low), float(high)
