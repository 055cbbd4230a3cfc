"""The counter audit: on a grid of configs (families, sharing modes, G and K, heads, activations) every tool runs
and its difference from the exact figure equals the sum of the causes computed from the config; a few figures
against hand arithmetic (tests/helpers/facts.py); a missing tool is a row, not an error; the CLI."""

from __future__ import annotations

import importlib.util
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from albert_core import PRESETS, ModelConfig
from albert_core.cli.main import main
from albert_core.counting.flops import count_flops, dense_masked_excess
from albert_core.counting.params import count_params
from albert_core.review import audit as audit_mod
from albert_core.review.audit import PER_MODULE, TOOLS, audit
from tests.helpers.audit import TINY, family_tiny
from tests.helpers.facts import EXACT_COUNTS, forward_flops_closed_form
from tests.helpers.family_strategies import family_configs

GRID = [
    *(
        dict(
            sharing=sharing,
            num_layers=L,
            num_hidden_groups=G,
            inner_group_num=K,
            head=head,
            hidden_act=act,
            tie_word_embeddings=tied,
        )
        for sharing, (L, G, K), head, act, tied in [
            ("all", (4, 1, 1), "model", "gelu_new", True),
            ("all", (5, 2, 1), "pretraining", "gelu", True),  # G does not divide L
            ("all", (4, 2, 3), "masked-lm", "relu", False),
            ("none", (4, 1, 1), "pretraining", "gelu_new", True),
            ("none", (3, 1, 2), "masked-lm", "gelu", True),
            ("attention", (4, 2, 1), "model", "relu", True),
            ("attention", (5, 2, 3), "pretraining", "gelu_new", False),
            ("attention", (4, 1, 2), "masked-lm", "gelu", True),
            ("ffn", (4, 2, 1), "pretraining", "relu", True),
            ("ffn", (5, 2, 3), "model", "gelu_new", True),
            ("ffn", (6, 4, 2), "masked-lm", "gelu_new", False),
        ]
    ),
    dict(family="bert", sharing="none", head="model", hidden_act="gelu"),
    dict(family="bert", sharing="none", head="pretraining", hidden_act="gelu"),
    dict(family="bert", sharing="none", head="masked-lm", hidden_act="relu", tie_word_embeddings=False),
]


# The encoders after BERT at TINY's sizes, as their transformers classes build them: every block kind the audit's
# causes cover (GLU fused and in three linears, rotary, local attention, LayerNorm without bias and RMSNorm, pre-norm
# with a final norm and an identity first norm, biases off and on, grouped-query attention, DeBERTa's relative
# attention, RoBERTa's offset positions, ELECTRA's projection and discriminator), every head, tied and untied.
FAMILY_GRID = [
    ("modernbert-base", dict()),
    ("modernbert-base", dict(head="masked-lm")),
    ("modernbert-base", dict(head="masked-lm", tie_word_embeddings=False, hidden_act="relu", norm_bias=True,
                             attention_bias=True, mlp_bias=True, head_bias=True, decoder_bias=False)),
    ("modernbert-base", dict(num_layers=3, local_window=2, global_every=2)),
    ("eurobert-210m", dict(num_kv_heads=1)),
    ("eurobert-210m", dict(head="masked-lm", num_kv_heads=1)),
    ("eurobert-210m", dict(head="masked-lm", tie_word_embeddings=True, hidden_act="gelu", attention_bias=True,
                           mlp_bias=True, decoder_bias=True)),
    ("nomic-bert-2048", dict()),
    ("nomic-bert-2048", dict(head="masked-lm", tie_word_embeddings=False, hidden_act="relu")),
    ("roberta-base", dict()),
    ("roberta-base", dict(head="masked-lm", hidden_act="relu")),  # its LM head calls GELU whatever hidden_act says
    ("xlm-roberta-base", dict(head="masked-lm", tie_word_embeddings=False)),
    ("electra-small-discriminator", dict()),
    ("electra-small-discriminator", dict(head="masked-lm")),
    ("electra-small-discriminator", dict(head="masked-lm", hidden_act="silu")),  # the generator head: GELU
    ("electra-small-discriminator", dict(head="model", embedding_size=16, hidden_act="relu")),
    ("deberta-v3-xsmall", dict()),
    ("deberta-v3-xsmall", dict(head="masked-lm")),
    ("deberta-v3-xsmall", dict(head="masked-lm", tie_word_embeddings=False, embedding_size=8, hidden_act="relu",
                               type_vocab_size=2)),
]


def _missing() -> list[str]:
    return sorted({t.module for t in TOOLS if t.dist and importlib.util.find_spec(t.module) is None})


def test_the_audit_extra_is_installed():
    """The tests' install (`make .venv/.dev`) installs requirements-audit.txt: every tool runs here."""
    assert _missing() == []


@pytest.mark.parametrize("changes", GRID, ids=lambda c: "-".join(f"{k}={v}" for k, v in c.items()))
def test_every_difference_is_explained(changes):
    _assert_all_explained(ModelConfig(**TINY).replace(**changes))


@pytest.mark.parametrize(
    ("name", "changes"), FAMILY_GRID, ids=lambda c: c if isinstance(c, str) else "-".join(f"{k}={v}" for k, v in c.items())
)
def test_every_difference_is_explained_for_the_encoders_after_bert(name, changes):
    _assert_all_explained(family_tiny(name, **changes))


def _assert_all_explained(cfg):
    """Every tool ran on ``cfg`` (2 x 8 tokens) and every difference, whole and per component, is explained."""
    result = audit(cfg, batch=2, seq_len=8)
    assert len(result.rows) == len(TOOLS)
    for row in result.rows:
        assert row.status in ("ran", "computed"), (row.tool.key, row.status)
        assert row.explained == row.figure - row.exact, (row.tool.key, row.causes)
        _check_components(row)
    assert result.unexplained == 0 and result.unexplained_components == 0


def _check_components(row):
    """Per-module tools: a row per component, each difference explained, the exact figures adding up to the
    exact counters' totals (parameters held; forward FLOPs)."""
    per_module = row.tool.key.rsplit("-", 1)[0] in PER_MODULE
    assert bool(row.components) == per_module, row.tool.key
    if not per_module:
        return
    for c in row.components:
        assert c.explained == c.figure - c.exact, (row.tool.key, c.component, c.figure, c.exact, c.causes)
    cfg, workload = row.config, (2, 8)
    total = (
        count_params(cfg).total if row.tool.quantity == "parameters" else count_flops(cfg, *workload).forward
    )
    assert sum(c.exact for c in row.components) == total
    layers = [c for c in row.components if c.component.startswith("layer ")]
    assert [c.component for c in layers] == [f"layer {i}" for i in range(cfg.num_layers)]


def test_figures_against_hand_arithmetic():
    """albert-base with pre-training heads, one sequence of 128 tokens: V = 30,000, E = 128, H = 768."""
    cfg = PRESETS["albert-base"].replace(head="pretraining")
    rows = {r.tool.key: r for r in audit(cfg, 1, 128).rows}
    params = EXACT_COUNTS["albert-base"][1]
    assert rows["parameters"].figure == params
    assert rows["state_dict"].figure == params + 30_000 * 128 + 30_000  # tied decoder weight and bias again
    assert rows["torchinfo"].figure == params + 30_000 * 128
    layer_norm = 128 * 128 + 2 * 128 * 768 * 12 + 128 * 128  # embeddings, 2 per layer, MLM transform
    model_forward = forward_flops_closed_form(PRESETS["albert-base"], 1, 128)
    heads = 2 * 128 * (768 * 128 + 128 * 30_000) + 2 * 768 * 2  # MLM transform + decoder, SOP
    assert rows["flop_counter-sdpa"].figure == model_forward + heads
    assert rows["thop-sdpa"].figure == (model_forward + heads) // 2 + 4 * layer_norm
    assert rows["6n_unique"].figure == 6 * params * 128


def test_the_sdpa_gap_is_the_attention_matmuls():
    """fvcore skips scaled_dot_product_attention: its sdpa and eager figures differ by 2*B*S^2*H*L MACs."""
    cfg = ModelConfig(**TINY)
    rows = {r.tool.key: r.figure for r in audit(cfg, 2, 8).rows}
    assert rows["fvcore-eager"] - rows["fvcore-sdpa"] == 2 * 2 * 8 * 8 * 16 * 4


# TINY at batch 2 x 8 tokens: N = 16 tokens, H = 16, I = 24, E = 8, V = 50, S = 8
N, H, I, E, V, S = 16, 16, 24, 8, 50, 8  # noqa: E741 (paper notation)
ATTENTION_FLOPS = 2 * N * H * 3 * H + 2 * N * H * H  # Q/K/V and the output projection
SCORES_FLOPS = 4 * 2 * S * S * H  # QKᵀ and A·V
FFN_FLOPS = 2 * 2 * N * H * I
LAYER_FLOPS = ATTENTION_FLOPS + SCORES_FLOPS + FFN_FLOPS  # one inner layer: 65,536
LAYER_NORM_MACS = 5 * N * H  # fvcore: 5 per element


def _row(cfg, tool_key):
    return audit(cfg, 2, 8, tools=lambda t: t.key == tool_key).rows[0]


def _components(cfg, tool_key):
    return {c.component: c for c in _row(cfg, tool_key).components}


def test_a_shared_layer_group_is_reported_under_its_first_layer():
    """All layers share one group (G = 1): FlopCounterMode reports the four layers' FLOPs under layer 0's
    module and nothing under layers 1-3; fvcore the same, in MACs with LayerNorm and without SDPA."""
    cfg = ModelConfig(**TINY)
    assert LAYER_FLOPS == 65_536  # the test's own closed form above, not a code constant: its stated total
    fcm = _components(cfg, "flop_counter-sdpa")
    assert (fcm["layer 0"].figure, fcm["layer 0"].exact) == (4 * LAYER_FLOPS, LAYER_FLOPS)
    assert [fcm[f"layer {i}"].figure for i in (1, 2, 3)] == [0, 0, 0]
    assert fcm["layer 0"].explained == 3 * LAYER_FLOPS and fcm["layer 3"].explained == -LAYER_FLOPS
    fv = _components(cfg, "fvcore-sdpa")
    fvcore_layer = (ATTENTION_FLOPS + FFN_FLOPS) // 2 + 2 * LAYER_NORM_MACS
    assert fv["layer 0"].figure == 4 * fvcore_layer
    assert fv["embeddings"].figure == 5 * N * E  # the embedding LayerNorm only: lookups are not counted
    assert fv["projection"].figure == N * E * H


def test_fvcore_reports_a_shared_attention_block_under_its_owner():
    """Shared attention, G = 2 of L = 4, K = 2: fvcore names each operator by the module that runs it, so
    layers 1 and 3 lose their attention to layers 0 and 2; FlopCounterMode follows the calls."""
    cfg = ModelConfig(**TINY).replace(sharing="attention", num_hidden_groups=2, inner_group_num=2)
    attention_macs = ATTENTION_FLOPS // 2 + LAYER_NORM_MACS
    ffn_macs = FFN_FLOPS // 2 + LAYER_NORM_MACS
    fv = _components(cfg, "fvcore-sdpa")
    assert fv["layer 0"].figure == 2 * (2 * attention_macs + ffn_macs) == 97_792
    assert fv["layer 1"].figure == 2 * ffn_macs == 27_136
    assert fv["layer 1"].exact == 2 * LAYER_FLOPS
    fcm = _components(cfg, "flop_counter-eager")
    assert {c.figure for k, c in fcm.items() if k.startswith("layer")} == {2 * LAYER_FLOPS}
    ti = _components(cfg, "torchinfo")  # parameters held: the owner holds the shared attention blocks
    attention_params, ffn_params = 4 * (H * H + H) + 2 * H, 2 * H * I + I + 3 * H
    assert ti["layer 0"].figure == 2 * (attention_params + ffn_params)
    assert ti["layer 1"].figure == 2 * ffn_params


@pytest.mark.parametrize("family", ["albert", "bert"])
def test_torchinfo_counts_the_tied_decoder_in_the_mlm_head(family):
    cfg = ModelConfig(**TINY).replace(
        family=family, sharing="none" if family == "bert" else "all", head="masked-lm"
    )
    width = cfg.embedding_size
    mlm = _components(cfg, "torchinfo")["mlm_head"]
    assert mlm.figure - mlm.exact == V * width
    assert mlm.exact == (cfg.hidden_size * width + width) + 2 * width + V  # transform, LayerNorm, output bias
    if family == "bert":
        fcm = _components(cfg, "flop_counter-sdpa")
        assert all(not c.causes for c in fcm.values())
        assert fcm["layer 2"].figure == LAYER_FLOPS


@pytest.mark.parametrize("attention", ["sdpa", "eager"])
def test_thop_leaves_the_attention_matmuls_out_of_its_modules(attention):
    """thop's per-layer tree holds its module hooks' counts: MACs of every Linear, 4 per LayerNorm element
    (G = 1: the four layers under layer 0). The attention matmuls (SDPA or eager) reach its function counter,
    which adds them to the total only."""
    row = _row(ModelConfig(**TINY), f"thop-{attention}")
    parts = {c.component: c for c in row.components}
    thop_layer = (ATTENTION_FLOPS + FFN_FLOPS) // 2 + 4 * 2 * N * H
    assert parts["layer 0"].figure == 4 * thop_layer == 122_880
    assert [parts[f"layer {i}"].figure for i in (1, 2, 3)] == [0, 0, 0]
    assert parts["embeddings"].figure == 4 * N * E
    assert row.figure - sum(c.figure for c in row.components) == 4 * SCORES_FLOPS // 2


def test_ptflops_reports_a_shared_attention_block_under_its_owner():
    """ptflops (on the CPU; TINY is its own small twin), shared attention G = 2 of L = 4, K = 2, ReLU, eager:
    each Linear's MACs plus 1 per bias output, LayerNorm and nn.ReLU 1 per element, the shared attention
    blocks under layers 0 and 2. The attention matmuls, softmax and F.relu its torch patches count are in the
    total only."""
    cfg = ModelConfig(**TINY).replace(
        sharing="attention", num_hidden_groups=2, inner_group_num=2, hidden_act="relu"
    )
    row = _row(cfg, "ptflops-eager")
    assert row.config == cfg
    parts = {c.component: c for c in row.components}
    attention = ATTENTION_FLOPS // 2 + 4 * N * H + N * H  # MACs, 4 biases of H, LayerNorm
    ffn = FFN_FLOPS // 2 + N * (I + H) + N * H
    relu = N * I
    assert parts["layer 0"].figure == 2 * (2 * attention + ffn + relu) == 97_792
    assert parts["layer 1"].figure == 2 * (ffn + relu) == 27_136
    softmax = 2 * 2 * S * S  # batch x heads x S x S
    total_only = 4 * 2 * (SCORES_FLOPS // 2 + softmax + relu)  # per executed layer
    assert row.figure - sum(c.figure for c in row.components) == total_only


def test_calflops_puts_every_count_under_a_module():
    """calflops adds each patched function's count to the innermost module running it: the eager attention
    matmuls and softmax under the attention, F.relu under nn.ReLU, 5 per LayerNorm element; G = 1: all four
    layers under layer 0; the components add up to its total."""
    cfg = ModelConfig(**TINY).replace(hidden_act="relu", head="masked-lm")
    row = _row(cfg, "calflops-eager")
    parts = {c.component: c for c in row.components}
    calflops_layer = LAYER_FLOPS + 5 * 2 * N * H + 2 * 2 * S * S + N * I  # LayerNorms, softmax, ReLU
    assert parts["layer 0"].figure == 4 * calflops_layer == 274_944
    assert [parts[f"layer {i}"].figure for i in (1, 2, 3)] == [0, 0, 0]
    assert parts["mlm_head"].figure == 2 * N * (H * E + E * V) + 5 * N * E + N * E
    assert sum(c.figure for c in row.components) == row.figure


def test_a_missing_tool_is_listed_not_raised(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(
        audit_mod.importlib.util, "find_spec", lambda name, *a: None if name == "thop" else real(name, *a)
    )
    rows = {r.tool.key: r for r in audit(ModelConfig(**TINY), 1, 8).rows}
    assert rows["thop-sdpa"].status == "not installed" and rows["thop-sdpa"].figure is None
    assert rows["thop-sdpa"].unexplained is None and rows["thop-sdpa"].ratio is None
    assert rows["fvcore-sdpa"].status == "ran"


def test_the_small_twin_keeps_the_structure():
    cfg = PRESETS["albert-xxlarge"].replace(num_hidden_groups=3, inner_group_num=2, head="pretraining")
    twin = audit_mod.small_twin(cfg, 128)
    for name in (
        "family",
        "num_layers",
        "num_hidden_groups",
        "inner_group_num",
        "sharing",
        "head",
        "hidden_act",
    ):
        assert getattr(twin, name) == getattr(cfg, name)
    assert twin.hidden_size == 32 and twin.intermediate_size == 128 and twin.vocab_size == 512


@pytest.mark.parametrize(
    ("name", "kept"),
    [
        ("modernbert-base", ("local_window", "global_every", "ffn_kind", "norm_bias", "first_layer_norm")),
        ("eurobert-610m", ("norm", "head_transform", "tie_word_embeddings")),
        ("electra-base-discriminator", ("head",)),
        ("deberta-v3-large", ("position_buckets", "position")),
        ("roberta-large", ("position_offset", "type_vocab_size")),
    ],
)
def test_the_small_twin_keeps_a_familys_layout(name, kept):
    """The twin keeps every axis, a projection exactly where the family has one, the group size of grouped-query
    attention where it divides the twin's heads (EuroBERT-610m: 18 heads in groups of 3; the twin's 4 heads get one
    key/value head), RoBERTa's offset rows above the sequence."""
    from albert_core.configuration.hf_config import hf_class_mismatch
    from albert_core.configuration.presets import ENCODER_PRESETS

    cfg = ENCODER_PRESETS[name]
    twin = audit_mod.small_twin(cfg, 128)
    assert hf_class_mismatch(twin) is None  # transformers' class of the family builds it
    assert twin.is_factorized == cfg.is_factorized and twin.hidden_size == 32 and twin.num_heads == 4
    assert all(getattr(twin, k) == getattr(cfg, k) for k in kept)
    if name == "eurobert-610m":
        assert (cfg.num_heads, cfg.num_kv_heads, twin.num_kv_heads) == (18, 6, 1)
    if name == "roberta-large":
        assert twin.max_seq_len >= 128


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"batch": 0}, "batch must be a whole number between 1 and 64"),
        ({"seq_len": 64}, "seq_len (64) must not exceed max_position_embeddings (32)"),
    ],
)
def test_bad_workloads_name_the_field(kwargs, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        audit(ModelConfig(**TINY), **{"batch": 1, "seq_len": 8, **kwargs})


def test_cli_json_and_text(capsys):
    assert main(["audit", "--preset", "albert-base", "--num-layers", "2", "--seq-len", "16", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["unexplained_rows"] == 0 and data["unexplained_component_rows"] == 0
    assert {r["tool"] for r in data["rows"]} == {t.key for t in TOOLS}
    fvcore = next(r for r in data["rows"] if r["tool"] == "fvcore-sdpa")
    assert [c["component"] for c in fvcore["components"]][:3] == ["embeddings", "projection", "layer 0"]
    assert all(c["unexplained"] == 0 for c in fvcore["components"])
    assert main(["audit", "--preset", "bert-base", "--num-layers", "1", "--seq-len", "8"]) == 0
    out = capsys.readouterr().out
    assert "unexplained differences: 0" in out and "small twin" in out


def test_cli_on_a_family_preset(capsys):
    """EuroBERT-210m cut to one layer: every row explained, RMSNorm named in torchinfo's and 6N's causes."""
    assert main(["audit", "--preset", "eurobert-210m", "--num-layers", "1", "--seq-len", "8", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["unexplained_rows"] == 0 and data["unexplained_component_rows"] == 0
    six_n = next(r for r in data["rows"] if r["tool"] == "6n_unique")
    assert any(c["what"] == "biases and RMSNorm parameters counted as matmul weights" for c in six_n["causes"])


def test_cli_bad_input_is_one_line(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["audit", "--preset", "albert-base", "--seq-len", "1024"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "max_position_embeddings" in err


@pytest.mark.slow
@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(family_configs(), st.integers(1, 3), st.integers(1, 20))
def test_random_family_configs_are_explained(cfg, batch, seq_len):
    """Small configs of the seven families as their classes build them (tests/helpers/family_strategies.py: biases,
    windows, key/value heads, E, buckets, heads and tying drawn), every tool and component explained."""
    result = audit(cfg, batch, min(seq_len, cfg.max_seq_len))
    assert all(r.status in ("ran", "computed") for r in result.rows)
    assert result.unexplained == 0 and result.unexplained_components == 0


@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "head"),
    [("modernbert-base", "masked-lm"), ("ettin-encoder-17m", "model"), ("eurobert-210m", "masked-lm"),
     ("nomic-bert-2048", "model"), ("roberta-base", "model"), ("electra-small-discriminator", "discriminator"),
     ("deberta-v3-xsmall", "model")],
)
def test_encoder_presets_at_full_size(name, head):
    """The measured table of docs/audit.md (1 x 128 tokens; DeBERTa's forward counters on its CPU twin)."""
    from albert_core.configuration.presets import ENCODER_PRESETS

    result = audit(ENCODER_PRESETS[name].replace(head=head), 1, 128)
    assert all(r.status in ("ran", "computed") for r in result.rows)
    assert result.unexplained == 0 and result.unexplained_components == 0


@pytest.mark.slow
@pytest.mark.parametrize("name", list(PRESETS))
def test_presets_at_full_size(name):
    for head in ("model", "pretraining"):
        result = audit(PRESETS[name].replace(head=head), 1, 128)
        assert result.unexplained == 0 and result.unexplained_components == 0


# ----------------------------------------------------------------------------- the encoders after BERT, by hand
def _rows(cfg, keys):
    return {r.tool.key: r for r in audit(cfg, 2, 8, tools=lambda t: t.key in keys).rows}


def test_modernbert_local_attention_is_scored_on_every_pair():
    """L = 4, a global layer every third (layers 0 and 3), a window of 4 tokens: layers 1 and 2 attend to 34 of the
    64 pairs of 8 tokens; transformers' model scores all 64 and masks 30, which every tool that sees the attention
    matmuls counts (FlopCounterMode in FLOPs, fvcore and thop in MACs), under the layer's module where it reports
    per module."""
    cfg = family_tiny("modernbert-base")
    excess = 2 * 4 * 2 * (64 - 34) * H  # two local layers, QKᵀ and A·V, batch 2
    assert excess == dense_masked_excess(cfg, 2, 8) == 7_680
    rows = _rows(cfg, {"flop_counter-sdpa", "flop_counter-eager", "fvcore-sdpa", "fvcore-eager", "thop-sdpa"})
    for key in ("flop_counter-sdpa", "flop_counter-eager"):
        assert rows[key].figure - rows[key].exact == excess
        parts = {c.component: c for c in rows[key].components}
        assert parts["layer 1"].figure - parts["layer 1"].exact == excess // 2
        assert parts["layer 0"].figure == parts["layer 0"].exact
    dense_scores = 4 * 2 * 8 * 8 * H * 4  # every pair in all four layers
    assert rows["fvcore-eager"].figure - rows["fvcore-sdpa"].figure == dense_scores // 2  # fvcore skips SDPA
    thop_scores = rows["thop-sdpa"].figure - sum(c.figure for c in rows["thop-sdpa"].components)
    assert thop_scores == dense_scores // 2  # SDPA's products: in thop's total, under no module


def test_eurobert_rmsnorm_silu_and_grouped_queries():
    """EuroBERT: RMSNorm is a module of its own (no tool has a rule for it), SwiGLU in three linears (gate and up
    H -> I, down I -> H: every tool counts all three), SiLU counted once by ptflops and calflops, no biases, one
    key/value head for two query heads (K and V projections H -> 8)."""
    cfg = family_tiny("eurobert-210m", num_kv_heads=1)
    forward = count_flops(cfg, 2, 8).forward
    kv = cfg.kv_size
    assert kv == 8
    matmuls = 2 * N * (H * (H + 2 * kv) + H * H + H * 2 * I + I * H) * 4
    assert forward == matmuls + SCORES_FLOPS * 4
    silu = N * I * 4
    keys = {"fvcore-sdpa", "thop-sdpa", "calflops-sdpa", "ptflops-sdpa", "torchinfo_macs-sdpa"}
    rows = _rows(cfg, keys)
    assert rows["fvcore-sdpa"].figure == matmuls // 2  # no RMSNorm, SDPA skipped
    assert rows["thop-sdpa"].figure == forward // 2  # no RMSNorm; SDPA through its function counter
    assert rows["calflops-sdpa"].figure == matmuls + silu
    assert rows["ptflops-sdpa"].figure == matmuls // 2 + silu  # no bias to add
    # torchinfo: each weight once per sequence, the RMSNorm weights too (9 norms of H: 2 per layer, the final one)
    assert rows["torchinfo_macs-sdpa"].figure == 2 * (matmuls // (2 * N) + 9 * H + V * H)


def test_deberta_runs_eager_on_the_cpu_twin():
    """DeBERTa's relative positions call .item(): every forward counter runs on the CPU, and its SDPA rows run the
    eager model (transformers' DeBERTa-v2 has none). Its attention matmuls are torch.bmm, which calflops does not
    patch: QKᵀ, A·V and the c2p / p2c scores against the 16-row relative table are missing from its figure."""
    cfg = family_tiny("deberta-v3-xsmall")
    rows = _rows(cfg, {"calflops-sdpa", "flop_counter-eager", "parameters"})
    assert rows["parameters"].run_on == "meta device, full size"
    assert rows["calflops-sdpa"].run_on.startswith("CPU") and "eager" in rows["calflops-sdpa"].run_on
    fb = count_flops(cfg, 2, 8).by_name()
    assert fb["encoder.attention.relative"] == 4 * (2 * 2 * 16 * H * H + 2 * 2 * 2 * 8 * 16 * H)
    assert rows["flop_counter-eager"].figure == rows["flop_counter-eager"].exact
    relative_scores = 4 * 2 * 2 * 2 * 8 * 16 * H
    layer_norm = N * H * (1 + 2 * 4) + 16 * H  # embeddings, two per layer, the relative table once
    softmax = 2 * 2 * S * S * 4
    assert rows["calflops-sdpa"].figure == (
        count_flops(cfg, 2, 8).forward - SCORES_FLOPS * 4 - relative_scores + 5 * layer_norm + softmax
    )


def test_a_tied_decoder_holding_its_bias_is_listed_twice_without_one():
    """ModernBERT's decoder holds its own bias: state_dict() lists the tied weight twice, nothing else."""
    cfg = family_tiny("modernbert-base", head="masked-lm")
    row = _rows(cfg, {"state_dict"})["state_dict"]
    assert row.figure - row.exact == V * H


def test_an_albertized_encoder_is_not_run():
    """An encoder after BERT with E or sharing its transformers class does not have: no model to run the tools on,
    each row says why; the 6N rows are arithmetic and stay."""
    cfg = family_tiny("modernbert-base", embedding_size=8, sharing="all")
    rows = {r.tool.key: r for r in audit(cfg, 1, 8).rows}
    assert rows["fvcore-sdpa"].status.startswith("not run: transformers' ModernBertModel has no setting for")
    assert rows["fvcore-sdpa"].figure is None and rows["6n_unique"].status == "computed"


# ----------------------------------------------------------------------------- sharing schemes since ALBERT
SCHEMES = {
    "lora-8": dict(lora_rank=8),
    "repeat-2": dict(repeat=2),
    "unique-ends": dict(unique_ends=True),
    "cycle-G2": dict(num_hidden_groups=2, block_order="cycle"),
    "all-four": dict(num_hidden_groups=2, block_order="cycle", unique_ends=True, repeat=2, lora_rank=8),
    "attention-lora-x2": dict(sharing="attention", repeat=2, lora_rank=4, lora_targets="q-v-in"),
}


@pytest.mark.parametrize("name", list(SCHEMES))
def test_a_sharing_scheme_is_not_run_on_transformers_and_checked_by_own_arithmetic(name):
    """transformers has no model of a scheme (the model it would build is another one): no tool row has a figure,
    never a match; each row says why. The audit's own arithmetic (the schedule enumerated) equals the exact counts."""
    from albert_core.configuration.coerce import coerce

    cfg = coerce(SCHEMES[name], PRESETS["albert-base"]).config
    result = audit(cfg, 1, 16)
    for row in result.rows:
        if row.tool.quantity == "training":
            assert row.status == "computed" and row.unexplained == 0
        else:
            assert row.figure is None and row.unexplained is None, row.tool.key
            assert "transformers has no model of the sharing scheme" in row.status, row.status
    assert result.scheme and all(c.matches for c in result.scheme), result.scheme
    assert result.to_dict()["scheme_mismatches"] == 0


def test_scheme_checks_by_hand():
    """ALBERT-base, G 2 in a cycle, unique ends, each layer twice, rank 8 on all six: 24 blocks run, 4 of each held
    (2 groups, the first and last layers'), the LoRA at (12 - 2) x 2 = 20 positions."""
    cfg = PRESETS["albert-base"].replace(num_hidden_groups=2, block_order="cycle", unique_ends=True, repeat=2,
                                         lora_rank=8)
    checks = {c.what.split(":")[0].split(" (")[0]: c for c in audit_mod.scheme_checks(cfg)}
    H, I = 768, 3072  # noqa: E741
    assert checks["blocks executed"].own == 24
    assert checks["encoder block parameters"].own == 4 * (4 * H * H + 6 * H) + 4 * (2 * H * I + I + 3 * H)
    assert checks["LoRA on q"].own == 20 * 8 * 2 * H and checks["LoRA on out"].own == 20 * 8 * (I + H)
    assert audit_mod.scheme_checks(PRESETS["albert-base"]) == ()  # ALBERT's own scheme: nothing to check


def test_scheme_checks_catch_a_wrong_count(monkeypatch):
    """The checks are not the library's numbers read twice: a LoRA count off by one position is a mismatch."""
    from albert_core.configuration.config import ModelConfig as Config

    cfg = PRESETS["albert-base"].replace(unique_ends=True, lora_rank=4)
    monkeypatch.setattr(Config, "attention_lora_positions", property(lambda self: 12 * (self.lora_rank > 0)))
    checks = {c.what.split(":")[0]: c for c in audit_mod.scheme_checks(cfg)}
    assert not checks["LoRA on q"].matches and checks["LoRA on in"].matches


@settings(max_examples=25, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(layers=st.integers(3, 9), groups=st.integers(1, 4), inner=st.integers(1, 2), repeat=st.integers(1, 3),
       ends=st.booleans(), cycle=st.booleans(), sharing=st.sampled_from(["all", "attention", "ffn", "none"]),
       rank=st.sampled_from([0, 1, 4]), targets=st.sampled_from(["q-k-v-o-in-out", "q-v", "in-out", "k-out"]))
def test_scheme_checks_on_random_schemes(layers, groups, inner, repeat, ends, cycle, sharing, rank, targets):
    from hypothesis import assume

    values = dict(num_layers=layers, num_hidden_groups=groups, inner_group_num=inner, repeat=repeat, sharing=sharing,
                  unique_ends=ends, block_order="cycle" if cycle else "groups", lora_rank=rank, lora_targets=targets)
    try:
        cfg = ModelConfig(**{**TINY, **values})
    except ValueError:
        assume(False)
    checks = audit_mod.scheme_checks(cfg, 1, 8)
    assert all(c.matches for c in checks), checks


def test_cli_audit_of_a_scheme(capsys):
    assert main(["audit", "--lora-rank", "8", "--repeat", "2", "--seq-len", "16"]) == 0
    out = capsys.readouterr().out
    assert "transformers has no model of the sharing scheme repeat=2, lora_rank=8" in out
    assert "LoRA on q: 24 positions x r 8 x (768 + 768)" in out and "DIFFERS" not in out  # 12 layers, twice
    assert "sharing-scheme figures that differ from the audit's own arithmetic: 0" in out
