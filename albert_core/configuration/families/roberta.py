"""RoBERTa (Liu et al. 2019) and XLM-R (Conneau et al. 2020): BERT's blocks; 514 learned positions counted from
after the padding id (1), one token type; the MLM transform applies erf GELU whatever hidden_act says."""

from __future__ import annotations

from typing import Any

from albert_core.configuration.config import LIMITS
from albert_core.configuration.families.bert import ATTENTION as BERT_ATTENTION
from albert_core.configuration.families.bert import (
    EMBEDDING_TABLES,
    ENCODER_HEADS,
    PAPER_LAYOUT,
    read_bert_like,
    write_bert_like,
)
from albert_core.configuration.families.bert import FFN as BERT_FFN
from albert_core.configuration.family import Family, Modules, Reader, Transformers
from albert_core.configuration.hf_schema import BERT_LIKE, ENCODER_ONLY, Schema, limit, whole

LAYOUT = PAPER_LAYOUT | {"type_vocab_size": 1, "layer_norm_eps": 1e-5, "position_offset": 2, "head_act": "gelu"}
DROPOUT = 0.1
MODULES = Modules(
    base="roberta", embeddings="embeddings", tables=EMBEDDING_TABLES, layer="encoder.layer.{i}",
    attention=BERT_ATTENTION, ffn=BERT_FFN, pooler="pooler.dense",
    mlm={"dense": "lm_head.dense", "LayerNorm": "lm_head.layer_norm", "bias": "lm_head.bias",
         "decoder": "lm_head.decoder"},
    mlm_modules=("lm_head", None),
)
DEFAULTS = {
    "vocab_size": 50265, "hidden_size": 768, "num_hidden_layers": 12, "num_attention_heads": 12,
    "intermediate_size": 3072, "hidden_act": "gelu", "max_position_embeddings": 512, "type_vocab_size": 2,
    "layer_norm_eps": 1e-12, "pad_token_id": 1, "tie_word_embeddings": True, "position_embedding_type": "absolute",
}
KEYS = BERT_LIKE | ENCODER_ONLY | {
    "type_vocab_size": limit("type_vocab_size", lo=0),
    "pad_token_id": whole(0, LIMITS["position_offset"][1] - 1, " (RoBERTa's positions start after it)"),
}


def _read(f: Any) -> dict[str, Any]:
    if f["pad_token_id"] + 1 >= f["max_position_embeddings"]:
        raise ValueError(f"max_position_embeddings ({f['max_position_embeddings']:,}) must be above pad_token_id + 1 "
                         f"({f['pad_token_id'] + 1:,}): RoBERTa's positions start after the padding id")
    return read_bert_like(f) | dict(embedding_size=f["hidden_size"], position_offset=f["pad_token_id"] + 1)


def _write(cfg: Any) -> dict[str, Any]:
    return write_bert_like(cfg, DROPOUT) | {"position_embedding_type": "absolute",
                                            "pad_token_id": cfg.position_offset - 1, "bos_token_id": 0,
                                            "eos_token_id": 2}


ROBERTA = Family(
    name="roberta", label="RoBERTa", source="Liu et al. 2019, RoBERTa", layout=LAYOUT, base_preset="roberta-base",
    tokenizer="unigram", dropout=DROPOUT,  # its byte-level BPE is not shipped: the lab's unigram, a subword model
    reader=Reader(Schema("roberta", KEYS), DEFAULTS, _read, _write),
    transformers=Transformers("Roberta", ENCODER_HEADS, MODULES),
)
XLM_ROBERTA = Family(
    name="xlm-roberta", label="XLM-R", source="Conneau et al. 2020, XLM-R", layout=LAYOUT,
    base_preset="xlm-roberta-base", tokenizer="unigram", dropout=DROPOUT,  # SentencePiece unigram
    reader=Reader(Schema("xlm-roberta", KEYS), DEFAULTS | {"vocab_size": 30522}, _read, _write),
    transformers=Transformers("XLMRoberta", ENCODER_HEADS, MODULES),
)
