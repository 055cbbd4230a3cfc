"""The Hardware page's questions (ui/hardware/questions.py): what a profile can time, is ALBERT faster, what batch
fits, how long to train. Expected values come from the counters (estimate_memory) and estimate_time's parts, never
from the function under test."""

from __future__ import annotations

import math

import pytest

from albert_core import PRESETS, Workload, estimate_memory
from albert_core.configuration.coerce import bert_twin
from albert_core.counting.report import albert_pair
from albert_core.format import NEARLY_EQUAL
from albert_core.hardware.profiles import get_profile, profile_from_probe
from albert_core.hardware.time_model import estimate_time
from ui.hardware.questions import (
    SpeedComparison,
    compare_speed,
    largest_batch,
    time_to_train,
    timed_inputs,
)

# ----------------------------------------------------------------------------- what a profile can time
PROBED = profile_from_probe({"matmul_flops": 2e11, "memory_bandwidth": 1e10, "cpu": "Test CPU", "threads": 2})


def test_a_profile_without_the_dtype_is_timed_in_fp32_with_a_note_naming_it():
    got = timed_inputs(Workload(batch=16, dtype="bf16"), PROBED, 1)
    assert got.workload == Workload(batch=16, dtype="fp32") and got.chips == 1
    assert got.notes == ("this machine (Test CPU, 2 threads) has no bf16 figure: timed in fp32.",)
    # int8 is timed nowhere (estimate_time refuses it): lowered to fp32 on a datasheet GPU too
    got = timed_inputs(Workload(batch=16, dtype="int8"), "a100", 1)
    assert got.workload.dtype == "fp32" and got.notes == ("NVIDIA A100 SXM 80GB has no int8 figure: timed in fp32.",)
    estimate_time(PRESETS["albert-base"], got.workload, "a100", got.chips)  # the lowered inputs are timeable


def test_a_one_chip_profile_is_timed_on_one_chip():
    got = timed_inputs(Workload(batch=16, dtype="fp32"), PROBED, 8)
    assert got.chips == 1 and got.workload.dtype == "fp32"
    assert got.notes == ("this machine (Test CPU, 2 threads) is one chip: timed on 1.",)


def test_more_chips_than_sequences_are_lowered_to_a_chip_count_the_batch_feeds():
    # batch 6 on 8 chips: the chip counts offered are powers of two, the largest that 6 sequences feed is 4
    got = timed_inputs(Workload(batch=6, dtype="bf16"), "tpu-v3", 8)
    assert got.chips == 4 and got.workload.dtype == "bf16"
    assert got.notes == ("8 chips need a batch of at least 8: timed on 4 chips.",)
    same = timed_inputs(Workload(batch=64, dtype="bf16"), "tpu-v3", 8)
    assert (same.workload, same.chips, same.notes) == (Workload(batch=64, dtype="bf16"), 8, ())


def test_the_speed_pair_is_albert_then_bert_from_either_side():
    albert = PRESETS["albert-base"]
    first, twin = albert_pair(albert)
    assert first == albert
    assert (twin.family, twin.sharing, twin.embedding_size, twin.hidden_size, twin.num_layers) == (
        "bert", "none", 768, 768, 12)
    assert albert_pair(twin) == (albert, twin)  # the BERT twin's counterpart is albert-base itself (gelu_new)
    bert = PRESETS["bert-base"]
    alt, same = albert_pair(bert)
    assert same == bert and alt.family == "albert" and alt.sharing == "all" and alt.embedding_size == 128
    assert alt.hidden_act == albert.hidden_act and bert_twin(alt) == bert
    assert albert_pair(bert.replace(hidden_act="relu")) is None  # no ALBERT has a ReLU BERT twin


def test_compare_speed_is_bert_s_inference_time_over_albert_s_at_each_batch():
    cfg = PRESETS["albert-large"]
    got = compare_speed(cfg, Workload(batch=8, seq_len=128, dtype="bf16"), "h100")
    assert (got.albert, got.bert, got.seq_len, got.dtype, got.hardware) == (
        cfg, bert_twin(cfg), 128, "bf16", get_profile("h100"))
    for b in (1, 64):
        wl = Workload(batch=b, seq_len=128, dtype="bf16", optimizer="none")
        assert got.ratios[b] == pytest.approx(estimate_time(bert_twin(cfg), wl, "h100").inference_s
                                              / estimate_time(cfg, wl, "h100").inference_s)
    assert list(got.ratios) == [1, 64] and got.verdict != 1  # same executed layers: not faster
    wl64 = Workload(batch=64, seq_len=128, dtype="bf16", optimizer="none")
    assert got.parts == {p.name: (p.seconds, q.seconds) for p, q in zip(
        estimate_time(cfg, wl64, "h100").inference, estimate_time(bert_twin(cfg), wl64, "h100").inference,
        strict=True)}
    from_bert = compare_speed(bert_twin(cfg), Workload(batch=8, seq_len=128, dtype="bf16"), "h100")
    assert from_bert == got  # the twin's counterpart is albert-large itself: one pair, one answer
    assert compare_speed(PRESETS["bert-base"].replace(hidden_act="relu"), Workload(), "h100") is None


def test_the_speed_verdict_uses_the_one_nearly_equal_threshold_at_every_batch():
    albert, bert = albert_pair(PRESETS["albert-base"])

    def verdict(ratios):
        return SpeedComparison(albert, bert, get_profile("h100"), 128, "fp32", ratios).verdict

    above, below = 1 + 1.5 * NEARLY_EQUAL, 1 - 1.5 * NEARLY_EQUAL
    assert verdict({1: 1.5, 64: above}) == 1
    assert verdict({1: 0.85, 64: below}) == -1
    assert verdict({1: 1 + NEARLY_EQUAL / 2, 64: 1 - NEARLY_EQUAL / 2}) == 0
    assert verdict({1: 1.5, 64: 1.0}) is None  # faster at one batch only: it depends on the batch


# ----------------------------------------------------------------------------- questions
@pytest.mark.parametrize("name", ["bert-large", "albert-xxlarge"])
def test_largest_batch_is_the_memory_boundary(name):
    cfg = PRESETS[name]
    b = largest_batch(cfg, 16e9, 512, "fp16")
    assert estimate_memory(cfg, b, 512, dtype="fp16").total <= 16e9 < estimate_memory(cfg, b + 1, 512, dtype="fp16").total


def test_bert_large_fits_about_twice_the_batch_of_albert_xxlarge():
    bert = largest_batch(PRESETS["bert-large"], 16e9, 512, "fp16")
    albert = largest_batch(PRESETS["albert-xxlarge"], 16e9, 512, "fp16")
    assert 1.6 < bert / albert < 2.5
    assert largest_batch(PRESETS["albert-base"], 1e3, 512) == 0
    with pytest.raises(ValueError, match="memory_bytes"):
        largest_batch(PRESETS["albert-base"], -1)


def test_time_to_train_counts_whole_steps():
    est = estimate_time(PRESETS["albert-base"], Workload(batch=8, seq_len=128), "a100")
    assert time_to_train(est, 1e6) == math.ceil(1e6 / 1024) * est.training_s
    with pytest.raises(ValueError, match="tokens"):
        time_to_train(est, 0)


def test_docs_give_the_largest_batches_the_page_shows():
    """docs/hardware.md quotes the page's 16 GB batches: keep them true."""
    import re
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[1] / "docs" / "hardware.md").read_text(encoding="utf-8")
    doc = " ".join(doc.split())
    m = re.search(r"BERT-large (\d+) \(fp16 mixed, with the fp32 master weights\) / (\d+) \(fp32\), "
                  r"ALBERT-xxlarge (\d+) \(fp16 mixed\) / (\d+) \(fp32\); pure fp16 without a master copy would "
                  r"give (\d+) and (\d+)", doc)
    assert m, "the 16 GB sentence moved: update this test"
    got = [int(g) for g in m.groups()]
    bert, xxl = PRESETS["bert-large"], PRESETS["albert-xxlarge"]
    assert got == [largest_batch(bert, 16e9, 512, "fp16", precision="mixed"), largest_batch(bert, 16e9, 512, "fp32"),
                   largest_batch(xxl, 16e9, 512, "fp16", precision="mixed"), largest_batch(xxl, 16e9, 512, "fp32"),
                   largest_batch(bert, 16e9, 512, "fp16"), largest_batch(xxl, 16e9, 512, "fp16")]
