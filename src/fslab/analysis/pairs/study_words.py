"""How the notebook's tests and fslab's answers are set side by side in words
(analysis/pairs/study_methods.py computes the tests): fslab's answer to the same
question, whether the two agree, and — where they disagree — the reasons that apply: a
test at 0.05 per question against fslab's campaign-wide family, raw values against
ratios blocked by iteration, workloads pooled, the page cache answering buffered reads,
and the notebook's own repeated rows inflating n."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from fslab.analysis.pairs.pair import EQUIVALENT, UNRESOLVED, Pair
from fslab.core.metrics import title

ALPHA = 0.05  # the notebook's level ("p-value is less than 0.05")


def fslab_answer(pairs: Sequence[Pair], workload: str, op: str, metric: str) -> str:
    """fslab's decision on whether the targets differ on one question, in words."""
    found = [p for p in pairs if (p.workload, p.op, p.metric) == (workload, op, metric)
             and p.decision]
    if not found:
        return ""
    differ = [p for p in found if p.significant]
    if differ:
        return f"differ ({len(differ)} of {len(found)} pairs decided apart)"
    if all(p.decision == EQUIVALENT for p in found):
        return f"the same within ±{found[0].margin:.0%}"
    unresolved = sum(p.decision == UNRESOLVED for p in found)
    return f"not resolved ({unresolved} of {len(found)} pairs open)"


def pair_answer(pairs: Sequence[Pair], workload: str, op: str, metric: str, a: str,
                 b: str) -> str:
    """fslab's answer on a against b for one question ('ext4 1.3× faster', 'ext4 = btrfs',
    'ext4 ? btrfs'), '' where it has none."""
    for pair in pairs:
        if (pair.workload, pair.op, pair.metric) != (workload, op, metric) or \
                {pair.a, pair.b} != {a, b} or not pair.decision:
            continue
        seen = pair if pair.a == a else pair.turned()
        if seen.decision == EQUIVALENT:
            return f"{a} = {b}"
        if not seen.significant:
            return f"{a} ? {b}"
        winner, ratio = (a, seen.advantage[0]) if seen.advantage[0] >= 1 else \
            (b, 1 / seen.advantage[0])
        return f"{winner} {ratio:.3g}× better"
    return ""


def differ_of(answer: str) -> bool | None:
    """Whether fslab's answer says the targets differ (None: it gave none)."""
    return answer.startswith("differ") if answer else None


def differ_any(answers: list[str]) -> bool | None:
    found = [a for a in answers if a]
    return any(a.startswith("differ") for a in found) if found else None


@dataclass(frozen=True)
class Reasons:
    """What can set the notebook's test and fslab's answer apart on one question: its
    cells cache-bound (the page cache answered), workloads pooled, the notebook's own
    repeated rows (their count and the p they give), and a reason of the test's own."""

    cache_bound: str = ""
    mixed: str = ""
    n_notebook_rows: int = 0
    p_notebook_rows: float = math.nan
    own: str = ""

    def why(self, p: float, n: int, study_differs: bool, fslab_differs: bool | None) -> str:
        """The sentence: only the reasons that apply to this disagreement (and the
        notebook's own rows where they change its answer)."""
        parts = [self.own] if self.own and fslab_differs is not None \
            and study_differs != fslab_differs else []
        if fslab_differs is not None and study_differs and not fslab_differs:
            parts.append("one test at 0.05 for this question alone; fslab's pairs hold "
                         "together at 95 % over all of the campaign's (Bonferroni), so each "
                         "needs more evidence")
        if fslab_differs is not None and fslab_differs and not study_differs:
            parts.append("a test of raw values weighs each target against the spread of "
                         "all of them; fslab compares each pair of targets on the log scale "
                         "with the iteration as a block (the drift every target shared "
                         "removed)")
        if self.mixed and fslab_differs is not None and study_differs != fslab_differs:
            parts.append(self.mixed)
        if self.cache_bound and fslab_differs is not None and study_differs != fslab_differs:
            parts.append(f"buffered I/O on files that fit in RAM measures the page cache, "
                         f"not the file system ({self.cache_bound}): fslab ranks none of it")
        dup = self.p_notebook_rows
        if dup == dup and (dup < ALPHA) != (p < ALPHA):
            parts.append(f"the notebook's own table (each cell's mean and median repeated "
                         f"per iteration: {self.n_notebook_rows} rows from {n} runs) gives p "
                         f"{dup:.2g}: repeated rows inflate n")
        text = "; ".join(parts)
        return text[:1].upper() + text[1:] + "." if text else ""


def decided(test: str, base: dict[str, object], statistic: float, p: float, fslab: str,
             differ: bool | None, reasons: Reasons) -> dict[str, object]:
    """A test row that decides (anova, kruskal, wilcoxon) beside fslab's answer."""
    says = "differ" if p < ALPHA else "no difference shown"
    agree = None if differ is None else (p < ALPHA) == differ
    return {**base, "test": test, "statistic": statistic, "p": p,
            "n_notebook_rows": reasons.n_notebook_rows or None,
            "p_notebook_rows": reasons.p_notebook_rows,
            "study_says": f"{says} (p {p:.3g} at the notebook's 0.05)",
            "fslab_says": fslab or "no decision", "agree": agree,
            "why": reasons.why(p, int(str(base["n"])), p < ALPHA, differ)}


def workload_line(rows: list[dict[str, object]]) -> str:
    """The verdicts' line for one workload: the notebook's ANOVA and Kruskal–Wallis,
    whether they agree with fslab, and why not."""
    decided = {str(r["test"]): r for r in rows if r["test"] in ("anova", "kruskal")}
    parts = [f"{name} p {float(str(r['p'])):.3g}" for name, r in
             (("ANOVA", decided.get("anova")), ("Kruskal–Wallis", decided.get("kruskal")))
             if r is not None]
    checks = [str(r["study_says"]) for r in rows if r["test"] in ("shapiro", "levene")
              and float(str(r["p"])) < ALPHA]
    first = decided.get("anova") or decided.get("kruskal") or rows[0]
    agree = first.get("agree")
    verdict = ("agrees with fslab" if agree else "disagrees with fslab" if agree is False
               else "beside fslab")
    text = (f"the notebook's way (stats/study_methods.csv): {', '.join(parts)} — "
            f"{str(first['study_says']).split(' (')[0]}, {verdict} ({first['fslab_says']})")
    if checks:
        text += f"; its own checks: {', '.join(checks)}"
    if agree is False and first.get("why"):
        text += f". {first['why']}"
    return text + ("" if text.endswith(".") else ".")


def by_question(rows: list[dict[str, object]]) -> list[list[dict[str, object]]]:
    """The pooled rows of each (op, metric), in order."""
    out: dict[tuple[str, str], list[dict[str, object]]] = {}
    for row in rows:
        out.setdefault((str(row["op"]), str(row["metric"])), []).append(row)
    return list(out.values())


def pooled_line(rows: list[dict[str, object]]) -> str:
    """'Pooled over 3 workloads as the notebook ran them, write bandwidth: ANOVA p 0.037,
    Kruskal–Wallis p 0.036, Wilcoxon ext4 vs btrfs p 0.0039, regression R² 0.40 (0.93 on
    logs); fslab, each workload apart: …; why they disagree.'"""
    first = rows[0]
    names = {"anova": "ANOVA", "kruskal": "Kruskal–Wallis", "wilcoxon": "Wilcoxon"}
    parts = [f"{names[str(r['test'])]}"
             f"{' ' + str(r['groups']) if r['test'] == 'wilcoxon' else ''} p "
             f"{float(str(r['p'])):.3g}" for r in rows if r["test"] in names]
    parts += [f"regression R² {float(str(r['r2'])):.2f} ({float(str(r['r2_log'])):.2f} on "
              "the log scale)" for r in rows if r["test"] == "regression"]
    workloads = len(str(first["workload"]).split(", "))
    why = next((str(r["why"]) for r in rows if r["agree"] is False and r["why"]), "")
    agree = [r["agree"] for r in rows if r["agree"] is not None]
    verdict = ("" if not agree else " — agrees with fslab" if all(agree)
               else " — disagrees with fslab")
    return (f"The notebook's pooled tests ({workloads} workloads in one, "
            f"{first['op']} {title(str(first['metric']), long=True)}): {', '.join(parts)}"
            f"{verdict}; fslab decides each workload apart: {first['fslab_says']}."
            + (f" {why}" if why else ""))
