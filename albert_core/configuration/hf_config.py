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

from albert_core.configuration.config import (
    ENCODER_HEADS,
    FAMILIES,
    LIMITS,
    SHARING_SCHEME,
    ModelConfig,
    family_of,
)
from albert_core.configuration.hf_schema import Schema, check_keys, choice, excerpt, problem


def config_from_hf(source: Any, head: str | None = None) -> ModelConfig:
    """Read a transformers configuration of any family of `FAMILIES` (ALBERT, BERT, RoBERTa, XLM-R, ELECTRA,
    DeBERTa-v2/v3, ModernBERT, EuroBERT, NomicBERT).

    ``source``: a path to ``config.json`` (or to a folder holding one), a dict, or a transformers
    config object. ``head``: one of ENCODER_HEADS; by default it is inferred from ``architectures`` as the family's
    record says (``*ForPreTraining`` -> pretraining, ELECTRA's -> discriminator, NomicBERT's -> masked-lm,
    ``*ForMaskedLM`` -> masked-lm, otherwise model). A key the file leaves out takes transformers' own default for it
    (`Reader.defaults`). ValueError naming the key and its rule for anything else.
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


def hf_family(data: Mapping[str, Any]) -> str:
    """The family a config names in ``model_type`` (ValueError: none of `FAMILIES` with a reader, i.e. no config
    read here)."""
    if not isinstance(data, Mapping):
        raise ValueError(f"a config must be a JSON object, got {excerpt(data)}")
    model_type = data.get("model_type")
    readable = [name for name in FAMILIES if family_of(name).reader is not None]
    if not isinstance(model_type, str) or model_type not in readable:
        rule = choice(*readable).rule
        raise ValueError(problem("model_type", rule, model_type) if "model_type" in data
                         else problem("model_type", rule))
    return model_type


def read_fields(data: Mapping[str, Any]) -> HfFields:
    """Every key the family of ``data`` reads, checked (types and ranges, `hf_schema.check_keys`) and in
    transformers' spelling: ValueError naming the first key that fails."""
    family = hf_family(data)
    reader = family_of(family).reader
    return reader.fields(family, data) if reader.fields else check_fields(family, data)


def check_fields(family: str, data: Mapping[str, Any], schema: Schema | None = None,
                 defaults: Mapping[str, Any] | None = None) -> HfFields:
    """The keys of ``schema`` (default: the family's) in ``data`` checked, a key the file leaves out taking
    ``defaults``' value (default: transformers' for the family)."""
    reader = family_of(family).reader
    values = check_keys(schema or reader.schema, data, reader.defaults if defaults is None else defaults)
    return HfFields(family, values, frozenset(k for k in values if k in data))


# ----------------------------------------------------------------------------- rules across keys
def _check_across(f: HfFields) -> None:
    """The rule between keys every family shares, named in the file's keys (ModelConfig checks it again in its own
    words); a family's own rules are its reader's."""
    hidden, heads = f["hidden_size"], f["num_attention_heads"]
    if hidden % heads:
        raise ValueError(f"num_attention_heads ({heads:,}) must divide hidden_size ({hidden:,}): heads of "
                         f"{hidden / heads:.2f} dimensions (transformers refuses it too)")


def check_head_dim(f: HfFields) -> None:
    """A ``head_dim`` key (EuroBERT's, NomicBERT's) must give attention as wide as the hidden size."""
    hidden, heads = f["hidden_size"], f["num_attention_heads"]
    if f["head_dim"] is not None and f["head_dim"] * heads != hidden:
        raise ValueError(f"head_dim ({f['head_dim']:,}) x num_attention_heads ({heads:,}) must equal hidden_size "
                         f"({hidden:,}): attention narrower or wider than the hidden size is not modelled")


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
    kwargs.update(family_of(f.family).reader.read(f))
    return ModelConfig(**kwargs)


# ----------------------------------------------------------------------------- what several families' readers use
def rope_params(params: Any, where: str) -> Mapping[str, Any]:
    """A checked rotary object (or none): its partial rotary refused by name."""
    params = params or {}
    factor = params.get("partial_rotary_factor")
    if factor not in (None, 1.0):
        raise ValueError(problem(f"{where}.partial_rotary_factor", "null or 1.0 (rotary over the whole head: "
                                 "partial rotary is not modelled)", factor))
    return params


def flat_rope(values: Mapping[str, Any], key: str) -> float:
    """The rotary base transformers 5 reads for EuroBERT and NomicBERT: rope_scaling (transformers 4) or
    rope_parameters, else the top-level rope_theta, else the family's default."""
    where = "rope_scaling" if values["rope_scaling"] else "rope_parameters"
    params = rope_params(values["rope_scaling"] or values["rope_parameters"], where)
    theta = params.get("rope_theta")
    return float(values[key] if theta is None else theta)


def hf_class_name(cfg: ModelConfig) -> str:
    """The transformers class of ``cfg``'s family and head, e.g. 'ModernBertForMaskedLM' (ValueError: none)."""
    name = family_of(cfg.family).class_name(cfg.head)
    if name is None:
        raise ValueError(f"transformers has no class for a {cfg.label} with head {cfg.head!r}")
    return name


def hf_class_mismatch(cfg: ModelConfig) -> str | None:
    """None if ``cfg``'s family has a transformers class that builds exactly ``cfg`` (what `config_to_hf` writes),
    else why not, naming the fields: an ALBERTized encoder (E or sharing where the family's class has neither) or
    a layout the class cannot take is counted and built here only. Decided by reading back what would be written."""
    record = family_of(cfg.family)
    if record.class_name(cfg.head) is None:
        if cfg.has_discriminator:
            owners = " and ".join(family_of(n).label for n in FAMILIES if family_of(n).class_name(cfg.head))
            return f"the replaced-token discriminator head has a transformers class for {owners} only"
        return f"transformers has no class for a {record.label} with head {cfg.head!r}"
    scheme = [f"{name}={getattr(cfg, name)!r}" for name, value in SHARING_SCHEME.items()
              if getattr(cfg, name) != value]
    if scheme:
        return (f"transformers' {hf_class_name(cfg)} has no setting for {', '.join(scheme)} (a sharing scheme "
                "designed since ALBERT: counted and built here, not exportable to transformers)")
    if record.paper:  # written by its own writer, which holds what the class holds but partial sharing
        if cfg.sharing not in ("none", "all"):
            return (f"sharing={cfg.sharing!r} cannot be expressed in transformers (its ALBERT shares "
                    "whole layers); use sharing 'all' or 'none' to export")
        return None
    try:
        back = config_from_hf(_hf_dict_of(cfg), cfg.head)
    except ValueError as exc:
        return f"transformers' {hf_class_name(cfg)} cannot hold this config: {exc}"
    differ = [f"{f.name}={getattr(cfg, f.name)!r}" for f in dataclasses.fields(cfg)
              if getattr(back, f.name) != getattr(cfg, f.name)]
    if not differ:
        return None
    return (f"transformers' {hf_class_name(cfg)} has no setting for {', '.join(differ)} (an ALBERTized or "
            "custom layout: counted and built here, not exportable to transformers)")


def token_ids(cfg: ModelConfig, defaults: Mapping[str, Any], names: tuple[str, ...]) -> dict[str, int]:
    """The family's default special-token ids where they fit the vocabulary, else the first ids (a config
    exported for counting must build: transformers checks padding_idx against the vocabulary)."""
    fit = all(isinstance(defaults.get(n), int) and defaults[n] < cfg.vocab_size for n in names)
    return {n: (defaults[n] if fit else i % cfg.vocab_size) for i, n in enumerate(names)}


def _hf_dict_of(cfg: ModelConfig) -> dict[str, Any]:
    """The config.json keys of ``cfg`` (`config_to_hf` without its checks): the sizes and tying every family writes,
    then its own keys (`Reader.write`)."""
    return {
        "model_type": cfg.family,
        "architectures": [hf_class_name(cfg)],
        "vocab_size": cfg.vocab_size,
        "hidden_size": cfg.hidden_size,
        "num_hidden_layers": cfg.num_layers,
        "num_attention_heads": cfg.num_heads,
        "intermediate_size": cfg.intermediate_size,
        "max_position_embeddings": cfg.max_position_embeddings,
        "tie_word_embeddings": cfg.tie_word_embeddings,
    } | family_of(cfg.family).reader.write(cfg)


def config_to_hf(cfg: ModelConfig) -> dict[str, Any]:
    """A ``config.json`` dict that transformers' config class of ``cfg``'s family loads to this architecture;
    ValueError saying why when that class cannot hold it (`hf_class_mismatch`: partial sharing, or E and sharing
    on a family whose class has neither)."""
    problem = hf_class_mismatch(cfg)
    if problem:
        raise ValueError(problem)
    return _hf_dict_of(cfg)


def _head_from_architectures(architectures: list[str] | None, family: str) -> str:
    if architectures:
        name = architectures[0]
        for suffix, head in family_of(family).reader.architectures:
            if name.endswith(suffix):
                return head
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
