"""ALBERT (Lan et al. 2020): BERT's blocks with a factorized embedding (E, projected to H even when E = H, as
transformers builds it) and cross-layer sharing (all layers, G groups, K inner layers)."""

from __future__ import annotations

from typing import Any

from albert_core.configuration.families.bert import PAPER_HEADS, PAPER_LAYOUT, read_bert_like, write_bert_like
from albert_core.configuration.family import Family, Modules, Reader, Transformers
from albert_core.configuration.hf_schema import BERT_LIKE, Schema, limit

LAYOUT = PAPER_LAYOUT | {"hidden_act": "gelu_new", "always_project": True}
DROPOUT = 0.0  # every ALBERT v2 config (v1: 0.1 but xxlarge)
MODULES = Modules(
    base="albert", embeddings="embeddings",
    tables={name: f"embeddings.{name}" for name in ("word_embeddings", "position_embeddings",
                                                     "token_type_embeddings", "LayerNorm")},
    layer="encoder.albert_layer_groups.{i}", block="albert_layers.{k}",
    attention={"qkv": ("attention.query", "attention.key", "attention.value"), "dense": ("attention.dense",),
               "LayerNorm": ("attention.LayerNorm",)},
    ffn={"ffn": ("ffn",), "ffn_output": ("ffn_output",), "LayerNorm": ("full_layer_layer_norm",)},
    projection="encoder.embedding_hidden_mapping_in", pooler="pooler",
    mlm={"dense": "predictions.dense", "LayerNorm": "predictions.LayerNorm", "bias": "predictions.bias",
         "decoder": "predictions.decoder"},
    mlm_modules=("predictions", None), order=("sop_classifier", "sop_classifier.classifier"),
)
DEFAULTS = {  # AlbertConfig() is ALBERT-xxlarge
    "vocab_size": 30000, "embedding_size": 128, "hidden_size": 4096, "num_hidden_layers": 12,
    "num_hidden_groups": 1, "num_attention_heads": 64, "intermediate_size": 16384,
    "inner_group_num": 1, "hidden_act": "gelu_new", "max_position_embeddings": 512,
    "type_vocab_size": 2, "layer_norm_eps": 1e-12, "tie_word_embeddings": True,
    "position_embedding_type": "absolute",
}
KEYS = BERT_LIKE | {
    "embedding_size": limit("embedding_size"),
    "num_hidden_groups": limit("num_hidden_groups"),
    "inner_group_num": limit("inner_group_num"),
}


def _read(f: Any) -> dict[str, Any]:
    if f["num_hidden_groups"] > f["num_hidden_layers"]:
        raise ValueError(f"num_hidden_groups must be between 1 and num_hidden_layers ({f['num_hidden_layers']}), "
                         f"got {f['num_hidden_groups']}")
    return read_bert_like(f) | dict(embedding_size=f["embedding_size"], sharing="all",
                                    num_hidden_groups=f["num_hidden_groups"], inner_group_num=f["inner_group_num"])


def _write(cfg: Any) -> dict[str, Any]:
    groups = cfg.num_layers if cfg.sharing == "none" else cfg.num_hidden_groups  # unshared: one group per layer
    return write_bert_like(cfg, DROPOUT) | {
        "position_embedding_type": "absolute", "embedding_size": cfg.embedding_size, "num_hidden_groups": groups,
        "inner_group_num": cfg.inner_group_num,
    }


FAMILY = Family(
    name="albert", label="ALBERT", source="Lan et al. 2020, ALBERT", layout=LAYOUT, base_preset="albert-base",
    tokenizer="unigram", dropout=DROPOUT, paper=True,
    class_axes=frozenset({"embedding_size", "sharing", "num_hidden_groups", "inner_group_num"}),
    fixed={"always_project": True}, order_head="sop_classifier", ffn_dropout=False, order_dropout=True,
    reader=Reader(Schema("albert", KEYS), DEFAULTS, _read, _write),
    transformers=Transformers("Albert", PAPER_HEADS, MODULES),
)
