""""Does it fit?": the largest batch whose memory estimate fits a device, and the Explorer's table."""

from __future__ import annotations

import pandas as pd
import pytest

from albert_core import PRESETS, Workload, estimate_memory
from albert_core.counting.memory import MAX_FIT_BATCH, largest_batches, max_batch_that_fits
from albert_core.counting.report import analyze
from tests.helpers.facts import MODEL_COUNTS
from ui.explorer.figures import fit_columns, fit_display_columns

GB = 10**9


def _affine_total(cfg, batch, seq_len, dtype="fp32", optimizer="adamw", precision="pure", checkpointing=False):
    """The oracle of the estimate's total at any batch, also beyond the workload's batch limit (4,096) that
    `estimate_memory` enforces: the estimate is affine in the batch (weights and states once, activations per
    sequence), so two estimates give every other one; test_edges checks that it meets the estimate at 4,096."""
    one, two = (estimate_memory(cfg, b, seq_len, dtype, optimizer, precision=precision,
                                checkpointing=checkpointing).total for b in (1, 2))
    return one + (batch - 1) * (two - one)


def _scan(cfg, seq_len, device, **kw):
    """The oracle: a linear scan over every batch the workload allows."""
    best = 0
    for b in range(1, 4097):
        if estimate_memory(cfg, b, seq_len, **kw).total > device:
            break
        best = b
    return best


@pytest.mark.parametrize("name, seq, gb, kw", [
    ("bert-base", 512, 16, {}),
    ("albert-xxlarge", 512, 24, {}),
    ("bert-large", 128, 40, {"dtype": "bf16", "precision": "mixed"}),
    ("albert-base", 512, 16, {"dtype": "fp16", "precision": "mixed", "checkpointing": True}),
    ("bert-large", 512, 16, {"optimizer": "sgd"}),
])
def test_search_equals_a_linear_scan(name, seq, gb, kw):
    cfg = PRESETS[name]
    got = max_batch_that_fits(cfg, seq, gb * GB, kw.get("dtype", "fp32"), kw.get("optimizer", "adamw"),
                              kw.get("precision", "pure"), kw.get("checkpointing", False))
    assert got == _scan(cfg, seq, gb * GB, **kw)
    assert 0 < got < 4096


def test_closed_form_for_bert_base_fp32_adamw():
    # fixed part: 4 (weights) + 4 (gradients) + 8 (AdamW moments) bytes per parameter, exact
    cfg, n = PRESETS["bert-base"], MODEL_COUNTS["bert-base"]
    per_seq = estimate_memory(cfg, 1, 512).activations
    assert estimate_memory(cfg, 1, 512).total == 16 * n + per_seq
    for device in (16 * GB, 80 * GB):
        assert max_batch_that_fits(cfg, 512, device) == (device - 16 * n) // per_seq


def test_edges():
    cfg = PRESETS["albert-base"]
    exact = estimate_memory(cfg, 7, 128).total
    assert max_batch_that_fits(cfg, 128, exact) == 7 and max_batch_that_fits(cfg, 128, exact - 1) == 6
    assert max_batch_that_fits(cfg, 128, 1000) == 0  # not even the weights
    assert max_batch_that_fits(cfg, 8, 10**15) == MAX_FIT_BATCH  # the bound, reported as such
    assert _affine_total(cfg, 4096, 128) == estimate_memory(cfg, 4096, 128).total  # the oracle meets the estimate
    # beyond the workload's batch limit the search goes on, with the estimate's total at the batch it finds
    device = _affine_total(cfg, 5000, 128)
    assert largest_batches(cfg, 128, [device, device - 1]) == [(5000, device), (4999, _affine_total(cfg, 4999, 128))]
    with pytest.raises(ValueError, match="device_bytes"):
        max_batch_that_fits(cfg, 128, -1)
    with pytest.raises(ValueError, match="precision"):
        max_batch_that_fits(cfg, 128, GB, "fp32", "adamw", "mixed")
    with pytest.raises(ValueError, match="seq_len"):
        max_batch_that_fits(cfg, 4096, GB)


@pytest.mark.parametrize("total", [
    lambda b: 1000 + 7 * b * b,  # grows faster than linearly: the two-point guess overshoots
    lambda b: 1000 + 50 * b - (b % 3) * 10,  # monotonic but not affine: the guess is off by a few
    lambda b: 1000 + (b // 4) * 40,  # steps of four batches: total(2) - total(1) is 0, no guess
])
def test_search_without_an_affine_estimate_falls_back_to_the_binary_search(monkeypatch, total):
    from albert_core.counting import memory

    monkeypatch.setattr(memory, "_fit_totals", lambda cfg, seq_len, *a, **k: total)
    cfg = PRESETS["albert-base"]
    for device in (1000, 1010, 5_000, 123_457, 10**6):
        want = max((b for b in range(1, MAX_FIT_BATCH + 1) if total(b) <= device), default=0)  # a plain scan
        assert max_batch_that_fits(cfg, 128, device) == want


@pytest.mark.parametrize("name, seq, args", [
    ("albert-base", 512, ()), ("bert-large", 128, ("bf16", "adamw", "mixed", True)), ("albert-xxlarge", 512, ()),
])
def test_several_devices_at_once_are_each_device_on_its_own(name, seq, args):
    """largest_batches (the Explorer's fit table) shares the estimates between the device sizes: the same batches
    as one search per device, with the same totals, the linear scan's batch where the scan can reach it."""
    cfg = PRESETS[name]
    sizes = [1000, 16 * GB, 24 * GB, 40 * GB, 80 * GB, 141 * GB]
    got = largest_batches(cfg, seq, sizes, *args)
    want = [max_batch_that_fits(cfg, seq, size, *args) for size in sizes]
    assert [b for b, _ in got] == want and want[0] == 0
    assert [t for _, t in got] == [None, *(_affine_total(cfg, b, seq, *args) for b in want[1:])]
    kw = dict(zip(("dtype", "optimizer", "precision", "checkpointing"), args, strict=False))
    assert got[1][0] == _scan(cfg, seq, 16 * GB, **kw)


def test_fit_frame_rows_and_twin():
    res = analyze(PRESETS["albert-base"], Workload(seq_len=512))
    df = pd.DataFrame(fit_columns(res))
    # change detector: DEVICE_MEMORY_GB's choice of common accelerator sizes, as the table prints them
    assert df["device"].tolist() == ["16 GB", "24 GB", "40 GB", "80 GB", "141 GB"]
    assert df["BERT twin: batch"].iloc[0] == _scan(res.twin.config, 512, 16 * GB)
    assert df["this config: batch"].iloc[3] == max_batch_that_fits(PRESETS["albert-base"], 512, 80 * GB)
    # ALBERT-base holds ~1.6 GB less weight and optimizer state than its BERT twin but saves more activations
    # per sequence (gelu_new, no dropout masks vs the paper's BERT): it fits more on a small device only
    mem = [estimate_memory(c, 1, 512, "fp32", "adamw") for c in (res.own.config, res.twin.config)]
    state_saved = sum(m.weights + m.gradients + m.optimizer for m in mem[1:]) - sum(
        m.weights + m.gradients + m.optimizer for m in mem[:1])
    per_seq_extra = mem[0].activations - mem[1].activations
    assert state_saved > 0 and per_seq_extra > 0
    crossover = state_saved / per_seq_extra  # batches at which the twin's smaller activations catch up
    for row in df.itertuples(index=False):
        ours, twin = row[1], row[3]
        assert (ours >= twin) if min(ours, twin) < crossover - 1 else (ours <= twin + 1)
    assert list(fit_columns(analyze(PRESETS["bert-base"], Workload()))) == [
        "device", "this config: batch", "this config: memory"]


def test_explorer_shows_the_fit_table(app):
    at = app({"seq": "512"})
    assert not at.exception
    df = next(t.value for t in at.dataframe if "BERT twin: batch" in t.value.columns)
    assert df["this config: batch"].iloc[0] == f'{max_batch_that_fits(PRESETS["albert-base"], 512, 16 * GB):,}'


def test_a_batch_that_does_not_fit_says_so():
    """A device too small for one sequence reads "does not fit" with no memory, not a batch of "0" and an
    empty cell."""
    big = PRESETS["bert-large"].replace(num_layers=96)
    df = pd.DataFrame(fit_display_columns(fit_columns(analyze(big, Workload(seq_len=512)))))
    assert max_batch_that_fits(big, 512, 16 * GB) == 0  # the premise: 16 GB holds not one sequence
    assert df["this config: batch"].iloc[0] == "does not fit" and df["this config: memory"].iloc[0] == "–"
    fits = df[df["this config: batch"] != "does not fit"]
    assert not fits.empty and all(m != "–" for m in fits["this config: memory"])
