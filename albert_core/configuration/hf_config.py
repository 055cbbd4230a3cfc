"""transformers configuration codec: `config.json` (or a config object) <-> `ModelConfig`.

`config_from_hf` reads a config (the sidebar upload, the CLI's ``--hf-config``, the config doctor, a pretrained
folder), `config_to_hf` writes one (the Explorer's download, the live model's transformers export, the audit).
No torch or transformers import.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

from albert_core.checks import short_repr
from albert_core.configuration.config import FAMILIES, LIMITS, PAPER_FAMILIES, ModelConfig
from albert_core.configuration.families import FAMILY_LAYOUTS


def config_from_hf(source: Any, head: str | None = None) -> ModelConfig:
    """Read a transformers configuration of any family of `FAMILIES` (ALBERT, BERT, RoBERTa, XLM-R, ELECTRA,
    DeBERTa-v2/v3, ModernBERT, EuroBERT, NomicBERT).

    ``source``: a path to ``config.json`` (or to a folder holding one), a dict, or a transformers
    config object. ``head``: one of ENCODER_HEADS; by default it is inferred from ``architectures``
    (``*ForPreTraining`` -> pretraining, ELECTRA's -> discriminator, ``*ForMaskedLM`` -> masked-lm, otherwise
    model). A key this family leaves out takes transformers' own default for it (`_HF_DEFAULTS`).
    """
    data = _hf_dict(source)
    model_type = data.get("model_type")
    if model_type not in FAMILIES:
        raise ValueError(f"model_type must be one of {', '.join(repr(f) for f in FAMILIES)}, got "
                         f"{short_repr(model_type)}")
    if head is None:
        head = _head_from_architectures(data.get("architectures"), model_type)
    defaults = _HF_DEFAULTS[model_type]

    def get(key: str) -> Any:
        return data.get(key, defaults.get(key))

    kwargs: dict[str, Any] = dict(
        family=model_type,
        vocab_size=get("vocab_size"),
        hidden_size=get("hidden_size"),
        num_layers=get("num_hidden_layers"),
        num_heads=get("num_attention_heads"),
        intermediate_size=get("intermediate_size"),
        max_position_embeddings=get("max_position_embeddings"),
        head=head,
        tie_word_embeddings=get("tie_word_embeddings"),
    )
    reader = _FAMILY_READERS[model_type]
    kwargs.update(reader(get, data) if reader is _read_modernbert else reader(get))
    return ModelConfig(**kwargs)


def _absolute_positions(get: Any) -> None:
    if get("position_embedding_type") not in (None, "absolute"):
        raise ValueError("position_embedding_type must be 'absolute' (the only one modelled for this family)")


def _read_bert_like(get: Any) -> dict[str, Any]:
    _absolute_positions(get)
    return dict(type_vocab_size=get("type_vocab_size"), hidden_act=get("hidden_act"),
                layer_norm_eps=get("layer_norm_eps"), sharing="none")


def _read_albert(get: Any) -> dict[str, Any]:
    return _read_bert_like(get) | dict(embedding_size=get("embedding_size"), sharing="all",
                                       num_hidden_groups=get("num_hidden_groups"),
                                       inner_group_num=get("inner_group_num"))


def _read_roberta(get: Any) -> dict[str, Any]:
    pad = get("pad_token_id")
    if not isinstance(pad, int) or isinstance(pad, bool) or pad < 0:
        raise ValueError(f"pad_token_id must be a whole number >= 0 (RoBERTa's positions start after it), got "
                         f"{short_repr(pad)}")
    return _read_bert_like(get) | dict(embedding_size=get("hidden_size"), position_offset=pad + 1)


def _read_electra(get: Any) -> dict[str, Any]:
    return _read_bert_like(get) | dict(embedding_size=get("embedding_size"), pooler=False)


def _read_deberta(get: Any) -> dict[str, Any]:
    rules = (("relative_attention", True, "DeBERTa-v3's disentangled attention"),
             ("position_biased_input", False, "no absolute position table, as DeBERTa-v3"),
             ("share_att_key", True, "positions projected by each layer's own query and key"),
             ("norm_rel_ebd", "layer_norm", "the relative table normed once"),
             ("conv_kernel_size", 0, "no convolution layer"))
    for key, want, why in rules:
        got = get(key)
        if got != want and not (key == "conv_kernel_size" and got is None):
            raise ValueError(f"{key} must be {want!r} ({why}: the layout modelled), got {short_repr(got)}")
    att = get("pos_att_type")
    if not isinstance(att, (list, tuple)) or sorted(att) != ["c2p", "p2c"]:
        raise ValueError(f"pos_att_type must be ['p2c', 'c2p'] (DeBERTa-v3), got {short_repr(att)}")
    buckets, rel = get("position_buckets"), get("max_relative_positions")
    if rel not in (-1, None, get("max_position_embeddings")):
        raise ValueError(f"max_relative_positions must be -1 (the whole {get('max_position_embeddings')} positions, "
                         f"DeBERTa-v3's) or max_position_embeddings, got {short_repr(rel)}")
    if not isinstance(buckets, int) or isinstance(buckets, bool) or buckets < 1:
        # without buckets DeBERTa's table has max_relative_positions (or max_position_embeddings) rows a side
        buckets = rel if isinstance(rel, int) and not isinstance(rel, bool) and rel >= 1 else \
            get("max_position_embeddings")
    emb = get("embedding_size") if get("embedding_size") is not None else get("hidden_size")
    if not get("legacy") and emb != get("hidden_size"):
        raise ValueError("legacy must be true when embedding_size differs from hidden_size (transformers' "
                         "newer DeBERTa head is H wide)")
    return dict(embedding_size=emb, type_vocab_size=get("type_vocab_size"), hidden_act=get("hidden_act"),
                layer_norm_eps=get("layer_norm_eps"), sharing="none", position="relative",
                position_buckets=buckets, pooler=False)


def _rope(get: Any, layer: str | None = None) -> Any:
    """The rotary base of a rope_parameters dict (per layer type for ModernBERT), or of the older keys."""
    params = get("rope_parameters")
    if isinstance(params, Mapping):
        if layer is not None:
            params = params.get(layer, {})
        if isinstance(params, Mapping) and "rope_theta" in params:
            if params.get("rope_type", "default") != "default":
                raise ValueError(f"rope_type must be 'default' (no rotary scaling is modelled), got "
                                 f"{short_repr(params.get('rope_type'))}")
            return params["rope_theta"]
    key = {None: "rope_theta", "full_attention": "global_rope_theta", "sliding_attention": "local_rope_theta"}[layer]
    return get(key)


def _read_modernbert(get: Any, data: Mapping[str, Any]) -> dict[str, Any]:
    if get("classifier_activation") != get("hidden_activation"):
        raise ValueError(f"classifier_activation must equal hidden_activation (one activation is modelled), got "
                         f"{short_repr(get('classifier_activation'))} and {short_repr(get('hidden_activation'))}")
    layers, every = get("num_hidden_layers"), get("global_attn_every_n_layers")
    types = get("layer_types")
    if types is not None:  # the pattern transformers writes: full attention at i % n == 0
        if not isinstance(types, list) or not isinstance(layers, int) or len(types) != layers:
            raise ValueError("layer_types must list one attention type per layer")
        full = [i for i, t in enumerate(types) if t == "full_attention"]
        if "global_attn_every_n_layers" not in data:  # else the period as written (beyond L it means one global)
            every = full[1] if len(full) > 1 else layers
        if not isinstance(every, int) or isinstance(every, bool) or every < 1 or \
                any((i % every == 0) != (t == "full_attention") for i, t in enumerate(types)):
            raise ValueError("layer_types must be full attention every n layers from the first (ModernBERT's "
                             "global_attn_every_n_layers); other patterns are not modelled")
    local = get("local_attention")
    return {**FAMILY_LAYOUTS["modernbert"], **dict(
        embedding_size=get("hidden_size"), hidden_act=get("hidden_activation"), layer_norm_eps=get("norm_eps"),
        sharing="none", norm_bias=get("norm_bias"), attention_bias=get("attention_bias"), mlp_bias=get("mlp_bias"),
        local_window=local if every != 1 else 0, global_every=every, head_bias=get("classifier_bias"),
        decoder_bias=get("decoder_bias"), rope_theta=_rope(get, "full_attention"),
        local_rope_theta=_rope(get, "sliding_attention"),
    )}


def _check_head_dim(get: Any) -> None:
    hd, H, heads = get("head_dim"), get("hidden_size"), get("num_attention_heads")
    if hd is not None and isinstance(H, int) and isinstance(heads, int) and heads > 0 and hd * heads != H:
        raise ValueError(f"head_dim ({short_repr(hd)}) x num_attention_heads ({heads}) must equal hidden_size ({H}): "
                         "attention narrower or wider than the hidden size is not modelled")


def _read_eurobert(get: Any) -> dict[str, Any]:
    _check_head_dim(get)
    kv = get("num_key_value_heads")
    return {**FAMILY_LAYOUTS["eurobert"], **dict(
        embedding_size=get("hidden_size"), hidden_act=get("hidden_act"), layer_norm_eps=get("rms_norm_eps"),
        sharing="none", attention_bias=get("attention_bias"), mlp_bias=get("mlp_bias"),
        num_kv_heads=0 if kv in (None, get("num_attention_heads")) else kv, decoder_bias=get("mlp_bias"),
        rope_theta=_rope(get),
    )}


def _read_nomic(get: Any) -> dict[str, Any]:
    _check_head_dim(get)
    return {**FAMILY_LAYOUTS["nomic_bert"], **dict(
        embedding_size=get("hidden_size"), type_vocab_size=get("type_vocab_size"), hidden_act=get("hidden_act"),
        layer_norm_eps=get("layer_norm_eps"), sharing="none", rope_theta=_rope(get),
    )}


_FAMILY_READERS = MappingProxyType({
    "albert": _read_albert, "bert": _read_bert_like, "roberta": _read_roberta, "xlm-roberta": _read_roberta,
    "electra": _read_electra, "deberta-v2": _read_deberta, "modernbert": _read_modernbert,
    "eurobert": _read_eurobert, "nomic_bert": _read_nomic,
})

# transformers' class name prefix per family
HF_CLASS_PREFIX = MappingProxyType({
    "albert": "Albert", "bert": "Bert", "roberta": "Roberta", "xlm-roberta": "XLMRoberta", "electra": "Electra",
    "deberta-v2": "DebertaV2", "modernbert": "ModernBert", "eurobert": "EuroBert", "nomic_bert": "NomicBert",
})
_ARCH_SUFFIX = {"model": "Model", "pretraining": "ForPreTraining", "masked-lm": "ForMaskedLM",
                "discriminator": "ForPreTraining"}


def hf_class_name(cfg: ModelConfig) -> str:
    """The transformers class of ``cfg``'s family and head, e.g. 'ModernBertForMaskedLM'."""
    return HF_CLASS_PREFIX[cfg.family] + _ARCH_SUFFIX[cfg.head]


def hf_class_mismatch(cfg: ModelConfig) -> str | None:
    """None if ``cfg``'s family has a transformers class that builds exactly ``cfg`` (what `config_to_hf` writes),
    else why not, naming the fields: an ALBERTized encoder (E or sharing where the family's class has neither) or
    a layout the class cannot take is counted and built here only. Decided by reading back what would be written."""
    if cfg.has_discriminator and cfg.family != "electra":
        return "the replaced-token discriminator head has a transformers class for ELECTRA only"
    if cfg.family in PAPER_FAMILIES:
        if cfg.sharing not in ("none", "all"):
            return (f"sharing={cfg.sharing!r} cannot be expressed in transformers (its ALBERT shares "
                    "whole layers); use sharing 'all' or 'none' to export")
        return None
    try:
        back = config_from_hf(_family_hf_dict(cfg), cfg.head)
    except ValueError as exc:
        return f"transformers' {hf_class_name(cfg)} cannot hold this config: {exc}"
    differ = [f"{f.name}={getattr(cfg, f.name)!r}" for f in dataclasses.fields(cfg)
              if getattr(back, f.name) != getattr(cfg, f.name)]
    if not differ:
        return None
    return (f"transformers' {hf_class_name(cfg)} has no setting for {', '.join(differ)} (an ALBERTized or "
            "custom layout: counted and built here, not exportable to transformers)")


def _token_ids(cfg: ModelConfig, names: tuple[str, ...]) -> dict[str, int]:
    """The family's default special-token ids where they fit the vocabulary, else the first ids (a config
    exported for counting must build: transformers checks padding_idx against the vocabulary)."""
    defaults = _HF_DEFAULTS[cfg.family]
    fit = all(isinstance(defaults.get(n), int) and defaults[n] < cfg.vocab_size for n in names)
    return {n: (defaults[n] if fit else i % cfg.vocab_size) for i, n in enumerate(names)}


def _family_hf_dict(cfg: ModelConfig) -> dict[str, Any]:
    """The config.json keys of a family after BERT (`config_to_hf` without its checks)."""
    out: dict[str, Any] = {
        "model_type": cfg.family,
        "architectures": [hf_class_name(cfg)],
        "vocab_size": cfg.vocab_size,
        "hidden_size": cfg.hidden_size,
        "num_hidden_layers": cfg.num_layers,
        "num_attention_heads": cfg.num_heads,
        "intermediate_size": cfg.intermediate_size,
        "max_position_embeddings": cfg.max_position_embeddings,
        "tie_word_embeddings": cfg.tie_word_embeddings,
    }
    bert_like = {"hidden_act": cfg.hidden_act, "type_vocab_size": cfg.type_vocab_size,
                 "layer_norm_eps": cfg.layer_norm_eps, "hidden_dropout_prob": 0.1,
                 "attention_probs_dropout_prob": 0.1}  # the family's own default (DEFAULT_DROPOUT)
    rope = {"rope_type": "default", "rope_theta": cfg.rope_theta}
    if cfg.family in ("roberta", "xlm-roberta"):
        out |= bert_like | {"position_embedding_type": "absolute", "pad_token_id": cfg.position_offset - 1,
                            "bos_token_id": 0, "eos_token_id": 2}
    elif cfg.family == "electra":
        out |= bert_like | {"embedding_size": cfg.embedding_size, "position_embedding_type": "absolute"}
    elif cfg.family == "deberta-v2":
        out |= bert_like | {
            "embedding_size": cfg.embedding_size, "relative_attention": True, "position_biased_input": False,
            "pos_att_type": ["p2c", "c2p"], "share_att_key": True, "norm_rel_ebd": "layer_norm",
            "position_buckets": cfg.position_buckets, "max_relative_positions": -1, "legacy": True,
            "pad_token_id": 0,
        }
    elif cfg.family == "modernbert":
        every = cfg.global_every if cfg.local_window else 1
        out |= {
            "hidden_activation": cfg.hidden_act, "classifier_activation": cfg.hidden_act,
            "norm_eps": cfg.layer_norm_eps, "norm_bias": cfg.norm_bias, "attention_bias": cfg.attention_bias,
            "mlp_bias": cfg.mlp_bias, "classifier_bias": cfg.head_bias, "decoder_bias": cfg.decoder_bias,
            "local_attention": cfg.local_window or _HF_DEFAULTS["modernbert"]["local_attention"],
            "global_attn_every_n_layers": every,
            "layer_types": ["full_attention" if i % every == 0 else "sliding_attention" for i in range(cfg.num_layers)],
            "rope_parameters": {"full_attention": rope,
                                "sliding_attention": {"rope_type": "default", "rope_theta": cfg.local_rope_theta}},
            "embedding_dropout": 0.0, "mlp_dropout": 0.0, "attention_dropout": 0.0,
        } | _token_ids(cfg, ("pad_token_id", "bos_token_id", "eos_token_id", "cls_token_id", "sep_token_id"))
    elif cfg.family == "eurobert":
        out |= {
            "hidden_act": cfg.hidden_act, "rms_norm_eps": cfg.layer_norm_eps, "num_key_value_heads": cfg.kv_heads,
            "head_dim": cfg.head_dim, "attention_bias": cfg.attention_bias, "mlp_bias": cfg.mlp_bias,
            "rope_parameters": rope, "attention_dropout": 0.0,
        } | _token_ids(cfg, ("pad_token_id", "bos_token_id", "eos_token_id", "mask_token_id"))
    elif cfg.family == "nomic_bert":
        out |= {"hidden_act": cfg.hidden_act, "type_vocab_size": cfg.type_vocab_size,
                "layer_norm_eps": cfg.layer_norm_eps, "rope_parameters": rope, "head_dim": cfg.head_dim,
                "hidden_dropout_prob": 0.0, "attention_probs_dropout_prob": 0.0, "pad_token_id": 0}
    return out


def config_to_hf(cfg: ModelConfig) -> dict[str, Any]:
    """A ``config.json`` dict that transformers' config class of ``cfg``'s family loads to this architecture;
    ValueError saying why when that class cannot hold it (`hf_class_mismatch`: partial sharing, or E and sharing
    on a family whose class has neither)."""
    problem = hf_class_mismatch(cfg)
    if problem:
        raise ValueError(problem)
    if cfg.family not in PAPER_FAMILIES:
        return _family_hf_dict(cfg)
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


_ROBERTA_DEFAULTS = {
    "vocab_size": 50265, "hidden_size": 768, "num_hidden_layers": 12, "num_attention_heads": 12,
    "intermediate_size": 3072, "hidden_act": "gelu", "max_position_embeddings": 512, "type_vocab_size": 2,
    "layer_norm_eps": 1e-12, "pad_token_id": 1, "tie_word_embeddings": True, "position_embedding_type": "absolute",
}
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
        "roberta": _ROBERTA_DEFAULTS,
        "xlm-roberta": {**_ROBERTA_DEFAULTS, "vocab_size": 30522},
        "electra": {
            "vocab_size": 30522, "embedding_size": 128, "hidden_size": 256, "num_hidden_layers": 12,
            "num_attention_heads": 4, "intermediate_size": 1024, "hidden_act": "gelu",
            "max_position_embeddings": 512, "type_vocab_size": 2, "layer_norm_eps": 1e-12,
            "tie_word_embeddings": True, "position_embedding_type": "absolute",
        },
        "deberta-v2": {
            "vocab_size": 128100, "hidden_size": 1536, "num_hidden_layers": 24, "num_attention_heads": 24,
            "intermediate_size": 6144, "hidden_act": "gelu", "max_position_embeddings": 512, "type_vocab_size": 0,
            "layer_norm_eps": 1e-7, "relative_attention": False, "max_relative_positions": -1,
            "position_biased_input": True, "pos_att_type": None, "position_buckets": -1, "share_att_key": True,
            "norm_rel_ebd": "none", "legacy": True, "tie_word_embeddings": True,
        },
        "modernbert": {
            "vocab_size": 50368, "hidden_size": 768, "intermediate_size": 1152, "num_hidden_layers": 22,
            "num_attention_heads": 12, "hidden_activation": "gelu", "max_position_embeddings": 8192,
            "norm_eps": 1e-5, "norm_bias": False, "pad_token_id": 50283, "eos_token_id": 50282,
            "bos_token_id": 50281, "cls_token_id": 50281, "sep_token_id": 50282, "attention_bias": False,
            "global_attn_every_n_layers": 3, "global_rope_theta": 160000.0, "local_rope_theta": 10000.0,
            "local_attention": 128, "mlp_bias": False, "decoder_bias": True, "classifier_bias": False,
            "classifier_activation": "gelu", "tie_word_embeddings": True,
        },
        "eurobert": {
            "vocab_size": 128256, "hidden_size": 768, "intermediate_size": 3072, "num_hidden_layers": 12,
            "num_attention_heads": 12, "num_key_value_heads": None, "hidden_act": "silu",
            "max_position_embeddings": 8192, "rms_norm_eps": 1e-5, "pad_token_id": 128001, "bos_token_id": 128000,
            "eos_token_id": 128001, "mask_token_id": 128002, "tie_word_embeddings": False, "rope_theta": 10000.0,
            "attention_bias": False, "mlp_bias": False, "head_dim": None,
        },
        "nomic_bert": {
            "vocab_size": 30528, "hidden_size": 768, "num_hidden_layers": 12, "num_attention_heads": 12,
            "intermediate_size": 3072, "hidden_act": "silu", "max_position_embeddings": 2048, "type_vocab_size": 2,
            "layer_norm_eps": 1e-12, "rope_theta": 1000.0, "tie_word_embeddings": True, "head_dim": None,
        },
    }
)


def _head_from_architectures(architectures: Any, family: str) -> str:
    if isinstance(architectures, (list, tuple)) and architectures:
        name = str(architectures[0])
        if name.endswith("ForPreTraining"):
            return "discriminator" if family == "electra" else "pretraining"
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
