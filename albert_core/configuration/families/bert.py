"""BERT (Devlin et al. 2019): the paper's layout, which ALBERT and the BERT-lineage families (RoBERTa, XLM-R,
ELECTRA) build on: its layout, its config.json keys and its module names are shared from here."""

from __future__ import annotations

from typing import Any

from albert_core.configuration.family import Family, Modules, Reader, Transformers
from albert_core.configuration.hf_schema import BERT_LIKE, ENCODER_ONLY, Schema

# Every axis as the paper builds BERT and ALBERT (the defaults of ModelConfig's fields), and BERT's config.
PAPER_LAYOUT: dict[str, Any] = {
    "ffn_kind": "dense", "position": "learned", "position_offset": 0, "position_buckets": 0, "norm": "layernorm",
    "norm_bias": True, "norm_placement": "post", "embedding_norm": True, "first_layer_norm": True,
    "attention_bias": True, "mlp_bias": True, "num_kv_heads": 0, "local_window": 0, "global_every": 1,
    "pooler": True, "head_transform": True, "head_bias": True, "decoder_bias": True, "rope_theta": 10_000.0,
    "local_rope_theta": 10_000.0, "projection_bias": True, "norm_after_projection": False,
    "separate_decoder_bias": True, "head_act": "hidden", "always_project": False,
    "type_vocab_size": 2, "hidden_act": "gelu", "layer_norm_eps": 1e-12,
}
# transformers' heads of BERT's lineage: the bare model, pretraining (MLM + NSP / SOP), masked LM
PAPER_HEADS = {"model": "Model", "pretraining": "ForPreTraining", "masked-lm": "ForMaskedLM"}
ENCODER_HEADS = {"model": "Model", "masked-lm": "ForMaskedLM"}  # the families after BERT
EMBEDDING_TABLES = {name: f"embeddings.{name}" for name in ("word_embeddings", "position_embeddings",
                                                             "token_type_embeddings", "LayerNorm")}
ATTENTION = {"qkv": ("attention.self.query", "attention.self.key", "attention.self.value"),
             "dense": ("attention.output.dense",), "LayerNorm": ("attention.output.LayerNorm",)}
FFN = {"ffn": ("intermediate.dense",), "ffn_output": ("output.dense",), "LayerNorm": ("output.LayerNorm",)}
MODULES = Modules(
    base="bert", embeddings="embeddings", tables=EMBEDDING_TABLES, layer="encoder.layer.{i}", attention=ATTENTION,
    ffn=FFN, pooler="pooler.dense",
    mlm={"dense": "cls.predictions.transform.dense", "LayerNorm": "cls.predictions.transform.LayerNorm",
         "bias": "cls.predictions.bias", "decoder": "cls.predictions.decoder"},
    mlm_modules=("cls.predictions", None), order=("cls.seq_relationship", "cls.seq_relationship"),
)
DROPOUT = 0.1
DEFAULTS = {  # BertConfig() is BERT-base
    "vocab_size": 30522, "hidden_size": 768, "num_hidden_layers": 12, "num_attention_heads": 12,
    "intermediate_size": 3072, "hidden_act": "gelu", "max_position_embeddings": 512, "type_vocab_size": 2,
    "layer_norm_eps": 1e-12, "tie_word_embeddings": True, "position_embedding_type": "absolute",
}


def read_bert_like(f: Any) -> dict[str, Any]:
    """The fields every BERT-lineage file gives the same way (ALBERT's too)."""
    return dict(type_vocab_size=f["type_vocab_size"], hidden_act=f["hidden_act"],
                layer_norm_eps=float(f["layer_norm_eps"]), sharing="none")


def write_bert_like(cfg: Any, dropout: float) -> dict[str, Any]:
    """The keys every BERT-lineage file writes the same way."""
    return {"hidden_act": cfg.hidden_act, "type_vocab_size": cfg.type_vocab_size, "layer_norm_eps": cfg.layer_norm_eps,
            "hidden_dropout_prob": dropout, "attention_probs_dropout_prob": dropout}


def _write(cfg: Any) -> dict[str, Any]:
    return write_bert_like(cfg, DROPOUT) | {"position_embedding_type": "absolute"}


FAMILY = Family(
    name="bert", label="BERT", source="Devlin et al. 2019, BERT", layout=PAPER_LAYOUT, base_preset="bert-base",
    tokenizer="wordpiece", dropout=DROPOUT, paper=True, albert_ideas=False,
    fixed={"always_project": False}, order_head="nsp_classifier",
    reader=Reader(Schema("bert", BERT_LIKE | ENCODER_ONLY), DEFAULTS, read_bert_like, _write),
    transformers=Transformers("Bert", PAPER_HEADS, MODULES),
)
