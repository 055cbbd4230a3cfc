"""One validated configuration for BERT- and ALBERT-style encoders.

`ModelConfig` is the single object that travels from widgets, presets, URLs and transformers
`config.json` files to every counter and to the live model. It is frozen and validated on
construction: a value that cannot describe a real model raises `ValueError` naming the field and the
rule, and no other exception type escapes for bad values.

This module imports neither torch nor transformers (counting must start fast).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, fields
from types import MappingProxyType
from typing import Any

from albert_core.checks import check_field_names, check_flag, check_number, check_whole_number, short_repr

FAMILIES = ("albert", "bert")
SHARING_MODES = ("none", "all", "attention", "ffn")
HEADS = ("model", "pretraining", "masked-lm")
ACTIVATIONS = ("gelu", "gelu_new", "relu")
NUM_ORDER_LABELS = 2  # SOP (ALBERT) and NSP (BERT) are both binary classifiers

SHARING_LABELS = {
    "none": "not shared",
    "all": "all-shared",
    "attention": "shared-attention",
    "ffn": "shared-FFN",
}
HEAD_LABELS = {
    "model": "encoder + pooler (XModel)",
    "pretraining": "pre-training heads: MLM + SOP/NSP (XForPreTraining)",
    "masked-lm": "masked-LM head only (XForMaskedLM)",
}

# Upper bounds keep every count, sweep and URL value finite and meaningful. They are far beyond any
# published encoder; the live model has its own, much smaller, memory budget.
LIMITS: Mapping[str, tuple[int, int]] = MappingProxyType(
    {
        "vocab_size": (1, 1_000_000),
        "embedding_size": (1, 65_536),
        "hidden_size": (1, 65_536),
        "num_layers": (1, 512),
        "num_heads": (1, 1_024),
        "intermediate_size": (1, 262_144),
        "max_position_embeddings": (1, 65_536),
        "type_vocab_size": (1, 1_024),
        "num_hidden_groups": (1, 512),
        "inner_group_num": (1, 64),
    }
)

_INT_LIMITS = tuple(LIMITS.items())
CHOICE_FIELDS: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {"family": FAMILIES, "sharing": SHARING_MODES, "head": HEADS, "hidden_act": ACTIVATIONS}
)


@dataclass(frozen=True)
class ModelConfig:
    """Architecture of a BERT- or ALBERT-style encoder and which transformers head sits on it.

    Defaults are ALBERT-base. For ``family="bert"`` the embedding size is the hidden size (it is
    set to ``hidden_size`` on construction), there is no cross-layer sharing and K is 1.
    """

    family: str = "albert"
    vocab_size: int = 30_000
    embedding_size: int = 128
    hidden_size: int = 768
    num_layers: int = 12
    num_heads: int = 12
    intermediate_size: int = 3072
    max_position_embeddings: int = 512
    type_vocab_size: int = 2
    hidden_act: str = "gelu_new"
    sharing: str = "all"
    num_hidden_groups: int = 1
    inner_group_num: int = 1
    head: str = "model"
    tie_word_embeddings: bool = True
    layer_norm_eps: float = 1e-12

    def __post_init__(self) -> None:
        for name, choices in CHOICE_FIELDS.items():
            value = getattr(self, name)
            if not isinstance(value, str) or value not in choices:
                raise ValueError(f"{name} must be one of {', '.join(choices)}; got {short_repr(value)}")
        for name, (lo, hi) in _INT_LIMITS:
            check_whole_number(name, getattr(self, name), lo, hi)
        check_flag("tie_word_embeddings", self.tie_word_embeddings)
        eps = self.layer_norm_eps
        check_number("layer_norm_eps", eps, 0, 1, lo_open=True, hi_open=True)
        if self.family == "bert":
            if self.sharing != "none":
                raise ValueError(
                    f"sharing must be 'none' for family 'bert' (BERT has no cross-layer sharing; "
                    f"use family 'albert'), got {self.sharing!r}"
                )
            if self.inner_group_num != 1:
                raise ValueError(
                    f"inner_group_num must be 1 for family 'bert', got {self.inner_group_num}"
                )
            # For BERT the token embeddings live at the hidden size: no factorization.
            object.__setattr__(self, "embedding_size", self.hidden_size)
            object.__setattr__(self, "num_hidden_groups", 1)
        if self.hidden_size % self.num_heads:
            raise ValueError(
                f"hidden_size ({self.hidden_size}) must be divisible by num_heads ({self.num_heads})"
            )
        if self.num_hidden_groups > self.num_layers:
            raise ValueError(
                f"num_hidden_groups must be between 1 and num_layers ({self.num_layers}), "
                f"got {self.num_hidden_groups}"
            )

    # ----------------------------------------------------------------------------- derived values
    @property
    def head_dim(self) -> int:
        return self.hidden_size // self.num_heads

    @property
    def executed_layers(self) -> int:
        """Layers actually run in a forward pass: L*K, whatever the sharing."""
        return self.num_layers * self.inner_group_num

    @property
    def attention_shared(self) -> bool:
        return self.sharing in ("all", "attention")

    @property
    def ffn_shared(self) -> bool:
        return self.sharing in ("all", "ffn")

    @property
    def attention_copies(self) -> int:
        """Distinct attention blocks held: G*K when shared, L*K otherwise."""
        n = self.num_hidden_groups if self.attention_shared else self.num_layers
        return n * self.inner_group_num

    @property
    def ffn_copies(self) -> int:
        """Distinct feed-forward blocks held: G*K when shared, L*K otherwise."""
        n = self.num_hidden_groups if self.ffn_shared else self.num_layers
        return n * self.inner_group_num

    @property
    def is_factorized(self) -> bool:
        """ALBERT always has the E->H projection (transformers keeps it even when E == H)."""
        return self.family == "albert"

    @property
    def has_pooler(self) -> bool:
        return self.head in ("model", "pretraining")

    @property
    def has_mlm_head(self) -> bool:
        return self.head in ("pretraining", "masked-lm")

    @property
    def has_order_head(self) -> bool:
        return self.head == "pretraining"

    def group_of_layer(self, i: int, groups: int | None = None) -> int:
        """The group layer ``i`` uses, exactly as transformers computes it."""
        g = self.num_hidden_groups if groups is None else groups
        return int(i / (self.num_layers / g))

    def block_index(self, i: int, shared: bool) -> int:
        """Index of the attention/FFN copy set used by layer ``i`` (groups if shared, else i)."""
        return self.group_of_layer(i) if shared else i

    @property
    def label(self) -> str:
        """A short human description, e.g. 'ALBERT H=768 L=12 E=128 all-shared'."""
        if self.family == "bert":
            return f"BERT H={self.hidden_size} L={self.num_layers}"
        text = f"ALBERT H={self.hidden_size} L={self.num_layers} E={self.embedding_size}"
        text += f" {SHARING_LABELS[self.sharing]}"
        if self.sharing != "none" and self.num_hidden_groups > 1:
            text += f" G={self.num_hidden_groups}"
        if self.inner_group_num > 1:
            text += f" K={self.inner_group_num}"
        return text

    # ----------------------------------------------------------------------------- constructors
    def replace(self, **changes: Any) -> ModelConfig:
        """A validated copy with some fields changed."""
        unknown = sorted(set(changes) - {f.name for f in fields(self)})
        if unknown:
            raise ValueError(f"unknown field(s): {', '.join(unknown)}")
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ModelConfig:
        check_field_names(cls, data, "a config")
        return cls(**data)
