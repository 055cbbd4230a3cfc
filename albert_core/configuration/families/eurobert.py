"""EuroBERT (Boizard et al. 2025): Llama-style pre-RMSNorm blocks, SwiGLU, rotary, grouped-query attention, no
biases, no embedding norm, an MLM head that is the decoder alone (untied in its published models)."""

from __future__ import annotations

from typing import Any

from albert_core.configuration.config import LIMITS
from albert_core.configuration.families.bert import ENCODER_HEADS, PAPER_LAYOUT
from albert_core.configuration.family import Family, Modules, Reader, Transformers
from albert_core.configuration.hf_config import check_head_dim, flat_rope, token_ids
from albert_core.configuration.hf_schema import ACT, COMMON, EPS, ROTARY, Schema, flag, limit, whole

LAYOUT = PAPER_LAYOUT | {
    "type_vocab_size": 0, "hidden_act": "silu", "layer_norm_eps": 1e-5, "ffn_kind": "glu", "position": "rotary",
    "norm": "rmsnorm", "norm_bias": False, "norm_placement": "pre", "embedding_norm": False, "attention_bias": False,
    "mlp_bias": False, "pooler": False, "head_transform": False, "head_bias": False, "decoder_bias": False,
    "separate_decoder_bias": False,
}
DROPOUT = 0.0
LLAMA_ATTENTION = {"qkv": ("self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj"),
                   "dense": ("self_attn.o_proj",)}
LLAMA_FFN = {"ffn": ("mlp.gate_proj", "mlp.up_proj"), "ffn_output": ("mlp.down_proj",)}
MODULES = Modules(
    base="model", embeddings="embed_tokens", tables={"word_embeddings": "embed_tokens"}, layer="layers.{i}",
    attention=LLAMA_ATTENTION | {"LayerNorm": ("input_layernorm",)},
    ffn=LLAMA_FFN | {"LayerNorm": ("post_attention_layernorm",)},
    final_norm="norm", mlm={"bias": "lm_head.bias", "decoder": "lm_head"}, mlm_modules=(None, "lm_head"),
)
DEFAULTS = {
    "vocab_size": 128256, "hidden_size": 768, "intermediate_size": 3072, "num_hidden_layers": 12,
    "num_attention_heads": 12, "num_key_value_heads": None, "hidden_act": "silu",
    "max_position_embeddings": 8192, "rms_norm_eps": 1e-5, "pad_token_id": 128001, "bos_token_id": 128000,
    "eos_token_id": 128001, "mask_token_id": 128002, "tie_word_embeddings": False, "rope_theta": 10000.0,
    "attention_bias": False, "mlp_bias": False, "head_dim": None,
}
KEYS = COMMON | ROTARY | {
    "hidden_act": ACT,
    "rms_norm_eps": EPS,
    "num_key_value_heads": limit("num_kv_heads", lo=1, nullable="num_attention_heads"),
    "head_dim": whole(1, LIMITS["hidden_size"][1], nullable="hidden_size / num_attention_heads"),
    "attention_bias": flag(), "mlp_bias": flag(),
}


def _read(f: Any) -> dict[str, Any]:
    check_head_dim(f)
    kv, heads = f["num_key_value_heads"], f["num_attention_heads"]
    if kv is not None and heads % kv:
        raise ValueError(f"num_key_value_heads ({kv:,}) must divide num_attention_heads ({heads:,}): each "
                         "key/value head serves a whole group of query heads")
    return {**LAYOUT, **dict(
        embedding_size=f["hidden_size"], hidden_act=f["hidden_act"], layer_norm_eps=float(f["rms_norm_eps"]),
        sharing="none", attention_bias=f["attention_bias"], mlp_bias=f["mlp_bias"],
        num_kv_heads=0 if kv in (None, heads) else kv, decoder_bias=f["mlp_bias"],
        rope_theta=flat_rope(f.values, "rope_theta"),
    )}


def _write(cfg: Any) -> dict[str, Any]:
    return {
        "hidden_act": cfg.hidden_act, "rms_norm_eps": cfg.layer_norm_eps, "num_key_value_heads": cfg.kv_heads,
        "head_dim": cfg.head_dim, "attention_bias": cfg.attention_bias, "mlp_bias": cfg.mlp_bias,
        "rope_parameters": {"rope_type": "default", "rope_theta": cfg.rope_theta}, "attention_dropout": DROPOUT,
    } | token_ids(cfg, DEFAULTS, ("pad_token_id", "bos_token_id", "eos_token_id", "mask_token_id"))


FAMILY = Family(
    name="eurobert", label="EuroBERT", source="Boizard et al. 2025, EuroBERT", layout=LAYOUT,
    base_preset="eurobert-210m", tokenizer="unigram", dropout=DROPOUT,  # its BPE is not shipped: the lab's unigram
    reader=Reader(Schema("eurobert", KEYS), DEFAULTS, _read, _write),
    transformers=Transformers("EuroBert", ENCODER_HEADS, MODULES),
)
