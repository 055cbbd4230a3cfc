"""DeBERTa-v3 (He et al. 2021; transformers' deberta-v2): BERT's post-LN blocks with disentangled relative
attention over log buckets (no position table, no token types), its E -> H projection without a bias before the
embedding norm (the norm is H wide), no pooler on the bare model. Only DeBERTa-v3's layout is read."""

from __future__ import annotations

from typing import Any

from albert_core.configuration.config import LIMITS
from albert_core.configuration.families.bert import (
    EMBEDDING_TABLES,
    ENCODER_HEADS,
    PAPER_LAYOUT,
    write_bert_like,
)
from albert_core.configuration.family import Family, Modules, Reader, Transformers
from albert_core.configuration.hf_config import HfFields, check_fields
from albert_core.configuration.hf_schema import (
    ACT,
    COMMON,
    EPS,
    Key,
    Schema,
    choice,
    flag,
    limit,
    problem,
    whole,
)

LAYOUT = PAPER_LAYOUT | {"type_vocab_size": 0, "layer_norm_eps": 1e-7, "position": "relative",
                         "position_buckets": 256, "pooler": False, "projection_bias": False,
                         "norm_after_projection": True}
DROPOUT = 0.1
# transformers' newer head (`legacy: false`): dense, act, LayerNorm, then the word embeddings (tied, whatever
# tie_word_embeddings says) and a bias
LEGACY_FALSE_MLM = {"dense": "lm_predictions.lm_head.dense", "LayerNorm": "lm_predictions.lm_head.LayerNorm",
                    "bias": "lm_predictions.lm_head.bias"}
MODULES = Modules(
    base="deberta", embeddings="embeddings", tables=EMBEDDING_TABLES, layer="encoder.layer.{i}",
    attention={"qkv": ("attention.self.query_proj", "attention.self.key_proj", "attention.self.value_proj"),
               "dense": ("attention.output.dense",), "LayerNorm": ("attention.output.LayerNorm",)},
    ffn={"ffn": ("intermediate.dense",), "ffn_output": ("output.dense",), "LayerNorm": ("output.LayerNorm",)},
    projection="embeddings.embed_proj", relative=("encoder.rel_embeddings", "encoder.LayerNorm"),
    # the legacy head (`legacy: true`, DeBERTa-v3's own files); `LEGACY_FALSE_MLM`: the newer one
    mlm={"dense": "cls.predictions.transform.dense", "LayerNorm": "cls.predictions.transform.LayerNorm",
         "bias": "cls.predictions.bias", "decoder": "cls.predictions.decoder"},
    mlm_modules=("cls", None), mlm_variants=((("legacy", False), LEGACY_FALSE_MLM),),
)
DEFAULTS = {
    "vocab_size": 128100, "hidden_size": 1536, "num_hidden_layers": 24, "num_attention_heads": 24,
    "intermediate_size": 6144, "hidden_act": "gelu", "max_position_embeddings": 512, "type_vocab_size": 0,
    "layer_norm_eps": 1e-7, "relative_attention": False, "max_relative_positions": -1,
    "position_biased_input": True, "pos_att_type": None, "legacy": True, "tie_word_embeddings": True,
    # not attributes of DebertaV2Config: what its model reads when the key is absent (getattr defaults)
    "position_buckets": -1, "share_att_key": False, "norm_rel_ebd": "none", "conv_kernel_size": 0,
}
_LAYOUT_RULE = "the layout modelled"
KEYS = COMMON | {
    "type_vocab_size": limit("type_vocab_size", lo=0),
    "hidden_act": ACT,
    "layer_norm_eps": EPS,
    "embedding_size": limit("embedding_size", nullable="hidden_size"),
    "relative_attention": flag(True, f"DeBERTa-v3's disentangled attention: {_LAYOUT_RULE}"),
    "position_biased_input": flag(False, f"no absolute position table, as DeBERTa-v3: {_LAYOUT_RULE}"),
    "share_att_key": flag(True, f"positions projected by each layer's own query and key, as DeBERTa-v3: "
                          f"{_LAYOUT_RULE}"),
    "norm_rel_ebd": choice("layer_norm", why=f" (the relative table normed once, as DeBERTa-v3: {_LAYOUT_RULE})"),
    "conv_kernel_size": whole(0, 1024, nullable="no convolution", want=(0, None),
                              rule=f"0 or null (no convolution layer, as DeBERTa-v3: {_LAYOUT_RULE})"),
    "pos_att_type": Key("att_types", f"'p2c|c2p' or ['p2c', 'c2p'] (both of DeBERTa-v3's position terms: "
                        f"{_LAYOUT_RULE})", nullable=True, max_items=8),
    "position_buckets": whole(2, LIMITS["position_buckets"][1], rule=(
        f"a whole number between 2 and {LIMITS['position_buckets'][1]:,} (DeBERTa-v3's log buckets, 256 in its "
        "published files): without it (transformers' -1, or below 1) DeBERTa scores raw relative positions "
        "clipped at max_relative_positions, which the live model does not build")),
    "max_relative_positions": whole(-1_000_000, LIMITS["max_position_embeddings"][1], rule=(
        "-1 (or any whole number below 1: the whole max_position_embeddings, DeBERTa-v3's) or "
        "max_position_embeddings")),
    "legacy": flag(),
    "attention_head_size": whole(1, LIMITS["hidden_size"][1], nullable="hidden_size / num_attention_heads"),
}
SCHEMA = Schema("deberta-v2", KEYS)


def _fields(family: str, data: Any) -> HfFields:
    att = data.get("pos_att_type")
    if isinstance(att, str) and len(att) <= 64:  # transformers splits 'p2c|c2p' (DeBERTa-v3's own files)
        data = {**data, "pos_att_type": [part.strip() for part in att.lower().split("|")]}
    return check_fields(family, data, SCHEMA, DEFAULTS)


def _read(f: HfFields) -> dict[str, Any]:
    hidden, heads = f["hidden_size"], f["num_attention_heads"]
    size = f["attention_head_size"]
    if size is not None and size != hidden // heads:
        raise ValueError(f"attention_head_size ({size:,}) must be hidden_size / num_attention_heads "
                         f"({hidden // heads:,}): attention narrower or wider than the hidden size is not modelled")
    if sorted(set(f["pos_att_type"] or ())) != ["c2p", "p2c"]:
        raise ValueError(problem("pos_att_type", "'p2c|c2p' or ['p2c', 'c2p'] (both of DeBERTa-v3's position terms: "
                                 "the layout modelled)", *((f["pos_att_type"],) if "pos_att_type" in f.given else ())))
    rel, positions = f["max_relative_positions"], f["max_position_embeddings"]
    if rel >= 1 and rel != positions:
        raise ValueError(f"max_relative_positions must be -1 (or any whole number below 1: the whole "
                         f"{positions:,} positions, DeBERTa-v3's) or max_position_embeddings, got {rel:,}")
    emb = f["hidden_size"] if f["embedding_size"] is None else f["embedding_size"]
    out = dict(embedding_size=emb, type_vocab_size=f["type_vocab_size"], hidden_act=f["hidden_act"],
               layer_norm_eps=float(f["layer_norm_eps"]), sharing="none", position="relative",
               position_buckets=f["position_buckets"], pooler=False)
    if not f["legacy"]:
        if emb != f["hidden_size"]:
            raise ValueError("legacy must be true when embedding_size differs from hidden_size (transformers' "
                             "newer DeBERTa head is H wide)")
        out["tie_word_embeddings"] = True  # the newer head multiplies by the word embeddings whatever the key says
    return out


def _write(cfg: Any) -> dict[str, Any]:
    return write_bert_like(cfg, DROPOUT) | {
        "embedding_size": cfg.embedding_size, "relative_attention": True, "position_biased_input": False,
        "pos_att_type": ["p2c", "c2p"], "share_att_key": True, "norm_rel_ebd": "layer_norm",
        "position_buckets": cfg.position_buckets, "max_relative_positions": -1, "legacy": True, "pad_token_id": 0,
    }


FAMILY = Family(
    name="deberta-v2", label="DeBERTa-v3", source="He et al. 2021, DeBERTaV3", layout=LAYOUT,
    base_preset="deberta-v3-base", tokenizer="unigram", dropout=DROPOUT,  # SentencePiece unigram
    class_axes=frozenset({"embedding_size"}),
    reader=Reader(SCHEMA, DEFAULTS, _read, _write, fields=_fields),
    transformers=Transformers("DebertaV2", ENCODER_HEADS, MODULES, sdpa=False),
)
