"""The paper beside what the lab measured, like with like, one plain sentence each.

Each experiment's comparisons are pairs of variants. The paper's side is its downstream average (Tables
3, 4 and 5: SQuAD 1.1/2.0, MNLI, SST-2, RACE, in points; Table 5 also its intrinsic accuracies) for the two
settings; ours is, in one sentence each, (1) the final validation MLM loss of the same two settings here, on
identical held-out batches (one value per pretraining run), and (2) where the runs were probed
(`albert_core.lab.probe`), their movie-review dev accuracy after fine-tuning, on the same dev sentences (one
value per fine-tuned model: pretraining runs x fine-tuning seeds), beside the probe's baselines. Every sentence
names the quantity it compares. Only the direction is compared (which of the two is better), never the size:
the paper trains ALBERT-base for 125,000 steps at batch 4,096, the lab trains a 64-wide model for minutes.

Every verdict comes from the lab's one rule (`albert_core.lab.separation`: an exact permutation test over the
models, two-sided at 5 %), and the sentence carries its difference, 95 % interval and p-value:
**agrees** (separated, in the paper's direction), **disagrees** (separated, the other way), **not separated**
(with its p-value, and why no result could be when the counts cannot reach 5 %: two pretraining runs a side
give at best p = 0.33). Where the paper's two settings are within `PAPER_TIE` points of each other it found
no clear difference: then ours separated either way is reported as "separated here; the paper found no clear
difference".
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from albert_core.lab import separation
from albert_core.lab.baselines import order_verdict
from albert_core.paper import PAPER_TABLE3_AVG, PAPER_TABLE4_AVG, PAPER_TABLE5_AVG

if TYPE_CHECKING:
    import pandas as pd

    from albert_core.lab.outcome import RunResult

PAPER_TIE = 0.5  # points of the paper's average below which it found no clear difference
# The curves' seed bands (`albert_core.lab.experiments.separation_step`, the Train page's curve notes) describe
# where the min-max ranges of two variants' curves stop overlapping; they are a picture, not the rule above.
MIN_SEEDS = 2  # a seed band needs two seeds or more a side
NEEDS_SEEDS = f"needs {MIN_SEEDS} seeds or more a side"
OVERLAP = "the seed ranges overlap"
RUNS = "pretraining runs"
MODELS = "fine-tuned models"


def not_separated(seeds_a: int, seeds_b: int) -> str:
    """Why two variants' curve bands (``seeds_a`` and ``seeds_b`` seeds) are not apart: the one reason the curves'
    note and the experiments' band caption give for a pair. Not a test: the findings' verdicts are `separation`'s."""
    return NEEDS_SEEDS if min(seeds_a, seeds_b) < MIN_SEEDS else OVERLAP


@dataclass(frozen=True)
class Finding:
    """One comparison: ``a`` against ``b`` (variant labels here), the paper's settings and values."""

    question: str
    paper: str  # the paper's two values, in words
    measured: str  # ours, in words (values, the test's difference, interval and p-value)
    verdict: str  # "agrees ...", "disagrees ...", "not separated (...)", "separated here; ..." or "not learned ..."

    def sentence(self) -> str:
        return (f"{self.question} Paper: {self.paper}. Here: {self.measured}. "
                f"**{self.verdict[:1].upper()}{self.verdict[1:]}.**")


def _finals(results: Sequence[RunResult], label: str, column: str = "val_mlm_loss") -> list[float]:
    return [v for r in results if r.spec.label == label
            if math.isfinite(v := float(r.final.get(column, math.nan)))]


def _range(values: Sequence[float], digits: int = 3, unit: str = "", what: str = "seed") -> str:
    if not values:
        return "no runs"
    lo, hi = min(values), max(values)
    count = f"{len(values)} {what}{'s' if len(values) > 1 else ''}"
    if len(values) == 1 or round(lo, digits) == round(hi, digits):
        return f"{lo:.{digits}f}{unit} ({count})"
    return f"{lo:.{digits}f}-{hi:.{digits}f}{unit} ({count})"


def probe_models(results: Sequence[RunResult], label: str) -> list[float]:
    """Every fine-tuned model of ``label``'s probed runs, in points of dev accuracy: one per pretraining run and
    fine-tuning seed (the units of the rule downstream)."""
    return [100 * x for r in results if r.spec.label == label and r.probe is not None for x in r.probe.pretrained]


def verdict(test: separation.Test, a: str, b: str, paper_a: float, paper_b: float, *, higher_is_better: bool,
            what: str) -> str:
    """The verdict of the rule's ``test`` of ``a`` against ``b`` beside the paper's ``paper_a`` and ``paper_b``
    (higher better in the paper)."""
    won = test.winner(higher_is_better)
    if won == 0:
        return f"not separated ({test.why_not(what)})"
    p = f"p = {separation.format_p(test.p)}"
    if abs(paper_a - paper_b) < PAPER_TIE:
        return f"separated here ({a if won == 1 else b} better, {p}); the paper found no clear difference"
    theirs = 1 if paper_a > paper_b else -1
    return f"agrees with the paper ({p})" if won == theirs else f"disagrees with the paper ({p})"


def _tested(la: Sequence[float], lb: Sequence[float], a: str, b: str, unit: str, digits: int,
            what: str) -> tuple[separation.Test | None, str]:
    """The rule on ``la`` against ``lb`` and its words ("; a minus b +1.2 points [...], p = ... (exact
    permutation test over the 8 fine-tuned models)"), or None when a side has no value."""
    if not la or not lb:
        return None, ""
    test = separation.test(la, lb)
    return test, (f"; {a} minus {b} {test.phrase(unit, digits)} (exact permutation test over the "
                  f"{len(la) + len(lb)} {what})")


def compare_losses(results: Sequence[RunResult], a: str, b: str, paper_a: float, paper_b: float, *, question: str,
                   paper_names: tuple[str, str]) -> Finding:
    """Is ``a`` better than ``b`` (lower validation MLM loss), as the paper's ``paper_a`` > ``paper_b``?"""
    la, lb = _finals(results, a), _finals(results, b)
    paper = f"downstream average {paper_names[0]} {paper_a:.1f} vs {paper_names[1]} {paper_b:.1f} points"
    test, words = _tested(la, lb, a, b, "nat", 3, RUNS)
    measured = f"validation MLM loss {a} {_range(la)} vs {b} {_range(lb)} nats{words}"
    if test is None:
        return Finding(question, paper, measured, "not separated (a side has no finished run)")
    return Finding(question, paper, measured,
                   verdict(test, a, b, paper_a, paper_b, higher_is_better=False, what=RUNS))


def compare_probes(results: Sequence[RunResult], a: str, b: str, paper_a: float, paper_b: float, *, question: str,
                   paper_names: tuple[str, str]) -> Finding | None:
    """Is ``a`` better than ``b`` downstream (higher movie-review dev accuracy after fine-tuning), as the paper's
    ``paper_a`` > ``paper_b``? Every fine-tuned model is a unit of the rule. None when neither was probed."""
    from albert_core.lab.probe import baselines_words  # (probe imports torch; findings need not)

    la, lb = probe_models(results, a), probe_models(results, b)
    if not la and not lb:
        return None
    paper = f"downstream average {paper_names[0]} {paper_a:.1f} vs {paper_names[1]} {paper_b:.1f} points"
    probed = [r.probe for r in results if r.probe is not None and r.spec.label in (a, b)]
    baselines = f"; {baselines_words(probed[0].bag_of_words, probed[0].majority, probed[0].dev_sentences)}"
    test, words = _tested(la, lb, a, b, "points", 1, MODELS)
    measured = (f"movie-review dev accuracy after fine-tuning {a} {_range(la, 1, ' %', 'model')} vs {b} "
                f"{_range(lb, 1, ' %', 'model')}{words}{baselines}")
    if test is None:
        return Finding(question, paper, measured, "not separated (a side was not probed)")
    return Finding(question, paper, measured,
                   verdict(test, a, b, paper_a, paper_b, higher_is_better=True, what=MODELS))


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


def figure2(smoothness: dict[str, Any], results: Sequence[RunResult] = ()) -> list[Finding]:
    """Mean angle between each layer's input and output: smaller for ALBERT than for BERT, as the paper's
    plot (its Figure 1 in the ICLR 2020 version, Figure 2 in the first arXiv version)? Compared like with
    like, over layers 2 to L: there both input and output are encoder layers' outputs (after a LayerNorm).
    Layer 1's input is not: BERT's normalised embeddings, ALBERT's unnormalised E -> H projection. The angles
    are stored as means over the seeds, so the rule cannot test them: the verdict says the direction only."""
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
    seeds = {label: sum(r.spec.label == label for r in results) for label in (albert, bert)}
    reach = ""
    if min(seeds.values()) > 0:
        floor = separation.smallest_p(seeds[albert], seeds[bert])
        reach = (f"; {seeds[albert]} + {seeds[bert]} runs could give at best p = {separation.format_p(floor)}"
                 if floor > separation.LEVEL else "")
    side = "in the paper's direction" if a < b else "against the paper's direction"
    verdict = f"{side}, not tested (the angles are stored as means over the seeds{reach})"
    return [Finding("Do shared layers change the hidden state less from layer to layer?",
                    "ALBERT-large's transitions much smoother than BERT-large's (smaller L2 distance and angle)",
                    f"mean angle of layers 2-{int(smoothness[albert]['layer'].max())} {albert} {a:.1f} degrees vs "
                    f"{bert} {b:.1f} degrees (layer 1, whose input differs: {first_a:.1f} vs {first_b:.1f}; mean "
                    "over the seeds)", verdict)]


def _best_against_others(values: dict[int, list[float]], best: int, trained: int, *, higher_is_better: bool,
                         unit: str, digits: int, what: str) -> tuple[str, str]:
    """(the tests' words, the verdict) of depth ``best`` against every other depth by the rule."""
    tests = {d: separation.test(values[best], v) for d, v in values.items() if d != best}
    words = "; ".join(f"L={best} minus L={d} {t.phrase(unit, digits)}" for d, t in tests.items())
    beaten = [d for d, t in tests.items() if t.winner(higher_is_better) == 1]
    not_apart = [d for d in tests if d not in beaten]
    best_word = "highest" if higher_is_better else "lowest"
    name = f"the trained depth (L={trained})" if best == trained else f"L={best}"
    ps = ", ".join(f"p = {separation.format_p(tests[d].p)} against L={d}" for d in tests)
    if not not_apart:
        verdict = (f"{name} is best ({ps})" if best == trained else
                   f"{name} beats the trained depth (L={trained}) and the others ({ps})")
    else:
        reach = next((t.reach(what) for t in tests.values() if t.reach(what)), "")
        verdict = (f"{name} is {best_word}, not separated from " + ", ".join(f"L={d}" for d in not_apart)
                   + f" ({ps}{'; ' + reach if reach else ''})")
    return f"; exact permutation tests over the {what}: {words}", verdict


def depth(table: pd.DataFrame, results: Sequence[RunResult], downstream: pd.DataFrame | None = None) -> list[Finding]:
    """The depth dial in words: the shared layer run at L/2, L and 2L (not in the paper); with ``downstream``
    (depth, seed, downstream, scratch and, when kept, ``models``: the fine-tuned models' accuracies) the same
    depths fine-tuned on the downstream probe. Each best depth is tested against every other by the rule."""
    if table is None or not len(table):
        return []
    trained = int(table["trained_depth"].iloc[0])
    losses = {int(d): float(v) for d, v in zip(table["depth"], table["val_mlm_loss"], strict=True)}
    base = results[0].baselines if results else None
    parts = [f"L={d}: {v:.3f}" for d, v in losses.items()]
    best = min(losses, key=losses.get)
    # the runs' losses at each depth: the table keeps the mean and the range, which are the seeds themselves
    # for one or two runs; with more the single values are not stored and the rule cannot be applied
    n = len(results)
    per_depth = None
    if n in (1, 2) and {"lo", "hi"} <= set(table.columns):
        per_depth = {int(d): ([float(lo)] if n == 1 else [float(lo), float(hi)])
                     for d, lo, hi in zip(table["depth"], table["lo"], table["hi"], strict=True)}
    if per_depth is not None:
        words, verdict = _best_against_others(per_depth, best, trained, higher_is_better=False, unit="nat",
                                              digits=3, what=RUNS)
    else:
        words = ""
        verdict = (f"the trained depth (L={trained}) has the lowest mean loss" if best == trained else
                   f"L={best} has a lower mean loss than the trained depth (L={trained})")
        verdict += " (not tested: the single runs' losses at each depth are not stored)"
    if base is not None:
        above = [d for d, v in losses.items() if v >= base.frequency_loss]
        if above:
            verdict += "; at " + ", ".join(f"L={d}" for d in above) + " it is no better than the frequency-only model"
    out = [Finding("Does one shared layer still work when run fewer or more times than it was trained?",
                   "not in the paper (each depth is trained separately there)",
                   "validation MLM loss " + ", ".join(parts) + f" nats (mean over seeds){words}", verdict)]
    if downstream is not None and len(downstream):
        means = downstream.groupby("depth")[["downstream", "scratch"]].mean()
        parts = [f"L={d}: {100 * means.loc[d, 'downstream']:.1f} % (scratch {100 * means.loc[d, 'scratch']:.1f} %)"
                 for d in means.index]
        if "models" in downstream.columns:  # every fine-tuned model, the rule's units
            units = {int(d): [100 * x for row in g["models"] for x in row] for d, g in downstream.groupby("depth")}
            what = MODELS
        else:  # one value per pretraining run: the mean over its fine-tuning seeds
            units = {int(d): [100 * x for x in g["downstream"]] for d, g in downstream.groupby("depth")}
            what = "pretraining runs (each the mean of its fine-tuning seeds)"
        top = max(units, key=lambda d: sum(units[d]) / len(units[d]))
        words, verdict = _best_against_others(units, top, trained, higher_is_better=True, unit="points", digits=1,
                                              what=what)
        out.append(Finding("Does the unrolled shared layer keep its downstream accuracy?",
                           "not in the paper (each depth is trained separately there)",
                           "movie-review dev accuracy after fine-tuning " + ", ".join(parts)
                           + f" (mean over seeds){words}", verdict))
    return out


def for_experiment(name: str, results: Sequence[RunResult], evaluation: dict[str, Any] | None = None) -> list[Finding]:
    """The findings of experiment ``name`` from its finished runs (and its stored ``evaluation``)."""
    evaluation = evaluation or {}
    if name in ("table3", "table3-v8192"):
        return table3(results)
    if name == "table4":
        return table4(results)
    if name == "table5":
        return table5(results)
    if name == "figure2" and "smoothness" in evaluation:
        return figure2(evaluation["smoothness"], results)
    if name == "depth" and "depth" in evaluation:
        return depth(evaluation["depth"], results, evaluation.get("downstream"))
    return []
