"""ALBERT's ideas post hoc on the trained MiniLM: exact counts (the reference file's figures, written by hand), the
live variants' modules counted component by component, FLOPs equal to FlopCounterMode, the SVD constructions, the
paired-bootstrap rule, the CLI and the shipped grid file."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

from albert_core.counting.params import component_of
from albert_core.counting.posthoc import (
    GRID_E,
    GRID_RANKS,
    Variant,
    grid_variants,
    lora_width,
    posthoc_flops,
    posthoc_params,
    posthoc_total,
)
from albert_core.format import fmt_params
from albert_core.lab import posthoc_grid as grid
from albert_core.lab.posthoc_reference import CLAIM_WORDS, VERDICTS, grid_row, load_grid
from albert_core.live import minilm
from albert_core.live import posthoc as ph

CFG = minilm.minilm_config()

# ../shared/reference/sharing-since-albert.md: 22.71M -> 14.95M (14,948,736 without a bias on the E -> H projection);
# one shared layer -> 13.84M; r 4 / 8 / 16 / 32 -> 14.01M / 14.17M / 14.50M / 15.17M.
REFERENCE = {"original": 22_713_216, "E128": 14_948_736, "shared": 13_840_896}
REFERENCE_ROUNDED = {"E128": "14.95M", "shared": "13.84M", "shared-r4": "14.01M", "shared-r8": "14.17M",
                     "shared-r16": "14.50M", "shared-r32": "15.17M"}


@pytest.fixture(scope="module")
def weights():
    return ph.PosthocWeights.of(minilm.load_minilm(batch=2, seq_len=32, budget_bytes=2 << 30))


# ----------------------------------------------------------------------------- counts
def test_reference_counts():
    for key, n in REFERENCE.items():
        assert posthoc_total(CFG, Variant.from_key(key)) == n
    for key, text in REFERENCE_ROUNDED.items():
        assert fmt_params(posthoc_total(CFG, Variant.from_key(key))) == text
    # the exact figures behind the rounding: 13,840,896 + 6 x r x 6,912
    assert lora_width(CFG) == 6912
    assert [posthoc_total(CFG, Variant(None, True, r)) for r in (4, 8, 16, 32, 64)] == \
        [14_006_784, 14_172_672, 14_504_448, 15_168_000, 16_495_104]


@pytest.mark.parametrize("v", grid_variants(), ids=lambda v: v.key)
def test_live_variant_counts_equal_analytic_per_component(v):
    live: dict[str, int] = {}
    for name, p in ph.meta_variant(CFG, v).named_parameters():
        live[component_of(name)] = live.get(component_of(name), 0) + p.numel()
    assert live == posthoc_params(CFG, v)
    assert sum(live.values()) == posthoc_total(CFG, v)


def test_variant_keys_and_rules():
    for v in grid_variants():
        assert Variant.from_key(v.key) == v
    assert len(grid_variants()) == 1 + len(GRID_E) + (1 + len(GRID_E)) * (1 + len(GRID_RANKS)) == 35
    for bad in ("E", "shared-r", "r8", "E128-r8", "nonsense"):
        with pytest.raises(ValueError, match="variant key"):
            Variant.from_key(bad)
    with pytest.raises(ValueError, match="rank needs shared"):
        Variant(rank=8)
    with pytest.raises(ValueError, match="embedding_size must be below H = 384"):
        posthoc_total(CFG, Variant(384))
    with pytest.raises(ValueError, match="rank must be at most H = 384"):
        posthoc_total(CFG, Variant(None, True, 385))
    with pytest.raises(ValueError, match="trained BERT"):
        posthoc_total(CFG.replace(head="masked-lm"), Variant())


# ----------------------------------------------------------------------------- FLOPs
@pytest.mark.parametrize("v", [Variant(), Variant(32), Variant(None, True), Variant(None, True, 8),
                               Variant(128, True, 64)], ids=lambda v: v.key)
@pytest.mark.parametrize("explicit", [False, True])
def test_flops_equal_flop_counter_mode_on_meta(v, explicit):
    model = ph.meta_variant(CFG, v)
    ids = torch.zeros(3, 21, dtype=torch.long, device="meta")
    with FlopCounterMode(display=False) as counter, torch.no_grad():
        model(ids, output_attentions=explicit)
    assert counter.get_total_flops() == posthoc_flops(CFG, v, 3, 21).total


@pytest.mark.parametrize("v", [Variant(128, True, 8), Variant(None, True, 16)], ids=lambda v: v.key)
def test_flops_equal_flop_counter_mode_on_the_built_variant(weights, v):
    model = ph.build_variant(weights, v, budget_bytes=1 << 30)
    with FlopCounterMode(display=False) as counter, torch.no_grad():
        model(torch.randint(0, 30522, (2, 17)), output_attentions=True)
    flops = posthoc_flops(CFG, v, 2, 17)
    assert counter.get_total_flops() == flops.total
    # the unmergeable LoRA: 2 B S L r sum(d_in + d_out), written out with the config's numbers
    assert flops.lora == 2 * 2 * 17 * 6 * v.rank * 6912
    if v.embedding_size:
        assert flops.projection == 2 * 2 * 17 * v.embedding_size * 384


def test_sharing_alone_changes_no_flop():
    assert posthoc_flops(CFG, Variant(None, True)).total == posthoc_flops(CFG, Variant()).total


# ----------------------------------------------------------------------------- constructions
def test_the_unchanged_variant_is_the_trained_model(weights):
    original = minilm.load_minilm(batch=2, seq_len=32, budget_bytes=1 << 30)
    model = ph.build_variant(weights, Variant(), budget_bytes=1 << 30)
    ids = torch.randint(0, 30522, (2, 12))
    mask = torch.ones_like(ids)
    mask[1, 8:] = 0
    with torch.no_grad():
        a = original(ids, attention_mask=mask, output_hidden_states=True)
        b = model(ids, attention_mask=mask, output_hidden_states=True)
    for x, y in zip(a.hidden_states, b.hidden_states, strict=True):
        assert (x - y).abs().max() < 1e-5
    assert (a.pooler_output - b.pooler_output).abs().max() < 1e-5


def test_factorized_table_is_the_truncated_svd(weights):
    """Eckart-Young: the rank-E table's error is the norm of the dropped singular values."""
    W = weights.tensors["embeddings.word_embeddings"].double()
    S = weights.word_svd()[1]
    for E in (32, 128):
        table, projection = weights.factorized_table(E)
        assert table.shape == (30522, E) and projection.shape == (384, E)
        err = torch.linalg.norm(W - table.double() @ projection.double().T)
        assert abs(err - S[E:].pow(2).sum().sqrt()) < 1e-3 * err


def test_shared_layer_is_the_mean_and_full_rank_lora_gives_each_layer_back(weights):
    model = ph.build_variant(weights, Variant(None, True, 384), budget_bytes=1 << 30)
    block = model.encoder.layer[0]
    assert len(model.encoder.layer) == 1
    mean_q = torch.stack([weights.tensors[f"layer.{i}.query.weight"] for i in range(6)]).mean(0)
    assert torch.allclose(block.attention.query.weight, mean_q, atol=1e-6)
    for i in (0, 5):
        lora = model.encoder.lora[i]
        for name, base in (("query", block.attention.query), ("ffn", block.ffn), ("ffn_output", block.ffn_output)):
            rebuilt = base.weight + lora[name].B.weight @ lora[name].A.weight
            assert (rebuilt - weights.tensors[f"layer.{i}.{name}.weight"]).abs().max() < 1e-4


def test_energy_the_svds_keep(weights):
    """docs/posthoc.md's figures: the word table's energy (sum of squared singular values) kept at E = 128 / 256,
    and the share of each layer's difference from the mean a rank-8 / rank-64 LoRA holds (mean over 36 matrices)."""
    S = weights.word_svd()[1]
    kept = S.pow(2).cumsum(0) / S.pow(2).sum()
    assert (round(float(kept[127]), 2), round(float(kept[255]), 2)) == (0.66, 0.89)
    shares = {8: [], 64: []}
    for i in range(6):
        for m in ("query", "key", "value", "dense", "ffn", "ffn_output"):
            s = weights.residual_svd(i, m)[1].pow(2)
            for r in shares:
                shares[r].append(float(s[:r].sum() / s.sum()))
    assert [round(sum(v) / len(v), 2) for v in shares.values()] == [0.14, 0.55]
    assert (round(min(shares[8]), 2), round(max(shares[8]), 2)) == (0.09, 0.23)
    assert (round(min(shares[64]), 2), round(max(shares[64]), 2)) == (0.40, 0.66)


def test_build_checks_the_budget_first(weights):
    from albert_core.live.budget import MemoryBudgetError

    with pytest.raises(MemoryBudgetError):
        ph.build_variant(weights, Variant(), budget_bytes=10 << 20)


# ----------------------------------------------------------------------------- the rule
def test_paired_bootstrap_rule():
    s = grid.GridSettings(bootstrap=500)
    rng = np.random.default_rng(1)
    a = (rng.random(1000) < 0.8).astype(float)
    worse = a.copy()
    worse[:150] = 0.0  # 15 points worse on the same sentences
    boot = grid.resamples(1000, s)
    test = grid.paired(worse, a, boot)
    assert test["high"] < 0 and test["p"] < 0.05 and grid.verdict(test) == "costs quality"
    same = grid.paired(a, a, boot)
    assert (same["effect"], same["p"], grid.verdict(same)) == (0.0, 1.0, "not distinguishable")
    assert grid.verdict(grid.paired(a, worse, boot)) == "gains"
    noisy = a.copy()
    noisy[:3] = 1 - noisy[:3]
    assert grid.verdict(grid.paired(noisy, a, boot)) == "not distinguishable"
    assert grid.claim_word(test, agree_when_above=False) == "agrees"
    assert grid.claim_word(test, agree_when_above=True) == "disagrees"
    assert grid.claim_word(same, agree_when_above=True) == "not separated"


def test_dense_probe_learns_a_separable_feature():
    gen = torch.Generator().manual_seed(0)
    X = torch.randn(400, 8, generator=gen)
    y = (X[:, 0] > 0).long()
    pred, l2 = grid.dense_probe(X[:300], y[:300], X[300:], grid.GridSettings())
    assert (pred == y[300:].numpy()).mean() > 0.95 and l2 in grid.GridSettings().l2_grid


# ----------------------------------------------------------------------------- CLI
def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "albert_core", "albertize-real", *args], capture_output=True,
                          text=True, timeout=120)


def test_cli_one_variant_json():
    out = _cli("--e", "128", "--share", "--rank", "8", "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["parameters"] == 14_948_736 - 5 * 1_774_464 + 6 * 8 * 6912 == 6_408_192
    assert data["flops"]["lora"] == 2 * 128 * 6 * 8 * 6912
    assert data["flops"]["total"] == posthoc_flops(CFG, Variant(128, True, 8)).total
    row = grid_row(load_grid(), Variant(128, True, 8))
    assert data["measured"] == row
    if row is not None:
        assert {"majority", "bag_of_words", "unrelated_cosine"} <= set(data["baselines"])


def test_cli_refuses_a_rank_without_sharing():
    out = _cli("--rank", "8")
    assert out.returncode == 2 and "--rank needs --share" in out.stderr and "Traceback" not in out.stderr


def test_cli_counting_imports_no_torch():
    code = ("import sys; from albert_core.cli.main import main; main(['albertize-real', '--e', '64']); "
            "assert 'torch' not in sys.modules, 'torch imported'")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "12,970,752 parameters" in out.stdout


# ----------------------------------------------------------------------------- the shipped grid
def test_the_shipped_grid_holds_every_variant_with_its_baselines_and_environment():
    doc = load_grid()
    assert doc is not None, "albert_core/lab/reference/albertize_real.json is shipped (make albertize-real)"
    keys = [row["key"] for row in doc["variants"]]
    assert keys == [v.key for v in grid_variants()]
    for row in doc["variants"]:
        v = Variant.from_key(row["key"])
        assert row["parameters"] == posthoc_total(CFG, v)
        assert row["flops_per_sequence"] == posthoc_flops(CFG, v, 1, 128).total
        assert 0 <= row["accuracy"]["low"] <= row["accuracy"]["mean"] <= row["accuracy"]["high"] <= 1
        assert len(row["accuracy"]["per_seed"]) == len(doc["data"]["train_seeds"])
        assert row["fidelity"]["low"] <= row["fidelity"]["mean"] <= row["fidelity"]["high"]
        if not v.is_original:
            assert row["vs_original"]["verdict"] in VERDICTS
            assert row["vs_original"]["low"] <= row["vs_original"]["effect"] <= row["vs_original"]["high"]
    assert doc["variants"][0]["fidelity"]["mean"] == pytest.approx(1.0, abs=1e-6)
    b = doc["baselines"]
    assert {"majority", "bag_of_words", "bag_of_words_full_train", "unrelated_cosine"} <= set(b)
    assert doc["data"]["dev_scored"] == doc["data"]["dev"] == 1694  # every dev sentence scored
    assert doc["environment"]["cpu"] and doc["threads"] == 1
    assert set(doc["load_average"]) >= {"start", "end", "during"}
    assert doc["settings"]["train_seeds"] == doc["data"]["train_seeds"] and "bootstrap_seed" in doc["settings"]
    assert doc["model"]["sha256"] == minilm.WEIGHTS_SHA256
    assert all(c["word"] in CLAIM_WORDS for c in doc["claims"])
    assert {c["key"] for c in doc["claims"]} >= {"factorization", "sharing", "relaxed-r8"}
