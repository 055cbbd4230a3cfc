"""NomicBERT (Nussbaum et al. 2024, nomic-embed-text-v1): BERT's post-LN blocks with SwiGLU, rotary (base 1,000),
no biases, no pooler. Its files come in transformers' keys or in the GPT-2-style keys of nomic's own config class
(a GPT2Config), read as that class reads them."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from albert_core.configuration.config import LIMITS
from albert_core.configuration.families.bert import EMBEDDING_TABLES, ENCODER_HEADS, PAPER_LAYOUT
from albert_core.configuration.families.eurobert import LLAMA_ATTENTION, LLAMA_FFN
from albert_core.configuration.family import Family, Modules, Reader, Transformers
from albert_core.configuration.hf_config import HfFields, check_fields, check_head_dim, flat_rope
from albert_core.configuration.hf_schema import (
    ACT,
    COMMON,
    EPS,
    MAX_THETA,
    ROTARY,
    Key,
    Schema,
    choice,
    excerpt,
    flag,
    limit,
    number,
    problem,
    whole,
)

LAYOUT = PAPER_LAYOUT | {"hidden_act": "silu", "ffn_kind": "glu", "position": "rotary", "attention_bias": False,
                         "mlp_bias": False, "pooler": False, "rope_theta": 1000.0}
DROPOUT = 0.0
MODULES = Modules(
    base="nomic_bert", embeddings="embeddings", tables=EMBEDDING_TABLES, layer="layers.{i}",
    attention=LLAMA_ATTENTION | {"LayerNorm": ("post_attention_layernorm",)},
    ffn=LLAMA_FFN | {"LayerNorm": ("post_mlp_layernorm",)},
    mlm={"dense": "cls.predictions.transform.dense", "LayerNorm": "cls.predictions.transform.layer_norm",
         "bias": "cls.predictions.bias", "decoder": "cls.predictions.decoder"},
    mlm_modules=("cls", None),
)
DEFAULTS = {
    "vocab_size": 30528, "hidden_size": 768, "num_hidden_layers": 12, "num_attention_heads": 12,
    "intermediate_size": 3072, "hidden_act": "silu", "max_position_embeddings": 2048, "type_vocab_size": 2,
    "layer_norm_eps": 1e-12, "rope_theta": 1000.0, "tie_word_embeddings": True, "head_dim": None,
}
KEYS = COMMON | ROTARY | {
    "type_vocab_size": limit("type_vocab_size", lo=0),
    "hidden_act": ACT,
    "layer_norm_eps": EPS,
    "head_dim": whole(1, LIMITS["hidden_size"][1], nullable="hidden_size / num_attention_heads"),
}
# NomicBERT as nomic's own config class (a GPT2Config) writes it: the GPT-2 spelling of the sizes, and the switches of
# nomic's code, each refused unless it is the layout transformers' NomicBert builds. A file holding any of them is
# read as that class reads it (`CODE_DEFAULTS` for what it leaves out).
CODE_KEYS: Mapping[str, Key] = MappingProxyType({
    "n_embd": limit("hidden_size"),
    "n_layer": limit("num_layers"),
    "n_head": limit("num_heads"),
    "n_inner": limit("intermediate_size", nullable="8/3 of n_embd rounded up to 256 by nomic's code"),
    "n_positions": limit("max_position_embeddings"),
    "layer_norm_epsilon": EPS,
    "rotary_emb_base": number(0, MAX_THETA, lo_open=True),
    "activation_function": choice("swiglu", "geglu", why=" (a gated FFN, as transformers' NomicBert; 'glu' and the "
                                  "dense FFNs of nomic's code are not modelled)"),
    "rotary_emb_fraction": number(0, 1, want=(1.0,), rule="1.0 (rotary over the whole head, as transformers' "
                                  "NomicBert: 0 is a learned position table, a fraction a partial rotary; not "
                                  "modelled)"),
    "qkv_proj_bias": flag(False, "transformers' NomicBert has no attention biases"),
    "mlp_fc1_bias": flag(False, "transformers' NomicBert has no feed-forward biases"),
    "mlp_fc2_bias": flag(False, "transformers' NomicBert has no feed-forward biases"),
    "prenorm": flag(False, "NomicBERT's post-norm blocks are modelled, not pre-norm"),
    "use_rms_norm": flag(False, "NomicBERT's LayerNorm is modelled, not RMSNorm"),
    "parallel_block": flag(False, "attention then FFN is modelled, not both in parallel"),
    "causal": flag(False, "an encoder: causal attention is not modelled"),
    "rotary_emb_interleaved": flag(False, "rotation of the two halves of each head, as transformers'"),
    "rotary_emb_scale_base": number(0, MAX_THETA, nullable="none", want=(None,),
                                    rule="null (no rotary scaling is modelled)"),
    "rotary_scaling_factor": number(0, MAX_THETA, nullable="none", want=(None,),
                                    rule="null (no rotary scaling is modelled)"),
    "pad_vocab_size_multiple": whole(1, 1_000_000),
})
# nomic's own class's defaults (nomic-ai configuration_hf_nomic_bert.NomicBertConfig over transformers' GPT2Config):
# what a GPT-2-style file means by a key it leaves out
CODE_DEFAULTS: Mapping[str, Any] = MappingProxyType({
    "vocab_size": 50257, "n_embd": 768, "n_layer": 12, "n_head": 12, "n_inner": None, "n_positions": 1024,
    "layer_norm_epsilon": 1e-5, "activation_function": "gelu_new", "rotary_emb_base": 10_000,
    "rotary_emb_fraction": 0.0, "qkv_proj_bias": True, "mlp_fc1_bias": True, "mlp_fc2_bias": True, "prenorm": False,
    "use_rms_norm": False, "parallel_block": False, "causal": False, "rotary_emb_interleaved": False,
    "rotary_emb_scale_base": None, "rotary_scaling_factor": None, "pad_vocab_size_multiple": 1,
    "type_vocab_size": 2, "tie_word_embeddings": True,
})
SCHEMA = Schema("nomic_bert", KEYS)
CODE_SCHEMA = Schema("nomic_bert_code", {**KEYS, **CODE_KEYS})
# nomic's class is a GPT2Config: its attribute_map makes these one attribute, the transformers key set last
_SAME = {"n_embd": "hidden_size", "n_layer": "num_hidden_layers", "n_head": "num_attention_heads",
         "n_positions": "max_position_embeddings"}
# nomic's code reads the first key, transformers' class the second: both written means both must agree
_EITHER = {"n_inner": "intermediate_size", "layer_norm_epsilon": "layer_norm_eps", "activation_function": "hidden_act"}
_ACTS = {"swiglu": "silu", "geglu": "gelu"}  # nomic's gated FFNs: silu(gate) * up, gelu(gate) * up
FFN_MULTIPLE = 256  # nomic's gated FFN rounds its width up to a multiple of 256


def _fields(family: str, data: Mapping[str, Any]) -> HfFields:
    if not any(k in data for k in CODE_KEYS):
        return check_fields(family, data, SCHEMA, DEFAULTS)
    defaults = {**DEFAULTS, **CODE_DEFAULTS}
    if "hidden_act" in data and "activation_function" not in data:  # transformers' key read instead
        defaults["activation_function"] = "swiglu"
    f = check_fields(family, data, CODE_SCHEMA, defaults)
    return HfFields(family, _from_code(dict(f.values), f.given), f.given)


def _from_code(values: dict[str, Any], given: frozenset[str]) -> dict[str, Any]:
    """A GPT-2-style NomicBERT file (nomic's own class) in transformers' keys, as nomic's class reads it."""
    out = dict(values)
    for ours, theirs in _SAME.items():
        if theirs not in given:
            out[theirs] = values[ours]
    for ours, theirs in _EITHER.items():
        mine = _ACTS[values[ours]] if ours == "activation_function" else values[ours]
        if ours in given and theirs in given and mine != values[theirs]:
            raise ValueError(f"{ours} ({excerpt(values[ours])}) and {theirs} ({excerpt(values[theirs])}) disagree: "
                             f"nomic's own code reads {ours}, transformers' NomicBert {theirs}; write one of them")
        if theirs not in given:
            out[theirs] = mine
    if "intermediate_size" not in given:
        inner = values["n_inner"]
        if inner is None or inner % FFN_MULTIPLE:
            built = -(-(inner or 8 * out["hidden_size"] // 3) // FFN_MULTIPLE) * FFN_MULTIPLE
            raise ValueError(problem("n_inner", f"a multiple of {FFN_MULTIPLE} (nomic's code rounds its gated "
                                     f"FFN up to one: this file builds {built:,}; write n_inner = {built:,})",
                                     *((inner,) if "n_inner" in given else ())))
    pad = values["pad_vocab_size_multiple"]
    if out["vocab_size"] % pad:
        padded = -(-out["vocab_size"] // pad) * pad
        raise ValueError(f"vocab_size ({out['vocab_size']:,}) must be a multiple of pad_vocab_size_multiple ({pad}): "
                         f"nomic's code pads the table to {padded:,} rows; write vocab_size = {padded:,}")
    rope_given = "rope_theta" in given or bool(values["rope_parameters"] or values["rope_scaling"])
    if not rope_given:
        out["rope_theta"] = values["rotary_emb_base"]
    elif "rotary_emb_base" in given and float(values["rotary_emb_base"]) != flat_rope(out, "rope_theta"):
        raise ValueError(f"rotary_emb_base ({excerpt(values['rotary_emb_base'])}) and the rope_theta of "
                         f"rope_parameters / rope_theta ({excerpt(flat_rope(out, 'rope_theta'))}) disagree: nomic's "
                         "own code reads rotary_emb_base, transformers' NomicBert the other; write one of them")
    return out


def _read(f: Any) -> dict[str, Any]:
    check_head_dim(f)
    return {**LAYOUT, **dict(
        embedding_size=f["hidden_size"], type_vocab_size=f["type_vocab_size"], hidden_act=f["hidden_act"],
        layer_norm_eps=float(f["layer_norm_eps"]), sharing="none", rope_theta=flat_rope(f.values, "rope_theta"),
    )}


def _write(cfg: Any) -> dict[str, Any]:
    return {"hidden_act": cfg.hidden_act, "type_vocab_size": cfg.type_vocab_size,
            "layer_norm_eps": cfg.layer_norm_eps,
            "rope_parameters": {"rope_type": "default", "rope_theta": cfg.rope_theta}, "head_dim": cfg.head_dim,
            "hidden_dropout_prob": DROPOUT, "attention_probs_dropout_prob": DROPOUT, "pad_token_id": 0}


FAMILY = Family(
    name="nomic_bert", label="NomicBERT", source="Nussbaum et al. 2024, nomic-embed-text-v1", layout=LAYOUT,
    base_preset="nomic-bert-2048", tokenizer="wordpiece", dropout=DROPOUT,  # BERT's WordPiece
    reader=Reader(SCHEMA, DEFAULTS, _read, _write, fields=_fields,
                  architectures=(("ForPreTraining", "masked-lm"), ("ForMaskedLM", "masked-lm"))),
    transformers=Transformers("NomicBert", ENCODER_HEADS, MODULES),
)
