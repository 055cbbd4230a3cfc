"""The paper beside our runs: verdicts from the lab's one rule (albert_core.lab.separation), the paper's
direction, and plain words."""

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


def test_mlm_findings_agree_disagree_or_not_separated_by_the_rule():
    """Four runs a side (seeds 0-3) can separate at 5 % (the smallest p is 2/70); the verdict follows the test."""
    def four(label, losses, sharing):
        return [run(label, x, sharing, seed=i) for i, x in enumerate(losses)]

    results = (four("not shared", [5.60, 5.61, 5.605, 5.615], "none") + four("all-shared", [5.64, 5.65, 5.645, 5.655], "all")
               + four("shared-attention", [5.62, 5.66, 5.58, 5.70], "attention")
               + four("shared-FFN", [5.59, 5.595, 5.585, 5.60], "ffn"))
    by_q = {f.question: f for f in findings.table4(results)}
    # paper E 128: not shared 81.6 > all-shared 80.1; ours: every not-shared run below every all-shared one,
    # p = 2/70 (only the observed labelling and its mirror are as extreme): agrees
    assert by_q["Does sharing every layer's weights cost accuracy?"].verdict == "agrees with the paper (p = 0.029)"
    # paper: shared attention 81.7 > shared FFN 80.2; ours: attention's runs spread over FFN's: not separated
    ffn = by_q["Does sharing the FFN cost more than sharing attention?"]
    assert ffn.verdict.startswith("not separated (p = ") and "; " not in ffn.verdict  # 4 + 4 can reach 5 %
    assert "shared-attention minus shared-FFN +0.048 nat [" in ffn.measured  # 5.640 - 5.5925
    assert "exact permutation test over the 8 pretraining runs" in ffn.measured
    # paper: not shared 81.6 vs shared attention 81.7 (a tie); ours: not separated either
    tie = by_q["Does sharing only attention cost accuracy?"]
    assert "not shared 5.600-5.615 (4 seeds)" in tie.measured and "81.6 vs shared attention 81.7" in tie.paper
    # FFN runs all below all-shared runs, paper 80.2 vs 80.1 (a tie): separated here, not in the paper
    results += four("shared-FFN", [], "ffn")
    found = findings.compare_losses(results, "shared-FFN", "all-shared", 80.2, 80.1, question="q",
                                    paper_names=("FFN", "all"))
    assert found.verdict == "separated here (shared-FFN better, p = 0.029); the paper found no clear difference"
    # the other way round: all-shared's losses below: disagrees with a paper that ranks not shared first
    flipped = findings.compare_losses(results, "all-shared", "not shared", 81.6, 80.1, question="q",
                                      paper_names=("all", "none"))
    assert flipped.verdict == "disagrees with the paper (p = 0.029)"


def test_two_seeds_a_side_are_never_separated_and_say_why():
    two = findings.compare_losses([run("a", 5.0), run("a", 5.01, seed=1), run("b", 6.0), run("b", 6.01, seed=1)],
                                  "a", "b", 82.0, 80.0, question="q", paper_names=("a", "b"))
    assert two.verdict == ("not separated (p = 0.33; 2 + 2 pretraining runs cannot reach 5 %: the smallest p they "
                           "can give is 0.33)")
    assert "a minus b -1.000 nat [unbounded], p = 0.33" in two.measured
    one = findings.compare_losses([run("a", 5.0), run("b", 6.0)], "a", "b", 82.0, 80.0, question="q",
                                  paper_names=("a", "b"))
    assert one.verdict.startswith("not separated (p = 1.0; 1 + 1 pretraining runs cannot reach 5 %")
    none = findings.compare_losses([run("a", 5.0)], "a", "b", 82.0, 80.0, question="q", paper_names=("a", "b"))
    assert none.verdict == "not separated (a side has no finished run)"


def test_a_constant_sentence_answer_is_reported_as_not_learned():
    results = [run("SOP", 5.6, acc=0.5, ones=1.0), run("SOP", 5.6, acc=0.61, ones=0.4, seed=1)]
    (f,) = findings.table5(results)
    assert f.verdict == "learned in 1 of 2 seeds"
    assert "50.0-61.0 % (2 seeds) on balanced held-out pairs" in f.measured
    assert '"1" answered 40-100 % (2 seeds) of the time' in f.measured


def test_depth_dial_in_words():
    table = pd.DataFrame({"depth": [2, 4, 8], "trained_depth": [4, 4, 4], "val_mlm_loss": [6.1, 5.6, 5.9],
                          "lo": [6.1, 5.6, 5.9], "hi": [6.1, 5.6, 5.9]})
    (f,) = findings.depth(table, [run("x", 5.6)])
    assert f.verdict.startswith("the trained depth (L=4) is lowest, not separated from L=2, L=8 (p = 1.0 against L=2")
    assert f.verdict.endswith("; at L=2 it is no better than the frequency-only model")
    # two runs: the table's range is the two runs' losses, tested (2 + 2 cannot reach 5 %)
    two = table.assign(lo=[6.0, 5.5, 5.8], hi=[6.2, 5.7, 6.0])
    (f,) = findings.depth(two, [run("x", 5.5), run("x", 5.7, seed=1)])
    assert "L=4 minus L=2 -0.500 nat [unbounded], p = 0.33" in f.measured
    # three runs: their single losses are not in the table: not tested, said so
    (f,) = findings.depth(two, [run("x", 5.5, seed=s) for s in range(3)])
    assert "not tested" in f.verdict and "p = " not in f.measured


def test_figure2_compares_layers_two_and_deeper_like_with_like():
    bert = pd.DataFrame({"layer": [1, 2, 3], "angle_degrees": [36.0, 25.0, 21.0]})
    albert = pd.DataFrame({"layer": [1, 2, 3], "angle_degrees": [53.0, 23.0, 16.0]})  # layer 1 absorbs E -> H
    runs = [run("ALBERT all-shared", 5.0, seed=s) for s in (0, 1)] + [run("BERT H=64", 5.0, seed=s) for s in (0, 1)]
    (f,) = findings.figure2({"BERT H=64": bert, "ALBERT all-shared": albert}, runs)
    # the angles are seed means: no test, the direction only (and two seeds a side could not separate anyway)
    assert f.verdict == ("in the paper's direction, not tested (the angles are stored as means over the seeds; "
                         "2 + 2 runs could give at best p = 0.33)")
    assert "layers 2-3 ALBERT all-shared 19.5 degrees vs BERT H=64 23.0 degrees" in f.measured
    assert "layer 1, whose input differs: 53.0 vs 36.0" in f.measured


def test_the_curves_bands_keep_their_own_words_and_are_not_the_test():
    """The curves' note (Train page) describes the seed bands; the findings' verdicts come from the rule."""
    from ui.train import runs as tr

    def history(loss: float) -> pd.DataFrame:
        return pd.DataFrame({"step": [0, 10], "val_mlm_loss": [6.0, loss]})

    assert tr.separation([history(5.0)], [history(6.0)], "val_mlm_loss", "a", "b").note == findings.NEEDS_SEEDS
    # bands apart at two seeds a side: the curves show it, the rule cannot separate two runs a side
    band = tr.separation([history(5.0), history(5.1)], [history(6.0), history(6.1)], "val_mlm_loss", "a", "b")
    assert band.step == 10
    results = [run("a", 5.0), run("a", 5.1, seed=1), run("b", 6.0), run("b", 6.1, seed=1)]
    verdict = findings.compare_losses(results, "a", "b", 82.0, 80.0, question="q", paper_names=("a", "b")).verdict
    assert verdict.startswith("not separated (p = 0.33")


def test_downstream_findings_test_every_fine_tuned_model_and_say_which_quantity():
    # not shared: 4 models (2 runs x 2 fine-tuning seeds) all above all-shared's 4: p = 2/70, the paper's direction
    results = [run("not shared", 5.60, "none", seed=0, downstream=(0.70, 0.71)),
               run("not shared", 5.61, "none", seed=1, downstream=(0.71, 0.72)),
               run("all-shared", 5.70, "all", seed=0, downstream=(0.64, 0.65)),
               run("all-shared", 5.71, "all", seed=1, downstream=(0.65, 0.66))]
    found = findings.table4(results)
    mlm, down = found[0], found[1]
    assert "validation MLM loss" in mlm.measured and "downstream average" in mlm.paper
    assert "movie-review dev accuracy after fine-tuning" in down.measured
    assert "not shared 70.0-72.0 % (4 models)" in down.measured and "bag-of-words 78.0 %" in down.measured
    assert "not shared minus all-shared +6.0 points [" in down.measured and "p = 0.029" in down.measured
    assert down.verdict == "agrees with the paper (p = 0.029)"
    # one all-shared model at 71 %: the arms interleave: not separated, whatever the MLM losses say
    results[2] = run("all-shared", 5.70, "all", seed=0, downstream=(0.71, 0.64))
    assert findings.table4(results)[1].verdict.startswith("not separated (p = ")
    # no probe at all: only the MLM finding
    plain = [run(r.spec.label, r.final["val_mlm_loss"], r.spec.config.sharing, seed=r.spec.seed) for r in results]
    assert len(findings.table4(plain)) == 1


def test_table5_compares_the_sentence_tasks_downstream_against_the_papers_averages():
    results = [run("SOP", 5.6, task="sop", seed=s, acc=0.62, ones=0.5, downstream=(0.60 + s / 100, 0.61)) for s in (0, 1)]
    results += [run("NSP", 5.6, task="nsp", seed=s, acc=0.53, ones=0.8, downstream=(0.70, 0.71 + s / 100))
                for s in (0, 1)]
    down = [f for f in findings.table5(results) if "fine-tuning" in f.measured]
    assert len(down) == 1 and "SOP 80.1 vs NSP 79.2" in down[0].paper
    assert down[0].verdict == "disagrees with the paper (p = 0.029)"  # NSP better here, SOP better in the paper


def test_the_depth_dial_downstream_names_the_best_depth_only_when_the_rule_separates_it():
    table = pd.DataFrame({"depth": [2, 4, 8], "trained_depth": [4, 4, 4], "val_mlm_loss": [4.8, 4.6, 4.9]})
    down = pd.DataFrame({"depth": [2, 2, 4, 4, 8, 8], "seed": [0, 1] * 3,
                         "downstream": [0.605, 0.615, 0.655, 0.665, 0.625, 0.635], "scratch": [0.6] * 6,
                         "models": [(0.60, 0.61), (0.61, 0.62), (0.65, 0.66), (0.66, 0.67), (0.62, 0.63), (0.63, 0.64)]})
    found = findings.depth(table, [], down)
    assert len(found) == 2 and "movie-review dev accuracy after fine-tuning" in found[1].measured
    assert "L=4: 66.0 % (scratch 60.0 %)" in found[1].measured
    assert found[1].verdict == "the trained depth (L=4) is best (p = 0.029 against L=2, p = 0.029 against L=8)"
    down.at[5, "models"] = (0.70, 0.64)  # one L=8 model above every L=4 model
    assert found[1].verdict != (v := findings.depth(table, [], down)[1].verdict)
    assert v.startswith("the trained depth (L=4) is highest, not separated from L=8 (p = 0.029 against L=2, p = ")
    # without the models' own accuracies, the runs' means are the units: 2 + 2, never separated
    plain = findings.depth(table, [], down.drop(columns="models"))[1]
    assert "exact permutation tests over the pretraining runs (each the mean" in plain.measured
    assert "cannot reach 5 %" in plain.verdict
    assert len(findings.depth(table, [], None)) == 1
