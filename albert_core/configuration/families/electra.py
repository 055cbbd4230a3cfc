"""ELECTRA (Clark et al. 2020): BERT's blocks with its own embedding size E (projected to H where E != H), no pooler
on the bare model, the replaced-token discriminator head; the generator's MLM transform applies GELU whatever
hidden_act says, and its decoder holds its bias itself."""

from __future__ import annotations

from typing import Any

from albert_core.configuration.families.bert import (
    ATTENTION,
    EMBEDDING_TABLES,
    ENCODER_HEADS,
    FFN,
    PAPER_LAYOUT,
    read_bert_like,
    write_bert_like,
)
from albert_core.configuration.family import Family, Modules, Reader, Transformers
from albert_core.configuration.hf_schema import BERT_LIKE, ENCODER_ONLY, Schema, limit

LAYOUT = PAPER_LAYOUT | {"pooler": False, "head_act": "gelu", "separate_decoder_bias": False}
DROPOUT = 0.1
MODULES = Modules(
    base="electra", embeddings="embeddings", tables=EMBEDDING_TABLES, layer="encoder.layer.{i}", attention=ATTENTION,
    ffn=FFN, projection="embeddings_project",
    mlm={"dense": "generator_predictions.dense", "LayerNorm": "generator_predictions.LayerNorm",
         "bias": "generator_lm_head.bias", "decoder": "generator_lm_head"},
    mlm_modules=("generator_predictions", "generator_lm_head"),
    discriminator={"dense": "discriminator_predictions.dense",
                   "prediction": "discriminator_predictions.dense_prediction"},
    discriminator_module="discriminator_predictions",
)
DEFAULTS = {  # ElectraConfig() is ELECTRA-small's discriminator
    "vocab_size": 30522, "embedding_size": 128, "hidden_size": 256, "num_hidden_layers": 12,
    "num_attention_heads": 4, "intermediate_size": 1024, "hidden_act": "gelu",
    "max_position_embeddings": 512, "type_vocab_size": 2, "layer_norm_eps": 1e-12,
    "tie_word_embeddings": True, "position_embedding_type": "absolute",
}
KEYS = BERT_LIKE | ENCODER_ONLY | {"embedding_size": limit("embedding_size")}


def _read(f: Any) -> dict[str, Any]:
    return read_bert_like(f) | dict(embedding_size=f["embedding_size"], pooler=False)


def _write(cfg: Any) -> dict[str, Any]:
    return write_bert_like(cfg, DROPOUT) | {"embedding_size": cfg.embedding_size, "position_embedding_type": "absolute"}


FAMILY = Family(
    name="electra", label="ELECTRA", source="Clark et al. 2020, ELECTRA", layout=LAYOUT,
    base_preset="electra-base-discriminator", tokenizer="wordpiece", dropout=DROPOUT,
    class_axes=frozenset({"embedding_size"}),
    reader=Reader(Schema("electra", KEYS), DEFAULTS, _read, _write,
                  architectures=(("ForPreTraining", "discriminator"), ("ForMaskedLM", "masked-lm"))),
    transformers=Transformers("Electra", ENCODER_HEADS | {"discriminator": "ForPreTraining"}, MODULES),
)
