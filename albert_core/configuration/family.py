"""What a model family is outside the architecture axes: one record per family (`Family`).

The axes (`ModelConfig`'s fields) say what an encoder computes; a family's record says where it comes from and how
its files and classes are named: its layout (the value of every axis its published models take, and the fields
its transformers config fixes), transformers' class prefix and module names (`Transformers`, `Modules`), the
config.json reader and writer with transformers' defaults (`Reader`), the lab tokenizer it is closest to, the
dropout of its config, its base preset and the paper its layout comes from. The records of the families shipped
are in `albert_core.configuration.families`, one module each; `albert_core.configuration.config.register_family`
checks a record and makes its name a valid ``family``. docs/architecture.md, "Adding a family", says what a new
one needs.

Plain data and hooks: this module imports nothing from the package.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

# The fields of a record's layout beside the architecture axes: what a family's transformers config fixes for it.
LAYOUT_EXTRA = ("type_vocab_size", "hidden_act", "layer_norm_eps")


@dataclass(frozen=True)
class Modules:
    """transformers' module names of a family's classes, for the weight map (`albert_core.live.interop`) and the
    per-module rows of the audit (`albert_core.review.audit`). Paths are under the base model (the bare class,
    or the attribute ``base`` of a head class) unless said otherwise; "{i}" is a layer (ALBERT: a layer group),
    "{k}" an inner layer. ``None``: the class has no such module."""

    base: str  # the attribute of a head class holding the base model ("albert", "roberta", "deberta", "model")
    embeddings: str  # the embeddings module the tools report (EuroBERT: its word table, "embed_tokens")
    tables: Mapping[str, str]  # our embeddings.{word_embeddings, position_embeddings, ..., LayerNorm} -> theirs
    layer: str  # a layer's module, with {i}
    attention: Mapping[str, tuple[str, ...]]  # our qkv, dense, LayerNorm -> theirs under the block (Q/K/V: 1 or 3)
    ffn: Mapping[str, tuple[str, ...]]  # our ffn (a GLU: gate, then up), ffn_output, LayerNorm -> theirs
    block: str | None = None  # an inner layer under the layer, with {k} (ALBERT's albert_layers); None: K = 1
    projection: str | None = None  # the E -> H projection
    relative: tuple[str, str] | None = None  # DeBERTa's relative table and its norm
    final_norm: str | None = None  # a pre-norm encoder's norm after the last layer
    pooler: str | None = None  # the pooler's Linear
    mlm: Mapping[str, str] = field(default_factory=dict)  # our dense, LayerNorm, bias, decoder -> theirs (head class)
    mlm_modules: tuple[str | None, str | None] = (None, None)  # (transform, decoder) as per-module tools report them
    # other MLM heads the class builds, by a value of its config: ((attribute, value), names), e.g. DeBERTa's newer
    # head with legacy false
    mlm_variants: tuple[tuple[tuple[str, Any], Mapping[str, str]], ...] = ()
    order: tuple[str, str] | None = None  # the SOP / NSP head (module, its Linear), in the head class
    discriminator: Mapping[str, str] = field(default_factory=dict)  # our dense, prediction -> theirs (head class)
    discriminator_module: str | None = None


@dataclass(frozen=True)
class Transformers:
    """A family's classes in transformers: ``prefix`` + a head's suffix (`heads`), e.g. 'ModernBert' +
    'ForMaskedLM'."""

    prefix: str
    heads: Mapping[str, str]  # our head -> the class suffix ("model": "Model", "masked-lm": "ForMaskedLM", ...)
    modules: Modules
    sdpa: bool = True  # the class runs torch's scaled_dot_product_attention (DeBERTa-v2's: eager only)

    def class_name(self, head: str) -> str | None:
        suffix = self.heads.get(head)
        return None if suffix is None else self.prefix + suffix


@dataclass(frozen=True)
class Reader:
    """The family's config.json, as the strict reader (`albert_core.configuration.hf_config`) reads and writes it.

    ``schema``: every key it reads with its type and range (`albert_core.configuration.hf_schema.Schema`);
    ``defaults``: transformers' own value of a key the file leaves out; ``read``: the checked keys
    (`hf_config.HfFields`) -> the config's fields beyond the sizes, head and tying that every family has;
    ``write``: a config -> the family's keys beyond those; ``fields``: a reader of the raw file of its own
    (DeBERTa-v3's 'p2c|c2p', NomicBERT's GPT-2-style keys), else the schema's check alone; ``architectures``: the
    head a class name in the file's ``architectures`` means (the first suffix it ends with; none: the bare
    model)."""

    schema: Any
    defaults: Mapping[str, Any]
    read: Callable[[Any], dict[str, Any]]
    write: Callable[[Any], dict[str, Any]]
    fields: Callable[[str, Mapping[str, Any]], Any] | None = None
    architectures: tuple[tuple[str, str], ...] = (("ForPreTraining", "pretraining"), ("ForMaskedLM", "masked-lm"))


@dataclass(frozen=True)
class Family:
    """Everything a family is outside the axes. ``layout`` holds the value of every axis (`AXIS_FIELDS`) and of
    `LAYOUT_EXTRA` as its published models have them: a config switching to the family takes them, the presets are
    built from them, and a family whose layout is ``paper`` fixed (BERT, ALBERT) keeps them. ``fixed``: fields the
    family sets whatever is given (BERT: no projection; ALBERT: its projection even at E = H)."""

    name: str  # transformers' model_type: the config's ``family``
    label: str  # as people write it ("DeBERTa-v3")
    source: str  # the paper its layout comes from
    layout: Mapping[str, Any]
    base_preset: str  # the preset a config of this family is named against (`presets.reference_config`)
    tokenizer: str  # the lab tokenizer nearest to its own (albert_core.text.tokenizers.KINDS)
    dropout: float  # hidden and attention-probability dropout of its transformers config (`config_to_hf`)
    reader: Reader | None  # None: no config.json is read or written for it
    transformers: Transformers | None  # None: transformers has no class for it
    paper: bool = False  # one of the ALBERT paper's two families: its layout is fixed, its heads include SOP / NSP
    albert_ideas: bool = True  # E and cross-layer sharing can be set (BERT: E = H, nothing shared)
    class_axes: frozenset[str] = frozenset()  # ALBERT's axes (E, sharing, G, K) its transformers class holds
    fixed: Mapping[str, Any] = field(default_factory=dict)
    order_head: str | None = None  # its pretraining model's sentence-order head ("sop_classifier", "nsp_classifier")
    # dropout layers of its class that the activation estimate counts (albert_core.counting.memory)
    ffn_dropout: bool = True  # after the FFN's output (transformers' ALBERT has none)
    order_dropout: bool = False  # before the sentence-order classifier (ALBERT's SOP head has one)

    def class_name(self, head: str) -> str | None:
        """transformers' class of this family with ``head``, or None."""
        return None if self.transformers is None else self.transformers.class_name(head)
