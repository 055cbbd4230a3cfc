"""The paper beside what the lab measured, like with like, one plain sentence each.

Each experiment's comparisons are pairs of variants. The paper's side is its downstream average (Tables
3, 4 and 5: SQuAD 1.1/2.0, MNLI, SST-2, RACE, in points; Table 5 also its intrinsic accuracies) for the two
settings; ours is, in one sentence each, (1) the final validation MLM loss of the same two settings here, on
identical held-out batches, and (2) where the runs were probed (`albert_core.lab.probe`), their downstream
dev accuracy on movie-review sentences after fine-tuning (the mean over fine-tuning seeds, one value per
pretraining seed), each with its seed range (downstream, two variants whose means differ by less than one
standard error of a dev accuracy are not separated either: all are scored on the same dev sentences). Every
sentence names the quantity it compares. Only the direction
is compared (which of the two is better), never the size: the paper trains ALBERT-base for 125,000 steps at
batch 4,096, the lab trains a 64-wide model for minutes.

Verdicts: **agrees** (our seed ranges are apart, in the paper's direction), **disagrees** (apart, the
other way), **not separated yet** (our ranges overlap, or fewer than two seeds a side). Where the paper's
two settings are within `PAPER_TIE` points of each other it found no clear difference: then ours
separated either way is reported as "separated here; the paper found no clear difference".
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from albert_core.lab.baselines import order_verdict
from albert_core.paper import PAPER_TABLE3_AVG, PAPER_TABLE4_AVG, PAPER_TABLE5_AVG

if TYPE_CHECKING:
    import pandas as pd

    from albert_core.lab.outcome import RunResult

PAPER_TIE = 0.5  # points of the paper's average below which it found no clear difference
MIN_SEEDS = 2  # a seed range needs two seeds or more a side
NEEDS_SEEDS = f"needs {MIN_SEEDS} seeds or more a side"
OVERLAP = "the seed ranges overlap"


def not_separated(seeds_a: int, seeds_b: int) -> str:
    """Why two variants with ``seeds_a`` and ``seeds_b`` seeds are not separated (yet): the one reason every
    place gives for a pair (these findings, the curves' note, the experiments' separation caption)."""
    return NEEDS_SEEDS if min(seeds_a, seeds_b) < MIN_SEEDS else OVERLAP


@dataclass(frozen=True)
class Finding:
    """One comparison: ``a`` against ``b`` (variant labels here), the paper's settings and values."""

    question: str
    paper: str  # the paper's two values, in words
    measured: str  # ours, in words (seed ranges)
    verdict: str  # "agrees", "disagrees", "not separated yet", "separated here; ..." or "not learned ..."

    def sentence(self) -> str:
        return (f"{self.question} Paper: {self.paper}. Here: {self.measured}. "
                f"**{self.verdict[:1].upper()}{self.verdict[1:]}.**")


def _finals(results: Sequence[RunResult], label: str, column: str = "val_mlm_loss") -> list[float]:
    return [float(r.final.get(column, math.nan)) for r in results if r.spec.label == label]


def _range(values: Sequence[float], digits: int = 3, unit: str = "") -> str:
    if not values:
        return "no runs"
    lo, hi = min(values), max(values)
    seeds = f"{len(values)} seed{'s' if len(values) > 1 else ''}"
    if len(values) == 1 or round(lo, digits) == round(hi, digits):
        return f"{lo:.{digits}f}{unit} ({seeds})"
    return f"{lo:.{digits}f}-{hi:.{digits}f}{unit} ({seeds})"


def _probe_means(results: Sequence[RunResult], label: str) -> list[float]:
    """One downstream accuracy per probed run of ``label`` (in points): the mean over its fine-tuning seeds."""
    return [100 * r.probe.pretrained_mean for r in results if r.spec.label == label and r.probe is not None]


def _directions(la: Sequence[float], lb: Sequence[float], lower_is_better: bool) -> int | None:
    """1 when every value of ``la`` beats every value of ``lb``, -1 the other way, None when they overlap."""
    if max(la) < min(lb):
        return 1 if lower_is_better else -1
    if max(lb) < min(la):
        return -1 if lower_is_better else 1
    return None


def _verdict(ours: int, a: str, b: str, paper_a: float, paper_b: float) -> str:
    if abs(paper_a - paper_b) < PAPER_TIE:
        return f"separated here ({a if ours == 1 else b} better); the paper found no clear difference"
    theirs = 1 if paper_a > paper_b else -1
    return "agrees with the paper" if ours == theirs else "disagrees with the paper"


def compare_losses(results: Sequence[RunResult], a: str, b: str, paper_a: float, paper_b: float, *, question: str,
                   paper_names: tuple[str, str]) -> Finding:
    """Is ``a`` better than ``b`` (lower validation MLM loss), as the paper's ``paper_a`` > ``paper_b``?"""
    la, lb = _finals(results, a), _finals(results, b)
    paper = f"downstream average {paper_names[0]} {paper_a:.1f} vs {paper_names[1]} {paper_b:.1f} points"
    measured = f"validation MLM loss {a} {_range(la)} vs {b} {_range(lb)} nats"
    if min(len(la), len(lb)) < MIN_SEEDS:
        return Finding(question, paper, measured, f"not separated yet ({not_separated(len(la), len(lb))})")
    ours = _directions(la, lb, lower_is_better=True)
    if ours is None:
        return Finding(question, paper, measured, f"not separated yet ({not_separated(len(la), len(lb))})")
    return Finding(question, paper, measured, _verdict(ours, a, b, paper_a, paper_b))


def compare_probes(results: Sequence[RunResult], a: str, b: str, paper_a: float, paper_b: float, *, question: str,
                   paper_names: tuple[str, str]) -> Finding | None:
    """Is ``a`` better than ``b`` downstream (higher movie-review dev accuracy after fine-tuning), as the paper's
    ``paper_a`` > ``paper_b``? None when neither variant was probed."""
    la, lb = _probe_means(results, a), _probe_means(results, b)
    if not la and not lb:
        return None
    paper = f"downstream average {paper_names[0]} {paper_a:.1f} vs {paper_names[1]} {paper_b:.1f} points"
    probed = [r.probe for r in results if r.probe is not None and r.spec.label in (a, b)]
    baselines = (f"; bag-of-words {100 * probed[0].bag_of_words:.1f} %, majority class "
                 f"{100 * probed[0].majority:.1f} %") if probed else ""
    measured = (f"movie-review dev accuracy after fine-tuning {a} {_range(la, 1, ' %')} vs {b} "
                f"{_range(lb, 1, ' %')}{baselines}")
    if min(len(la), len(lb)) < MIN_SEEDS:
        return Finding(question, paper, measured, f"not separated yet ({not_separated(len(la), len(lb))})")
    ours = _directions(la, lb, lower_is_better=False)
    if ours is None:
        return Finding(question, paper, measured, f"not separated yet ({not_separated(len(la), len(lb))})")
    # every model is scored on the same dev sentences: a gap under one standard error of a dev accuracy is within
    # what another sample of sentences could reverse (the probe's own rule, `ProbeResult.verdict`)
    from albert_core.lab.probe import dev_standard_error  # (probe imports torch; findings need not)

    gap = abs(sum(la) / len(la) - sum(lb) / len(lb))
    se = 100 * dev_standard_error(min(sum(la) / len(la), sum(lb) / len(lb)) / 100, probed[0].dev_sentences)
    if gap < se:
        return Finding(question, paper, measured,
                       f"not separated yet (the means differ by {gap:.1f} points, under one standard error of the "
                       f"dev sentences, {se:.1f})")
    return Finding(question, paper, measured, _verdict(ours, a, b, paper_a, paper_b))


def _both(results: Sequence[RunResult], a: str, b: str, paper_a: float, paper_b: float, *, question: str,
          paper_names: tuple[str, str]) -> list[Finding]:
    """The pair on validation MLM loss, and downstream when probed."""
    out = [compare_losses(results, a, b, paper_a, paper_b, question=question, paper_names=paper_names)]
    probed = compare_probes(results, a, b, paper_a, paper_b, question=question, paper_names=paper_names)
    return out + ([probed] if probed is not None else [])


def table3(results: Sequence[RunResult]) -> list[Finding]:
    """E = H against E = H/4, not-shared and all-shared (the paper's E = 768 against E = 256: the same
    ratios of E to H)."""
    out = []
    for sharing, word in (("none", "not shared"), ("all", "all-shared")):
        mine = sorted({(r.spec.config.embedding_size, r.spec.label)
                       for r in results if r.spec.config.sharing == sharing})
        if not mine:
            continue
        (e_lo, small), (e_hi, large) = mine[0], mine[-1]
        if e_lo == e_hi:
            continue
        out += _both(
            results, large, small, PAPER_TABLE3_AVG[(sharing, 768)], PAPER_TABLE3_AVG[(sharing, 256)],
            question=f"{word.capitalize()}: is E = H better than E = H/4?", paper_names=("E 768", "E 256"),
        )
    return out


def table4(results: Sequence[RunResult]) -> list[Finding]:
    """The sharing modes at a factorized E (the paper's E = 128 row)."""
    by_mode = {r.spec.config.sharing: r.spec.label for r in results}
    pairs = [("none", "all", "Does sharing every layer's weights cost accuracy?"),
             ("attention", "ffn", "Does sharing the FFN cost more than sharing attention?"),
             ("none", "attention", "Does sharing only attention cost accuracy?")]
    names = {"none": "not shared", "all": "all-shared", "attention": "shared attention", "ffn": "shared FFN"}
    out = []
    for a, b, question in pairs:
        if a in by_mode and b in by_mode:
            out += _both(results, by_mode[a], by_mode[b], PAPER_TABLE4_AVG[(128, a)], PAPER_TABLE4_AVG[(128, b)],
                         question=question, paper_names=(names[a], names[b]))
    return out


def table5(results: Sequence[RunResult]) -> list[Finding]:
    """Whether each sentence task was learned at all (the paper: NSP 90.5 %, SOP 86.5 % on their own task;
    SOP-trained 78.9 % on NSP, NSP-trained 52.0 % on SOP), from the runs' own held-out accuracy and share of
    "1" answers."""
    paper = {"nsp": "90.5 % on NSP pairs", "sop": "86.5 % on SOP pairs"}
    out = []
    for task in ("nsp", "sop"):
        runs = [r for r in results if r.spec.task == task]
        if not runs:
            continue
        acc = [float(r.final.get("val_order_acc", math.nan)) for r in runs]
        ones = [float(r.final.get("val_order_ones", math.nan)) for r in runs]
        verdicts = [order_verdict(a, o) for a, o in zip(acc, ones, strict=True)]
        learned = sum(v == "learned" for v in verdicts)
        measured = (f"{_range([100 * a for a in acc], 1, ' %')} on balanced held-out pairs (a constant answer "
                    f"scores 50 %), \"1\" answered {_range([100 * o for o in ones], 0, ' %')} of the time")
        verdict = ("learned in every seed" if learned == len(runs) else
                   "not learned yet" if learned == 0 else f"learned in {learned} of {len(runs)} seeds")
        out.append(Finding(f"Is {task.upper()} learned by a model trained on it?", paper[task], measured, verdict))
    by_task = {r.spec.task: r.spec.label for r in results}
    names = {"none": "MLM only", "nsp": "NSP", "sop": "SOP"}
    for a, b in (("sop", "nsp"), ("sop", "none"), ("nsp", "none")):
        if a in by_task and b in by_task:
            found = compare_probes(results, by_task[a], by_task[b], PAPER_TABLE5_AVG[a], PAPER_TABLE5_AVG[b],
                                   question=f"Does {names[a]} pretraining help downstream more than {names[b]}?",
                                   paper_names=(names[a], names[b]))
            if found is not None:
                out.append(found)
    return out


def figure2(smoothness: dict[str, Any]) -> list[Finding]:
    """Mean angle between each layer's input and output: smaller for ALBERT than for BERT, as the paper's
    plot (its Figure 1 in the ICLR 2020 version, Figure 2 in the first arXiv version)? Compared like with
    like, over layers 2 to L: there both input and output are encoder layers' outputs (after a LayerNorm).
    Layer 1's input is not: BERT's normalised embeddings, ALBERT's unnormalised E -> H projection."""
    bert = next((k for k in smoothness if k.startswith("BERT")), None)
    albert = next((k for k in smoothness if k.startswith("ALBERT")), None)
    if bert is None or albert is None:
        return []
    deep_b = smoothness[bert][smoothness[bert]["layer"] >= 2]
    deep_a = smoothness[albert][smoothness[albert]["layer"] >= 2]
    if deep_a.empty or deep_b.empty:
        return []
    b, a = float(deep_b["angle_degrees"].mean()), float(deep_a["angle_degrees"].mean())
    first_b = float(smoothness[bert]["angle_degrees"].iloc[0])
    first_a = float(smoothness[albert]["angle_degrees"].iloc[0])
    verdict = "agrees with the paper" if a < b else "disagrees with the paper"
    return [Finding("Do shared layers change the hidden state less from layer to layer?",
                    "ALBERT-large's transitions much smoother than BERT-large's (smaller L2 distance and angle)",
                    f"mean angle of layers 2-{int(smoothness[albert]['layer'].max())} {albert} {a:.1f} degrees vs "
                    f"{bert} {b:.1f} degrees (layer 1, whose input differs: {first_a:.1f} vs {first_b:.1f}; mean "
                    "over the seeds)", verdict)]


def depth(table: pd.DataFrame, results: Sequence[RunResult], downstream: pd.DataFrame | None = None) -> list[Finding]:
    """The depth dial in words: the shared layer run at L/2, L and 2L (not in the paper); with ``downstream``
    (depth, seed, downstream, scratch) the same depths fine-tuned on the downstream probe."""
    if table is None or not len(table):
        return []
    trained = int(table["trained_depth"].iloc[0])
    losses = {int(d): float(v) for d, v in zip(table["depth"], table["val_mlm_loss"], strict=True)}
    base = results[0].baselines if results else None
    parts = [f"L={d}: {v:.3f}" for d, v in losses.items()]
    best = min(losses, key=losses.get)
    verdict = (f"the trained depth (L={trained}) is best" if best == trained else
               f"L={best} beats the trained depth (L={trained})")
    if base is not None:
        above = [d for d, v in losses.items() if v >= base.frequency_loss]
        if above:
            verdict += "; at " + ", ".join(f"L={d}" for d in above) + " it is no better than the frequency-only model"
    out = [Finding("Does one shared layer still work when run fewer or more times than it was trained?",
                   "not in the paper (each depth is trained separately there)",
                   "validation MLM loss " + ", ".join(parts) + " nats (mean over seeds)", verdict)]
    if downstream is not None and len(downstream):
        means = downstream.groupby("depth")[["downstream", "scratch"]].mean()
        lows = downstream.groupby("depth")["downstream"].min()
        highs = downstream.groupby("depth")["downstream"].max()
        parts = [f"L={d}: {100 * means.loc[d, 'downstream']:.1f} % (scratch {100 * means.loc[d, 'scratch']:.1f} %)"
                 for d in means.index]
        best = int(means["downstream"].idxmax())
        apart = all(lows[best] > highs[d] for d in means.index if d != best)
        if best == trained:
            word = "the trained depth is best" if apart else "the trained depth is highest but not separated"
        else:
            word = (f"L={best} beats the trained depth (L={trained})" if apart else
                    f"L={best} is highest but not separated from the others")
        out.append(Finding("Does the unrolled shared layer keep its downstream accuracy?",
                           "not in the paper (each depth is trained separately there)",
                           "movie-review dev accuracy after fine-tuning " + ", ".join(parts)
                           + " (mean over seeds)", word))
    return out


def for_experiment(name: str, results: Sequence[RunResult], evaluation: dict[str, Any] | None = None) -> list[Finding]:
    """The findings of experiment ``name`` from its finished runs (and its stored ``evaluation``)."""
    evaluation = evaluation or {}
    if name == "table3":
        return table3(results)
    if name == "table4":
        return table4(results)
    if name == "table5":
        return table5(results)
    if name == "figure2" and "smoothness" in evaluation:
        return figure2(evaluation["smoothness"])
    if name == "depth" and "depth" in evaluation:
        return depth(evaluation["depth"], results, evaluation.get("downstream"))
    return []
