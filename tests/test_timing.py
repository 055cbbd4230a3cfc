"""The time model: parts built from the exact counts, roofline labels, data-parallel traffic, Table 2 (the
Hardware page's questions: tests/test_hardware_questions.py). Expected values come from the closed forms and the
counters (count_flops, count_params, estimate_memory), never from estimate_time itself."""

from __future__ import annotations

import json

import pytest

from albert_core import PRESETS, Workload, count_flops, count_params, estimate_memory
from albert_core.configuration.presets import ENCODER_PRESETS
from albert_core.format import fmt_duration
from albert_core.hardware.profiles import profile_from_probe
from albert_core.hardware.time_model import (
    LOCAL_ATTENTION,
    PAPER_SPEEDUP,
    TABLE2_CHIPS,
    TABLE2_COMM_EFFICIENCY,
    calibrate_table2,
    estimate_time,
    paper_table2,
    table2_chip_checks,
    table2_size_ratios,
)
from tests.helpers.cli import fails, run

WL = Workload(batch=64, seq_len=128, dtype="bf16", optimizer="adamw")


def test_matmul_part_is_the_exact_training_flops_at_peak_times_efficiency():
    cfg = PRESETS["bert-base"]
    est = estimate_time(cfg, WL, "h100", chips=4)
    mm = est.part("matmuls")
    assert mm.flops == count_flops(cfg, 64, 128).training / 4
    assert mm.compute_s == pytest.approx(count_flops(cfg, 64, 128).training / 4 / (989e12 * 0.6))
    inf = est.part("matmuls", training=False)
    assert inf.flops == count_flops(cfg, 64, 128).forward / 4


def test_training_matmuls_run_at_the_training_kernels_throughput():

    hw = profile_from_probe({"matmul_flops": 2e11, "kernel_flops": {"torch.matmul": 1e11, "onednn linear": 2e11},
                             "memory_bandwidth": 1e10})
    cfg = PRESETS["albert-base"]
    wl = Workload(batch=4, seq_len=128)
    est = estimate_time(cfg, wl, hw)
    assert est.part("matmuls").compute_s == pytest.approx(count_flops(cfg, 4, 128).training / 1e11)
    assert est.part("matmuls", training=False).compute_s == pytest.approx(count_flops(cfg, 4, 128).forward / 2e11)


@pytest.mark.parametrize("name", ["albert-base", "bert-base", "albert-xxlarge"])
def test_allreduce_moves_ring_bytes_of_the_unique_parameters(name):
    cfg = PRESETS[name]
    n = 16
    est = estimate_time(cfg, Workload(batch=64, seq_len=128, dtype="fp32"), "a100", chips=n, overlap=False)
    comm = est.part("allreduce")
    unique = count_params(cfg).total
    assert comm.bytes == pytest.approx(2 * (n - 1) / n * 4 * unique)
    assert comm.seconds == pytest.approx(comm.bytes / 25e9)  # 16 GPUs = 2 nodes: the 200 Gb/s card
    assert comm.bound == "communication"


def test_albert_base_sends_about_a_ninth_of_bert_base():
    wl = Workload(batch=64, seq_len=128)
    a = estimate_time(PRESETS["albert-base"], wl, "tpu-v3", 8).part("allreduce").bytes
    b = estimate_time(PRESETS["bert-base"], wl, "tpu-v3", 8).part("allreduce").bytes
    assert b / a == pytest.approx(count_params(PRESETS["bert-base"]).total / count_params(PRESETS["albert-base"]).total)
    assert 8.5 < b / a < 10


def test_sharing_changes_optimizer_and_allreduce_never_matmuls_or_activations():
    shared = PRESETS["albert-large"]
    unshared = shared.replace(sharing="none")
    e1, e2 = (estimate_time(c, WL, "tpu-v3", 8) for c in (shared, unshared))
    for part in ("matmuls", "elementwise"):
        assert e1.part(part).flops == e2.part(part).flops
        assert e1.part(part).compute_s == e2.part(part).compute_s
    assert e1.part("elementwise").bytes == e2.part("elementwise").bytes
    ratio = count_params(unshared).total / count_params(shared).total
    assert e2.part("allreduce").bytes / e1.part("allreduce").bytes == pytest.approx(ratio)
    assert e2.part("optimizer").bytes / e1.part("optimizer").bytes == pytest.approx(ratio)


def test_optimizer_reads_and_writes_weights_gradients_and_states():
    cfg = PRESETS["albert-base"]
    est = estimate_time(cfg, Workload(batch=8, seq_len=128, dtype="fp32", optimizer="adamw"), "a100")
    # read w, g, m, v; write w, m, v: 7 fp32 values per unique parameter
    assert est.part("optimizer").bytes == 7 * 4 * count_params(cfg).total
    assert est.part("optimizer").bound == "memory"


def test_activation_traffic_is_passes_of_the_saved_bytes():
    cfg = PRESETS["bert-base"]
    est = estimate_time(cfg, WL, "a100", chips=2)
    saved = estimate_memory(cfg, 64, 128, dtype="bf16", optimizer="adamw").activations
    assert est.part("elementwise").bytes == pytest.approx(5 * saved / 2)


def test_local_attention_is_one_sliding_window_kernel_in_every_part():
    """ModernBERT's local layers are estimated as one implementation in every part (the page says which): beside the
    same model with every layer global, the matmuls, the element-wise work and the saved probabilities each differ
    by exactly the pairs outside the window (closed forms written here), not by FLOPs alone."""
    import torch

    cfg = ENCODER_PRESETS["modernbert-base"]  # L = 22, global every 3rd: layers 0, 3, ..., 21 global, 14 local
    full = cfg.replace(local_window=0, global_every=1)
    B, S, A, H, half, local = 2, 8192, 12, 768, 64, 14
    band = (torch.arange(300)[:, None] - torch.arange(300)[None, :]).abs() <= half  # a query sees |i - j| <= 64
    assert int(band.sum()) == 300 * (2 * half + 1) - half * (half + 1)
    outside = S * S - (S * (2 * half + 1) - half * (half + 1))
    wl = Workload(batch=B, seq_len=S, dtype="bf16", optimizer="adamw")
    est, ref = estimate_time(cfg, wl, "h100"), estimate_time(full, wl, "h100")
    train = 3  # forward + a backward of twice the forward
    assert ref.part("matmuls").flops - est.part("matmuls").flops == train * local * 4 * B * outside * H
    scale, softmax, dropout = 1, 5, 4  # ELECTRA's element-wise constants per attention score
    assert ref.part("elementwise").flops - est.part("elementwise").flops == (
        train * local * B * A * outside * (scale + softmax + dropout))
    # the softmax output each local layer keeps (bf16, dropout 0 in ModernBERT: no mask), moved 5 times in training
    assert ref.part("elementwise").bytes - est.part("elementwise").bytes == 5 * local * B * A * outside * 2
    assert LOCAL_ATTENTION in est.assumptions and LOCAL_ATTENTION not in ref.assumptions


def test_roofline_labels_small_batch_memory_bound_large_batch_compute_bound():
    cfg = PRESETS["bert-large"]
    small = estimate_time(cfg, Workload(batch=1, seq_len=32, dtype="bf16"), "h100").part("matmuls", training=False)
    assert small.bound == "memory"
    # one read of the executed weights (no embedding tables for the encoder-only head) at 3.35 TB/s
    bd = count_params(cfg)
    tables = sum(c.params for c in bd.components if c.name.startswith("embeddings.") and "LayerNorm" not in c.name)
    assert small.memory_s == pytest.approx((bd.unshared_total - tables) * 2 / 3.35e12)
    big = estimate_time(cfg, Workload(batch=512, seq_len=512, dtype="bf16"), "h100").part("matmuls")
    assert big.bound == "compute"


def test_more_chips_split_the_compute():
    cfg = PRESETS["albert-base"]
    wl = Workload(batch=256, seq_len=128, dtype="bf16")
    one, eight = estimate_time(cfg, wl, "tpu-v3", 1), estimate_time(cfg, wl, "tpu-v3", 8)
    assert eight.part("matmuls").compute_s == pytest.approx(one.part("matmuls").compute_s / 8)
    assert one.part("allreduce").seconds == 0 and one.part("allreduce").bytes == 0


def test_overlap_hides_the_allreduce_behind_the_backward_as_far_as_it_is_shorter():
    cfg = PRESETS["bert-large"]
    wl = Workload(batch=64, seq_len=128, dtype="bf16")
    plain = estimate_time(cfg, wl, "h100", 64, overlap=False)
    hidden = estimate_time(cfg, wl, "h100", 64, overlap=True)
    link = plain.part("allreduce").seconds
    backward = 2 / 3 * (plain.part("matmuls").seconds + plain.part("elementwise").seconds)
    assert hidden.part("allreduce").seconds == pytest.approx(max(0.0, link - backward))
    assert hidden.training_s <= plain.training_s
    slow = estimate_time(cfg, wl, "h100", 64, overlap=False, comm_efficiency=0.1).part("allreduce").seconds
    assert slow == pytest.approx(10 * link)


def test_totals_are_the_sums_and_json_round_trips():
    est = estimate_time(PRESETS["albert-base"], WL, "tpu-v3", 8)
    d = json.loads(json.dumps(est.to_dict()))
    assert d["estimate"] is True
    assert d["training_step_s"] == pytest.approx(sum(p["seconds"] for p in d["training_parts"].values()))
    assert d["inference_batch_s"] == pytest.approx(sum(p["seconds"] for p in d["inference_parts"].values()))
    assert set(d["training_parts"]) == {"matmuls", "elementwise", "optimizer", "allreduce"}
    assert any("estimate" in a.lower() for a in d["assumptions"])


def test_memory_per_chip_splits_activations_not_the_replica():
    cfg = PRESETS["bert-large"]
    wl = Workload(batch=4096, seq_len=512, dtype="fp32")
    mem = estimate_memory(cfg, 4096, 512, dtype="fp32", optimizer="adamw")
    est = estimate_time(cfg, wl, "tpu-v3", 512)
    assert est.memory_per_chip == mem.weights + mem.gradients + mem.optimizer + mem.activations // 512
    assert est.fits is (est.memory_per_chip <= 32 * 2**30)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"chips": 0}, "chips must be"),
        ({"chips": 128}, r"chips \(128\) must not exceed batch \(64\)"),
        ({"parallel": "tensor"}, "parallel must be one of"),
        ({"efficiency": 0}, "efficiency must be"),
        ({"comm_efficiency": 1.5}, "comm_efficiency must be"),
        ({"overlap": "yes"}, "overlap must be"),
        ({"hardware": "tpu-v9"}, "hardware must be one of"),
    ],
)
def test_bad_arguments_raise_value_error_naming_them(kwargs, message):
    args = {"hardware": "a100", **kwargs}
    hw = args.pop("hardware")
    with pytest.raises(ValueError, match=message):
        estimate_time(PRESETS["albert-base"], WL, hw, **args)


def test_int8_and_long_sequences_are_refused():
    with pytest.raises(ValueError, match="int8"):
        estimate_time(PRESETS["albert-base"], WL.replace(dtype="int8", optimizer="none"), "a100")
    with pytest.raises(ValueError, match="max_position_embeddings"):
        estimate_time(PRESETS["albert-base"], WL.replace(seq_len=1024), "a100")


# ----------------------------------------------------------------------------- Table 2
@pytest.fixture(scope="module")
def table2():
    return paper_table2()


def test_table2_flops_only_column_is_the_training_flop_ratio(table2):
    def flops(name):
        return count_flops(PRESETS[name].replace(head="pretraining"), 4096, 512, mlm_fraction=0.15).training

    for row in table2.itertuples():
        assert row.flops_only == pytest.approx(flops("bert-large") / flops(row.preset))
        assert row.paper == PAPER_SPEEDUP[row.preset]
    large = table2.set_index("preset").loc["albert-large"]
    assert 0.99 < large.flops_only < 1.03  # FLOPs alone: ALBERT-large is no faster than BERT-large


def test_table2_one_constant_meets_the_goal_on_five_rows_and_says_where_not(table2):
    t = table2.set_index("preset")
    assert t.loc["bert-large", "model"] == pytest.approx(1.0)
    within = {p for p, ok in t["within_20pct"].items() if ok}
    assert within == {"bert-large", "albert-base", "albert-large", "albert-xlarge", "albert-xxlarge"}
    assert not t.loc["bert-base", "within_20pct"]  # every count is ~1/3 of BERT-large's: ~3x, not 4.7x
    # datasheet links (no calibration) leave ALBERT-large close to the FLOPs-only prediction
    assert t.loc["albert-large", "datasheet"] < 1.2


def test_table2_reach_is_the_range_of_the_parts_ratios_and_bert_base_is_out_of_it(table2):
    t = table2.set_index("preset")
    # an independent look at BERT-base's parts: FLOPs, unique parameters and activation bytes of
    # BERT-large over BERT-base, from the counters, each below the +-20% band around the paper's 4.7x
    base, large = (PRESETS[n].replace(head="pretraining") for n in ("bert-base", "bert-large"))
    ratios = [
        count_flops(large, 4096, 512, mlm_fraction=0.15).training / count_flops(base, 4096, 512, mlm_fraction=0.15).training,
        count_params(large).total / count_params(base).total,
        estimate_memory(large, 8, 512).activations / estimate_memory(base, 8, 512).activations,
    ]
    assert max(ratios) < 0.8 * 4.7
    assert t.loc["bert-base", "reach_hi"] < 0.8 * 4.7 and not t.loc["bert-base", "reachable"]
    assert t.loc["bert-base", "reach_hi"] == pytest.approx(max(ratios[:2]), rel=1e-6)  # FLOPs, the largest
    for row in table2.itertuples():
        assert row.reach_lo <= row.model <= row.reach_hi  # the calibrated model is one weighting of the parts
        assert row.reach_lo <= row.datasheet <= row.reach_hi
    assert {p for p, ok in t["reachable"].items() if ok} == set(t.index) - {"bert-base"}


def test_table2_constant_is_the_least_squares_fit():
    assert calibrate_table2() == pytest.approx(TABLE2_COMM_EFFICIENCY, rel=0.03)


def test_table2_chip_checks_leave_only_the_pod_size_the_paper_s_step_times_allow():
    # the paper: 64 to 512 TPUs; BERT-large 400k steps in 34 h, ALBERT-xxlarge 125k steps in 32 h (same TPUs)
    checks = {c.chips: c for c in table2_chip_checks()}
    assert list(checks) == [64, 128, 256, 512]
    assert checks[512].paper_step_s == {"bert-large": 34 * 3600 / 400_000, "albert-xxlarge": 0.9216}
    tpu_peak = 123e12  # Cloud TPU v3 datasheet, per chip
    for chips, c in checks.items():
        for name in ("bert-large", "albert-xxlarge"):
            flops = count_flops(PRESETS[name].replace(head="pretraining"), 4096, 512, mlm_fraction=0.15).training
            assert c.peak_step_s[name] == pytest.approx(flops / (chips * tpu_peak))
    # roughly by hand: ALBERT-xxlarge runs 12 layers of ~12 H^2 = 201M weights, 6 FLOPs per weight per token,
    # 4096 x 512 tokens a step: ~3.0e16 FLOPs, ~0.97 s at 256 chips' peak (> 0.92 s), ~0.48 s at 512
    rough = 6 * 12 * 12 * 4096**2 * 4096 * 512
    assert rough / (256 * tpu_peak) > 0.9216 > rough / (512 * tpu_peak)
    assert checks[256].too_fast == ("albert-xxlarge",) and checks[64].too_fast == ("bert-large", "albert-xxlarge")
    assert [n for n, c in checks.items() if c.consistent] == [TABLE2_CHIPS]


def test_table2_size_ratios_are_the_counters_ratios_to_bert_large(table2):
    base, large = (PRESETS[n].replace(head="pretraining") for n in ("bert-base", "bert-large"))
    got = table2_size_ratios("bert-base")
    assert got["flops"] == pytest.approx(count_flops(base, 4096, 512, mlm_fraction=0.15).training
                                         / count_flops(large, 4096, 512, mlm_fraction=0.15).training)
    assert got["params"] == count_params(base).total / count_params(large).total
    # activations grow linearly with the batch, so batch 8 gives the same ratio as 4,096
    assert got["activations"] == pytest.approx(estimate_memory(base, 8, 512).activations
                                               / estimate_memory(large, 8, 512).activations)
    assert all(0.25 < r < 0.45 for r in got.values())  # "about a third" each
    assert table2_size_ratios("bert-large") == {"flops": 1.0, "params": 1.0, "activations": 1.0}


def test_table2_datasheet_allreduce_share_is_the_uncalibrated_step_s():
    df = paper_table2().set_index("preset")
    est = estimate_time(PRESETS["bert-large"].replace(head="pretraining"),
                        Workload(batch=4096, seq_len=512, dtype="fp32", optimizer="adamw"), "tpu-v3", 512,
                        overlap=False, mlm_fraction=0.15)
    assert df.loc["bert-large", "datasheet_allreduce_share"] == pytest.approx(
        est.part("allreduce").seconds / est.training_s)


def test_fmt_duration():
    assert fmt_duration(0.000123) == "123 µs"
    assert fmt_duration(0.356) == "356 ms"
    assert fmt_duration(5.5) == "5.5 s"
    assert fmt_duration(5400) == "90 min"
    assert fmt_duration(3 * 86_400) == "3 days"
    assert fmt_duration(13_000 * 86_400) == "13,000 days (35.6 years)"  # the Hardware page's 1.3e+04 days
    assert fmt_duration(1e12) == "11,574,074 days (31,688 years)"
    with pytest.raises(ValueError):
        fmt_duration(-1)


# ----------------------------------------------------------------------------- CLI
def test_cli_time_json_gives_parts_and_assumptions(capsys):
    out = run(capsys, "time", "--preset", "bert-large", "--head", "pretraining", "--hardware", "tpu-v3",
              "--chips", "64", "--batch", "4096", "--seq-len", "512", "--json")
    d = json.loads(out)
    cfg = PRESETS["bert-large"].replace(head="pretraining")
    assert d["training_parts"]["matmuls"]["flops"] == count_flops(cfg, 4096, 512).training / 64
    assert d["training_step_s"] == pytest.approx(sum(p["seconds"] for p in d["training_parts"].values()))
    assert d["inference_batch_s"] > 0 and d["chips"] == 64 and d["assumptions"]


def test_cli_time_table_names_the_estimate_and_overrides_apply(capsys):
    out = run(capsys, "time", "--preset", "albert-base", "--num-layers", "6", "--hardware", "h100", "--dtype",
              "bf16", "--chips", "2", "--batch", "16")
    assert "ESTIMATE" in out and "Gradient all-reduce" in out and "ALBERT H=768 L=6" in out


@pytest.mark.parametrize(
    "argv",
    [
        ("time", "--hardware", "gpu"),
        ("time", "--chips", "64"),
        ("time", "--chips", "x"),
        ("time", "--efficiency", "0"),
        ("time", "--dtype", "int8"),
        ("time", "--seq-len", "4096"),
    ],
)
def test_cli_time_bad_input_exits_2_with_one_line(capsys, argv):
    fails(capsys, *argv)
