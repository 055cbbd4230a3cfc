"""The paper beside our runs: verdicts from seed ranges, the paper's direction, and plain words."""

from __future__ import annotations

from types import SimpleNamespace

import pandas as pd

from albert_core.lab import findings
from albert_core.lab.baselines import Baselines
from albert_core.lab.probe import ProbeResult
from albert_core.lab.spec import RunSpec
from tests.helpers.lab import TINY


def run(label: str, loss: float, sharing: str = "all", e: int = 16, task: str = "sop", acc: float = 0.5,
        ones: float = 1.0, seed: int = 0, downstream: tuple[float, ...] | None = None):
    spec = RunSpec(TINY.replace(sharing=sharing, embedding_size=e, num_hidden_groups=1), task=task, steps=4,
                   warmup=1, label=label, seed=seed)
    base = Baselines(6.0, 0.05, 5.25, 0.13, 100, 0.5, 400)
    probe = None if downstream is None else ProbeResult(downstream, (0.6, 0.61), (0, 1), 0.486, 0.78, 1694)
    return SimpleNamespace(spec=spec, final={"val_mlm_loss": loss, "val_order_acc": acc, "val_order_ones": ones},
                           baselines=base, probe=probe)


def test_sharing_costs_agree_disagree_or_not_separated_by_seed_ranges():
    results = [run("not shared", 5.60, "none", seed=0), run("not shared", 5.61, "none", seed=1),
               run("all-shared", 5.64, seed=0), run("all-shared", 5.65, seed=1),
               run("shared-attention", 5.62, "attention", seed=0), run("shared-attention", 5.66, "attention", seed=1),
               run("shared-FFN", 5.59, "ffn", seed=0), run("shared-FFN", 5.595, "ffn", seed=1)]
    by_q = {f.question: f for f in findings.table4(results)}
    # paper E 128: not shared 81.6 > all-shared 80.1; ours apart, not shared lower loss: agrees
    assert by_q["Does sharing every layer's weights cost accuracy?"].verdict == "agrees with the paper"
    # paper: shared attention 81.7 > shared FFN 80.2; ours: FFN 5.59-5.595 below attention 5.62-5.66: disagrees
    assert by_q["Does sharing the FFN cost more than sharing attention?"].verdict == "disagrees with the paper"
    # paper: not shared 81.6 vs shared attention 81.7 (a tie); ours overlap (5.60-5.61 vs 5.62-5.66 do not!)
    tie = by_q["Does sharing only attention cost accuracy?"]
    assert tie.verdict == "separated here (not shared better); the paper found no clear difference"
    assert "not shared 5.600-5.610 (2 seeds)" in tie.measured and "81.6 vs shared attention 81.7" in tie.paper


def test_one_seed_or_overlapping_ranges_are_not_separated():
    one = findings.compare_losses([run("a", 5.0), run("b", 6.0)], "a", "b", 82.0, 80.0, question="q",
                                  paper_names=("a", "b"))
    assert one.verdict == "not separated yet (needs 2 seeds or more a side)"
    overlap = findings.compare_losses([run("a", 5.0), run("a", 5.2, seed=1), run("b", 5.1), run("b", 5.3, seed=1)],
                                      "a", "b", 82.0, 80.0, question="q", paper_names=("a", "b"))
    assert overlap.verdict == "not separated yet (the seed ranges overlap)"


def test_a_constant_sentence_answer_is_reported_as_not_learned():
    results = [run("SOP", 5.6, acc=0.5, ones=1.0), run("SOP", 5.6, acc=0.61, ones=0.4, seed=1)]
    (f,) = findings.table5(results)
    assert f.verdict == "learned in 1 of 2 seeds"
    assert "50.0-61.0 % (2 seeds) on balanced held-out pairs" in f.measured
    assert '"1" answered 40-100 % (2 seeds) of the time' in f.measured


def test_depth_dial_in_words():
    table = pd.DataFrame({"depth": [2, 4, 8], "trained_depth": [4, 4, 4], "val_mlm_loss": [6.1, 5.6, 5.9]})
    (f,) = findings.depth(table, [run("x", 5.6)])
    assert f.verdict == "the trained depth (L=4) is best; at L=2 it is no better than the frequency-only model"


def test_figure2_compares_layers_two_and_deeper_like_with_like():
    bert = pd.DataFrame({"layer": [1, 2, 3], "angle_degrees": [36.0, 25.0, 21.0]})
    albert = pd.DataFrame({"layer": [1, 2, 3], "angle_degrees": [53.0, 23.0, 16.0]})  # layer 1 absorbs E -> H
    (f,) = findings.figure2({"BERT H=64": bert, "ALBERT all-shared": albert})
    assert f.verdict == "agrees with the paper"
    assert "layers 2-3 ALBERT all-shared 19.5 degrees vs BERT H=64 23.0 degrees" in f.measured
    assert "layer 1, whose input differs: 53.0 vs 36.0" in f.measured


def test_a_pair_gets_one_not_separated_reason_wherever_it_is_shown():
    """The findings' verdict and the curves' note (Train page) give one pair one reason: one seed a side, or
    two seeds a side whose ranges overlap."""
    from ui.train import runs as tr

    def history(loss: float) -> pd.DataFrame:
        return pd.DataFrame({"step": [0, 10], "val_mlm_loss": [6.0, loss]})

    cases = {  # (seeds of a, of b): final losses
        "one seed": ([5.0], [6.0]),
        "overlap": ([5.0, 5.2], [5.1, 5.3]),
    }
    for losses_a, losses_b in cases.values():
        results = ([run("a", x, seed=i) for i, x in enumerate(losses_a)]
                   + [run("b", x, seed=i) for i, x in enumerate(losses_b)])
        verdict = findings.compare_losses(results, "a", "b", 82.0, 80.0, question="q", paper_names=("a", "b")).verdict
        note = tr.separation([history(x) for x in losses_a], [history(x) for x in losses_b], "val_mlm_loss", "a",
                             "b").note
        assert verdict == f"not separated yet ({note})"


def test_downstream_findings_compare_probe_accuracies_and_say_which_quantity():
    # not shared better downstream in both seeds (means 70.5, 71.5 vs 64.5, 65.5): the paper's direction (81.6 vs 80.1)
    results = [run("not shared", 5.60, "none", seed=0, downstream=(0.70, 0.71)),
               run("not shared", 5.61, "none", seed=1, downstream=(0.71, 0.72)),
               run("all-shared", 5.70, "all", seed=0, downstream=(0.64, 0.65)),
               run("all-shared", 5.71, "all", seed=1, downstream=(0.65, 0.66))]
    found = findings.table4(results)
    mlm, down = found[0], found[1]
    assert "validation MLM loss" in mlm.measured and "downstream average" in mlm.paper
    assert "movie-review dev accuracy after fine-tuning" in down.measured
    assert "not shared 70.5-71.5 % (2 seeds)" in down.measured and "bag-of-words 78.0 %" in down.measured
    assert down.verdict == "agrees with the paper"
    # overlapping downstream ranges: not separated, whatever the MLM losses say
    results[2] = run("all-shared", 5.70, "all", seed=0, downstream=(0.70, 0.73))
    assert findings.table4(results)[1].verdict.startswith("not separated yet")
    # no probe at all: only the MLM finding
    plain = [run(r.spec.label, r.final["val_mlm_loss"], r.spec.config.sharing, seed=r.spec.seed) for r in results]
    assert len(findings.table4(plain)) == 1


def test_table5_compares_the_sentence_tasks_downstream_against_the_papers_averages():
    results = [run("SOP", 5.6, task="sop", seed=s, acc=0.62, ones=0.5, downstream=(0.60 + s / 100, 0.61)) for s in (0, 1)]
    results += [run("NSP", 5.6, task="nsp", seed=s, acc=0.53, ones=0.8, downstream=(0.70, 0.71)) for s in (0, 1)]
    down = [f for f in findings.table5(results) if "fine-tuning" in f.measured]
    assert len(down) == 1 and "SOP 80.1 vs NSP 79.2" in down[0].paper
    assert down[0].verdict == "disagrees with the paper"  # NSP better here, SOP better in the paper


def test_the_depth_dial_downstream_names_the_best_depth_only_when_apart():
    table = pd.DataFrame({"depth": [2, 4, 8], "trained_depth": [4, 4, 4], "val_mlm_loss": [4.8, 4.6, 4.9]})
    down = pd.DataFrame({"depth": [2, 2, 4, 4, 8, 8], "seed": [0, 1] * 3,
                         "downstream": [0.60, 0.61, 0.65, 0.66, 0.62, 0.63], "scratch": [0.6] * 6})
    found = findings.depth(table, [], down)
    assert len(found) == 2 and "movie-review dev accuracy after fine-tuning" in found[1].measured
    assert "L=4: 65.5 % (scratch 60.0 %)" in found[1].measured and found[1].verdict == "the trained depth is best"
    down.loc[5, "downstream"] = 0.655  # L=8's range now reaches into L=4's
    assert findings.depth(table, [], down)[1].verdict == "the trained depth is highest but not separated"
    assert len(findings.depth(table, [], None)) == 1


def test_downstream_ranges_apart_by_less_than_a_dev_standard_error_are_not_separated():
    # means 65.0 and 64.2: ranges apart, 0.8 points < sqrt(0.642 * 0.358 / 1694) = 1.16 points
    results = [run("not shared", 5.60, "none", seed=0, downstream=(0.645, 0.655)),
               run("not shared", 5.61, "none", seed=1, downstream=(0.645, 0.655)),
               run("all-shared", 5.70, "all", seed=0, downstream=(0.640, 0.644)),
               run("all-shared", 5.71, "all", seed=1, downstream=(0.640, 0.644))]
    verdict = findings.table4(results)[1].verdict
    assert verdict.startswith("not separated yet") and "0.8 points" in verdict and "1.2)" in verdict
