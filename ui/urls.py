"""Every URL codec of the app in one place: the model config, the workload and Compare's pins.

App code (the links the sidebar, Compare and the tests share), not the library's: no Streamlit, so tests call it
without a server.

Values are short and stable so that links stay readable in a design discussion. Decoding accepts only
plain digits, known words and 0/1 (no floats, signs, exponents, NaN, whitespace, markup or overlong
values). The lenient decoders (`parse_query`, `parse_workload_query`, `decode_pins`) never raise: a bad
value falls back to the base and yields one plain-text problem naming the URL key; the strict ones
(`config_from_query`, `decode_pin`) raise ValueError. Partial values become a config through
`albert_core.configuration.coerce.coerce`, the same rule as the sidebar and the CLI.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from albert_core.checks import short_repr
from albert_core.configuration.coerce import coerce
from albert_core.configuration.config import (
    CHOICE_FIELDS,
    FAMILY_SWITCHES,
    FLAG_FIELDS,
    LIMITS,
    SHARING_SCHEME,
    ModelConfig,
    choices_text,
    family_of,
)
from albert_core.configuration.presets import ALL_PRESETS, config_name, matching_preset
from albert_core.configuration.workload import DTYPE_BYTES, OPTIMIZERS, PRECISIONS, WORKLOAD_LIMITS, Workload

# URL key -> ModelConfig field.
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
# URL key -> ModelConfig field, for the architecture axes of the families after BERT. A link writes them only for
# those families (every BERT and ALBERT link is as it was); reading one, an absent axis key takes the default of
# the field when any axis key is present (a family switch, `FAMILY_SWITCHES`: the family's, so a link written before
# they had keys reads as it did), else the family's layout by the coerce rule (a hand-written link).
AXIS_QUERY_KEYS: Mapping[str, str] = MappingProxyType(
    {
        "ffn": "ffn_kind", "pos": "position", "poff": "position_offset", "pbk": "position_buckets", "norm": "norm",
        "nb": "norm_bias", "place": "norm_placement", "en": "embedding_norm", "fn": "first_layer_norm",
        "ab": "attention_bias", "mb": "mlp_bias", "kv": "num_kv_heads", "win": "local_window",
        "gev": "global_every", "pool": "pooler", "ht": "head_transform", "hb": "head_bias", "db": "decoder_bias",
        "rope": "rope_theta", "lrope": "local_rope_theta", "pb": "projection_bias", "nap": "norm_after_projection",
        "sdb": "separate_decoder_bias", "hact": "head_act", "proj": "always_project",
    }
)
# URL key -> ModelConfig field, for the sharing schemes since ALBERT. A link writes them only where a config leaves
# ALBERT's own scheme (every link written before they existed reads as it did); reading, an absent key is ALBERT's.
SCHEME_QUERY_KEYS: Mapping[str, str] = MappingProxyType(
    {"order": "block_order", "ends": "unique_ends", "rep": "repeat", "lora": "lora_rank", "lorat": "lora_targets"}
)
ALL_QUERY_KEYS: Mapping[str, str] = MappingProxyType({**QUERY_KEYS, **AXIS_QUERY_KEYS, **SCHEME_QUERY_KEYS})
FIELD_KEYS: Mapping[str, str] = MappingProxyType({field: key for key, field in ALL_QUERY_KEYS.items()})
_ROPE_LIMITS = (1, 10**12)  # rotary bases: whole numbers in links (10,000; 160,000)
WORKLOAD_QUERY_KEYS: Mapping[str, str] = MappingProxyType(
    {"batch": "batch", "seq": "seq_len", "dtype": "dtype", "opt": "optimizer", "prec": "precision",
     "ckpt": "checkpointing"}
)
_WORKLOAD_CHOICES: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {"dtype": tuple(DTYPE_BYTES), "optimizer": OPTIMIZERS, "precision": PRECISIONS}
)
MAX_QUERY_VALUE_LEN = 16


def _encode(value: Any) -> str:
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))  # a rotary base
    return str(value)


def _last(raw: Any) -> str:
    """A repeated URL key counts once: its last value."""
    if isinstance(raw, (list, tuple)):
        raw = raw[-1] if raw else ""
    return raw if isinstance(raw, str) else str(raw)


# ----------------------------------------------------------------------------- model config
def config_to_query(cfg: ModelConfig) -> dict[str, str]:
    keys = QUERY_KEYS if family_of(cfg.family).paper else {**QUERY_KEYS, **AXIS_QUERY_KEYS}
    out = {key: _encode(getattr(cfg, name)) for key, name in keys.items()}
    out |= {key: _encode(getattr(cfg, name)) for key, name in SCHEME_QUERY_KEYS.items()
            if getattr(cfg, name) != SHARING_SCHEME[name]}
    return out


def _axis_defaults(params: Mapping[str, Any]) -> dict[str, Any]:
    """The axes a link leaves out, as explicit values, when it gives any axis (see `AXIS_QUERY_KEYS`)."""
    if not any(key in params for key in AXIS_QUERY_KEYS):
        return {}
    default = ModelConfig()
    return {name: None if name in FAMILY_SWITCHES else getattr(default, name)
            for key, name in AXIS_QUERY_KEYS.items() if key not in params}


def _scheme_defaults(params: Mapping[str, Any]) -> dict[str, Any]:
    """The sharing-scheme fields a link leaves out: ALBERT's own scheme (a link writes only those it changes)."""
    return {name: SHARING_SCHEME[name] for key, name in SCHEME_QUERY_KEYS.items() if key not in params}


def decode_query_value(key: str, field: str, raw: Any) -> Any:
    """Decode one URL value for ``field``; ValueError (naming the URL key) if it is not acceptable."""
    raw = _last(raw)
    shown = short_repr(raw, 24)
    if len(raw) > MAX_QUERY_VALUE_LEN:
        raise ValueError(f"URL value {key}={shown} is too long")
    if field in CHOICE_FIELDS:
        if raw not in CHOICE_FIELDS[field]:
            raise ValueError(f"URL value {key}={shown}: must be {choices_text(field)}")
        return raw
    if field in FLAG_FIELDS:
        if raw not in ("0", "1"):
            raise ValueError(f"URL value {key}={shown}: must be 0 or 1")
        return raw == "1"
    if not (raw.isascii() and raw.isdigit()):
        raise ValueError(f"URL value {key}={shown}: must be a positive whole number")
    value = int(raw)
    if field in ("rope_theta", "local_rope_theta"):
        lo, hi = _ROPE_LIMITS
        if not lo <= value <= hi:
            raise ValueError(f"URL value {key}={shown}: must be between {lo} and {hi:,}")
        return float(value)
    lo, hi = LIMITS[field]
    if field == "type_vocab_size":
        lo = 0  # the families after BERT may have none (ModelConfig checks BERT's and ALBERT's at least 1)
    if not lo <= value <= hi:
        raise ValueError(f"URL value {key}={shown}: must be between {lo} and {hi:,}")
    return value


def _keys(fields: Any) -> str:
    return ", ".join(FIELD_KEYS.get(f, f) for f in fields)


def parse_query(
    params: Mapping[str, Any], base: ModelConfig | None = None
) -> tuple[ModelConfig, list[str]]:
    """Lenient decoding for the app: every bad value falls back to ``base`` (default ALBERT-base)
    and yields one message. Unknown keys are ignored (the page owns other keys).

    Returns the config and the list of problems (empty when everything was accepted). A value the
    family rule overrides (``family=bert&sharing=all``) is reset and named; values that cannot form a
    model together are dropped one at a time, in URL order, and the message names the keys reset.
    """
    base = base or ModelConfig()
    problems: list[str] = []
    changes: dict[str, Any] = _axis_defaults(params) | _scheme_defaults(params)
    for key, name in ALL_QUERY_KEYS.items():
        if key not in params:
            continue
        try:
            changes[name] = decode_query_value(key, name, params[key])
        except ValueError as exc:
            problems.append(str(exc))
    try:
        got = coerce(changes, base, strict=False)
    except ValueError as exc:
        for name in list(changes):
            trial = {k: v for k, v in changes.items() if k != name}
            try:
                got = coerce(trial, base, strict=False)
            except ValueError:
                continue
            problems.append(f"URL values do not fit together: {exc}; reset {_keys([name])} to "
                            f"{_encode(getattr(got.config, name))}")
            break
        else:
            problems.append(f"URL values do not fit together: {exc}; reset {_keys(changes)} to the defaults")
            return base, problems
    problems += [f"URL value {note}" for note in got.notes(FIELD_KEYS)]
    return got.config, problems


def config_from_query(params: Mapping[str, Any]) -> ModelConfig:
    """Strict decoding: the first bad value raises ValueError naming the URL key and the rule."""
    changes = _axis_defaults(params) | _scheme_defaults(params)
    changes |= {name: decode_query_value(key, name, params[key]) for key, name in ALL_QUERY_KEYS.items()
                if key in params}
    return coerce(changes, ModelConfig(), strict=True).config


# ----------------------------------------------------------------------------- workload
def workload_to_query(wl: Workload) -> dict[str, str]:
    return {key: _encode(getattr(wl, name)) for key, name in WORKLOAD_QUERY_KEYS.items()}


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
        raw = _last(params[key])
        shown = short_repr(raw, 24)
        if name in WORKLOAD_LIMITS:
            lo, hi = WORKLOAD_LIMITS[name]
            if len(raw) > MAX_QUERY_VALUE_LEN or not (raw.isascii() and raw.isdigit()):
                problems.append(f"URL value {key}={shown}: must be a positive whole number")
                continue
            if not lo <= int(raw) <= hi:
                problems.append(f"URL value {key}={shown}: must be between {lo} and {hi:,}")
                continue
            changes[name] = int(raw)
        elif name == "checkpointing":
            if raw not in ("0", "1"):
                problems.append(f"URL value {key}={shown}: must be 0 or 1")
                continue
            changes[name] = raw == "1"
        else:
            choices = _WORKLOAD_CHOICES[name]
            if raw not in choices:
                problems.append(f"URL value {key}={shown}: must be one of {', '.join(choices)}")
                continue
            changes[name] = raw
    for name, fallback in (("precision", "pure"), ("checkpointing", False)):
        try:
            base.replace(**changes)
        except ValueError as exc:  # mixed without a 16-bit dtype, checkpointing with int8
            if changes.get(name, fallback) != fallback:
                key = next(k for k, n in WORKLOAD_QUERY_KEYS.items() if n == name)
                problems.append(f"URL value {key}={_encode(changes[name])} reset to {_encode(fallback)}: {exc}")
                changes[name] = fallback
    return base.replace(**changes), problems


def share_query(cfg: ModelConfig, wl: Workload, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The full URL state: every config and workload key, plus page-owned keys (e.g. the Compare pins)."""
    # axes and schemes only as the config has them
    kept = {k: v for k, v in (extra or {}).items() if k not in AXIS_QUERY_KEYS and k not in SCHEME_QUERY_KEYS}
    return {**kept, **config_to_query(cfg), **workload_to_query(wl)}


# ----------------------------------------------------------------------------- Compare pins
# The Compare page's pinned set travels in one URL value: comma-separated entries, each a preset name
# or the config's non-default URL fields as `key.value` pairs joined by `~` (e.g. `H.1024~L.24`),
# optionally followed by `~name.<name>`, the name a visitor gave the pin (e.g. `bert-base~name.baseline`).
# None of the separators occurs in a URL key or value (a name is letters, digits, space, `-` and `_`),
# so decoding is a plain split. A pin's identity is its config (one pin per config); the name is
# what the page shows, the config's own unique name (`presets.config_name`) when none was given.
PIN_PARAM = "pin"
MAX_PINS = 8
MAX_PIN_NAME = 32
_NAME_KEY = "name"
_MAX_PIN_TEXT = 1600


def check_pin_name(name: str) -> str:
    """``name`` stripped, if it can name a pin; ValueError naming the rule otherwise ('' = no name)."""
    name = name.strip()
    if len(name) > MAX_PIN_NAME:
        raise ValueError(f"a pin name has at most {MAX_PIN_NAME} characters, got {len(name)}")
    if not all(c.isascii() and (c.isalnum() or c in " -_") for c in name):
        raise ValueError(f"a pin name may hold letters, digits, spaces, - and _ only, got {short_repr(name)}")
    return name


def encode_pin(cfg: ModelConfig, name: str = "") -> str:
    preset = matching_preset(cfg)
    if preset:
        body = preset
    else:
        layout = family_of(cfg.family).layout  # an absent family switch reads as the family's (`_axis_defaults`)
        default = {key: _encode(layout[name] if name in FAMILY_SWITCHES else getattr(ModelConfig(), name))
                   for key, name in ALL_QUERY_KEYS.items()}
        # a family after BERT always names one axis, so that the others read as written (`_axis_defaults`)
        body = "~".join(f"{k}.{v}" for k, v in config_to_query(cfg).items() if default[k] != v or k == "ffn")
        body = body or "albert-base"
    name = check_pin_name(name)
    return f"{body}~{_NAME_KEY}.{name}" if name else body


def split_pin(entry: str) -> tuple[str, str]:
    """(config part, name) of an entry; the name is '' when none was given."""
    body, sep, name = entry.rpartition(f"~{_NAME_KEY}.")
    return (body, name) if sep else (entry, "")


def decode_pin(entry: str) -> ModelConfig:
    """Strict: ValueError (naming the entry) for anything that is not a preset or a valid config."""
    entry, name = split_pin(entry)
    check_pin_name(name)
    if entry in ALL_PRESETS:
        return ALL_PRESETS[entry]
    fields: dict[str, str] = {}
    for pair in entry.split("~"):
        key, dot, value = pair.partition(".")
        if not dot or key not in ALL_QUERY_KEYS or key in fields:
            raise ValueError(f"pin {entry[:40]!r}: expected a preset name or key.value pairs joined by ~")
        fields[key] = value
    # Every key is given (the omitted ones are the defaults'), so nothing is derived: a pin is exact.
    return config_from_query({**config_to_query(ModelConfig()), **fields})


def pin_name(entry: str) -> str:
    """What the page shows for a pin: the visitor's name for it, else the config's unique name."""
    return split_pin(entry)[1] or config_name(decode_pin(entry))


def decode_pins(text: str) -> tuple[list[str], list[str]]:
    """Lenient: (valid entries in canonical form, plain-text problems). At most MAX_PINS entries, one
    per config (a repeated config keeps its first entry) and no name twice."""
    problems: list[str] = []
    if len(text) > _MAX_PIN_TEXT:
        return [], [f"URL value pin is too long ({len(text):,} characters)"]
    entries: list[str] = []
    configs: list[ModelConfig] = []
    for raw in filter(None, text.split(",")):
        try:
            cfg = decode_pin(raw)
            entry = encode_pin(cfg, split_pin(raw)[1])
        except ValueError as exc:
            problems.append(str(exc))
            continue
        if cfg in configs:
            continue
        if pin_name(entry) in map(pin_name, entries):
            problems.append(f"URL value pin: the name {short_repr(pin_name(entry))} is used twice; "
                            "kept the first")
            entry = encode_pin(cfg)
        entries.append(entry)
        configs.append(cfg)
    if len(entries) > MAX_PINS:
        problems.append(f"URL value pin: at most {MAX_PINS} configs can be pinned; kept the first {MAX_PINS}")
        entries = entries[:MAX_PINS]
    return entries, problems


def encode_pins(entries: list[str]) -> str:
    return ",".join(entries)
