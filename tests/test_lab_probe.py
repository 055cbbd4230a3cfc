"""The downstream probe (albert_core.lab.probe): its data, baselines, verdict, and a probed run's files."""

from __future__ import annotations

import io
import json
import math

import pandas as pd
import pytest
import torch

from albert_core.lab import probe
from albert_core.lab.checkpoint import PROBE_FILE, load_run
from albert_core.lab.probe import ProbeResult, Recipe
from albert_core.text.tokenizers import lab_tokenizer
from tests.helpers.lab import TINY, tiny_spec

# a fast recipe for the tests: one epoch, two seeds, large batches (the shipped recipe: probe.RECIPE)
QUICK = Recipe(epochs=1, batch_size=128, lr=3e-3, seeds=(0, 1))


# ----------------------------------------------------------------------------- data
def test_the_rotten_tomatoes_sentences_are_all_there_balanced_and_split_by_content():
    data = probe.sentences()
    n_train, n_dev = len(data.train_texts), len(data.dev_texts)
    assert n_train + n_dev == 8530
    # Pang and Lee's sentence polarity data: 5,331 positive and 5,331 negative in v1.0; the package ships 4,265 each
    assert sum(data.train_labels) + sum(data.dev_labels) == 4265
    assert 0.17 < n_dev / 8530 < 0.23  # one in five by hash
    assert not set(data.train_texts) & set(data.dev_texts)
    assert all(probe.is_dev(t) for t in data.dev_texts[:200]) and not any(probe.is_dev(t) for t in data.train_texts[:200])
    assert 0.45 < probe.majority_accuracy(data) < 0.55


def test_rows_of_other_sources_are_left_out_and_bad_rows_named():
    text = "text,label,source\nA fine film .,1,rotten_tomatoes\nlong review,0,imdb\nA dull film .,0,rotten_tomatoes\n"
    data = probe.parse_rows(io.StringIO(text))
    assert sorted(data.train_texts + data.dev_texts) == ["A dull film .", "A fine film ."]
    with pytest.raises(ValueError, match="label 0 or 1"):
        probe.parse_rows(io.StringIO("text,label,source\nx,positive,rotten_tomatoes\n"))
    with pytest.raises(ValueError, match="no column source"):
        probe.parse_rows(io.StringIO("text,label\nx,1\n"))


def test_encoding_keeps_cls_and_sep_and_cuts_long_sentences():
    tok = lab_tokenizer("unigram", 512)
    rows = probe.encode(tok, ["a good film", "word " * 200], 16)
    assert rows[0][0] == 2 and rows[0][-1] == 3 and len(rows[0]) < 16  # [CLS] ... [SEP]
    assert len(rows[1]) == 16 and rows[1][0] == 2 and rows[1][-1] == 3


def test_batches_cover_every_sentence_once_per_epoch():
    rows = [[0] * (1 + i % 37) for i in range(1000)]
    batches = probe._batches(rows, 32, torch.Generator().manual_seed(0))
    flat = [i for b in batches for i in b]
    assert sorted(flat) == list(range(1000))
    # length buckets: a batch's longest sentence is much closer to its shortest than in random batches
    spread = sum(max(len(rows[i]) for i in b) - min(len(rows[i]) for i in b) for b in batches) / len(batches)
    assert spread < 10
    # the schedule's and the progress's step count is the number of batches _batches makes, whatever the size
    for n, size in ((1000, 32), (6836, 32), (6836, 128), (6401, 128), (5, 32)):
        rows = [[0] * (1 + i % 7) for i in range(n)]
        assert probe.batch_count(n, size) == len(probe._batches(rows, size, torch.Generator().manual_seed(1)))


# ----------------------------------------------------------------------------- verdict
def _result(pre, scr, n=1700):
    return ProbeResult(tuple(pre), tuple(scr), tuple(range(len(pre))), 0.5, 0.78, n)


@pytest.mark.parametrize(("pre", "scr", "verdict"), [
    ((0.70, 0.71, 0.72, 0.73, 0.74), (0.64, 0.65, 0.66, 0.67, 0.68), "helped"),  # apart: p = 2/252
    ((0.64, 0.65, 0.66, 0.67, 0.68), (0.70, 0.71, 0.72, 0.73, 0.74), "hurt"),
    ((0.66, 0.70, 0.72, 0.69, 0.71), (0.64, 0.67, 0.69, 0.70, 0.68), "not separated"),  # interleaved
    ((0.72, 0.73), (0.60, 0.61), "not separated"),  # 2 + 2 seeds: the smallest p is 0.33, however far apart
    ((0.72,), (0.60,), "not separated"),  # one seed a side
])
def test_pretraining_helped_only_when_the_rule_separates_the_seeds(pre, scr, verdict):
    assert _result(pre, scr).verdict == verdict


def test_the_verdict_is_the_permutation_test_of_the_fine_tuned_models():
    r = _result((0.70, 0.71, 0.72, 0.73, 0.74), (0.64, 0.65, 0.66, 0.67, 0.68))
    # every pretrained model above every scratch model: only the observed labelling and its mirror are as
    # extreme among the C(10, 5) = 252 relabellings
    assert r.test.p == pytest.approx(2 / 252) and r.test.effect == pytest.approx(6.0)
    assert r.to_dict()["p_value"] == pytest.approx(2 / 252)


def test_dev_answers_pack_into_bits_and_back():
    answers = [True, False, True, True] * 423 + [False, True]  # 1,694
    packed = probe.pack_answers(answers)
    assert len(packed) == 2 * 212 and probe.unpack_answers(packed, 1694) == answers


def test_a_probe_result_round_trips_and_words_its_numbers():
    r = _result((0.70, 0.71, 0.72, 0.73, 0.74), (0.64, 0.65, 0.66, 0.67, 0.68))
    back = ProbeResult.from_dict(json.loads(json.dumps(r.to_dict())))
    assert back == r and back.verdict == "helped"
    words = r.sentence()
    assert "70.0-74.0 %" in words and "64.0-68.0 %" in words and "78.0 %" in words
    assert "**Pretraining helped (p = 0.0079).**" in words
    assert "pretrained minus scratch +6.0 points [" in words and "10 fine-tuned models" in words
    assert "Both are below the bag-of-words regression." in words  # 74 % < 78 %
    assert "above the majority class" not in words
    low = _result((0.52, 0.53), (0.56, 0.57)).sentence()  # majority 50 %: not 5 points above it
    assert "not 5 points above the majority class" in low
    assert "Pretraining and scratch are not separated (p = 0.33; 2 + 2 models cannot reach 5 %" in low
    kept = ProbeResult((0.7,), (0.6,), (0,), 0.5, 0.78, 4, pretrained_correct=(probe.pack_answers([1, 1, 0, 1]),))
    assert ProbeResult.from_dict(json.loads(json.dumps(kept.to_dict()))).pretrained_correct == kept.pretrained_correct
    with pytest.raises(ValueError, match="not a probe result"):
        ProbeResult.from_dict({"pretrained": [0.5]})


# ----------------------------------------------------------------------------- baselines
@pytest.mark.slow
def test_the_bag_of_words_regression_scores_as_the_literature_does():
    # Pang and Lee's sentence polarity data: bag-of-words classifiers reach 76-78 % (Pang and Lee 2005; Wang and
    # Manning 2012 report 76-79 % for unigram and bigram NB, SVM and NBSVM)
    bow = probe.compute_bag_of_words()
    assert 0.74 < bow.accuracy < 0.81
    assert bow.l2 in probe.BOW_L2_GRID and bow.features > 10_000
    # the probe file ships the figure computed on these sentences: the same as computing it here
    assert probe.bag_of_words() == bow


def test_the_logistic_regression_fits_a_separable_toy_problem():
    # feature 0 means label 1, feature 1 means label 0; feature 2 is noise
    bags = (torch.tensor([0, 2, 1, 2, 0, 1]), torch.tensor([0, 2, 4, 5]))
    labels = torch.tensor([1, 0, 1, 0])
    model = probe._fit_logistic(bags, labels, 3, 1e-4)
    assert probe._predict(model, bags).tolist() == [1, 0, 1, 0]
    assert model.weights.weight[0, 0] > 0 > model.weights.weight[1, 0]


# ----------------------------------------------------------------------------- fine-tuning
def test_finetuning_learns_the_task_and_is_deterministic_from_its_seed():
    tok = lab_tokenizer("unigram", 512)
    std = 0.05
    first = probe.finetune(probe.scratch_encoder(TINY, std=std, seed=0, batch=512, seq_len=64), "scratch", 0, tok,
                           std=std, recipe=QUICK)
    again = probe.finetune(probe.scratch_encoder(TINY, std=std, seed=0, batch=512, seq_len=64), "scratch", 0, tok,
                           std=std, recipe=QUICK)
    assert first.dev_accuracy == again.dev_accuracy and first.dev_correct == again.dev_correct
    # every dev sentence's answer is kept: they add up to the accuracy
    n_dev = len(probe.sentences().dev_texts)
    assert sum(probe.unpack_answers(first.dev_correct, n_dev)) == round(first.dev_accuracy * n_dev)
    assert first.steps == math.ceil(len(probe.sentences().train_texts) / QUICK.batch_size)
    assert first.dev_accuracy > 0.53  # above the majority class (48.6 %) after one epoch: 55.8 % measured


def test_finetuning_stops_when_asked():
    tok = lab_tokenizer("unigram", 512)
    encoder = probe.scratch_encoder(TINY, std=0.05, seed=0, batch=512, seq_len=64)
    assert probe.finetune(encoder, "scratch", 0, tok, std=0.05, recipe=QUICK, should_stop=lambda: True) is None


def test_the_pretrained_encoder_carries_the_trained_weights_without_the_heads():
    from albert_core.live.model import build_model

    trained = build_model(TINY, seed=3, init_std=0.1)
    encoder = probe.pretrained_encoder(trained, batch=4, seq_len=32)
    assert encoder.config.head == "model" and not hasattr(encoder, "predictions")
    for name, value in encoder.state_dict().items():
        assert torch.equal(value, trained.state_dict()[name]), name


def test_a_probed_run_keeps_its_probe_in_run_json_probe_csv_and_tensorboard(runs_dir, monkeypatch):
    from albert_core.lab.runs import run_cached

    monkeypatch.setattr(probe, "RECIPE", QUICK)
    spec = tiny_spec(steps=4, probe=True)
    assert spec.key != tiny_spec(steps=4).key and "probe" not in tiny_spec(steps=4).to_dict()
    seen = []
    result = run_cached(spec, on_progress=lambda p: seen.append((p.probe_done, p.probe_total)))
    assert result.probe is not None and not result.cancelled
    assert len(result.probe.pretrained) == len(result.probe.scratch) == 2
    assert result.final["probe_acc"] == pytest.approx(sum(result.probe.pretrained) / 2)
    assert seen[-1][0] == seen[-1][1] > 0  # the progress reached the probe's last step
    folder = result.checkpoint
    table = pd.read_csv(folder / PROBE_FILE)
    assert sorted(table["start"].unique()) == ["pretrained", "scratch"] and len(table) == 4
    kept = json.loads((folder / "run.json").read_text())["probe"]
    assert kept["verdict"] in probe.VERDICTS and 0 < kept["p_value"] <= 1
    assert len(kept["pretrained_correct"]) == len(kept["scratch_correct"]) == 2  # each model's dev answers
    back = load_run(folder)
    assert back.probe == result.probe
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    events = EventAccumulator(str(folder))
    events.Reload()
    assert "probe/pretrained_dev_accuracy" in events.Tags()["scalars"]


def test_a_probed_runs_cost_counts_its_fine_tuning_and_its_key_leaves_unprobed_runs_alone():
    from albert_core.counting.flops import count_flops
    from albert_core.lab import trainer
    from albert_core.lab.spec import LAB_BASE, RunSpec

    plain, probed = trainer.run_cost(RunSpec(LAB_BASE)), trainer.run_cost(RunSpec(LAB_BASE, probe=True))
    # 6,836 train sentences / 32 = 214 steps an epoch, x epochs x seeds x 2 starts, each a training step of 32
    # sentences at 64 pieces; plus the dev sentences' forward passes
    steps = 214 * probe.RECIPE.epochs * len(probe.RECIPE.seeds) * 2
    head_free = LAB_BASE.replace(head="model")
    expected = (count_flops(head_free, 32, 64).training * steps
                + count_flops(head_free, 1, 64).forward * 1694 * len(probe.RECIPE.seeds) * 2)
    assert probed.probe_flops == expected and probed.flops == plain.flops + expected
    assert probed.memory_bytes > plain.memory_bytes  # batches of 32 sentences up to 128 pieces
    assert RunSpec(LAB_BASE, probe=True).key != RunSpec(LAB_BASE).key
    with pytest.raises(ValueError, match="probe must be true or false"):
        RunSpec(LAB_BASE, probe="yes")


# ----------------------------------------------------------------------------- the shipped probes
def test_the_shipped_probes_are_of_the_shipped_runs_and_their_numbers():
    from albert_core.lab.probe import data_fingerprint
    from albert_core.lab.reference import REFERENCE_DIR, live_twins, load_probes, load_runs

    doc = json.loads((REFERENCE_DIR / "probe.json").read_text(encoding="utf-8"))
    assert doc["data"] == data_fingerprint()  # probed on the sentences this install reads
    probes = load_probes()
    for name in ("table4", "table5", "figure2", "depth", "table3-v8192"):
        for run in load_runs(name):
            assert run.probe == probes[run.spec.key]
            # the run retrained for the probe is the shipped one: the same validation loss up to the CPUs' kernels
            assert abs(doc["runs"][run.spec.key]["val_mlm_loss_retrained"] - run.final["val_mlm_loss"]) < 0.05
    assert {spec.key for spec in live_twins().values()} <= set(probes)
    bow, majority = doc["baselines"]["bag_of_words"]["accuracy"], doc["baselines"]["majority"]
    five = {r.spec.key for r in load_runs("table3-v8192")}  # probed with five fine-tuning seeds (issue 45)
    assert len(five) == 24
    for key, p in probes.items():
        seeds = 5 if key in five else 2
        assert len(p.pretrained) == len(p.scratch) == len(p.seeds) == seeds
        if key in five:  # each probe built since records the recipe and seeds it was fine-tuned with
            assert list(p.recipe["seeds"]) == list(range(5))
        assert p.dev_sentences == 1694 and p.bag_of_words == bow and p.majority == majority
        assert all(0.45 < a < 0.9 for a in p.pretrained + p.scratch)
    # one from-scratch baseline per architecture: the ALBERT twin and the all-shared reference runs share it
    twin = probes[live_twins()["ALBERT"].key]
    all_shared = [r for r in load_runs("table4") if r.spec.label == "all-shared"]
    assert all(r.probe.scratch == twin.scratch for r in all_shared)


def test_finetune_shows_a_twins_shipped_probe(capsys):
    from albert_core.lab.reference import live_twins, load_probes
    from tests.helpers.cli import run_json

    shipped = load_probes()[live_twins()["BERT"].key]
    data = run_json(capsys, "finetune", "--twin", "bert")
    assert data["shipped"] is True and ProbeResult.from_dict(data["probe"]) == shipped


# ----------------------------------------------------------------------------- a probe nobody watches (issue 40)
def test_a_stopped_probe_keeps_its_training_as_the_run_without_the_probe(runs_dir, monkeypatch):
    from albert_core.lab.runs import RunCache, run_cached

    monkeypatch.setattr(probe, "RECIPE", QUICK)
    spec = tiny_spec(steps=4, probe=True, label="ALBERT, probed")
    seen = []

    def stop_in_the_probe() -> bool:  # asked before every training step, then by the probe
        return bool(seen) and seen[-1][1] > 0

    result = run_cached(spec, should_stop=stop_in_the_probe,
                        on_progress=lambda p: seen.append((p.probe_done, p.probe_total)))
    assert 0 < seen[-1][0] < seen[-1][1]  # stopped inside the probe
    assert not result.cancelled and result.probe is None and result.probe_stopped == "cancelled"
    assert result.spec == spec.replace(probe=False, label="ALBERT") and result.final["steps"] == 4
    assert result.message.startswith("its downstream probe stopped (cancelled)")
    # cached as what it is, the unprobed run (its own key), never as a probed run without its probe
    assert result.checkpoint.name == spec.replace(probe=False).key
    cache = RunCache(runs_dir)
    assert spec.key not in cache and cache.get(spec.replace(probe=False).key).final["steps"] == 4
    assert "probe" not in json.loads((result.checkpoint / "run.json").read_text())


def test_a_probe_nobody_watches_stops_and_its_training_is_kept(runs_dir, monkeypatch):
    """Issue 40: a run past 90 % of its training is exempt from the idle stop, and the probe after it always ran
    (about 5 minutes of a core). The exemption now covers the training only."""
    import time

    from albert_core.lab import worker as lab_worker
    from albert_core.lab.runs import RunCache
    from albert_core.lab.trainer import LabLimits

    monkeypatch.setattr(probe, "RECIPE", QUICK)
    monkeypatch.setattr(lab_worker, "NEARLY_DONE", 0.0)  # the whole training is exempt: only the probe can stop
    w = lab_worker.Worker(workers=1, max_queue=4, idle_s=1, cache=RunCache(runs_dir), limits=LabLimits())
    try:
        spec = tiny_spec(steps=20, probe=True)
        run_id = w.submit(spec, owner="gone")
        deadline = time.monotonic() + 120
        while not (st := w.status(run_id, watch=False)).finished and time.monotonic() < deadline:
            time.sleep(0.1)
        assert st.state == "done" and st.step == 20 and st.probe is None, st.message
        assert st.message.startswith(f"{lab_worker.PROBE_STOPPED} (nobody watched it for")
        assert st.spec == spec.replace(probe=False) and st.checkpoint is not None
        assert w.status(spec.replace(probe=False).key).state == "done"  # the training, found by its own key
    finally:
        w.close()


def test_a_large_vocabulary_run_and_its_probe_are_planned_before_any_work():
    """The lab's base at V 8,192 with a factorized E (docs/lab.md, "A larger vocabulary"): its tokenizer ships
    (nothing to train), and its parameters, FLOPs and memory are counted and checked against the lab's limits."""
    from albert_core.lab import trainer
    from albert_core.lab.spec import LAB_BASE, RunSpec
    from albert_core.text.tokenizers import is_shipped

    small = trainer.check_run(RunSpec(LAB_BASE, probe=True))
    large = trainer.check_run(RunSpec(LAB_BASE.replace(vocab_size=8192), probe=True))
    assert is_shipped("unigram", 8192)
    # every extra piece adds an E-wide embedding row and a decoder bias (the decoder is tied): (8,192 - 512) x 33
    assert large.params - small.params == (8192 - 512) * (LAB_BASE.embedding_size + 1)
    assert small.flops < large.flops <= trainer.LabLimits().max_flops
    assert large.probe_flops > 0 and large.memory_bytes < trainer.memory_budget()


def test_the_reference_build_keeps_each_from_scratch_models_answers(monkeypatch):
    """probe.json rebuilt by `finetune --reference` holds every fine-tuned model's dev answers beside its accuracy."""
    from albert_core.lab import probe_reference

    monkeypatch.setattr(probe, "RECIPE", QUICK)
    out = probe_reference._probe_scratch(tiny_spec(steps=4).to_dict())
    n_dev = len(probe.sentences().dev_texts)
    assert len(out["accuracy"]) == len(out["correct"]) == len(QUICK.seeds)
    for acc, packed in zip(out["accuracy"], out["correct"], strict=True):
        assert sum(probe.unpack_answers(packed, n_dev)) == round(acc * n_dev)


def test_the_reference_build_fine_tunes_with_the_seeds_it_is_given(monkeypatch):
    """finetune --reference --seeds N: the from-scratch baseline is fine-tuned once per seed asked for, not the
    recipe's; a named experiment's probes leave the Live-model twins (and the file's other runs) alone."""
    import dataclasses

    from albert_core.lab import probe_reference
    from albert_core.lab.experiments import EXPERIMENTS
    from albert_core.lab.reference import live_twins

    monkeypatch.setattr(probe, "RECIPE", QUICK)
    recipe = dataclasses.asdict(dataclasses.replace(QUICK, seeds=(3, 4, 5)))
    out = probe_reference._probe_scratch(tiny_spec(steps=4).to_dict(), recipe)
    assert len(out["accuracy"]) == len(out["correct"]) == 3
    named = {s.key for s in probe_reference.reference_specs(["table3-v8192"])}
    assert named == {s.key for s in EXPERIMENTS["table3-v8192"].specs()}
    assert not named & {s.key for s in live_twins().values()}
    assert {s.key for s in live_twins().values()} <= {s.key for s in probe_reference.reference_specs()}
