"""The layout of each family after BERT: its architecture axes and the fields its transformers config fixes for
it (token types, activation, norm epsilon), as its published models have them. The presets are built from these
(`albert_core.configuration.presets`), and a config switching family takes them (`coerce.family_layout`)."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

_BERT_LIKE: Mapping[str, Any] = {"type_vocab_size": 2, "hidden_act": "gelu", "layer_norm_eps": 1e-12}

FAMILY_LAYOUTS: Mapping[str, Mapping[str, Any]] = MappingProxyType({
    # RoBERTa (Liu et al. 2019): BERT's blocks; 514 learned positions starting after the padding id 1; one type
    "roberta": {**_BERT_LIKE, "type_vocab_size": 1, "layer_norm_eps": 1e-5, "position_offset": 2},
    "xlm-roberta": {**_BERT_LIKE, "type_vocab_size": 1, "layer_norm_eps": 1e-5, "position_offset": 2},
    # ELECTRA (Clark et al. 2020): BERT's blocks, its own E, no pooler on the bare model
    "electra": {**_BERT_LIKE, "pooler": False},
    # DeBERTa-v3 (He et al. 2021): relative positions over 256 log buckets a side, no table, no token types
    "deberta-v2": {**_BERT_LIKE, "type_vocab_size": 0, "layer_norm_eps": 1e-7, "position": "relative",
                   "position_buckets": 256, "pooler": False},
    # ModernBERT (Warner et al. 2024; Ettin and mmBERT too): GeGLU, rotary (160k global, 10k local), pre-LN
    # without biases, identity first norm, local attention over 128 tokens with a global layer every third
    "modernbert": {"type_vocab_size": 0, "hidden_act": "gelu", "layer_norm_eps": 1e-5, "ffn_kind": "glu",
                   "position": "rotary", "norm_bias": False, "norm_placement": "pre", "first_layer_norm": False,
                   "attention_bias": False, "mlp_bias": False, "local_window": 128, "global_every": 3,
                   "pooler": False, "head_bias": False, "rope_theta": 160_000.0, "local_rope_theta": 10_000.0},
    # EuroBERT (Boizard et al. 2025): Llama-style pre-RMSNorm blocks, SwiGLU, rotary, no biases, no embedding
    # norm, a decoder-only MLM head
    "eurobert": {"type_vocab_size": 0, "hidden_act": "silu", "layer_norm_eps": 1e-5, "ffn_kind": "glu",
                 "position": "rotary", "norm": "rmsnorm", "norm_bias": False, "norm_placement": "pre",
                 "embedding_norm": False, "attention_bias": False, "mlp_bias": False, "pooler": False,
                 "head_transform": False, "head_bias": False, "decoder_bias": False},
    # NomicBERT (Nussbaum et al. 2024): BERT's post-LN blocks with SwiGLU, rotary (base 1,000), no biases
    "nomic_bert": {**_BERT_LIKE, "hidden_act": "silu", "ffn_kind": "glu", "position": "rotary",
                   "attention_bias": False, "mlp_bias": False, "pooler": False, "rope_theta": 1000.0},
})
