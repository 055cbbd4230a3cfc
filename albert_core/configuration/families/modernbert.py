"""ModernBERT (Warner et al. 2024; Ettin and mmBERT use it too): GeGLU, rotary (160k global, 10k local), pre-LN
without biases, the first block's attention norm the identity, local attention over 128 tokens with a global layer
every third; the MLM head's decoder holds its own bias."""

from __future__ import annotations

from typing import Any

from albert_core.configuration.config import LIMITS
from albert_core.configuration.families.bert import ENCODER_HEADS, PAPER_LAYOUT
from albert_core.configuration.family import Family, Modules, Reader, Transformers
from albert_core.configuration.hf_config import rope_params, token_ids
from albert_core.configuration.hf_schema import (
    ACT,
    COMMON,
    EPS,
    MAX_THETA,
    ROTARY,
    Key,
    Schema,
    excerpt,
    flag,
    limit,
    number,
    whole,
)

LAYOUT = PAPER_LAYOUT | {
    "type_vocab_size": 0, "hidden_act": "gelu", "layer_norm_eps": 1e-5, "ffn_kind": "glu", "position": "rotary",
    "norm_bias": False, "norm_placement": "pre", "first_layer_norm": False, "attention_bias": False,
    "mlp_bias": False, "local_window": 128, "global_every": 3, "pooler": False, "head_bias": False,
    "rope_theta": 160_000.0, "local_rope_theta": 10_000.0, "separate_decoder_bias": False,
}
DROPOUT = 0.0
MODULES = Modules(
    base="model", embeddings="embeddings",
    tables={"word_embeddings": "embeddings.tok_embeddings", "LayerNorm": "embeddings.norm"}, layer="layers.{i}",
    attention={"qkv": ("attn.Wqkv",), "dense": ("attn.Wo",), "LayerNorm": ("attn_norm",)},
    ffn={"ffn": ("mlp.Wi",), "ffn_output": ("mlp.Wo",), "LayerNorm": ("mlp_norm",)},
    final_norm="final_norm",
    mlm={"dense": "head.dense", "LayerNorm": "head.norm", "bias": "decoder.bias", "decoder": "decoder"},
    mlm_modules=("head", "decoder"),
)
DEFAULTS = {
    "vocab_size": 50368, "hidden_size": 768, "intermediate_size": 1152, "num_hidden_layers": 22,
    "num_attention_heads": 12, "hidden_activation": "gelu", "max_position_embeddings": 8192,
    "norm_eps": 1e-5, "norm_bias": False, "pad_token_id": 50283, "eos_token_id": 50282,
    "bos_token_id": 50281, "cls_token_id": 50281, "sep_token_id": 50282, "attention_bias": False,
    "global_attn_every_n_layers": 3, "global_rope_theta": 160000.0, "local_rope_theta": 10000.0,
    "local_attention": 128, "mlp_bias": False, "decoder_bias": True, "classifier_bias": False,
    "classifier_activation": "gelu", "tie_word_embeddings": True,
}
KEYS = COMMON | {
    "hidden_activation": ACT,
    "classifier_activation": ACT,
    "norm_eps": EPS,
    "norm_bias": flag(), "attention_bias": flag(), "mlp_bias": flag(), "classifier_bias": flag(),
    "decoder_bias": flag(),
    "local_attention": whole(2, LIMITS["local_window"][1], " (the whole window: an even number of tokens)"),
    "sliding_window": whole(1, LIMITS["local_window"][1] // 2, nullable="local_attention / 2"),
    "global_attn_every_n_layers": limit("global_every", nullable="from layer_types"),
    "layer_types": Key("layer_types", f"null or a list of at most {LIMITS['num_layers'][1]} of "
                       "'full_attention' and 'sliding_attention'", nullable=True,
                       max_items=LIMITS["num_layers"][1]),
    "rope_parameters": Key("rope_by_layer", "null or an object with full_attention and/or sliding_attention, each "
                           "with rope_type 'default' and rope_theta a number in (0, 1e12] (no rotary scaling is "
                           "modelled)", nullable=True),
    "global_rope_theta": number(0, MAX_THETA, lo_open=True),
    "local_rope_theta": number(0, MAX_THETA, lo_open=True),
    "rope_scaling": ROTARY["rope_scaling"],
}


def _read(f: Any) -> dict[str, Any]:
    if f["classifier_activation"] != f["hidden_activation"]:
        raise ValueError(f"classifier_activation must equal hidden_activation (one activation is modelled), got "
                         f"{excerpt(f['classifier_activation'])} and {excerpt(f['hidden_activation'])}")
    layers, every, types = f["num_hidden_layers"], f["global_attn_every_n_layers"], f["layer_types"]
    if types is not None:  # the pattern transformers writes: full attention at i % n == 0
        if len(types) != layers:
            raise ValueError(f"layer_types must list one attention type per layer ({layers}), got {len(types)}")
        full = [i for i, t in enumerate(types) if t == "full_attention"]
        if "global_attn_every_n_layers" not in f.given:  # else the period as written (beyond L it means one global)
            every = full[1] if len(full) > 1 else layers
        if any((i % every == 0) != (t == "full_attention") for i, t in enumerate(types)):
            raise ValueError("layer_types must be full attention every n layers from the first (ModernBERT's "
                             "global_attn_every_n_layers); other patterns are not modelled")
    elif every is None:
        every = 3  # transformers' default period
    local = f["local_attention"]
    if f["sliding_window"] is not None:  # transformers 5: setting sliding_window sets local_attention = 2 x it
        local = 2 * f["sliding_window"]
    elif local % 2 and every != 1:  # all-global layers never read the window
        raise ValueError(f"local_attention must be even (the whole window: local_attention / 2 tokens each side), "
                         f"got {local:,}")
    rope_by_layer = f["rope_parameters"] or {}
    thetas = {}
    for layer, key in (("full_attention", "global_rope_theta"), ("sliding_attention", "local_rope_theta")):
        params = {**(rope_by_layer.get(layer) or {}), **(f["rope_scaling"] or {})}  # rope_scaling updates both
        theta = rope_params(params, f"rope_parameters.{layer}").get("rope_theta")
        thetas[layer] = float(f[key] if theta is None else theta)
    return {**LAYOUT, **dict(
        embedding_size=f["hidden_size"], hidden_act=f["hidden_activation"], layer_norm_eps=float(f["norm_eps"]),
        sharing="none", norm_bias=f["norm_bias"], attention_bias=f["attention_bias"], mlp_bias=f["mlp_bias"],
        local_window=local if every != 1 else 0, global_every=every, head_bias=f["classifier_bias"],
        decoder_bias=f["decoder_bias"], rope_theta=thetas["full_attention"],
        local_rope_theta=thetas["sliding_attention"],
    )}


def _write(cfg: Any) -> dict[str, Any]:
    every = cfg.global_every if cfg.local_window else 1
    return {
        "hidden_activation": cfg.hidden_act, "classifier_activation": cfg.hidden_act,
        "norm_eps": cfg.layer_norm_eps, "norm_bias": cfg.norm_bias, "attention_bias": cfg.attention_bias,
        "mlp_bias": cfg.mlp_bias, "classifier_bias": cfg.head_bias, "decoder_bias": cfg.decoder_bias,
        "local_attention": cfg.local_window or DEFAULTS["local_attention"],
        "global_attn_every_n_layers": every,
        "layer_types": ["full_attention" if i % every == 0 else "sliding_attention" for i in range(cfg.num_layers)],
        "rope_parameters": {"full_attention": {"rope_type": "default", "rope_theta": cfg.rope_theta},
                            "sliding_attention": {"rope_type": "default", "rope_theta": cfg.local_rope_theta}},
        "embedding_dropout": DROPOUT, "mlp_dropout": DROPOUT, "attention_dropout": DROPOUT,
    } | token_ids(cfg, DEFAULTS, ("pad_token_id", "bos_token_id", "eos_token_id", "cls_token_id", "sep_token_id"))


FAMILY = Family(
    name="modernbert", label="ModernBERT", source="Warner et al. 2024, ModernBERT", layout=LAYOUT,
    base_preset="modernbert-base", tokenizer="unigram", dropout=DROPOUT,  # its BPE is not shipped: the lab's unigram
    reader=Reader(Schema("modernbert", KEYS), DEFAULTS, _read, _write),
    transformers=Transformers("ModernBert", ENCODER_HEADS, MODULES),
)
