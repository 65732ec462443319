"""A weighted least-squares regression tree on 0/1 features, for the drivers' forest.

The forest's trees are grown on cell aggregates: a few dozen rows of factor indicators,
weighted by run counts. scikit-learn's DecisionTreeRegressor does this too, but loading
scikit-learn takes ~1.5 s (it imports scipy.stats) and each fit ~0.6 ms of argument
checks, more than the whole analysis of 10,000 imported runs. This is CART as
scikit-learn grows it with its defaults (squared error, every feature at each split,
leaves down to one row, no depth limit): the same partitions, leaf values and impurity
decrease, except that among equally good splits it takes the first feature, where
scikit-learn draws one (so the importance of two features that split a node the same
way may be credited to the other one). A test holds the two to that.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

EPSILON = np.finfo(float).eps  # a node this pure is a leaf (as scikit-learn)


@dataclass
class RegressionTree:
    """Fit on (rows × 0/1 features, responses, weights); predict; impurity importances."""

    feature: list[int] = field(default_factory=list)  # per node; -1 for a leaf
    value: list[float] = field(default_factory=list)  # per node: weighted mean response
    right: list[int] = field(default_factory=list)  # child where the feature is 1
    left: list[int] = field(default_factory=list)  # child where it is 0
    feature_importances_: np.ndarray = field(default_factory=lambda: np.zeros(0))
    total_decrease: float = 0.0  # impurity decrease over all splits, per unit root weight

    def fit(self, x: np.ndarray, y: np.ndarray, weight: np.ndarray) -> RegressionTree:
        x = np.asarray(x, dtype=float)
        y, weight = np.asarray(y, dtype=float), np.asarray(weight, dtype=float)
        # Per row: 1, w, w·y, w·y². Their sums over a node's rows with a feature at 1 are
        # one product; the node's totals one sum: a split costs a handful of numpy calls.
        moments = np.stack([np.ones(len(y)), weight, weight * y, weight * y * y])
        importances = np.zeros(x.shape[1])
        pending = [(np.arange(len(y)), -1, False)]  # rows, parent, on the parent's 1 side
        while pending:
            rows, parent, on = pending.pop()
            node = len(self.feature)
            if parent >= 0:
                (self.right if on else self.left)[parent] = node
            part = moments[:, rows]
            count, total_w, total_s, total_q = part.sum(axis=1)
            mean = total_s / total_w
            impurity = total_q / total_w - mean * mean
            self.feature.append(-1)
            self.value.append(float(mean))
            self.left.append(-1)
            self.right.append(-1)
            if count < 2 or impurity <= EPSILON:
                continue
            xr = x[rows]
            ones, w1, s1, q1 = part @ xr
            w0, s0 = total_w - w1, total_s - s1
            valid = (ones > 0) & (ones < count)  # both sides keep a row
            if not valid.any():
                continue
            proxy = np.full(len(valid), -np.inf)
            proxy[valid] = (s1[valid] ** 2 / w1[valid] + s0[valid] ** 2 / w0[valid])
            best = int(np.argmax(proxy))
            w_on, w_off = w1[best], w0[best]
            impurity_on = q1[best] / w_on - (s1[best] / w_on) ** 2
            impurity_off = (total_q - q1[best]) / w_off - (s0[best] / w_off) ** 2
            importances[best] += (total_w * impurity - w_on * impurity_on
                                  - w_off * impurity_off)
            self.feature[node] = best
            split = xr[:, best] > 0.5
            # Depth first, the 0 side first (scikit-learn's node order; not that it matters).
            pending += [(rows[split], node, True), (rows[~split], node, False)]
        total = importances.sum()
        self.total_decrease = float(total / weight.sum())
        self.feature_importances_ = importances / total if total > 0 else importances
        return self

    def predict(self, x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=bool)
        out = np.empty(len(x))
        for i, row in enumerate(x):
            node = 0
            while self.feature[node] >= 0:
                node = self.right[node] if row[self.feature[node]] else self.left[node]
            out[i] = self.value[node]
        return out
