"""The one rule the lab uses to call two arms apart: an exact permutation test over the models, two-sided at 5 %.

Every comparison the lab words as "helped", "hurt", "agrees" or "disagrees" (a probe's pretrained encoder
against the same model from scratch, two variants' downstream accuracy, two variants' validation MLM loss,
one depth against another) comes from `test`, and from nothing else:

- **Units.** One number per model: a fine-tuned model's dev accuracy (every model scored on the same dev
  sentences, so the sentences' difficulty is common to both arms and cancels in the difference: the pairing
  over sentences), or a pretraining run's validation MLM loss (every run scored on the same held-out pairs).
  The seeds are the units, so their spread is what the test weighs: two fine-tuning seeds of one encoder
  differ by about 1.3 points on the probe (probe.json), more than the dev sentences' binomial standard error.
- **Test.** The effect is the difference of the two arms' means (``a`` minus ``b``). Its two-sided p-value is
  the share of all relabellings of the pooled models into arms of the same sizes whose difference is at least
  as large in absolute value as the observed one (ties count). Up to `EXACT_LIMIT` relabellings they are all
  enumerated; beyond, `DRAWS` seeded random relabellings estimate it ((1 + hits) / (1 + draws)).
- **Separated** when p <= `LEVEL` (5 %). The test's false-separation rate, when the two arms' models come from
  one distribution (exchangeable), is at most `LEVEL`: exactly `false_separation_rate(n_a, n_b)`, which is
  below 5 % where the counts are small (4 + 4 models: 2/70 = 2.9 %; 5 + 5: 12/252 = 4.8 %) and 0 where no
  relabelling can reach 5 % (2 + 2 runs: the smallest p is 2/6 = 0.33). tests/test_lab_separation.py measures
  it by simulation.
- **Interval.** The 95 % interval of the effect is the set of shifts d for which the same test, applied to
  ``a - d`` against ``b``, does not separate (the test inverted): it holds 0 exactly when the test does not
  separate, so the sentence never states a p-value and an interval that disagree. It is unbounded when the
  counts cannot reach the level.

What the test assumes: the models of one arm are exchangeable with the other's under "no difference". Models
fine-tuned from one pretraining run share that run; where pretraining seeds spread more than fine-tuning
seeds, permuting single models overstates the evidence (the shipped probes: the pretraining seeds of a variant
spread no more than the fine-tuning seeds, docs/lab.md). What it cannot use: per-sentence predictions
(the shipped probe file holds per-seed accuracies only; new probes save each model's dev answers,
`albert_core.lab.probe.ProbeResult.pretrained_correct`, for a test over sentences as well), and more seeds
than were run.

Sentences: `Test.phrase` gives "+2.1 points [0.4, 3.9], p = 0.02"; `Test.why_not` the reason a pair is not
separated ("p = 0.086", or why no count of these models can be).

No torch, no streamlit: numpy only.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

LEVEL = 0.05  # two-sided
EXACT_LIMIT = 20_000  # relabellings enumerated exactly up to this many (8 + 8 models: 12,870)
DRAWS = 20_000  # random relabellings beyond it
DRAW_SEED = 0
CONFIDENCE = 1 - LEVEL


@functools.lru_cache(maxsize=32)
def _relabellings(n_a: int, n_b: int) -> tuple[np.ndarray, bool]:
    """(M, exact): M[r, i] is True when pooled model i is in arm a under relabelling r; the observed labelling
    (the first n_a models in a) is row 0. All of them up to EXACT_LIMIT, else DRAWS seeded random ones."""
    n = n_a + n_b
    total = math.comb(n, n_a)
    if total <= EXACT_LIMIT:
        rows = np.zeros((total, n), dtype=bool)
        for r, chosen in enumerate(itertools.combinations(range(n), n_a)):  # (0, 1, ..., n_a - 1) first
            rows[r, list(chosen)] = True
        return rows, True
    gen = np.random.default_rng(DRAW_SEED)
    rows = np.zeros((DRAWS + 1, n), dtype=bool)
    rows[0, :n_a] = True
    for r in range(1, DRAWS + 1):
        rows[r, gen.permutation(n)[:n_a]] = True
    return rows, False


def smallest_p(n_a: int, n_b: int) -> float:
    """The smallest two-sided p-value ``n_a`` + ``n_b`` models can give (all values distinct): the observed
    labelling, and its mirror when the arms are the same size, over all relabellings."""
    rows, exact = _relabellings(n_a, n_b)
    return (2 if n_a == n_b else 1) / len(rows) if exact else 1 / len(rows)


def false_separation_rate(n_a: int, n_b: int, level: float = LEVEL) -> float:
    """The exact probability that `test` separates two arms of exchangeable models with distinct values:
    the p-value of a random labelling is uniform over the attainable values (in steps of 2 / N for equal
    arms, 1 / N otherwise), so it is the largest attainable value at or below ``level``."""
    rows, exact = _relabellings(n_a, n_b)
    step = (2 if n_a == n_b else 1) / len(rows) if exact else 1 / len(rows)
    return math.floor(level / step + 1e-9) * step


@dataclass(frozen=True)
class Test:
    """The rule's answer for arms ``a`` and ``b`` (each one value per model, in the unit shown)."""

    a: tuple[float, ...]
    b: tuple[float, ...]
    effect: float  # mean(a) - mean(b)
    low: float  # the 95 % interval of the effect (-inf / inf when the counts cannot reach the level)
    high: float
    p: float  # two-sided
    relabellings: int
    exact: bool
    level: float = LEVEL

    @property
    def separated(self) -> bool:
        return self.p <= self.level

    @property
    def floor(self) -> float:
        return smallest_p(len(self.a), len(self.b))

    def winner(self, higher_is_better: bool = True) -> int:
        """1 when the test separates with ``a`` better, -1 with ``b`` better, 0 when not separated."""
        if not self.separated or self.effect == 0:
            return 0
        return 1 if (self.effect > 0) == higher_is_better else -1

    def phrase(self, unit: str = "points", digits: int = 1) -> str:
        """"+2.1 points [0.4, 3.9], p = 0.02" (the interval "unbounded" when the counts cannot reach 5 %)."""
        def num(x: float) -> str:
            return f"{x:.{digits}f}".replace("-0.0", "0.0") if round(x, digits) == 0 else f"{x:.{digits}f}"

        interval = (f"[{num(self.low)}, {num(self.high)}]"
                    if math.isfinite(self.low) and math.isfinite(self.high) else "[unbounded]")
        effect = f"{self.effect:+.{digits}f}" if round(self.effect, digits) != 0 else num(0.0)
        return f"{effect} {unit} {interval}, p = {format_p(self.p)}"

    def reach(self, what: str = "models") -> str:
        """"" when these counts can separate at the level, else why not ("2 + 2 models cannot reach 5 %: the
        smallest p they can give is 0.33")."""
        if self.floor <= self.level:
            return ""
        return (f"{len(self.a)} + {len(self.b)} {what} cannot reach {100 * self.level:g} %: the smallest p they can "
                f"give is {format_p(self.floor)}")

    def why_not(self, what: str = "models") -> str:
        """Why the pair is not separated: its p-value, and when no result of these counts could be, why."""
        reach = self.reach(what)
        return f"p = {format_p(self.p)}" + (f"; {reach}" if reach else "")


def format_p(p: float) -> str:
    """Two significant digits, trailing zero kept: 0.086, 0.20, 0.33, 0.029, 1.0."""
    if not math.isfinite(p):
        return "n/a"
    if p >= 0.995:
        return "1.0"
    digits = max(2, 1 - math.floor(math.log10(p)))
    return f"{p:.{digits}f}"


def _arms(a: Sequence[float], b: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
    xa = np.asarray([float(x) for x in a])
    xb = np.asarray([float(x) for x in b])
    if xa.size == 0 or xb.size == 0:
        raise ValueError(f"each arm needs one value or more, got {xa.size} and {xb.size}")
    if not (np.isfinite(xa).all() and np.isfinite(xb).all()):
        raise ValueError("the arms' values must be finite numbers")
    return xa, xb


def _p_function(xa: np.ndarray, xb: np.ndarray):
    """p(shift): the two-sided p-value of ``a - shift`` against ``b`` over the relabellings."""
    n_a, n_b = xa.size, xb.size
    rows, _ = _relabellings(n_a, n_b)
    pooled = np.concatenate([xa, xb])
    sums = rows @ pooled  # each relabelling's arm-a sum
    k = rows[:, :n_a].sum(axis=1)  # how many of the observed arm a's models it keeps in arm a
    total = pooled.sum()
    tol = 1e-9 * max(1.0, float(np.abs(pooled).max()))

    def p_at(shift: float) -> float:
        # arm a shifted by -shift: a relabelling's arm-a sum loses shift for each of a's models it keeps in a
        s = sums - shift * k
        t = s / n_a - (total - shift * n_a - s) / n_b
        # row 0 is the observed labelling: with random draws this is (1 + hits among the draws) / (1 + draws)
        return int(np.count_nonzero(np.abs(t) >= abs(t[0]) - tol)) / len(rows)

    return p_at


def p_value(a: Sequence[float], b: Sequence[float]) -> float:
    """The rule's two-sided p-value of arms ``a`` and ``b`` (no interval: what a simulation needs)."""
    return _p_function(*_arms(a, b))(0.0)


def test(a: Sequence[float], b: Sequence[float], *, level: float = LEVEL) -> Test:
    """`Test` of arms ``a`` and ``b`` (module docstring). Needs one value or more a side."""
    xa, xb = _arms(a, b)
    n_a, n_b = xa.size, xb.size
    rows, exact = _relabellings(n_a, n_b)
    p_at = _p_function(xa, xb)
    effect = float(xa.mean() - xb.mean())
    p = p_at(0.0)
    low, high = -math.inf, math.inf
    if smallest_p(n_a, n_b) <= level:
        # p(shift) falls monotonically away from the effect (every relabelling's difference moves at most as
        # fast as the observed one), so each bound is where it first reaches the level: bisection
        pooled = np.concatenate([xa, xb])
        spread = float(pooled.max() - pooled.min()) + abs(effect) + 1e-12
        bounds = []
        for side in (-1.0, 1.0):
            inner, outer = 0.0, spread
            for _ in range(60):
                if p_at(effect + side * outer) <= level:
                    break
                inner, outer = outer, 2 * outer
            else:  # never rejected (random draws that hold the mirror labelling more than once)
                bounds.append(side * math.inf)
                continue
            for _ in range(200):
                if outer - inner <= 1e-12 * spread:
                    break
                mid = (inner + outer) / 2
                inner, outer = (mid, outer) if p_at(effect + side * mid) > level else (inner, mid)
            bounds.append(effect + side * inner)
        low, high = bounds
    return Test(tuple(xa.tolist()), tuple(xb.tolist()), effect, low, high, p, len(rows), exact, level)
