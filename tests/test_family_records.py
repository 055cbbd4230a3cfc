"""Every family is one record (`albert_core.configuration.family.Family`): each shipped record is complete and agrees
with transformers (its config class, its model classes and their module names), and a family transformers has no
class for is added from data alone and counted exactly (NeoBERT, its closed form written out here)."""

from __future__ import annotations

import contextlib
import dataclasses

import pytest
import torch
import transformers

from albert_core import ModelConfig
from albert_core.configuration.config import AXIS_FIELDS, FAMILIES, FAMILY_NAMES, family_of, register_family
from albert_core.configuration.family import LAYOUT_EXTRA, Family, Reader
from albert_core.configuration.hf_config import config_from_hf, config_to_hf, hf_class_name
from albert_core.configuration.hf_schema import COMMON, EPS, Schema, limit
from albert_core.configuration.presets import ALL_PRESETS
from albert_core.counting.flops import count_flops
from albert_core.counting.memory import estimate_memory
from albert_core.counting.params import count_params
from albert_core.text.tokenizers import KINDS

transformers.logging.set_verbosity_error()
SMALL = dict(vocab_size=96, hidden_size=32, num_heads=4, intermediate_size=48, num_layers=2)


def _small(name: str, head: str) -> ModelConfig:
    base = ALL_PRESETS[family_of(name).base_preset]
    extra = {"position_buckets": 8} if base.position == "relative" else {}
    extra |= {"num_kv_heads": 2} if base.num_kv_heads else {}
    extra |= {"local_window": 4} if base.local_window else {}
    extra |= {"embedding_size": 16 if base.embedding_size != base.hidden_size else 32}
    return base.replace(**SMALL, **extra, max_position_embeddings=64 + base.position_offset, head=head)


@pytest.mark.parametrize("name", list(FAMILIES))
def test_every_family_has_a_complete_record(name):
    """A value for every axis (none by exclusion), a tokenizer the lab has, its label, a base preset of its own
    family on its layout, and a config.json it writes and reads back to the same config."""
    record = family_of(name)
    assert set(record.layout) == set(AXIS_FIELDS) | set(LAYOUT_EXTRA)
    assert record.tokenizer in KINDS and FAMILY_NAMES[name] == record.label and record.source
    base = ALL_PRESETS[record.base_preset]
    assert base.family == name
    assert {a: getattr(base, a) for a in AXIS_FIELDS} == {a: {**record.layout, **record.fixed}[a] for a in AXIS_FIELDS}
    assert config_from_hf(config_to_hf(base)) == base
    assert (record.order_head is not None) == record.paper  # the paper's two pretrain with SOP / NSP


@pytest.mark.slow  # transformers' classes as the oracle
@pytest.mark.parametrize("name", list(FAMILIES))
def test_every_record_names_what_transformers_builds(name):
    """The record's class prefix, heads, dropout and module names are transformers': its config class has the
    family's model_type and dropout defaults, and every module the record names exists in its models."""
    record = family_of(name)
    prefix = record.transformers.prefix
    theirs = getattr(transformers, prefix + "Config")()
    assert theirs.model_type == name
    dropouts = {k: v for k, v in theirs.to_dict().items() if k.endswith(("_dropout", "dropout_prob"))
                and not k.startswith(("classifier", "summary", "pooler"))}
    assert dropouts and set(dropouts.values()) == {record.dropout}
    m = record.transformers.modules
    for head in record.transformers.heads:
        cfg = _small(name, head)
        conf = transformers.AutoConfig.for_model(**config_to_hf(cfg))
        with torch.device("meta"):
            model = getattr(transformers, hf_class_name(cfg))(conf)
        names = {n for n, _ in model.named_modules()} | {n for n, _ in model.named_parameters()}
        p = "" if head == "model" else m.base + "."
        block = p + m.layer.format(i=0) + ("." + m.block.format(k=0) if m.block else "")
        has = {"word_embeddings": True, "position_embeddings": cfg.has_position_table,
               "token_type_embeddings": cfg.type_vocab_size > 0, "LayerNorm": cfg.embedding_norm}
        named = [p + m.embeddings, *(p + t for ours, t in m.tables.items() if has[ours]), p + m.layer.format(i=0)]
        named += [f"{block}.{t}" for group in (m.attention, m.ffn) for ts in group.values() for t in ts]
        named += [p + x for x in (m.projection, m.final_norm, m.pooler) if x and
                  (x != m.pooler or cfg.has_pooler) and (x != m.projection or cfg.is_factorized)]
        named += [p + x for x in (m.relative or ())]
        if cfg.has_mlm_head:
            built = {"dense": cfg.head_transform, "LayerNorm": cfg.head_transform, "bias": cfg.decoder_bias,
                     "decoder": True}
            named += [*(t for ours, t in m.mlm.items() if built[ours]), *(x for x in m.mlm_modules if x)]
        if cfg.has_order_head:
            named += list(m.order)
        if cfg.has_discriminator:
            named += [*m.discriminator.values(), m.discriminator_module]
        missing = [x for x in named if x not in names]
        assert not missing, (name, head, missing)


# ----------------------------------------------------------------------------- a family from data alone
NEOBERT_LAYOUT = {  # NeoBERT (Le Breton et al. 2025): pre-RMSNorm, SwiGLU, rotary, no biases, an untied biased decoder
    "ffn_kind": "glu", "position": "rotary", "position_offset": 0, "position_buckets": 0, "norm": "rmsnorm",
    "norm_bias": False, "norm_placement": "pre", "embedding_norm": False, "first_layer_norm": True,
    "attention_bias": False, "mlp_bias": False, "num_kv_heads": 0, "local_window": 0, "global_every": 1,
    "pooler": False, "head_transform": False, "head_bias": False, "decoder_bias": True, "rope_theta": 10_000.0,
    "local_rope_theta": 10_000.0, "projection_bias": False, "norm_after_projection": False,
    "separate_decoder_bias": False, "head_act": "hidden", "always_project": False,
    "type_vocab_size": 0, "hidden_act": "silu", "layer_norm_eps": 1e-5,
}
# chandar-lab/NeoBERT's config.json (the keys that decide a size)
NEOBERT_JSON = {"model_type": "neobert", "architectures": ["NeoBERTLMHead"], "vocab_size": 30522, "hidden_size": 768,
                "num_hidden_layers": 28, "num_attention_heads": 12, "intermediate_size": 3072, "max_length": 4096,
                "norm_eps": 1e-5, "rope": True, "pad_token_id": 0}


def _neobert_read(f) -> dict:
    inner = 8 * -(-(2 * f["intermediate_size"] // 3) // 8)  # its SwiGLU: 2I/3 rounded up to a multiple of 8
    return {**NEOBERT_LAYOUT, "embedding_size": f["hidden_size"], "intermediate_size": inner, "sharing": "none",
            "max_position_embeddings": f["max_length"], "layer_norm_eps": float(f["norm_eps"])}


NEOBERT = Family(
    name="neobert", label="NeoBERT", source="Le Breton et al. 2025, NeoBERT", layout=NEOBERT_LAYOUT,
    base_preset="neobert", tokenizer="wordpiece", dropout=0.0, transformers=None,
    reader=Reader(Schema("neobert", COMMON | {"max_length": limit("max_position_embeddings"), "norm_eps": EPS}),
                  {"max_position_embeddings": 4096, "tie_word_embeddings": False}, _neobert_read, lambda cfg: {},
                  architectures=(("LMHead", "masked-lm"),)),
)


@contextlib.contextmanager
def _registered(record: Family):
    from albert_core.configuration.config import unregister_family

    register_family(record)
    try:
        yield
    finally:
        unregister_family(record.name)


def test_a_family_transformers_has_no_class_for_is_a_record_and_counts_as_published():
    """NeoBERT from its record alone: its config.json read through the record's reader, counted as its authors'
    model holds it (245M with its MLM head), the live model of the same size holding exactly that."""
    V, H, L, I_published = 30_522, 768, 28, 3072  # noqa: E741 (paper notation)
    I = 2048  # noqa: E741 (round8(2 x 3072 / 3))
    closed_form = (V * H  # word embeddings, no position table, no norm after them
                   + L * (H * 3 * H + H * H  # Q/K/V and the output projection, no biases
                          + H * 2 * I + I * H  # SwiGLU: gate and up, then down, no biases
                          + 2 * H)  # two RMSNorms (a scale each)
                   + H  # the final RMSNorm
                   + H * V + V)  # the untied decoder with its bias
    assert closed_form == 245_136_954 and 8 * -(-(2 * I_published // 3) // 8) == I
    with _registered(NEOBERT):
        assert "neobert" in FAMILIES and FAMILY_NAMES["neobert"] == "NeoBERT"
        cfg = config_from_hf(NEOBERT_JSON)
        assert (cfg.family, cfg.head, cfg.intermediate_size, cfg.num_layers) == ("neobert", "masked-lm", I, L)
        assert count_params(cfg).total == closed_form
        assert round(count_params(cfg).total / 1e6) == 245  # the published figure
        assert count_params(cfg.replace(head="model")).total == closed_form - (H * V + V)
        # the FLOPs of one 128-token sequence: every matmul 2 x its weight per token, attention 4 S^2 H per layer
        S = 128
        assert count_flops(cfg, 1, S).forward == 2 * S * (L * (4 * H * H + 3 * H * I) + H * V) + L * 4 * S * S * H
        assert estimate_memory(cfg, 2, 64).weights == 4 * closed_form
        from albert_core.live.model import build_model

        model = build_model(cfg, device="meta")
        assert sum(p.numel() for p in model.parameters()) == closed_form
        tiny = build_model(cfg.replace(**SMALL, embedding_size=32, max_position_embeddings=64), batch=2, seq_len=16)
        with torch.no_grad():
            out = tiny(torch.randint(0, 96, (2, 16)))
        assert out.prediction_logits.shape == (2, 16, 96) and torch.isfinite(out.prediction_logits).all()
    assert "neobert" not in FAMILIES
    with pytest.raises(ValueError, match="family must be one of"):
        ModelConfig(family="neobert")


def test_a_record_without_a_value_for_an_axis_is_refused_by_name():
    """No default by exclusion: a record that leaves an axis out is refused when it is registered, naming it."""
    partial = dataclasses.replace(NEOBERT, layout={k: v for k, v in NEOBERT_LAYOUT.items()
                                                   if k != "separate_decoder_bias"})
    with pytest.raises(ValueError, match="missing separate_decoder_bias"):
        register_family(partial)
    assert "neobert" not in FAMILIES
