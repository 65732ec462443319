"""Post-hoc all-pairs p-values (Tukey HSD, Games–Howell, Dunn) and Welch's ANOVA.

Written out rather than taken from scikit-posthocs and statsmodels, which give the same
numbers (tests check it) but cost 2-3 s to import (matplotlib, patsy) and, through
scipy's adaptive studentized-range integral, ~20 ms per pair: an `fslab analyze` of ten
file systems would spend most of its time there. Formulas:
- Tukey HSD (Tukey–Kramer for unequal n): q = |m_i − m_j| / sqrt(MSE/2 · (1/n_i + 1/n_j)),
  studentized range with k groups and N − k df;
- Games–Howell (Games & Howell 1976): q = √2 |m_i − m_j| / sqrt(s_i²/n_i + s_j²/n_j),
  studentized range with k groups and Welch–Satterthwaite df;
- Dunn (1964) with the tie correction of Glantz (2012): z from mean ranks, two-sided
  normal p, then Holm;
- Welch (1951) ANOVA for unequal variances; Student's and Welch's two-sample t-tests.
"""

from __future__ import annotations

from itertools import combinations

import numpy as np
from scipy.special import fdtrc, ndtr, stdtr

from fslab.analysis.classic import rankdata
from fslab.analysis.qdist import studentized_range_sf

Pairs = dict[tuple[str, str], float]


def tukey_hsd(data: dict[str, np.ndarray], names: list[str]) -> Pairs:
    """Tukey–Kramer adjusted p for every pair."""
    samples = [data[name] for name in names]
    n = np.array([len(v) for v in samples], dtype=float)
    means = np.array([v.mean() for v in samples])
    dof = n.sum() - len(samples)
    mse = sum(((v - v.mean()) ** 2).sum() for v in samples) / dof
    out: Pairs = {}
    for (i, a), (j, b) in combinations(enumerate(names), 2):
        se = np.sqrt(mse / 2 * (1 / n[i] + 1 / n[j]))
        if not se:  # every group constant: equal means or certainly different ones
            out[(a, b)] = 1.0 if means[i] == means[j] else 0.0
            continue
        q = abs(means[i] - means[j]) / se
        out[(a, b)] = float(studentized_range_sf(q, len(names), dof))
    return out


def games_howell(data: dict[str, np.ndarray], names: list[str]) -> Pairs:
    """Games–Howell adjusted p for every pair."""
    out: Pairs = {}
    for a, b in combinations(names, 2):
        x, y = data[a], data[b]
        vx, vy = x.var(ddof=1) / len(x), y.var(ddof=1) / len(y)
        se = np.sqrt(vx + vy)
        if not se:
            out[(a, b)] = 1.0 if x.mean() == y.mean() else 0.0
            continue
        dof = (vx + vy) ** 2 / (vx**2 / (len(x) - 1) + vy**2 / (len(y) - 1))
        q = np.sqrt(2.0) * abs(x.mean() - y.mean()) / se
        out[(a, b)] = float(studentized_range_sf(q, len(names), dof))
    return out


def dunn(data: dict[str, np.ndarray], names: list[str]) -> Pairs:
    """Dunn's test, Holm-adjusted over the pairs."""
    values = np.concatenate([data[name] for name in names])
    ranks, ties = rankdata(values)
    total = len(values)
    tie_term = (ties**3 - ties).sum() / (12.0 * (total - 1))
    bounds = np.cumsum([0] + [len(data[name]) for name in names])
    mean_rank = {name: ranks[bounds[i]:bounds[i + 1]].mean() for i, name in enumerate(names)}
    keys = list(combinations(names, 2))
    raw = []
    for a, b in keys:
        spread = (total * (total + 1) / 12.0 - tie_term) * (1 / len(data[a]) + 1 / len(data[b]))
        z = abs(mean_rank[a] - mean_rank[b]) / np.sqrt(spread) if spread > 0 else 0.0
        raw.append(float(2.0 * ndtr(-z)))
    return dict(zip(keys, holm(raw), strict=True))


def holm(p_values: list[float]) -> list[float]:
    """Holm–Bonferroni step-down adjusted p-values (Holm 1979)."""
    order = np.argsort(p_values)
    m = len(p_values)
    adjusted = np.empty(m)
    running = 0.0
    for rank, index in enumerate(order):
        running = max(running, (m - rank) * p_values[index])
        adjusted[index] = min(1.0, running)
    return adjusted.tolist()


def t_test(a: np.ndarray, b: np.ndarray, equal_var: bool) -> float:
    """Two-sided p of Student's (pooled variance) or Welch's two-sample t-test."""
    na, nb = len(a), len(b)
    va, vb = a.var(ddof=1), b.var(ddof=1)
    if equal_var:
        dof = na + nb - 2.0
        se = np.sqrt(((na - 1) * va + (nb - 1) * vb) / dof * (1 / na + 1 / nb))
    else:
        se = np.sqrt(va / na + vb / nb)
        dof = (va / na + vb / nb) ** 2 / ((va / na) ** 2 / (na - 1) + (vb / nb) ** 2 / (nb - 1))
    if not se:
        return 1.0 if a.mean() == b.mean() else 0.0
    return float(2.0 * stdtr(dof, -abs(a.mean() - b.mean()) / se))


def welch_anova(samples: list[np.ndarray]) -> tuple[float, float]:
    """Welch's F and p for k groups with unequal variances (every variance > 0)."""
    k = len(samples)
    n = np.array([len(v) for v in samples], dtype=float)
    means = np.array([v.mean() for v in samples])
    weights = n / np.array([v.var(ddof=1) for v in samples])
    grand = (weights * means).sum() / weights.sum()
    between = (weights * (means - grand) ** 2).sum() / (k - 1)
    tmp = ((1 - weights / weights.sum()) ** 2 / (n - 1)).sum()
    statistic = between / (1 + 2 * (k - 2) / (k**2 - 1) * tmp)
    df2 = (k**2 - 1) / (3 * tmp)
    return float(statistic), float(fdtrc(k - 1, df2, statistic))
