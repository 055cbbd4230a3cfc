"""Exact parameter counts of BERT-style encoders (BERT, ALBERT and the encoders since), component by component.

Component names are the live model's parameter names with indices and the final weight/bias removed
(`component_of`), so "analytic equals live" is a comparison of two dicts. The totals equal
`sum(p.numel() for p in model.parameters())` of the matching transformers model (tied weights once).

`param_terms` is written as plain arithmetic on the config's numbers: it runs on a `ModelConfig` and,
unchanged, on numpy int64 columns of many configs (see `albert_core.counting.sweeps`). The categorical fields
(family, sharing, head, tie, the architecture axes) only decide which components exist and which terms a
component has, never the arithmetic of the numbers.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, fields
from types import MappingProxyType
from typing import Any

from albert_core.configuration.config import NUM_ORDER_LABELS, ModelConfig, family_of

GROUPS = ("embeddings", "encoder", "heads")

# name -> (human label, group), in model order. FLOP-only components are listed too so that one
# table serves params.py, flops.py and the pages.
COMPONENT_INFO: Mapping[str, tuple[str, str]] = MappingProxyType(
    {
        "embeddings.word_embeddings": ("Word embeddings", "embeddings"),
        "embeddings.position_embeddings": ("Position embeddings", "embeddings"),
        "embeddings.token_type_embeddings": ("Token-type embeddings", "embeddings"),
        "embeddings.LayerNorm": ("Embedding LayerNorm", "embeddings"),
        "embeddings.relative_embeddings": ("Relative position embeddings", "embeddings"),
        "embeddings.relative_LayerNorm": ("Relative position LayerNorm", "embeddings"),
        "encoder.embedding_hidden_mapping_in": ("Embedding projection E→H", "embeddings"),
        "elementwise.embeddings": ("Element-wise work, embeddings", "embeddings"),
        "encoder.attention.qkv": ("Attention Q/K/V", "encoder"),
        "encoder.attention.scores": ("Attention scores QKᵀ and weighted values", "encoder"),
        "encoder.attention.dense": ("Attention output", "encoder"),
        "encoder.attention.LayerNorm": ("Attention LayerNorm", "encoder"),
        "encoder.ffn.ffn": ("FFN up H→I", "encoder"),
        "encoder.ffn.ffn_output": ("FFN down I→H", "encoder"),
        "encoder.ffn.LayerNorm": ("FFN LayerNorm", "encoder"),
        "encoder.attention.relative": ("Relative-position attention (DeBERTa)", "encoder"),
        "encoder.lora.q": ("LoRA on the shared query (per position)", "encoder"),
        "encoder.lora.k": ("LoRA on the shared key (per position)", "encoder"),
        "encoder.lora.v": ("LoRA on the shared value (per position)", "encoder"),
        "encoder.lora.o": ("LoRA on the shared attention output (per position)", "encoder"),
        "encoder.lora.in": ("LoRA on the shared FFN up (per position)", "encoder"),
        "encoder.lora.out": ("LoRA on the shared FFN down (per position)", "encoder"),
        "encoder.final_norm": ("Final norm (pre-norm encoders)", "encoder"),
        "elementwise.encoder": ("Element-wise work, encoder", "encoder"),
        "pooler": ("Pooler", "heads"),
        "predictions.dense": ("MLM transform", "heads"),
        "predictions.LayerNorm": ("MLM LayerNorm", "heads"),
        "predictions": ("MLM output bias", "heads"),
        "predictions.decoder": ("MLM decoder", "heads"),
        "sop_classifier": ("Sentence-order head (SOP)", "heads"),
        "nsp_classifier": ("Next-sentence head (NSP)", "heads"),
        "discriminator.dense": ("Discriminator transform", "heads"),
        "discriminator.prediction": ("Discriminator output (replaced token?)", "heads"),
        "elementwise.heads": ("Element-wise work, heads", "heads"),
    }
)

_INDEX = re.compile(r"\.\d+")


def component_of(param_name: str) -> str:
    """The component a live-model parameter belongs to: indices and the final weight/bias dropped.

    >>> component_of("encoder.attention.0.1.qkv.weight")
    'encoder.attention.qkv'
    >>> component_of("predictions.bias")
    'predictions'
    """
    return _INDEX.sub("", param_name).rsplit(".", 1)[0]


def order_head_name(family: str) -> str | None:
    """The component of the family's sentence-order head (`Family.order_head`; None: its pretraining has none):
    ALBERT's sentence-order head and BERT's next-sentence head are both Linear(H, 2)."""
    return family_of(family).order_head


def param_terms(c: Any) -> list[tuple[str, Any, Any]]:
    """(name, params held, params with one copy per executed layer) for every component that exists.

    ``c`` is a ModelConfig or anything with the same fields and properties whose numbers may be numpy
    arrays (for BERT, embedding_size equals hidden_size, as ModelConfig enforces).
    """
    V, E, H, I = c.vocab_size, c.embedding_size, c.hidden_size, c.intermediate_size  # noqa: E741 (paper notation)
    P, T, C = c.max_position_embeddings, c.type_vocab_size, NUM_ORDER_LABELS
    att, ffn, X = c.attention_copies, c.ffn_copies, c.executed_layers
    KV, F, n = c.kv_size, c.ffn_width, c.norm_size  # key/value width, FFN up width, parameters per normed unit
    att_b, mlp_b = int(c.attention_bias), int(c.mlp_bias)

    def same(name: str, count: Any) -> tuple[str, Any, Any]:
        return name, count, count

    def layered(name: str, copies: Any, per_copy: Any) -> tuple[str, Any, Any]:
        return name, copies * per_copy, X * per_copy

    out = [same("embeddings.word_embeddings", V * E)]
    if c.has_position_table:
        out.append(same("embeddings.position_embeddings", P * E))
    out.append(same("embeddings.token_type_embeddings", T * E))  # T = 0: no table (dropped by count_params)
    if c.embedding_norm:
        out.append(same("embeddings.LayerNorm", n * (H if c.norm_after_projection else E)))
    if c.position == "relative":  # DeBERTa: 2 x buckets rows of H, normed once, projected by every layer
        out += [same("embeddings.relative_embeddings", 2 * c.position_buckets * H),
                same("embeddings.relative_LayerNorm", 2 * H)]
    factorized = c.is_factorized  # a bool, or a column of them in a sweep over E or H
    if factorized is not False:  # ALBERT keeps the projection even when E == H, as transformers does
        out.append(same("encoder.embedding_hidden_mapping_in", (E * H + H * int(c.projection_bias)) * factorized))
    # the first executed block's attention norm is the identity without first_layer_norm (ModernBERT)
    first = 0 if c.first_layer_norm else n * H
    out += [
        layered("encoder.attention.qkv", att, H * (H + 2 * KV) + (H + 2 * KV) * att_b),
        layered("encoder.attention.dense", att, H * H + H * att_b),
        ("encoder.attention.LayerNorm", c.attention_norms * n * H, X * n * H - first),
        layered("encoder.ffn.ffn", ffn, H * F + F * mlp_b),
        layered("encoder.ffn.ffn_output", ffn, I * H + H * mlp_b),
        layered("encoder.ffn.LayerNorm", ffn, n * H),
    ]
    # a LoRA per executed position of a shared block: r x (d_in + d_out) each (one per position already, so the
    # unshared column holds them too)
    out += [same(f"encoder.lora.{m}", positions * c.lora_rank * (d_in + d_out))
            for m, positions, d_in, d_out in c.lora_terms()]
    if c.norm_placement == "pre":
        out.append(same("encoder.final_norm", n * H))
    if c.has_pooler:
        out.append(same("pooler", H * H + H))
    if c.has_mlm_head:
        if c.head_transform:
            out += [same("predictions.dense", H * E + E * int(c.head_bias)),
                    same("predictions.LayerNorm", n * E)]
        elif factorized is not False:  # a decoder-only head (EuroBERT) reads E-wide vectors through a plain H->E map
            out.append(same("predictions.dense", H * E * factorized))
        if c.decoder_bias:
            out.append(same("predictions", V))
        if not c.tie_word_embeddings:
            # transformers 5 unties the decoder's weight [V, E]; the BERT-lineage heads (a separate `bias`
            # parameter) untie its bias too, leaving `predictions.bias` unused (`albert_core.counting.memory`).
            out.append(same("predictions.decoder", V * E + V * int(c.decoder_bias and c.separate_decoder_bias)))
    if c.has_order_head:
        out.append(same(order_head_name(c.family), C * H + C))
    if c.has_discriminator:
        out += [same("discriminator.dense", H * H + H), same("discriminator.prediction", H + 1)]
    return out


def component_columns(components, measure: str) -> dict[str, list]:
    """Breakdown components (dataclasses with name, label, group and counts) as columns of plain lists ("component"
    for the name), with the share of each in the sum of ``measure``: the table's content, for any table library."""
    # column by column: dataclasses.asdict deep-copies every field of every row (about half the build time)
    columns = {("component" if f.name == "name" else f.name): [getattr(c, f.name) for c in components]
               for f in fields(components[0])}
    total = sum(columns[measure])
    columns["share"] = [v / total if total else float("nan") for v in columns[measure]]
    return columns


def components_frame(components, measure: str):
    """`component_columns` as a DataFrame."""
    import pandas as pd

    return pd.DataFrame(component_columns(components, measure))


@dataclass(frozen=True)
class Component:
    name: str
    label: str
    group: str
    params: int  # unique parameters held
    unshared: int  # what it would hold with one copy per executed layer (L*K)


@dataclass(frozen=True)
class ParamBreakdown:
    config: ModelConfig
    components: tuple[Component, ...]

    @property
    def total(self) -> int:
        return sum(c.params for c in self.components)

    @property
    def unshared_total(self) -> int:
        return sum(c.unshared for c in self.components)

    @property
    def saved_by_sharing(self) -> int:
        return self.unshared_total - self.total

    def by_name(self) -> dict[str, int]:
        return {c.name: c.params for c in self.components}

    def group_totals(self) -> dict[str, int]:
        out = dict.fromkeys(GROUPS, 0)
        for c in self.components:
            out[c.group] += c.params
        return out

    def to_frame(self):
        """A pandas DataFrame: component, label, group, params, unshared, share (of the total)."""
        return components_frame(self.components, "params")


def count_params(cfg: ModelConfig) -> ParamBreakdown:
    """Exact parameter count of ``cfg``'s transformers model (XModel / XForPreTraining / XForMaskedLM)."""
    if not isinstance(cfg, ModelConfig):
        raise ValueError(f"cfg must be a ModelConfig, got {type(cfg).__name__}")
    comps = tuple(
        Component(name, *COMPONENT_INFO[name], int(n), int(u))
        for name, n, u in param_terms(cfg)
        if n
    )
    return ParamBreakdown(cfg, comps)
