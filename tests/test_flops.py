"""count_flops against torch's FlopCounterMode on transformers' eager models (meta device), and against
ELECTRA's element-wise accounting written out independently."""

from __future__ import annotations

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from torch.utils.flop_counter import FlopCounterMode

from albert_core import PRESETS, ModelConfig, count_flops
from tests.helpers.checkpointing import checkpoint_layers
from tests.helpers.hf_models import hf_model
from tests.helpers.strategies import configs

pytestmark = pytest.mark.slow  # FlopCounterMode on transformers' models: the oracle, slow


def measure(
    cfg: ModelConfig, batch: int, seq_len: int, backward: bool = False, checkpointed: bool = False
) -> tuple[int, dict[str, int]]:
    """FlopCounterMode's total FLOPs (forward, or forward + backward) and its per-op counts;
    ``checkpointed``: train mode with gradient checkpointing of every encoder layer."""
    model = hf_model(cfg, device="meta")
    assert model.config._attn_implementation == "eager"
    if checkpointed:
        model.train()  # transformers checkpoints in train mode only (dropout adds no matmul FLOPs)
        checkpoint_layers(model)
    ids = torch.zeros(batch, seq_len, dtype=torch.long, device="meta")
    with FlopCounterMode(display=False) as counter:
        out = model(input_ids=ids)
        if backward:
            # Every output takes part, so every weight gets its gradient.
            sum(t.float().sum() for t in out.to_tuple() if torch.is_tensor(t)).backward()
    per_op = {str(op): n for op, n in counter.get_flop_counts()["Global"].items()}
    return counter.get_total_flops(), per_op


@st.composite
def workloads(draw):
    cfg = draw(configs(sharing=("none", "all")))
    return cfg, draw(st.integers(1, 3)), draw(st.integers(1, cfg.max_position_embeddings))


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(workloads())
def test_forward_equals_flop_counter(work) -> None:
    cfg, batch, seq_len = work
    got = count_flops(cfg, batch, seq_len)
    total, per_op = measure(cfg, batch, seq_len)
    assert got.forward == total
    # The eager attention's two batched matmuls are exactly our attention-score component.
    assert got.by_name()["encoder.attention.scores"] == per_op.get("aten.bmm", 0)
    assert got.macs * 2 == got.forward


@pytest.mark.parametrize("name", list(PRESETS))
def test_presets_forward_exact_and_training_close(name: str) -> None:
    cfg = PRESETS[name].replace(head="pretraining")
    got = count_flops(cfg, 2, 128)
    forward, _ = measure(cfg, 2, 128)
    assert got.forward == forward
    training, _ = measure(cfg, 2, 128, backward=True)
    assert abs(got.training - training) <= 0.005 * training


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(workloads())
def test_training_within_half_percent(work) -> None:
    cfg, batch, seq_len = work
    training, _ = measure(cfg, batch, seq_len, backward=True)
    assert abs(count_flops(cfg, batch, seq_len).training - training) <= 0.005 * training


def test_facts_file_formula_and_sharing_saves_no_flops() -> None:
    # transformers' exact count: fwd = 2BSEH + L*K*(8BSH^2 + 4BS^2H + 4BSHI) + 2BH^2 + heads
    B, S = 4, 256
    for G, K in ((1, 1), (2, 3)):
        cfg = PRESETS["albert-large"].replace(head="pretraining", num_hidden_groups=G, inner_group_num=K)
        V, E, H, I, L = 30000, 128, 1024, 4096, 24  # noqa: E741 (paper notation)
        fwd = (2 * B * S * E * H + L * K * (8 * B * S * H * H + 4 * B * S * S * H + 4 * B * S * H * I)
               + 2 * B * H * H + 2 * B * S * H * E + 2 * B * S * E * V + 2 * B * H * 2)
        assert count_flops(cfg, B, S).forward == fwd
    # Sharing changes parameters, never FLOPs.
    base = PRESETS["albert-base"]
    runs = {count_flops(base.replace(sharing=s)).forward for s in ("none", "all", "attention", "ffn")}
    assert len(runs) == 1


def electra_block_elementwise(h: int, i: int, s: int, heads: int) -> int:
    """Non-matmul entries of ELECTRA's TransformerHparams.get_block_flops, for one sequence."""
    per_token = dict(
        kqv_bias=3 * h,
        attn_softmax=5 * s * heads,
        attention_dropout=4 * s * heads,
        attention_scale=s * heads,
        attn_output_bias=h,
        attn_output_dropout=4 * h,
        attn_output_residual=h,
        attn_output_layer_norm=5 * h,
        intermediate_act=8 * i,
        intermediate_bias=i,
        output_bias=h,
        output_dropout=4 * h,
        output_residual=h,
        output_layer_norm=5 * h,
    )
    return sum(per_token.values()) * s


def test_full_convention_follows_electra() -> None:
    cfg = PRESETS["bert-base"]
    B, S = 2, 128
    full = count_flops(cfg, B, S, convention="full")
    matmul = count_flops(cfg, B, S)
    assert full.by_name()["elementwise.encoder"] == 12 * B * electra_block_elementwise(768, 3072, S, 12)
    # ELECTRA's embedding post-processing: two adds, LayerNorm, dropout per element (lookups are 0 here).
    assert full.by_name()["elementwise.embeddings"] == B * S * 768 * (2 + 5 + 4)
    # The matmul part is unchanged; MACs count matmuls only.
    assert full.forward - matmul.forward == sum(
        c.forward for c in full.components if c.name.startswith("elementwise.")
    )
    assert full.macs == matmul.macs
    relu = count_flops(cfg.replace(hidden_act="relu"), B, S, convention="full")
    assert full.forward - relu.forward == 12 * B * S * 3072 * (8 - 1)


def test_mlm_fraction_recompute_and_per_token() -> None:
    cfg = PRESETS["albert-base"].replace(head="pretraining")
    full = count_flops(cfg, 2, 128)
    part = count_flops(cfg, 2, 128, mlm_fraction=0.15625)  # ELECTRA: 20 of 128 tokens
    for name in ("predictions.dense", "predictions.decoder"):
        assert part.by_name()[name] * 128 == full.by_name()[name] * 20
    for name in ("encoder.attention.qkv", "pooler", "sop_classifier"):
        assert part.by_name()[name] == full.by_name()[name]
    assert count_flops(cfg, 1, 10, mlm_fraction=0.01).by_name()["predictions.decoder"] == 2 * 128 * 30000
    re = count_flops(cfg, 2, 128, recompute=True)
    assert full.training == 3 * full.forward and full.recomputed == 0
    assert 3 * full.forward < re.training < 4 * full.forward  # the embeddings and heads are not recomputed
    assert full.backward == 2 * full.forward
    assert full.per_token_training == full.training / 256
    assert type(full.forward) is int and type(full.training) is int and type(full.macs) is int
    frame = full.to_frame()
    assert frame["forward"].sum() == full.forward and frame["training"].sum() == full.training


@pytest.mark.parametrize(
    ("name", "changes"),
    [
        ("bert-base", {}),
        ("bert-base", {"head": "masked-lm"}),
        ("albert-base", {}),
        ("albert-base", {"num_hidden_groups": 2, "inner_group_num": 2, "head": "model"}),
    ],
)
def test_recompute_equals_gradient_checkpointing(name: str, changes: dict) -> None:
    """Checkpointing every encoder layer (transformers' own for BERT) adds exactly the encoder
    layers' forward FLOPs to a training step: bert-base at 128 tokens 3.78x the forward, not 4x."""
    cfg = PRESETS[name].replace(**{"head": "pretraining", **changes})
    B, S = 1, 128
    plain, _ = measure(cfg, B, S, backward=True)
    checkpointed, _ = measure(cfg, B, S, backward=True, checkpointed=True)
    got = count_flops(cfg, B, S, recompute=True)
    assert got.recomputed == checkpointed - plain
    assert abs(got.training - checkpointed) <= 0.005 * checkpointed
    # independently: one (attention + FFN) layer's matmuls, L*K of them
    H, I = cfg.hidden_size, cfg.intermediate_size  # noqa: E741 (paper notation)
    layer = 2 * B * S * H * 3 * H + 4 * B * S * S * H + 2 * B * S * H * H + 4 * B * S * H * I
    assert got.recomputed == cfg.num_layers * cfg.inner_group_num * layer
    if name == "bert-base" and not changes:
        assert round(checkpointed / got.forward, 2) == 3.78
        assert round(got.training / got.forward, 2) == 3.78


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(workloads())
def test_recompute_equals_gradient_checkpointing_drawn(work) -> None:
    cfg, batch, seq_len = work
    plain, _ = measure(cfg, batch, seq_len, backward=True)
    checkpointed, _ = measure(cfg, batch, seq_len, backward=True, checkpointed=True)
    assert count_flops(cfg, batch, seq_len, recompute=True).recomputed == checkpointed - plain


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"batch": 0}, "batch must be a whole number >= 1"),
        ({"batch": 1.5}, "batch must be a whole number"),
        ({"batch": True}, "batch must be a whole number"),
        ({"seq_len": 0}, "seq_len must be a whole number >= 1"),
        ({"seq_len": 513}, r"seq_len \(513\) must not exceed max_position_embeddings \(512\)"),
        ({"mlm_fraction": 0}, r"mlm_fraction must be a number in \(0, 1\]"),
        ({"mlm_fraction": 1.5}, r"mlm_fraction must be a number in \(0, 1\]"),
        ({"mlm_fraction": float("nan")}, r"mlm_fraction must be a number in \(0, 1\]"),
        ({"convention": "macs"}, "convention must be one of matmul, full"),
        ({"recompute": "yes"}, "recompute must be True or False"),
    ],
)
def test_bad_input(kwargs, match) -> None:
    with pytest.raises(ValueError, match=match):
        count_flops(PRESETS["albert-base"], **kwargs)


def test_bad_config_type() -> None:
    with pytest.raises(ValueError, match="cfg must be a ModelConfig"):
        count_flops("albert-base")  # type: ignore[arg-type]
