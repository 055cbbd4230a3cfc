"""One validated configuration for BERT-style encoders: BERT, ALBERT and the encoders built since.

An encoder is described by its architecture axes (feed-forward kind, position scheme, norm kind and placement,
biases, attention pattern, key/value heads, head kind and tying), plus ALBERT's two ideas as axes any family can
take: a factorized embedding size E and cross-layer sharing (all / attention / FFN, G groups, K inner blocks).
``family`` names the lineage: its record (`albert_core.configuration.family.Family`, registered here by
`register_family`; the shipped ones in `albert_core.configuration.families`) holds everything outside the axes
(transformers' classes, the config.json reader and writer, tokenizer, dropout, base preset); the counters read the
axes only.

`ModelConfig` is the single object that travels from widgets, presets, URLs and transformers
`config.json` files to every counter and to the live model. It is frozen and validated on
construction: a value that cannot describe a real model raises `ValueError` naming the field and the
rule, and no other exception type escapes for bad values.

This module imports neither torch nor transformers (counting must start fast).
"""

from __future__ import annotations

import dataclasses
import operator
from collections.abc import Callable, Iterator, KeysView, Mapping
from dataclasses import dataclass, fields
from types import MappingProxyType
from typing import Any

from albert_core.checks import check_field_names, check_flag, check_number, check_whole_number, short_repr
from albert_core.configuration.family import LAYOUT_EXTRA, Family

# The registered families by transformers' model_type, in order (the shipped ones: BERT and ALBERT, the paper's two,
# and the encoders designed since; `albert_core.configuration.families` registers them when the package loads).
_RECORDS: dict[str, Family] = {}
_PAPER_AXES_OF: dict[str, tuple[Any, ...]] = {}  # a paper family's layout on the axes, in `AXIS_FIELDS` order


class FamilyNames(KeysView):
    """The names of the registered families (those of ``keep``), in order: a live view of the records (a family
    registered later is in it), indexable like a tuple."""

    def __init__(self, keep: Callable[[Family], bool] | None = None) -> None:
        super().__init__(_RECORDS)
        self._keep = keep

    def _names(self) -> tuple[str, ...]:
        return tuple(n for n, r in _RECORDS.items() if self._keep is None or self._keep(r))

    def __getitem__(self, index: Any) -> Any:
        return self._names()[index]

    def index(self, name: str) -> int:
        return self._names().index(name)

    def __len__(self) -> int:
        return len(self._names())

    def __iter__(self) -> Iterator[str]:
        return iter(self._names())

    def __contains__(self, name: object) -> bool:
        record = _RECORDS.get(name) if isinstance(name, str) else None
        return record is not None and (self._keep is None or self._keep(record))

    def __repr__(self) -> str:
        return repr(self._names())


class _FamilyLabels(Mapping[str, str]):
    """Family name -> its label ("DeBERTa-v3"), read from the records."""

    def __getitem__(self, name: str) -> str:
        return family_of(name).label

    def __len__(self) -> int:
        return len(_RECORDS)

    def __iter__(self) -> Iterator[str]:
        return iter(tuple(_RECORDS))


FAMILIES = FamilyNames()
PAPER_FAMILIES = FamilyNames(lambda r: r.paper)  # the ALBERT paper's two: their layout is fixed
FAMILY_NAMES: Mapping[str, str] = _FamilyLabels()


def family_of(name: str) -> Family:
    """The record of the family called ``name`` (ValueError naming the registered ones otherwise)."""
    record = _RECORDS.get(name) if isinstance(name, str) else None
    if record is None:
        raise ValueError(f"family must be one of {', '.join(_RECORDS)}; got {short_repr(name)}")
    return record


def register_family(record: Family) -> None:
    """Make ``record``'s name a valid ``family``: ValueError naming what is missing when its layout does not give
    every axis (`AXIS_FIELDS`) and `LAYOUT_EXTRA`, or a field it fixes is not a config field."""
    if not isinstance(record, Family):
        raise ValueError(f"record must be a Family, got {type(record).__name__}")
    missing = [n for n in (*AXIS_FIELDS, *LAYOUT_EXTRA) if n not in record.layout]
    unknown = sorted(set(record.layout) - set(AXIS_FIELDS) - set(LAYOUT_EXTRA))
    if missing or unknown:
        raise ValueError(f"the layout of family {record.name!r} must give every axis and {', '.join(LAYOUT_EXTRA)}: "
                         f"missing {', '.join(missing) or 'none'}, unknown {', '.join(unknown) or 'none'}")
    if stray := sorted(set(record.fixed) - {f.name for f in fields(ModelConfig)}):
        raise ValueError(f"family {record.name!r} fixes unknown field(s) {', '.join(stray)}")
    _RECORDS[record.name] = record
    if record.paper:
        _PAPER_AXES_OF[record.name] = tuple({**record.layout, **record.fixed}[n] for n in AXIS_FIELDS)


def unregister_family(name: str) -> None:
    """Forget a family registered with `register_family` (a test's extra family)."""
    _RECORDS.pop(name, None)
    _PAPER_AXES_OF.pop(name, None)


SHARING_MODES = ("none", "all", "attention", "ffn")
# The sharing schemes designed since ALBERT, as axes of every family with ALBERT's ideas (docs/sharing.md):
# the order in which the shared blocks are used, unique first and last layers around a shared middle, an immediate
# repeat of every layer, and a LoRA per executed position on chosen matrices of the shared blocks.
BLOCK_ORDERS = ("groups", "cycle")
BLOCK_ORDER_LABELS = {
    "groups": "contiguous groups (ALBERT: AABB)",
    "cycle": "cycle (ABAB)",
}
LORA_MATRICES = ("q", "k", "v", "o", "in", "out")  # attention query, key, value, output; FFN up (whole), down
LORA_MATRIX_LABELS = {"q": "attention query", "k": "attention key", "v": "attention value",
                      "o": "attention output", "in": "FFN up (H -> I, a GLU's gate and up together)",
                      "out": "FFN down (I -> H)"}
ATTENTION_MATRICES = ("q", "k", "v", "o")
# every non-empty set of the six, in LORA_MATRICES order joined by '-' (no comma: a value in links and pins): "q-v"
LORA_TARGET_CHOICES = tuple(
    "-".join(m for j, m in enumerate(LORA_MATRICES) if bits >> j & 1) for bits in range(1, 2 ** len(LORA_MATRICES))
)
ALL_LORA_TARGETS = "-".join(LORA_MATRICES)  # Relaxed Recursive Transformers' choice: every matrix of the block
HEADS = ("model", "pretraining", "masked-lm")  # the heads of BERT and ALBERT (the Explorer's choices)
ENCODER_HEADS = (*HEADS, "discriminator")  # + ELECTRA's replaced-token discriminator (ElectraForPreTraining)
ACTIVATIONS = ("gelu", "gelu_new", "relu")  # BERT's and ALBERT's (the Explorer's choices)
ENCODER_ACTIVATIONS = (*ACTIVATIONS, "silu")  # + EuroBERT's and NomicBERT's SwiGLU gate
HEAD_ACTS = ("hidden", *ENCODER_ACTIVATIONS)  # the MLM transform's activation: "hidden" is hidden_act
FFN_KINDS = ("dense", "glu")
POSITIONS = ("learned", "rotary", "relative")
NORMS = ("layernorm", "rmsnorm")
NORM_PLACEMENTS = ("post", "pre")
NUM_ORDER_LABELS = 2  # SOP (ALBERT) and NSP (BERT) are both binary classifiers

def choices_text(name: str) -> str:
    """What a choice field takes, in words: 'one of a, b, c'; for ``lora_targets`` the rule of its 63 values."""
    if name == "lora_targets":
        return (f"one or more of {', '.join(LORA_MATRICES)} joined by '-' in that order (e.g. 'q-v' or "
                f"'{ALL_LORA_TARGETS}')")
    return f"one of {', '.join(CHOICE_FIELDS[name])}"


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
    "discriminator": "replaced-token discriminator (ElectraForPreTraining)",
}
FFN_LABELS = {"dense": "dense (up, activation, down)", "glu": "gated (GLU: act(gate) x up, then down)"}
POSITION_LABELS = {
    "learned": "learned table (absolute)",
    "rotary": "rotary (no table)",
    "relative": "relative buckets (DeBERTa)",
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
        "position_offset": (0, 1_024),
        "position_buckets": (0, 65_536),
        "num_kv_heads": (0, 1_024),
        "local_window": (0, 65_536),
        "global_every": (1, 512),
        "repeat": (1, 16),
        "lora_rank": (0, 65_536),
    }
)

_INT_LIMITS = tuple(LIMITS.items())
CHOICE_FIELDS: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {"family": FAMILIES, "sharing": SHARING_MODES, "head": ENCODER_HEADS, "hidden_act": ENCODER_ACTIVATIONS,
     "ffn_kind": FFN_KINDS, "position": POSITIONS, "norm": NORMS, "norm_placement": NORM_PLACEMENTS,
     "head_act": HEAD_ACTS, "block_order": BLOCK_ORDERS, "lora_targets": LORA_TARGET_CHOICES}
)
FLAG_FIELDS = ("tie_word_embeddings", "norm_bias", "embedding_norm", "first_layer_norm", "attention_bias",
               "mlp_bias", "pooler", "head_transform", "head_bias", "decoder_bias", "projection_bias",
               "norm_after_projection", "separate_decoder_bias", "always_project", "unique_ends")
# The axes a config that does not give them takes from its family's record (`Family.layout`): facts that were
# written as tests of the family's name before they were axes.
FAMILY_SWITCHES = ("projection_bias", "norm_after_projection", "separate_decoder_bias", "head_act", "always_project")


@dataclass(frozen=True)
class ModelConfig:
    """Architecture of a BERT-style encoder and which transformers head sits on it.

    Defaults are ALBERT-base. A family without ALBERT's ideas (``family="bert"``) has E = H (set on construction),
    no cross-layer sharing and K = 1. BERT and ALBERT keep the paper's layout on every other axis (dense FFN, learned
    positions, post-LN with biases); the other families take any value of the axes, E and sharing included
    ("ALBERTized"). The `FAMILY_SWITCHES` a config does not give are its family's (`Family.layout`); the fields a
    family fixes (`Family.fixed`) are set whatever is given.
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
    # ---- architecture axes; the defaults are BERT's and ALBERT's layout
    ffn_kind: str = "dense"  # "glu": act(gate) * up, each H -> I, then down I -> H (ModernBERT, EuroBERT, NomicBERT)
    position: str = "learned"  # "rotary": no table; "relative": DeBERTa's bucketed relative table
    position_offset: int = 0  # rows of the learned table before position 0 (RoBERTa: padding_idx + 1 = 2)
    position_buckets: int = 0  # relative only: DeBERTa's position_buckets (its table holds 2 x this rows)
    norm: str = "layernorm"  # "rmsnorm": scale only (EuroBERT)
    norm_bias: bool = True  # LayerNorm with a bias (ModernBERT: none)
    norm_placement: str = "post"  # "pre": norm before each block, a final norm after the last (ModernBERT, EuroBERT)
    embedding_norm: bool = True  # a norm after the embeddings (EuroBERT: none; pre-norm only)
    first_layer_norm: bool = True  # pre-norm: False = the first block's attention norm is the identity (ModernBERT)
    attention_bias: bool = True  # Q, K, V and output projections with biases
    mlp_bias: bool = True  # feed-forward linears with biases
    num_kv_heads: int = 0  # key/value heads (grouped-query attention); 0 = as many as num_heads
    local_window: int = 0  # local attention's whole window in tokens (ModernBERT's local_attention); 0: all global
    global_every: int = 1  # with local_window: layer i attends globally when i % global_every == 0
    pooler: bool = True  # the bare model (head "model") has BERT's pooler (BERT, ALBERT, RoBERTa)
    head_transform: bool = True  # MLM head: dense -> act -> norm before the decoder (EuroBERT: decoder only)
    head_bias: bool = True  # the MLM transform's dense has a bias (ModernBERT: none)
    decoder_bias: bool = True  # the MLM decoder adds a bias over the vocabulary
    rope_theta: float = 10_000.0  # rotary: base of the global layers' frequencies
    local_rope_theta: float = 10_000.0  # rotary: base of the local layers' frequencies (ModernBERT)
    # ---- the family's unless given (`FAMILY_SWITCHES`, the record's layout)
    projection_bias: bool | None = None  # the E -> H projection has a bias (DeBERTa's embed_proj: none)
    norm_after_projection: bool | None = None  # the embedding norm after the E -> H projection, H wide (DeBERTa)
    separate_decoder_bias: bool | None = None  # the MLM bias is a parameter of its own beside the decoder (BERT's
    # lineage): an untied decoder then gets a bias of its own too, and that one goes unused
    head_act: str | None = None  # the MLM transform's activation: "hidden" (hidden_act) or one of its own
    always_project: bool | None = None  # an E -> H projection even when E == H (transformers' ALBERT)
    # ---- the sharing schemes since ALBERT (families with ALBERT's ideas; `SHARING_SCHEME` gives their defaults)
    block_order: str = "groups"  # which shared group layer i uses: contiguous runs (ALBERT) or i mod G ("cycle")
    unique_ends: bool = False  # the first and last layers have blocks of their own; the G groups share the middle
    repeat: int = 1  # each layer runs this many times in a row (MobileLLM-LS: 2); executed layers L x K x repeat
    lora_rank: int = 0  # a LoRA of this rank at every executed position of a shared block, on `lora_targets`
    lora_targets: str = ALL_LORA_TARGETS  # which matrices carry it (`LORA_TARGET_CHOICES`); kept at all six at rank 0

    def __post_init__(self) -> None:
        # Constructed on every edit, sweep row check and cache key: each group of fields is read in one C call
        # (attrgetter) and checked on a fast path; the per-field check only names the field that fails.
        record = _RECORDS.get(self.family) if isinstance(self.family, str) else None
        if record is not None:
            for name, value in zip(FAMILY_SWITCHES, _get_switches(self), strict=True):
                if value is None:
                    object.__setattr__(self, name, record.layout[name])
            for name, value in record.fixed.items():
                object.__setattr__(self, name, value)
        for name, choices, value in zip(CHOICE_FIELDS, CHOICE_FIELDS.values(), _get_choices(self), strict=True):
            if value not in choices or not isinstance(value, str):
                raise ValueError(f"{name} must be {choices_text(name)}; got {short_repr(value)}")
        paper = record.paper
        for (name, (lo, hi)), value in zip(_INT_LIMITS, _get_ints(self), strict=True):
            if type(value) is not int or not lo <= value <= hi:
                if name == "type_vocab_size" and not paper:
                    lo = 0  # the families after BERT may have no token-type table (RoBERTa keeps one row)
                check_whole_number(name, value, lo, hi)
        for name, value in zip(FLAG_FIELDS, _get_flags(self), strict=True):
            if value is not True and value is not False:
                check_flag(name, value)
        eps = self.layer_norm_eps
        check_number("layer_norm_eps", eps, 0, 1, lo_open=True, hi_open=True)
        for name in ("rope_theta", "local_rope_theta"):
            check_number(name, getattr(self, name), 0, 1e12, lo_open=True)
        if paper:
            if _get_axes(self) != _PAPER_AXES_OF[self.family]:
                self._check_paper_layout(record)
            if self.head not in HEADS or self.hidden_act not in ACTIVATIONS:
                self._check_paper_layout(record)
        elif self.head == "pretraining":
            raise ValueError(
                f"head 'pretraining' (MLM + sentence-order / next-sentence) exists for "
                f"{' and '.join(PAPER_FAMILIES)} only; {self.family} pretrains with 'masked-lm' (ELECTRA: "
                "'discriminator')"
            )
        if not record.albert_ideas:
            if self.sharing != "none":
                raise ValueError(
                    f"sharing must be 'none' for family {self.family!r} ({record.label} has no cross-layer sharing; "
                    f"use family 'albert'), got {self.sharing!r}"
                )
            if self.inner_group_num != 1:
                raise ValueError(
                    f"inner_group_num must be 1 for family {self.family!r}, got {self.inner_group_num}"
                )
            # Its token embeddings live at the hidden size: no factorization.
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
        self._check_axes()
        if self.lora_rank == 0 and self.lora_targets != ALL_LORA_TARGETS:
            object.__setattr__(self, "lora_targets", ALL_LORA_TARGETS)  # no LoRA: one way of writing it
        if (self.block_order, self.unique_ends, self.repeat, self.lora_rank) != _SCHEME_OFF:
            self._check_sharing_scheme(record)

    def _check_sharing_scheme(self, record: Family) -> None:
        """The rules of the sharing schemes since ALBERT (module docs/sharing.md)."""
        if not record.albert_ideas:
            for name, value in SHARING_SCHEME.items():
                if getattr(self, name) != value:
                    got = short_repr(getattr(self, name))
                    raise ValueError(f"{name} must be {value!r} for family {self.family!r} ({record.label} has no "
                                     f"cross-layer sharing; use family 'albert'), got {got}")
        shared = self.sharing != "none"
        if self.block_order != "groups" and not shared:
            raise ValueError(f"block_order {self.block_order!r} orders shared blocks: it needs sharing 'all', "
                             "'attention' or 'ffn', got sharing 'none'")
        if self.unique_ends:
            if not shared:
                raise ValueError("unique_ends gives the first and last layers blocks of their own around a shared "
                                 "middle: it needs sharing 'all', 'attention' or 'ffn', got sharing 'none'")
            if self.num_layers < 3:
                raise ValueError(f"unique_ends needs at least 3 layers (a first, a shared middle and a last), got "
                                 f"num_layers {self.num_layers}")
            if self.num_hidden_groups > self.num_layers - 2:
                raise ValueError(f"num_hidden_groups must be at most num_layers - 2 ({self.num_layers - 2}) with "
                                 f"unique_ends (the groups share the middle layers), got {self.num_hidden_groups}")
        if self.lora_rank:
            for m in self.lora_targets.split("-"):
                attention = m in ATTENTION_MATRICES
                if not (self.attention_lora_positions if attention else self.ffn_lora_positions):
                    kind = "attention" if attention else "FFN"
                    raise ValueError(
                        f"lora_targets {m!r} is on the {kind} block, which no two executed layers share here "
                        f"(sharing {self.sharing!r}, repeat {self.repeat}): a LoRA there would merge into its own "
                        "weight; share that block or leave it out of lora_targets")
                d_in, d_out = self.lora_shapes[m]
                if self.lora_rank > min(d_in, d_out):
                    raise ValueError(f"lora_rank must be at most {min(d_in, d_out)} on {m!r} (its {d_in} x {d_out} "
                                     f"matrix has no higher rank), got {self.lora_rank}")

    def _check_paper_layout(self, record: Family) -> None:
        """BERT and ALBERT keep the paper's layout: every axis at their record's."""
        for name in AXIS_FIELDS:
            value = record.layout[name]
            if getattr(self, name) != value:
                raise ValueError(
                    f"{name} must be {value!r} for family {self.family!r} (the paper's layout; other families, "
                    f"e.g. modernbert or eurobert, take other values), got {short_repr(getattr(self, name))}"
                )
        if self.head not in HEADS:
            raise ValueError(f"head must be one of {', '.join(HEADS)} for family {self.family!r}; "
                             f"got {short_repr(self.head)}")
        if self.hidden_act not in ACTIVATIONS:
            raise ValueError(f"hidden_act must be one of {', '.join(ACTIVATIONS)} for family {self.family!r}; "
                             f"got {short_repr(self.hidden_act)}")

    def _check_axes(self) -> None:
        kv = self.num_kv_heads
        if kv and self.num_heads % kv:
            raise ValueError(f"num_heads ({self.num_heads}) must be a multiple of num_kv_heads ({kv}): each "
                             f"key/value head serves a whole group of query heads")
        if self.position == "rotary" and (self.hidden_size // self.num_heads) % 2:
            raise ValueError(f"the head size hidden_size / num_heads ({self.hidden_size} / {self.num_heads} = "
                             f"{self.hidden_size // self.num_heads}) must be even with rotary positions (they rotate "
                             "pairs of dimensions)")
        if self.position == "relative":
            if self.position_buckets < 2:
                raise ValueError("position_buckets must be at least 2 with relative positions (DeBERTa's table "
                                 "holds 2 x position_buckets rows; its log buckets start at half of them), got "
                                 f"{self.position_buckets}")
        elif self.position_buckets:
            raise ValueError(f"position_buckets must be 0 unless position is 'relative', got {self.position_buckets}")
        if self.position_offset:
            if self.position != "learned":
                raise ValueError(f"position_offset must be 0 without a learned position table, got "
                                 f"{self.position_offset}")
            if self.position_offset >= self.max_position_embeddings:
                raise ValueError(f"position_offset ({self.position_offset}) must be below max_position_embeddings "
                                 f"({self.max_position_embeddings})")
        if self.local_window:
            if self.local_window % 2:
                raise ValueError(f"local_window must be even (the whole window: local_window / 2 tokens on each "
                                 f"side, as ModernBERT's local_attention), got {self.local_window}")
        elif self.global_every != 1:
            raise ValueError(f"global_every must be 1 without local attention (local_window 0), got "
                             f"{self.global_every}")
        if self.norm_placement == "post":
            for name in ("embedding_norm", "first_layer_norm"):
                if not getattr(self, name):
                    raise ValueError(f"{name} must be True with post-norm blocks (only pre-norm encoders drop it)")
        if not self.head_transform and self.head_bias:
            raise ValueError("head_bias must be False when head_transform is False (no transform dense to hold it)")

    # ----------------------------------------------------------------------------- derived values
    @property
    def head_dim(self) -> int:
        return self.hidden_size // self.num_heads

    @property
    def kv_heads(self) -> int:
        """Key/value heads: ``num_kv_heads``, or every head (0)."""
        return self.num_kv_heads + (self.num_kv_heads == 0) * self.num_heads  # arithmetic: also numpy columns

    @property
    def kv_size(self) -> int:
        """Width of the key and of the value projection: kv_heads x head_dim (H without grouped queries)."""
        return self.kv_heads * (self.hidden_size // self.num_heads)

    @property
    def ffn_width(self) -> int:
        """Output width of the FFN's first linear(s): I, or 2I for a GLU (gate and up)."""
        return self.intermediate_size * (2 if self.ffn_kind == "glu" else 1)

    @property
    def executed_layers(self) -> int:
        """Layers actually run in a forward pass: L*K*repeat, whatever the sharing."""
        return self.num_layers * self.inner_group_num * self.repeat

    @property
    def executed_local_layers(self) -> int:
        """Executed layers with local attention: each local layer runs K blocks, ``repeat`` times."""
        return self.local_layers * self.inner_group_num * self.repeat

    @property
    def shared_groups(self) -> int:
        """Copy sets of a shared block: the G groups, plus the unique first and last layers' (``unique_ends``)."""
        return self.num_hidden_groups + 2 * self.unique_ends  # arithmetic: also numpy columns

    def _lora_positions(self, shared: Any) -> Any:
        """Executed blocks that carry a LoRA on a block of a kind (attention or FFN) that is ``shared``: every
        executed block of the shared middle (the unique first and last layers carry none); for a kind that is
        not shared, every executed block when each layer runs more than once (``repeat``), else none."""
        L, K, r = self.num_layers, self.inner_group_num, self.repeat
        if shared:
            return (L - 2 * self.unique_ends) * K * r * (self.lora_rank > 0)
        return L * K * r * (r > 1) * (self.lora_rank > 0)

    def lora_targets_at(self, layer: int) -> tuple[str, ...]:
        """The matrices that carry a LoRA at each executed block of ``layer`` (scalar configs; `_lora_positions` is
        the same rule summed, for numpy columns too): a shared kind's targets except at the unique first and last
        layers, an unshared kind's only when every layer repeats."""
        if not self.lora_rank:
            return ()
        end = self.unique_ends and layer in (0, self.num_layers - 1)
        out = []
        for m in self.lora_targets.split("-"):
            shared = self.attention_shared if m in ATTENTION_MATRICES else self.ffn_shared
            if (shared and not end) or (not shared and self.repeat > 1):
                out.append(m)
        return tuple(out)

    @property
    def attention_lora_positions(self) -> int:
        return self._lora_positions(self.attention_shared)

    @property
    def ffn_lora_positions(self) -> int:
        return self._lora_positions(self.ffn_shared)

    @property
    def lora_shapes(self) -> dict[str, tuple[Any, Any]]:
        """(d_in, d_out) of each matrix a LoRA can sit on (`LORA_MATRICES`)."""
        H, KV, F, inner = self.hidden_size, self.kv_size, self.ffn_width, self.intermediate_size
        return {"q": (H, H), "k": (H, KV), "v": (H, KV), "o": (H, H), "in": (H, F), "out": (inner, H)}

    def lora_terms(self) -> list[tuple[str, Any, Any, Any]]:
        """(matrix, executed blocks that carry its LoRA, d_in, d_out) of each target, in `LORA_MATRICES` order;
        [] without a LoRA. A LoRA of rank r holds r x (d_in + d_out) parameters and costs 2 x r x (d_in + d_out)
        FLOPs per token per executed block: on a weight other layers share it cannot be merged in."""
        targets = self.lora_targets.split("-")
        shapes = self.lora_shapes
        out = []
        for m in LORA_MATRICES:
            if m in targets:
                n = self.attention_lora_positions if m in ATTENTION_MATRICES else self.ffn_lora_positions
                out.append((m, n, *shapes[m]))
        return out

    @property
    def local_layers(self) -> int:
        """Layers (of L) with local attention: all but every ``global_every``-th from the first."""
        L = self.num_layers
        return (L - -(-L // self.global_every)) * (self.local_window > 0)  # arithmetic: also numpy columns

    def is_global_layer(self, i: int) -> bool:
        return not self.local_window or i % self.global_every == 0

    @property
    def attention_shared(self) -> bool:
        return self.sharing in ("all", "attention")

    @property
    def ffn_shared(self) -> bool:
        return self.sharing in ("all", "ffn")

    @property
    def attention_copies(self) -> int:
        """Distinct attention blocks held: G*K when shared, L*K otherwise."""
        n = self.shared_groups if self.attention_shared else self.num_layers
        return n * self.inner_group_num

    @property
    def ffn_copies(self) -> int:
        """Distinct feed-forward blocks held: G*K when shared, L*K otherwise."""
        n = self.shared_groups if self.ffn_shared else self.num_layers
        return n * self.inner_group_num

    @property
    def attention_norms(self) -> int:
        """Attention norms held: one per attention copy, except that the first block's is the identity without
        ``first_layer_norm`` (ModernBERT), so its copy holds none when no other block runs it."""
        if self.first_layer_norm:
            return self.attention_copies
        # arithmetic that also runs on numpy columns (sweeps): 1 when the first copy runs only first (never when
        # every layer runs more than once)
        once = 1 if not self.attention_shared or self.unique_ends else (self.num_hidden_groups == self.num_layers) * 1
        return self.attention_copies - once * (self.repeat == 1)

    @property
    def norm_size(self) -> int:
        """Parameters of one norm over a vector of 1 (x width): scale, plus a bias for a LayerNorm with bias."""
        return 2 if self.norm == "layernorm" and self.norm_bias else 1

    @property
    def is_factorized(self) -> bool:
        """An E->H projection: where E != H (ELECTRA's embeddings_project, DeBERTa's embed_proj, an ALBERTized
        encoder), and always with ``always_project`` (transformers' ALBERT keeps it even when E == H)."""
        return self.always_project or self.embedding_size != self.hidden_size

    @property
    def has_position_table(self) -> bool:
        return self.position == "learned"

    @property
    def has_pooler(self) -> bool:
        return self.head in ("model", "pretraining") and self.pooler

    @property
    def head_label(self) -> str:
        """What sits on the encoder, in words (`HEAD_LABELS`; a bare model without BERT's pooler says so)."""
        if self.head == "model" and not self.pooler:
            return "encoder only, no pooler (XModel)"
        return HEAD_LABELS[self.head]

    @property
    def transform_act(self) -> str:
        """The activation the MLM transform applies: ``head_act``, or hidden_act where that is "hidden"."""
        return self.hidden_act if self.head_act == "hidden" else self.head_act

    @property
    def has_mlm_head(self) -> bool:
        return self.head in ("pretraining", "masked-lm")

    @property
    def has_order_head(self) -> bool:
        return self.head == "pretraining"

    @property
    def has_discriminator(self) -> bool:
        return self.head == "discriminator"

    @property
    def max_seq_len(self) -> int:
        """The longest input: the position table's rows after its offset (RoBERTa: 514 - 2)."""
        return self.max_position_embeddings - self.position_offset

    def group_of_layer(self, i: int, groups: int | None = None) -> int:
        """The group layer ``i`` uses, exactly as transformers computes it."""
        g = self.num_hidden_groups if groups is None else groups
        return int(i / (self.num_layers / g))

    def shared_group_of_layer(self, i: int) -> int:
        """The copy set of a shared block layer ``i`` uses: its group (contiguous runs as transformers' ALBERT,
        or i mod G with ``block_order`` "cycle"); with ``unique_ends`` the first layer's set is 0, the last's
        G + 1, and the G groups serve the L - 2 layers between them (sets 1 to G)."""
        L, G = self.num_layers, self.num_hidden_groups
        j, n, first = i, L, 0
        if self.unique_ends:
            if i == 0:
                return 0
            if i == L - 1:
                return G + 1
            j, n, first = i - 1, L - 2, 1
        return first + (j % G if self.block_order == "cycle" else int(j / (n / G)))  # transformers' formula

    def block_index(self, i: int, shared: bool) -> int:
        """Index of the attention/FFN copy set used by layer ``i`` (`shared_group_of_layer` if shared, else i)."""
        return self.shared_group_of_layer(i) if shared else i

    @property
    def label(self) -> str:
        """A short human description, e.g. 'ALBERT H=768 L=12 E=128 all-shared'."""
        record = _RECORDS[self.family]
        shares = "sharing" in record.class_axes  # E and the sharing mode are always part of such a family's name
        text = f"{record.label} H={self.hidden_size} L={self.num_layers}"
        if shares or self.is_factorized:
            text += f" E={self.embedding_size}"
        if shares or self.sharing != "none":
            text += f" {SHARING_LABELS[self.sharing]}"
        if self.sharing != "none" and self.num_hidden_groups > 1:
            text += f" G={self.num_hidden_groups}"
        if self.inner_group_num > 1:
            text += f" K={self.inner_group_num}"
        if self.block_order != "groups":
            text += f" {self.block_order}"
        if self.unique_ends:
            text += " unique ends"
        if self.repeat > 1:
            text += f" x{self.repeat}"
        if self.lora_rank:
            text += f" LoRA r={self.lora_rank}"
        return text

    # ----------------------------------------------------------------------------- constructors
    def replace(self, **changes: Any) -> ModelConfig:
        """A validated copy with some fields changed."""
        unknown = sorted(set(changes) - {f.name for f in fields(self)})
        if unknown:
            raise ValueError(f"unknown field(s): {', '.join(unknown)}")
        return dataclasses.replace(self, **changes)

    def to_dict(self, *, default_axes: bool = True) -> dict[str, Any]:
        """Every field; with ``default_axes=False`` without the architecture axes that are at BERT's and ALBERT's
        layout, the `FAMILY_SWITCHES` at the family's and the fields the family fixes, so that a dict written
        before they existed (a lab run's spec, hence its cache key) stays the same config's dict (`from_dict` fills
        them back in)."""
        out = dataclasses.asdict(self)
        if not default_axes:
            record = _RECORDS[self.family]
            for name, value in _PAPER_LAYOUT:
                if out[name] == value:
                    del out[name]
            for name in FAMILY_SWITCHES:
                if name in out and (out[name] == record.layout[name] or name in record.fixed):
                    del out[name]
            for name, value in SHARING_SCHEME.items():
                if out[name] == value:
                    del out[name]
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ModelConfig:
        check_field_names(cls, data, "a config")
        return cls(**data)


# The architecture axes (every family's record gives each of them), and the defaults of those that have one: BERT's
# and ALBERT's layout.
AXIS_FIELDS = ("ffn_kind", "position", "position_offset", "position_buckets", "norm", "norm_bias", "norm_placement",
               "embedding_norm", "first_layer_norm", "attention_bias", "mlp_bias", "num_kv_heads", "local_window",
               "global_every", "pooler", "head_transform", "head_bias", "decoder_bias", "rope_theta",
               "local_rope_theta", *FAMILY_SWITCHES)
_PAPER_LAYOUT = tuple((f.name, f.default) for f in fields(ModelConfig) if f.name in AXIS_FIELDS
                      and f.name not in FAMILY_SWITCHES)
# The sharing schemes' fields at ALBERT's own scheme (contiguous groups, no unique ends, no repeat, no LoRA).
SHARING_SCHEME: Mapping[str, Any] = MappingProxyType(
    {f.name: f.default for f in fields(ModelConfig)
     if f.name in ("block_order", "unique_ends", "repeat", "lora_rank", "lora_targets")})
_SCHEME_OFF = ("groups", False, 1, 0)
_get_axes = operator.attrgetter(*AXIS_FIELDS)
_get_switches = operator.attrgetter(*FAMILY_SWITCHES)
_get_choices = operator.attrgetter(*CHOICE_FIELDS)
_get_ints = operator.attrgetter(*(name for name, _ in _INT_LIMITS))
_get_flags = operator.attrgetter(*FLAG_FIELDS)
