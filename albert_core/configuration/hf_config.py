"""transformers configuration codec: `config.json` (or a config object) <-> `ModelConfig`.

`config_from_hf` reads a config (the sidebar upload, the CLI's ``--hf-config``, the config doctor, a pretrained
folder), `config_to_hf` writes one (the Explorer's download, the live model's transformers export, the audit).
No torch or transformers import.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

from albert_core.checks import short_repr
from albert_core.configuration.config import FAMILIES, LIMITS, ModelConfig


def config_from_hf(source: Any, head: str | None = None) -> ModelConfig:
    """Read a transformers ALBERT or BERT configuration.

    ``source``: a path to ``config.json`` (or to a folder holding one), a dict, or a transformers
    config object. ``head``: one of HEADS; by default it is inferred from ``architectures``
    (``*ForPreTraining`` -> pretraining, ``*ForMaskedLM`` -> masked-lm, otherwise model).
    """
    data = _hf_dict(source)
    model_type = data.get("model_type")
    if model_type not in FAMILIES:
        raise ValueError(f"model_type must be 'albert' or 'bert', got {short_repr(model_type)}")
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
    return ModelConfig(**kwargs)


def config_to_hf(cfg: ModelConfig) -> dict[str, Any]:
    """A ``config.json`` dict that transformers' AlbertConfig / BertConfig load to this
    architecture. Partial sharing (attention / ffn) has no transformers equivalent."""
    if cfg.sharing not in ("none", "all"):
        raise ValueError(
            f"sharing={cfg.sharing!r} cannot be expressed in transformers (its ALBERT shares "
            "whole layers); use sharing 'all' or 'none' to export"
        )
    arch = {"model": "Model", "pretraining": "ForPreTraining", "masked-lm": "ForMaskedLM"}
    prefix = "Albert" if cfg.family == "albert" else "Bert"
    out: dict[str, Any] = {
        "model_type": cfg.family,
        "architectures": [prefix + arch[cfg.head]],
        "vocab_size": cfg.vocab_size,
        "hidden_size": cfg.hidden_size,
        "num_hidden_layers": cfg.num_layers,
        "num_attention_heads": cfg.num_heads,
        "intermediate_size": cfg.intermediate_size,
        "hidden_act": cfg.hidden_act,
        "max_position_embeddings": cfg.max_position_embeddings,
        "type_vocab_size": cfg.type_vocab_size,
        "layer_norm_eps": cfg.layer_norm_eps,
        "tie_word_embeddings": cfg.tie_word_embeddings,
        "position_embedding_type": "absolute",
    }
    if cfg.family == "albert":
        groups = cfg.num_layers if cfg.sharing == "none" else cfg.num_hidden_groups
        out.update(
            embedding_size=cfg.embedding_size,
            num_hidden_groups=groups,
            inner_group_num=cfg.inner_group_num,
            hidden_dropout_prob=0.0,
            attention_probs_dropout_prob=0.0,
        )
    else:
        out.update(hidden_dropout_prob=0.1, attention_probs_dropout_prob=0.1)
    return out


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


MAX_CONFIG_BYTES = 1_000_000  # a transformers config.json is a few kB; id2label maps stay far below this
MAX_CONFIG_DEPTH = 16  # objects / arrays inside each other; transformers configs nest 2-3 levels
MAX_INT_DIGITS = 100  # far past every setting; int() refuses over 4,300 digits and is slow before that
_FIELD_OF_KEY = MappingProxyType({"num_hidden_layers": "num_layers", "num_attention_heads": "num_heads"})


class _LongNumber:
    """Stands in for a JSON integer of more than `MAX_INT_DIGITS` digits (never converted), so that
    the check after parsing can name where it is."""

    def __init__(self, digits: int) -> None:
        self.digits = digits


def _parse_int(text: str) -> int | _LongNumber:
    digits = len(text.lstrip("-"))
    return _LongNumber(digits) if digits > MAX_INT_DIGITS else int(text)


def _long_number_problem(what: str, key: str | None, number: _LongNumber) -> str:
    """The message for an integer too long to be a setting: naming the field and its rule when it is
    a top-level setting of the model, else plainly."""
    got = f"got a number of {number.digits:,} digits"
    field = _FIELD_OF_KEY.get(key, key) if key is not None else None
    if field in LIMITS:
        lo, hi = LIMITS[field]
        return f"{key} must be a whole number between {lo} and {hi:,}, {got}"
    where = "" if key is None else f" (at {short_repr(key)})"
    return f"{what} holds a number too long to be a setting{where}: {got}"


def parse_config_json(raw: bytes, what: str = "config.json") -> dict[str, Any]:
    """The JSON object in ``raw`` (bytes of a config.json, e.g. an upload), checked before use:
    ValueError naming ``what`` if it is over `MAX_CONFIG_BYTES`, not UTF-8 JSON, not an object,
    nested deeper than `MAX_CONFIG_DEPTH`, or holds an integer of more than `MAX_INT_DIGITS` digits
    (named with its rule when it is a setting). Only `json.loads`: nothing is evaluated."""
    if not isinstance(raw, (bytes, bytearray)):
        raise ValueError(f"{what} must be bytes, got {type(raw).__name__}")
    if len(raw) > MAX_CONFIG_BYTES:
        raise ValueError(f"{what} is too large to be a transformers config ({len(raw):,} bytes; at most "
                         f"{MAX_CONFIG_BYTES:,})")
    try:
        data = json.loads(bytes(raw).decode("utf-8"), parse_int=_parse_int)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{what} is not valid JSON: {exc}") from None
    except RecursionError:  # the C parser recurses per nesting level
        raise ValueError(f"{what} is nested too deeply to be a transformers config") from None
    if isinstance(data, _LongNumber):
        raise ValueError(_long_number_problem(what, None, data))
    if not isinstance(data, dict):
        raise ValueError(f"{what} must hold a JSON object, got a JSON {type(data).__name__}")
    for key, value in data.items():  # a top-level setting: named with its rule
        if isinstance(value, _LongNumber):
            raise ValueError(_long_number_problem(what, key, value))
    stack = [(data, 1)]
    while stack:  # iterative: the depth check itself must not recurse
        node, depth = stack.pop()
        if depth > MAX_CONFIG_DEPTH:
            raise ValueError(f"{what} is nested too deeply to be a transformers config (more than "
                             f"{MAX_CONFIG_DEPTH} levels)")
        children = node.values() if isinstance(node, dict) else node
        for child in children:
            if isinstance(child, _LongNumber):
                raise ValueError(_long_number_problem(what, None, child))
        stack.extend((c, depth + 1) for c in children if isinstance(c, (dict, list)))
    return data


def config_from_json_bytes(raw: bytes, what: str = "config.json") -> ModelConfig:
    """A config from the bytes of a transformers config.json (an upload): `parse_config_json`, then
    `config_from_hf` on the parsed object (ValueError naming the field and the rule)."""
    return config_from_hf(parse_config_json(raw, what))


def _hf_dict(source: Any) -> dict[str, Any]:
    if isinstance(source, Mapping):
        return dict(source)
    if isinstance(source, (str, Path)):
        path = Path(source)
        if path.is_dir():
            path = path / "config.json"
        if not path.is_file():
            raise ValueError(f"config path must be a config.json file or a folder holding one: {path}")
        if path.stat().st_size > MAX_CONFIG_BYTES:
            raise ValueError(f"config file is too large to be a transformers config: {path}")
        try:
            raw = path.read_bytes()
        except OSError as exc:
            raise ValueError(f"config file {path} cannot be read: {exc}") from None
        return parse_config_json(raw, f"config file {path}")
    to_dict = getattr(source, "to_dict", None)
    if callable(to_dict):
        data = to_dict()
        if isinstance(data, Mapping):
            return dict(data)
    raise ValueError(
        f"source must be a config.json path, a dict or a transformers config, got {type(source).__name__}"
    )
