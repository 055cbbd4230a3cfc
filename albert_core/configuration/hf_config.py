"""transformers configuration codec: `config.json` (or a config object) <-> `ModelConfig`.

`config_from_hf` is the one strict reader of a config, shared by the sidebar upload (`config_from_json_bytes`), the
Explorer's paste box and the config doctor (`albert_core.review.doctor`), the CLI's ``--hf-config`` and ``doctor``,
and a pretrained folder: the bytes are bounded and parsed (`parse_config_json`), every key the family's reader uses
is checked for its type and range before any value is used (`albert_core.configuration.hf_schema`), the keys are
read as transformers reads them (DeBERTa-v3's ``"p2c|c2p"``, transformers 4's and 5's rotary spellings, NomicBERT's
GPT-2-style keys as nomic's own class reads them), and a layout that is not modelled is refused naming the key and
the reason. Every problem is one ValueError: ``<key> must be <rule>, got <excerpt>``.

`config_to_hf` writes one (the Explorer's download, the live model's transformers export, the audit).
No torch or transformers import.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

from albert_core.configuration.config import ENCODER_HEADS, FAMILIES, LIMITS, PAPER_FAMILIES, ModelConfig
from albert_core.configuration.families import FAMILY_LAYOUTS
from albert_core.configuration.hf_schema import (
    NOMIC_CODE_DEFAULTS,
    NOMIC_CODE_KEYS,
    check_keys,
    choice,
    excerpt,
    problem,
)


def config_from_hf(source: Any, head: str | None = None) -> ModelConfig:
    """Read a transformers configuration of any family of `FAMILIES` (ALBERT, BERT, RoBERTa, XLM-R, ELECTRA,
    DeBERTa-v2/v3, ModernBERT, EuroBERT, NomicBERT).

    ``source``: a path to ``config.json`` (or to a folder holding one), a dict, or a transformers
    config object. ``head``: one of ENCODER_HEADS; by default it is inferred from ``architectures``
    (``*ForPreTraining`` -> pretraining, ELECTRA's -> discriminator, NomicBERT's -> masked-lm, ``*ForMaskedLM`` ->
    masked-lm, otherwise model). A key the file leaves out takes transformers' own default for it (`_HF_DEFAULTS`).
    ValueError naming the key and its rule for anything else.
    """
    return config_from_fields(read_fields(_hf_dict(source)), head)


@dataclass(frozen=True)
class HfFields:
    """A config.json as the reader takes it: its ``family``, every key the family's reader uses with its checked
    value (the file's, or the default it means; NomicBERT's GPT-2-style keys already in transformers' spelling), and
    the keys the file ``given``."""

    family: str
    values: Mapping[str, Any]
    given: frozenset[str]

    def __getitem__(self, key: str) -> Any:
        return self.values[key]

    def replace(self, **changes: Any) -> HfFields:
        """A copy with some values changed (the doctor's fixed head count), counted as given."""
        return HfFields(self.family, {**self.values, **changes}, self.given | frozenset(changes))


_FAMILY_RULE = choice(*FAMILIES).rule


def hf_family(data: Mapping[str, Any]) -> str:
    """The family a config names in ``model_type`` (ValueError: none of `FAMILIES`, i.e. no config read here)."""
    if not isinstance(data, Mapping):
        raise ValueError(f"a config must be a JSON object, got {excerpt(data)}")
    model_type = data.get("model_type")
    if not isinstance(model_type, str) or model_type not in FAMILIES:
        raise ValueError(problem("model_type", _FAMILY_RULE, model_type) if "model_type" in data
                         else problem("model_type", _FAMILY_RULE))
    return model_type


def read_fields(data: Mapping[str, Any]) -> HfFields:
    """Every key the family of ``data`` reads, checked (types and ranges, `hf_schema.check_keys`) and in
    transformers' spelling: ValueError naming the first key that fails."""
    family = hf_family(data)
    nomic_code = family == "nomic_bert" and any(k in data for k in NOMIC_CODE_KEYS)
    defaults: Mapping[str, Any] = _HF_DEFAULTS[family]
    if family == "deberta-v2":
        att = data.get("pos_att_type")
        if isinstance(att, str) and len(att) <= 64:  # transformers splits 'p2c|c2p' (DeBERTa-v3's own files)
            data = {**data, "pos_att_type": [part.strip() for part in att.lower().split("|")]}
    if nomic_code:
        defaults = {**defaults, **NOMIC_CODE_DEFAULTS}
        if "hidden_act" in data and "activation_function" not in data:  # transformers' key read instead
            defaults["activation_function"] = "swiglu"
    values = check_keys(family, data, defaults, nomic_code)
    given = frozenset(k for k in values if k in data)
    if nomic_code:
        values = _from_nomic_code(values, given)
    return HfFields(family, values, given)


# nomic's class is a GPT2Config: its attribute_map makes these one attribute, the transformers key set last
_NOMIC_SAME = {"n_embd": "hidden_size", "n_layer": "num_hidden_layers", "n_head": "num_attention_heads",
               "n_positions": "max_position_embeddings"}
# nomic's code reads the first key, transformers' class the second: both written means both must agree
_NOMIC_EITHER = {"n_inner": "intermediate_size", "layer_norm_epsilon": "layer_norm_eps",
                 "activation_function": "hidden_act"}
_NOMIC_ACTS = {"swiglu": "silu", "geglu": "gelu"}  # nomic's gated FFNs: silu(gate) * up, gelu(gate) * up
NOMIC_FFN_MULTIPLE = 256  # nomic's gated FFN rounds its width up to a multiple of 256


def _from_nomic_code(values: dict[str, Any], given: frozenset[str]) -> dict[str, Any]:
    """A GPT-2-style NomicBERT file (nomic's own class) in transformers' keys, as nomic's class reads it."""
    out = dict(values)
    for ours, theirs in _NOMIC_SAME.items():
        if theirs not in given:
            out[theirs] = values[ours]
    for ours, theirs in _NOMIC_EITHER.items():
        mine = _NOMIC_ACTS[values[ours]] if ours == "activation_function" else values[ours]
        if ours in given and theirs in given and mine != values[theirs]:
            raise ValueError(f"{ours} ({excerpt(values[ours])}) and {theirs} ({excerpt(values[theirs])}) disagree: "
                             f"nomic's own code reads {ours}, transformers' NomicBert {theirs}; write one of them")
        if theirs not in given:
            out[theirs] = mine
    if "intermediate_size" not in given:
        inner = values["n_inner"]
        if inner is None or inner % NOMIC_FFN_MULTIPLE:
            built = -(-(inner or 8 * out["hidden_size"] // 3) // NOMIC_FFN_MULTIPLE) * NOMIC_FFN_MULTIPLE
            raise ValueError(problem("n_inner", f"a multiple of {NOMIC_FFN_MULTIPLE} (nomic's code rounds its gated "
                                     f"FFN up to one: this file builds {built:,}; write n_inner = {built:,})",
                                     *((inner,) if "n_inner" in given else ())))
    pad = values["pad_vocab_size_multiple"]
    if out["vocab_size"] % pad:
        padded = -(-out["vocab_size"] // pad) * pad
        raise ValueError(f"vocab_size ({out['vocab_size']:,}) must be a multiple of pad_vocab_size_multiple ({pad}): "
                         f"nomic's code pads the table to {padded:,} rows; write vocab_size = {padded:,}")
    rope_given = "rope_theta" in given or bool(values["rope_parameters"] or values["rope_scaling"])
    if not rope_given:
        out["rope_theta"] = values["rotary_emb_base"]
    elif "rotary_emb_base" in given and float(values["rotary_emb_base"]) != _flat_rope(out, "rope_theta"):
        raise ValueError(f"rotary_emb_base ({excerpt(values['rotary_emb_base'])}) and the rope_theta of "
                         f"rope_parameters / rope_theta ({excerpt(_flat_rope(out, 'rope_theta'))}) disagree: nomic's "
                         "own code reads rotary_emb_base, transformers' NomicBert the other; write one of them")
    return out


# ----------------------------------------------------------------------------- rules across keys
def _check_across(f: HfFields) -> None:
    """The rules between keys, named in the file's keys (ModelConfig checks them again in its own words)."""
    hidden, heads = f["hidden_size"], f["num_attention_heads"]
    if hidden % heads:
        raise ValueError(f"num_attention_heads ({heads:,}) must divide hidden_size ({hidden:,}): heads of "
                         f"{hidden / heads:.2f} dimensions (transformers refuses it too)")
    if f.family == "albert" and f["num_hidden_groups"] > f["num_hidden_layers"]:
        raise ValueError(f"num_hidden_groups must be between 1 and num_hidden_layers ({f['num_hidden_layers']}), "
                         f"got {f['num_hidden_groups']}")
    if f.family in ("eurobert", "nomic_bert") and f["head_dim"] is not None and f["head_dim"] * heads != hidden:
        raise ValueError(f"head_dim ({f['head_dim']:,}) x num_attention_heads ({heads:,}) must equal hidden_size "
                         f"({hidden:,}): attention narrower or wider than the hidden size is not modelled")
    if f.family == "deberta-v2":
        size = f["attention_head_size"]
        if size is not None and size != hidden // heads:
            raise ValueError(f"attention_head_size ({size:,}) must be hidden_size / num_attention_heads "
                             f"({hidden // heads:,}): attention narrower or wider than the hidden size is not modelled")
    if f.family == "eurobert":
        kv = f["num_key_value_heads"]
        if kv is not None and heads % kv:
            raise ValueError(f"num_key_value_heads ({kv:,}) must divide num_attention_heads ({heads:,}): each "
                             "key/value head serves a whole group of query heads")
    if f.family in ("roberta", "xlm-roberta") and f["pad_token_id"] + 1 >= f["max_position_embeddings"]:
        raise ValueError(f"max_position_embeddings ({f['max_position_embeddings']:,}) must be above pad_token_id + 1 "
                         f"({f['pad_token_id'] + 1:,}): RoBERTa's positions start after the padding id")


def config_from_fields(f: HfFields, head: str | None = None) -> ModelConfig:
    """The config of checked keys (`read_fields`), with ``head`` (default: from ``architectures``)."""
    if head is not None and (not isinstance(head, str) or head not in ENCODER_HEADS):
        raise ValueError(f"head must be one of {', '.join(ENCODER_HEADS)}, got {excerpt(head)}")
    _check_across(f)
    kwargs: dict[str, Any] = dict(
        family=f.family,
        vocab_size=f["vocab_size"],
        hidden_size=f["hidden_size"],
        num_layers=f["num_hidden_layers"],
        num_heads=f["num_attention_heads"],
        intermediate_size=f["intermediate_size"],
        max_position_embeddings=f["max_position_embeddings"],
        head=head or _head_from_architectures(f["architectures"], f.family),
        tie_word_embeddings=f["tie_word_embeddings"],
    )
    kwargs.update(_FAMILY_READERS[f.family](f))
    return ModelConfig(**kwargs)


# ----------------------------------------------------------------------------- one reader per family
def _read_bert_like(f: HfFields) -> dict[str, Any]:
    return dict(type_vocab_size=f["type_vocab_size"], hidden_act=f["hidden_act"],
                layer_norm_eps=float(f["layer_norm_eps"]), sharing="none")


def _read_albert(f: HfFields) -> dict[str, Any]:
    return _read_bert_like(f) | dict(embedding_size=f["embedding_size"], sharing="all",
                                     num_hidden_groups=f["num_hidden_groups"], inner_group_num=f["inner_group_num"])


def _read_roberta(f: HfFields) -> dict[str, Any]:
    return _read_bert_like(f) | dict(embedding_size=f["hidden_size"], position_offset=f["pad_token_id"] + 1)


def _read_electra(f: HfFields) -> dict[str, Any]:
    return _read_bert_like(f) | dict(embedding_size=f["embedding_size"], pooler=False)


def _read_deberta(f: HfFields) -> dict[str, Any]:
    if sorted(set(f["pos_att_type"] or ())) != ["c2p", "p2c"]:
        raise ValueError(problem("pos_att_type", "'p2c|c2p' or ['p2c', 'c2p'] (both of DeBERTa-v3's position terms: "
                                 "the layout modelled)", *((f["pos_att_type"],) if "pos_att_type" in f.given else ())))
    rel, positions = f["max_relative_positions"], f["max_position_embeddings"]
    if rel >= 1 and rel != positions:
        raise ValueError(f"max_relative_positions must be -1 (or any whole number below 1: the whole "
                         f"{positions:,} positions, DeBERTa-v3's) or max_position_embeddings, got {rel:,}")
    emb = f["hidden_size"] if f["embedding_size"] is None else f["embedding_size"]
    if not f["legacy"] and emb != f["hidden_size"]:
        raise ValueError("legacy must be true when embedding_size differs from hidden_size (transformers' "
                         "newer DeBERTa head is H wide)")
    return dict(embedding_size=emb, type_vocab_size=f["type_vocab_size"], hidden_act=f["hidden_act"],
                layer_norm_eps=float(f["layer_norm_eps"]), sharing="none", position="relative",
                position_buckets=f["position_buckets"], pooler=False)


def _rope_params(params: Any, where: str) -> Mapping[str, Any]:
    """A checked rotary object (or none): its partial rotary refused by name."""
    params = params or {}
    factor = params.get("partial_rotary_factor")
    if factor not in (None, 1.0):
        raise ValueError(problem(f"{where}.partial_rotary_factor", "null or 1.0 (rotary over the whole head: "
                                 "partial rotary is not modelled)", factor))
    return params


def _flat_rope(values: Mapping[str, Any], key: str) -> float:
    """The rotary base transformers 5 reads for EuroBERT and NomicBERT: rope_scaling (transformers 4) or
    rope_parameters, else the top-level rope_theta, else the family's default."""
    where = "rope_scaling" if values["rope_scaling"] else "rope_parameters"
    params = _rope_params(values["rope_scaling"] or values["rope_parameters"], where)
    theta = params.get("rope_theta")
    return float(values[key] if theta is None else theta)


def _read_modernbert(f: HfFields) -> dict[str, Any]:
    if f["classifier_activation"] != f["hidden_activation"]:
        raise ValueError(f"classifier_activation must equal hidden_activation (one activation is modelled), got "
                         f"{excerpt(f['classifier_activation'])} and {excerpt(f['hidden_activation'])}")
    layers, every, types = f["num_hidden_layers"], f["global_attn_every_n_layers"], f["layer_types"]
    if types is not None:  # the pattern transformers writes: full attention at i % n == 0
        if len(types) != layers:
            raise ValueError(f"layer_types must list one attention type per layer ({layers}), got {len(types)}")
        full = [i for i, t in enumerate(types) if t == "full_attention"]
        if "global_attn_every_n_layers" not in f.given:  # else the period as written (beyond L it means one global)
            every = full[1] if len(full) > 1 else layers
        if any((i % every == 0) != (t == "full_attention") for i, t in enumerate(types)):
            raise ValueError("layer_types must be full attention every n layers from the first (ModernBERT's "
                             "global_attn_every_n_layers); other patterns are not modelled")
    elif every is None:
        every = 3  # transformers' default period
    local = f["local_attention"]
    if f["sliding_window"] is not None:  # transformers 5: setting sliding_window sets local_attention = 2 x it
        local = 2 * f["sliding_window"]
    elif local % 2 and every != 1:  # all-global layers never read the window
        raise ValueError(f"local_attention must be even (the whole window: local_attention / 2 tokens each side), "
                         f"got {local:,}")
    rope_by_layer = f["rope_parameters"] or {}
    thetas = {}
    for layer, key in (("full_attention", "global_rope_theta"), ("sliding_attention", "local_rope_theta")):
        params = {**(rope_by_layer.get(layer) or {}), **(f["rope_scaling"] or {})}  # rope_scaling updates both
        theta = _rope_params(params, f"rope_parameters.{layer}").get("rope_theta")
        thetas[layer] = float(f[key] if theta is None else theta)
    return {**FAMILY_LAYOUTS["modernbert"], **dict(
        embedding_size=f["hidden_size"], hidden_act=f["hidden_activation"], layer_norm_eps=float(f["norm_eps"]),
        sharing="none", norm_bias=f["norm_bias"], attention_bias=f["attention_bias"], mlp_bias=f["mlp_bias"],
        local_window=local if every != 1 else 0, global_every=every, head_bias=f["classifier_bias"],
        decoder_bias=f["decoder_bias"], rope_theta=thetas["full_attention"],
        local_rope_theta=thetas["sliding_attention"],
    )}


def _read_eurobert(f: HfFields) -> dict[str, Any]:
    kv = f["num_key_value_heads"]
    return {**FAMILY_LAYOUTS["eurobert"], **dict(
        embedding_size=f["hidden_size"], hidden_act=f["hidden_act"], layer_norm_eps=float(f["rms_norm_eps"]),
        sharing="none", attention_bias=f["attention_bias"], mlp_bias=f["mlp_bias"],
        num_kv_heads=0 if kv in (None, f["num_attention_heads"]) else kv, decoder_bias=f["mlp_bias"],
        rope_theta=_flat_rope(f.values, "rope_theta"),
    )}


def _read_nomic(f: HfFields) -> dict[str, Any]:
    return {**FAMILY_LAYOUTS["nomic_bert"], **dict(
        embedding_size=f["hidden_size"], type_vocab_size=f["type_vocab_size"], hidden_act=f["hidden_act"],
        layer_norm_eps=float(f["layer_norm_eps"]), sharing="none", rope_theta=_flat_rope(f.values, "rope_theta"),
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
            "position_biased_input": True, "pos_att_type": None, "legacy": True, "tie_word_embeddings": True,
            # not attributes of DebertaV2Config: what its model reads when the key is absent (getattr defaults)
            "position_buckets": -1, "share_att_key": False, "norm_rel_ebd": "none", "conv_kernel_size": 0,
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


def _head_from_architectures(architectures: list[str] | None, family: str) -> str:
    if architectures:
        name = architectures[0]
        if name.endswith("ForPreTraining"):  # NomicBERT's (nomic's own class) is its MLM head
            return {"electra": "discriminator", "nomic_bert": "masked-lm"}.get(family, "pretraining")
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
    where = "" if key is None else f" (at {excerpt(key)})"
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
    for key, value in data.items():  # iterative: the depth check itself must not recurse
        stack = [(value, 2)] if isinstance(value, (dict, list)) else []
        while stack:
            node, depth = stack.pop()
            if depth > MAX_CONFIG_DEPTH:
                raise ValueError(f"{what} is nested too deeply to be a transformers config (at {excerpt(key)}: more "
                                 f"than {MAX_CONFIG_DEPTH} levels)")
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
        try:
            if path.is_dir():
                path = path / "config.json"
            if not path.is_file():
                raise ValueError(f"config path must be a config.json file or a folder holding one: {str(path)[:300]}")
            with path.open("rb") as fh:
                raw = fh.read(MAX_CONFIG_BYTES + 1)  # never more than the limit, whatever the file's size says
        except OSError as exc:
            raise ValueError(f"config file {str(path)[:300]} cannot be read: {exc.strerror or exc}") from None
        return parse_config_json(raw, f"config file {path}")
    to_dict = getattr(source, "to_dict", None)
    if callable(to_dict):
        data = to_dict()
        if isinstance(data, Mapping):
            return dict(data)
    raise ValueError(
        f"source must be a config.json path, a dict or a transformers config, got {type(source).__name__}"
    )
