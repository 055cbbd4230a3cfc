"""One validated configuration for BERT- and ALBERT-style encoders.

`ModelConfig` is the single object that travels from widgets, presets, URLs and transformers
`config.json` files to every counter and to the live model. It is frozen and validated on
construction: a value that cannot describe a real model raises `ValueError` naming the field and the
rule, and no other exception type escapes for bad values.

This module imports neither torch nor transformers (counting must start fast).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from types import MappingProxyType
from typing import Any

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

_INT_FIELDS = tuple(LIMITS)
_CHOICE_FIELDS: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {"family": FAMILIES, "sharing": SHARING_MODES, "head": HEADS, "hidden_act": ACTIVATIONS}
)


def _check_int(name: str, value: Any) -> int:
    lo, hi = LIMITS[name]
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{name} must be a whole number, got {_show(value)}")
    if value < lo:
        rule = "positive" if lo == 1 else f">= {lo}"
        raise ValueError(f"{name} must be {rule}, got {value}")
    if value > hi:
        raise ValueError(f"{name} must be at most {hi:,}, got {value:,}")
    return value


def _show(value: Any, limit: int = 40) -> str:
    """A short, inert rendering of a user value for error messages."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


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
        for name, choices in _CHOICE_FIELDS.items():
            value = getattr(self, name)
            if not isinstance(value, str) or value not in choices:
                raise ValueError(f"{name} must be one of {', '.join(choices)}; got {_show(value)}")
        for name in _INT_FIELDS:
            _check_int(name, getattr(self, name))
        if not isinstance(self.tie_word_embeddings, bool):
            raise ValueError(
                f"tie_word_embeddings must be True or False, got {_show(self.tie_word_embeddings)}"
            )
        eps = self.layer_norm_eps
        if isinstance(eps, bool) or not isinstance(eps, (int, float)) or not (0 < eps < 1):
            raise ValueError(f"layer_norm_eps must be a number between 0 and 1, got {_show(eps)}")
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

    def bert_twin(self) -> ModelConfig:
        """The BERT baseline of this config: same V, H, L, I, heads and head, no factorization,
        no sharing, BERT's own head layout."""
        return ModelConfig(
            family="bert",
            vocab_size=self.vocab_size,
            embedding_size=self.hidden_size,
            hidden_size=self.hidden_size,
            num_layers=self.num_layers,
            num_heads=self.num_heads,
            intermediate_size=self.intermediate_size,
            max_position_embeddings=self.max_position_embeddings,
            type_vocab_size=self.type_vocab_size,
            hidden_act=self.hidden_act,
            sharing="none",
            num_hidden_groups=1,
            inner_group_num=1,
            head=self.head,
            tie_word_embeddings=self.tie_word_embeddings,
            layer_norm_eps=self.layer_norm_eps,
        )

    @classmethod
    def preset(cls, name: str) -> ModelConfig:
        try:
            return PRESETS[name]
        except KeyError:
            raise ValueError(f"preset must be one of {', '.join(PRESETS)}; got {_show(name)}") from None

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ModelConfig:
        if not isinstance(data, Mapping):
            raise ValueError(f"a config must be a mapping of field names, got {type(data).__name__}")
        unknown = sorted(set(data) - {f.name for f in fields(cls)})
        if unknown:
            raise ValueError(f"unknown field(s): {', '.join(map(str, unknown))}")
        return cls(**data)

    # ----------------------------------------------------------------------------- transformers
    @classmethod
    def from_hf(cls, source: Any, head: str | None = None) -> ModelConfig:
        """Read a transformers ALBERT or BERT configuration.

        ``source``: a path to ``config.json`` (or to a folder holding one), a dict, or a transformers
        config object. ``head``: one of HEADS; by default it is inferred from ``architectures``
        (``*ForPreTraining`` -> pretraining, ``*ForMaskedLM`` -> masked-lm, otherwise model).
        """
        data = _hf_dict(source)
        model_type = data.get("model_type")
        if model_type not in FAMILIES:
            raise ValueError(f"model_type must be 'albert' or 'bert', got {_show(model_type)}")
        if head is None:
            head = _head_from_architectures(data.get("architectures"))
        defaults = _HF_DEFAULTS[model_type]

        def get(key: str) -> Any:
            return data.get(key, defaults[key])

        if get("position_embedding_type") not in (None, "absolute"):
            raise ValueError("position_embedding_type must be 'absolute' (the only one modelled)")
        kwargs: dict[str, Any] = dict(
            family=model_type,
            vocab_size=get("vocab_size"),
            hidden_size=get("hidden_size"),
            num_layers=get("num_hidden_layers"),
            num_heads=get("num_attention_heads"),
            intermediate_size=get("intermediate_size"),
            max_position_embeddings=get("max_position_embeddings"),
            type_vocab_size=get("type_vocab_size"),
            hidden_act=get("hidden_act"),
            head=head,
            tie_word_embeddings=get("tie_word_embeddings"),
            layer_norm_eps=get("layer_norm_eps"),  # validated by ModelConfig (float() could raise)
        )
        if model_type == "albert":
            kwargs.update(
                embedding_size=get("embedding_size"),
                sharing="all",
                num_hidden_groups=get("num_hidden_groups"),
                inner_group_num=get("inner_group_num"),
            )
        else:
            kwargs.update(sharing="none")  # ModelConfig sets E = H (copying H here misnamed its errors)
        return cls(**kwargs)

    def to_hf(self) -> dict[str, Any]:
        """A ``config.json`` dict that transformers' AlbertConfig / BertConfig load to this
        architecture. Partial sharing (attention / ffn) has no transformers equivalent."""
        if self.sharing not in ("none", "all"):
            raise ValueError(
                f"sharing={self.sharing!r} cannot be expressed in transformers (its ALBERT shares "
                "whole layers); use sharing 'all' or 'none' to export"
            )
        arch = {"model": "Model", "pretraining": "ForPreTraining", "masked-lm": "ForMaskedLM"}
        prefix = "Albert" if self.family == "albert" else "Bert"
        out: dict[str, Any] = {
            "model_type": self.family,
            "architectures": [prefix + arch[self.head]],
            "vocab_size": self.vocab_size,
            "hidden_size": self.hidden_size,
            "num_hidden_layers": self.num_layers,
            "num_attention_heads": self.num_heads,
            "intermediate_size": self.intermediate_size,
            "hidden_act": self.hidden_act,
            "max_position_embeddings": self.max_position_embeddings,
            "type_vocab_size": self.type_vocab_size,
            "layer_norm_eps": self.layer_norm_eps,
            "tie_word_embeddings": self.tie_word_embeddings,
            "position_embedding_type": "absolute",
        }
        if self.family == "albert":
            groups = self.num_layers if self.sharing == "none" else self.num_hidden_groups
            out.update(
                embedding_size=self.embedding_size,
                num_hidden_groups=groups,
                inner_group_num=self.inner_group_num,
                hidden_dropout_prob=0.0,
                attention_probs_dropout_prob=0.0,
            )
        else:
            out.update(hidden_dropout_prob=0.1, attention_probs_dropout_prob=0.1)
        return out

    # ----------------------------------------------------------------------------- URL codec
    def to_query(self) -> dict[str, str]:
        """Short, stable URL query parameters for this config (see QUERY_KEYS)."""
        return {key: _encode(getattr(self, name)) for key, name in QUERY_KEYS.items()}

    @classmethod
    def from_query(cls, params: Mapping[str, Any]) -> ModelConfig:
        """Strict decoding: the first bad value raises ValueError naming the URL key and the rule."""
        cfg, problems = parse_query(params)
        if problems:
            raise ValueError(problems[0])
        return cfg


# URL key -> ModelConfig field. Keys are short so links stay readable in a design discussion.
QUERY_KEYS: Mapping[str, str] = MappingProxyType(
    {
        "family": "family",
        "V": "vocab_size",
        "E": "embedding_size",
        "H": "hidden_size",
        "L": "num_layers",
        "heads": "num_heads",
        "I": "intermediate_size",
        "P": "max_position_embeddings",
        "T": "type_vocab_size",
        "act": "hidden_act",
        "sharing": "sharing",
        "G": "num_hidden_groups",
        "K": "inner_group_num",
        "head": "head",
        "tied": "tie_word_embeddings",
    }
)
_MAX_QUERY_VALUE_LEN = 16


def _encode(value: Any) -> str:
    if isinstance(value, bool):
        return "1" if value else "0"
    return str(value)


def decode_query_value(key: str, field: str, raw: Any) -> Any:
    """Decode one URL value for ``field``; ValueError (naming the URL key) if it is not acceptable.

    Only plain digits, known words and 0/1 are accepted: no floats, signs, exponents, NaN,
    whitespace, markup or overlong values.
    """
    if isinstance(raw, (list, tuple)):
        raw = raw[-1] if raw else ""
    if not isinstance(raw, str):
        raw = str(raw)
    shown = _show(raw, 24)
    if len(raw) > _MAX_QUERY_VALUE_LEN:
        raise ValueError(f"URL value {key}={shown} is too long")
    if field in _CHOICE_FIELDS:
        if raw not in _CHOICE_FIELDS[field]:
            raise ValueError(f"URL value {key}={shown}: must be one of {', '.join(_CHOICE_FIELDS[field])}")
        return raw
    if field == "tie_word_embeddings":
        if raw not in ("0", "1"):
            raise ValueError(f"URL value {key}={shown}: must be 0 or 1")
        return raw == "1"
    if not (raw.isascii() and raw.isdigit()):
        raise ValueError(f"URL value {key}={shown}: must be a positive whole number")
    value = int(raw)
    lo, hi = LIMITS[field]
    if not lo <= value <= hi:
        raise ValueError(f"URL value {key}={shown}: must be between {lo} and {hi:,}")
    return value


def parse_query(
    params: Mapping[str, Any], base: ModelConfig | None = None
) -> tuple[ModelConfig, list[str]]:
    """Lenient decoding for the app: every bad value falls back to ``base`` (default ALBERT-base)
    and yields one message. Unknown keys are ignored (the page owns other keys).

    Returns the config and the list of problems (empty when everything was accepted).
    """
    base = base or ModelConfig()
    problems: list[str] = []
    changes: dict[str, Any] = {}
    for key, name in QUERY_KEYS.items():
        if key not in params:
            continue
        try:
            changes[name] = decode_query_value(key, name, params[key])
        except ValueError as exc:
            problems.append(str(exc))
    if changes.get("family", base.family) == "bert":
        changes.setdefault("sharing", "none")
        changes.setdefault("inner_group_num", 1)
    try:
        return base.replace(**changes), problems
    except ValueError as exc:
        # Individually valid values that do not fit together: drop them one at a time, in URL
        # order, until the rest is consistent.
        problems.append(f"URL values do not fit together: {exc}")
        for name in list(changes):
            trial = {k: v for k, v in changes.items() if k != name}
            try:
                return base.replace(**trial), problems
            except ValueError:
                continue
        return base, problems


# ----------------------------------------------------------------------------- transformers helpers
_HF_DEFAULTS: Mapping[str, Mapping[str, Any]] = MappingProxyType(
    {
        # transformers' own defaults (AlbertConfig() is ALBERT-xxlarge, BertConfig() is BERT-base)
        "albert": {
            "vocab_size": 30000, "embedding_size": 128, "hidden_size": 4096, "num_hidden_layers": 12,
            "num_hidden_groups": 1, "num_attention_heads": 64, "intermediate_size": 16384,
            "inner_group_num": 1, "hidden_act": "gelu_new", "max_position_embeddings": 512,
            "type_vocab_size": 2, "layer_norm_eps": 1e-12, "tie_word_embeddings": True,
            "position_embedding_type": "absolute",
        },
        "bert": {
            "vocab_size": 30522, "hidden_size": 768, "num_hidden_layers": 12,
            "num_attention_heads": 12, "intermediate_size": 3072, "hidden_act": "gelu",
            "max_position_embeddings": 512, "type_vocab_size": 2, "layer_norm_eps": 1e-12,
            "tie_word_embeddings": True, "position_embedding_type": "absolute",
        },
    }
)


def _head_from_architectures(architectures: Any) -> str:
    if isinstance(architectures, (list, tuple)) and architectures:
        name = str(architectures[0])
        if name.endswith("ForPreTraining"):
            return "pretraining"
        if name.endswith("ForMaskedLM"):
            return "masked-lm"
    return "model"


def _hf_dict(source: Any) -> dict[str, Any]:
    if isinstance(source, Mapping):
        return dict(source)
    if isinstance(source, (str, Path)):
        path = Path(source)
        if path.is_dir():
            path = path / "config.json"
        if not path.is_file():
            raise ValueError(f"config path must be a config.json file or a folder holding one: {path}")
        if path.stat().st_size > 1_000_000:
            raise ValueError(f"config file is too large to be a transformers config: {path}")
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ValueError(f"config file {path} is not valid JSON: {exc}") from None
        except RecursionError:  # the C parser recurses per nesting level
            raise ValueError(f"config file {path} is nested too deeply to be a transformers config") from None
        if not isinstance(data, dict):
            raise ValueError(f"config file {path} must hold a JSON object")
        return data
    to_dict = getattr(source, "to_dict", None)
    if callable(to_dict):
        data = to_dict()
        if isinstance(data, Mapping):
            return dict(data)
    raise ValueError(
        f"source must be a config.json path, a dict or a transformers config, got {type(source).__name__}"
    )


# ----------------------------------------------------------------------------- presets
PRESETS: Mapping[str, ModelConfig] = MappingProxyType(
    {
        "bert-base": ModelConfig(
            family="bert", vocab_size=30_522, embedding_size=768, hidden_size=768, num_layers=12,
            num_heads=12, intermediate_size=3072, hidden_act="gelu", sharing="none",
        ),
        "bert-large": ModelConfig(
            family="bert", vocab_size=30_522, embedding_size=1024, hidden_size=1024, num_layers=24,
            num_heads=16, intermediate_size=4096, hidden_act="gelu", sharing="none",
        ),
        "albert-base": ModelConfig(),
        "albert-large": ModelConfig(hidden_size=1024, num_layers=24, num_heads=16, intermediate_size=4096),
        "albert-xlarge": ModelConfig(hidden_size=2048, num_layers=24, num_heads=16, intermediate_size=8192),
        "albert-xxlarge": ModelConfig(
            hidden_size=4096, num_layers=12, num_heads=64, intermediate_size=16384
        ),
    }
)


# ----------------------------------------------------------------------------- workload
DTYPE_BYTES: Mapping[str, int] = MappingProxyType({"fp32": 4, "fp16": 2, "bf16": 2, "int8": 1})
OPTIMIZERS = ("none", "sgd", "adam", "adamw")  # sgd means SGD with momentum (one state per weight)
WORKLOAD_LIMITS: Mapping[str, tuple[int, int]] = MappingProxyType(
    {"batch": (1, 4096), "seq_len": (1, 65_536)}
)
WORKLOAD_QUERY_KEYS: Mapping[str, str] = MappingProxyType(
    {"batch": "batch", "seq": "seq_len", "dtype": "dtype", "opt": "optimizer"}
)


@dataclass(frozen=True)
class Workload:
    """What the model is used for: batch, sequence length, weight dtype and optimizer."""

    batch: int = 8
    seq_len: int = 128
    dtype: str = "fp32"
    optimizer: str = "adamw"

    def __post_init__(self) -> None:
        for name, (lo, hi) in WORKLOAD_LIMITS.items():
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int):
                raise ValueError(f"{name} must be a whole number, got {_show(value)}")
            if not lo <= value <= hi:
                raise ValueError(f"{name} must be between {lo} and {hi:,}, got {value:,}")
        if self.dtype not in DTYPE_BYTES:
            raise ValueError(f"dtype must be one of {', '.join(DTYPE_BYTES)}; got {_show(self.dtype)}")
        if self.optimizer not in OPTIMIZERS:
            raise ValueError(f"optimizer must be one of {', '.join(OPTIMIZERS)}; got {_show(self.optimizer)}")

    def check_fits(self, cfg: ModelConfig) -> None:
        """Sequence length cannot exceed the position table."""
        check_seq_len(cfg, self.seq_len)

    def replace(self, **changes: Any) -> Workload:
        unknown = sorted(set(changes) - {f.name for f in fields(self)})
        if unknown:
            raise ValueError(f"unknown field(s): {', '.join(unknown)}")
        return dataclasses.replace(self, **changes)

    def to_query(self) -> dict[str, str]:
        return {key: str(getattr(self, name)) for key, name in WORKLOAD_QUERY_KEYS.items()}


def check_seq_len(cfg: ModelConfig, seq_len: int) -> None:
    if seq_len > cfg.max_position_embeddings:
        raise ValueError(
            f"seq_len ({seq_len}) must not exceed max_position_embeddings ({cfg.max_position_embeddings})"
        )


def parse_workload_query(
    params: Mapping[str, Any], base: Workload | None = None
) -> tuple[Workload, list[str]]:
    """Lenient decoding of the workload part of a URL, like parse_query."""
    base = base or Workload()
    problems: list[str] = []
    changes: dict[str, Any] = {}
    for key, name in WORKLOAD_QUERY_KEYS.items():
        if key not in params:
            continue
        raw = params[key]
        if isinstance(raw, (list, tuple)):
            raw = raw[-1] if raw else ""
        raw = str(raw)
        shown = _show(raw, 24)
        if name in WORKLOAD_LIMITS:
            lo, hi = WORKLOAD_LIMITS[name]
            if len(raw) > _MAX_QUERY_VALUE_LEN or not (raw.isascii() and raw.isdigit()):
                problems.append(f"URL value {key}={shown}: must be a positive whole number")
                continue
            if not lo <= int(raw) <= hi:
                problems.append(f"URL value {key}={shown}: must be between {lo} and {hi:,}")
                continue
            changes[name] = int(raw)
        else:
            choices = tuple(DTYPE_BYTES) if name == "dtype" else OPTIMIZERS
            if raw not in choices:
                problems.append(f"URL value {key}={shown}: must be one of {', '.join(choices)}")
                continue
            changes[name] = raw
    return base.replace(**changes), problems
