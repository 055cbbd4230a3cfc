"""The schema of a transformers ``config.json`` as the strict reader (`albert_core.configuration.hf_config`) reads it:
every key a family's reader uses, its type and range (checked with pydantic in strict mode, before any value is
used), the rule in words, and the values of the layout that is modelled.

A key's rule is written once and used for both the check and the message: ``<key> must be <rule>, got <excerpt>``.
The message quotes at most a short excerpt of the value (`excerpt`), never the value itself. Types are strict: a
count is a JSON integer (not 12.0, not "12", not true), a flag is true or false, a number is finite.

Besides the keys the counts read, each family lists the keys of its config class (or of the file's own class, for
NomicBERT's GPT-2-style files) that would change a size or the live model's outputs but are not modelled; a file
setting one of them to anything but the modelled value is refused with the key and the reason
(`FAMILY_KEYS`, docs/architecture.md "The config.json reader").

No pydantic import until a file is read (counting starts fast).
"""

from __future__ import annotations

import math
import reprlib
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from types import MappingProxyType
from typing import Any

from albert_core.configuration.config import ENCODER_ACTIVATIONS, LIMITS

MAX_NAMES = 16  # entries of `architectures` (transformers writes one)
MAX_NAME_CHARS = 200  # characters of a class name in `architectures`
MAX_THETA = 1e12  # the rotary base's bound (ModelConfig's)
_ABSENT = object()


@dataclass(frozen=True)
class Key:
    """One key of config.json: ``kind`` (whole, number, flag, choice, names, layer_types, att_types, rope,
    rope_by_layer) with its bounds, ``rule`` in words, ``want`` (the values the modelled layout allows; empty: any
    value of the kind) and ``absent`` (the value when neither the file nor the family's defaults name it)."""

    kind: str
    rule: str
    lo: float | None = None
    hi: float | None = None
    lo_open: bool = False
    hi_open: bool = False
    nullable: bool = False
    choices: tuple[str, ...] = ()
    max_items: int = 0
    want: tuple[Any, ...] = ()
    absent: Any = None


def whole(lo: int, hi: int, why: str = "", *, nullable: str = "", want: tuple = (), rule: str = "",
          absent: Any = None) -> Key:
    """A JSON integer in [lo, hi] (``nullable``: or null, meaning that)."""
    text = rule or f"a whole number between {lo:,} and {hi:,}{why}" + (f" or null ({nullable})" if nullable else "")
    return Key("whole", text, lo, hi, nullable=bool(nullable), want=want, absent=absent)


def limit(field: str, why: str = "", lo: int | None = None, **kw: Any) -> Key:
    """A count in ModelConfig's own range for ``field`` (`LIMITS`)."""
    low, high = LIMITS[field]
    return whole(low if lo is None else lo, high, why, **kw)


def number(lo: float, hi: float, *, lo_open: bool = False, hi_open: bool = False, why: str = "", nullable: str = "",
           want: tuple = (), rule: str = "", absent: Any = None) -> Key:
    interval = f"{'(' if lo_open else '['}{lo:g}, {hi:g}{')' if hi_open else ']'}"
    text = rule or f"a number in {interval}{why}" + (f" or null ({nullable})" if nullable else "")
    return Key("number", text, lo, hi, lo_open, hi_open, nullable=bool(nullable), want=want, absent=absent)


def flag(want: bool | None = None, why: str = "") -> Key:
    """true or false (``want``: only that value is modelled; a file leaving the key out means it)."""
    if want is None:
        return Key("flag", "true or false")
    return Key("flag", f"{str(want).lower()} ({why})", want=(want,), absent=want)


def choice(*choices: str, why: str = "", nullable: str = "", absent: Any = None) -> Key:
    text = "one of " + ", ".join(repr(c) for c in choices) if len(choices) > 1 else repr(choices[0])
    text += why + (f" or null ({nullable})" if nullable else "")
    return Key("choice", text, choices=choices, nullable=bool(nullable), absent=absent)


# ----------------------------------------------------------------------------- the keys, by family
_ACT = choice(*ENCODER_ACTIVATIONS, why=" (the activations modelled)")
_EPS = number(0, 1, lo_open=True, hi_open=True)
_ROPE_RULE = ("null or an object with rope_type 'default' and rope_theta a number in (0, 1e12] (no rotary scaling "
              "is modelled)")
_COMMON = {
    "vocab_size": limit("vocab_size"),
    "hidden_size": limit("hidden_size"),
    "num_hidden_layers": limit("num_layers"),
    "num_attention_heads": limit("num_heads"),
    "intermediate_size": limit("intermediate_size"),
    "max_position_embeddings": limit("max_position_embeddings"),
    "tie_word_embeddings": flag(),
    "architectures": Key("names", f"null or a list of at most {MAX_NAMES} class names of at most {MAX_NAME_CHARS} "
                         "characters", nullable=True, max_items=MAX_NAMES),
}
_BERT_LIKE = _COMMON | {
    "type_vocab_size": limit("type_vocab_size"),
    "hidden_act": _ACT,
    "layer_norm_eps": _EPS,
    "position_embedding_type": choice("absolute", why=" (the only position scheme modelled for this family: "
                                      "'relative_key' adds a distance table)", nullable="absolute"),
}
_ENCODER_ONLY = {  # BERT's lineage can be built as a decoder; these change its layers
    "is_decoder": flag(False, "an encoder: a decoder attends causally, which is not modelled"),
    "add_cross_attention": flag(False, "a decoder's cross-attention layers are not modelled"),
}
_ROTARY = {
    "rope_parameters": Key("rope", _ROPE_RULE, nullable=True),
    "rope_scaling": Key("rope", "null (transformers 4's spelling; no rotary scaling is modelled) or an object with "
                        "rope_type 'default'", nullable=True),
    "rope_theta": number(0, MAX_THETA, lo_open=True, nullable="the family's default"),
    "partial_rotary_factor": number(0, 1, lo_open=True, nullable="the whole head", want=(None, 1.0),
                                    rule="null or 1.0 (rotary over the whole head: partial rotary is not modelled)"),
}
# NomicBERT as nomic's own config class (a GPT2Config) writes it: the GPT-2 spelling of the sizes, and the switches of
# nomic's code, each refused unless it is the layout transformers' NomicBert builds. A file holding any of them is
# read as that class reads it (`NOMIC_CODE_DEFAULTS` for what it leaves out).
NOMIC_CODE_KEYS: Mapping[str, Key] = MappingProxyType({
    "n_embd": limit("hidden_size"),
    "n_layer": limit("num_layers"),
    "n_head": limit("num_heads"),
    "n_inner": limit("intermediate_size", nullable="8/3 of n_embd rounded up to 256 by nomic's code"),
    "n_positions": limit("max_position_embeddings"),
    "layer_norm_epsilon": _EPS,
    "rotary_emb_base": number(0, MAX_THETA, lo_open=True),
    "activation_function": choice("swiglu", "geglu", why=" (a gated FFN, as transformers' NomicBert; 'glu' and the "
                                  "dense FFNs of nomic's code are not modelled)"),
    "rotary_emb_fraction": number(0, 1, want=(1.0,), rule="1.0 (rotary over the whole head, as transformers' "
                                  "NomicBert: 0 is a learned position table, a fraction a partial rotary; not "
                                  "modelled)"),
    "qkv_proj_bias": flag(False, "transformers' NomicBert has no attention biases"),
    "mlp_fc1_bias": flag(False, "transformers' NomicBert has no feed-forward biases"),
    "mlp_fc2_bias": flag(False, "transformers' NomicBert has no feed-forward biases"),
    "prenorm": flag(False, "NomicBERT's post-norm blocks are modelled, not pre-norm"),
    "use_rms_norm": flag(False, "NomicBERT's LayerNorm is modelled, not RMSNorm"),
    "parallel_block": flag(False, "attention then FFN is modelled, not both in parallel"),
    "causal": flag(False, "an encoder: causal attention is not modelled"),
    "rotary_emb_interleaved": flag(False, "rotation of the two halves of each head, as transformers'"),
    "rotary_emb_scale_base": number(0, MAX_THETA, nullable="none", want=(None,),
                                    rule="null (no rotary scaling is modelled)"),
    "rotary_scaling_factor": number(0, MAX_THETA, nullable="none", want=(None,),
                                    rule="null (no rotary scaling is modelled)"),
    "pad_vocab_size_multiple": whole(1, 1_000_000),
})
# nomic's own class's defaults (nomic-ai configuration_hf_nomic_bert.NomicBertConfig over transformers' GPT2Config):
# what a GPT-2-style file means by a key it leaves out
NOMIC_CODE_DEFAULTS: Mapping[str, Any] = MappingProxyType({
    "vocab_size": 50257, "n_embd": 768, "n_layer": 12, "n_head": 12, "n_inner": None, "n_positions": 1024,
    "layer_norm_epsilon": 1e-5, "activation_function": "gelu_new", "rotary_emb_base": 10_000,
    "rotary_emb_fraction": 0.0, "qkv_proj_bias": True, "mlp_fc1_bias": True, "mlp_fc2_bias": True, "prenorm": False,
    "use_rms_norm": False, "parallel_block": False, "causal": False, "rotary_emb_interleaved": False,
    "rotary_emb_scale_base": None, "rotary_scaling_factor": None, "pad_vocab_size_multiple": 1,
    "type_vocab_size": 2, "tie_word_embeddings": True,
})

FAMILY_KEYS: Mapping[str, Mapping[str, Key]] = MappingProxyType({
    "albert": _BERT_LIKE | {
        "embedding_size": limit("embedding_size"),
        "num_hidden_groups": limit("num_hidden_groups"),
        "inner_group_num": limit("inner_group_num"),
    },
    "bert": _BERT_LIKE | _ENCODER_ONLY,
    "electra": _BERT_LIKE | _ENCODER_ONLY | {"embedding_size": limit("embedding_size")},
    **dict.fromkeys(("roberta", "xlm-roberta"), _BERT_LIKE | _ENCODER_ONLY | {
        "type_vocab_size": limit("type_vocab_size", lo=0),
        "pad_token_id": whole(0, LIMITS["position_offset"][1] - 1, " (RoBERTa's positions start after it)"),
    }),
    "deberta-v2": _COMMON | {
        "type_vocab_size": limit("type_vocab_size", lo=0),
        "hidden_act": _ACT,
        "layer_norm_eps": _EPS,
        "embedding_size": limit("embedding_size", nullable="hidden_size"),
        "relative_attention": flag(True, "DeBERTa-v3's disentangled attention: the layout modelled"),
        "position_biased_input": flag(False, "no absolute position table, as DeBERTa-v3: the layout modelled"),
        "share_att_key": flag(True, "positions projected by each layer's own query and key, as DeBERTa-v3: the layout "
                              "modelled"),
        "norm_rel_ebd": choice("layer_norm", why=" (the relative table normed once, as DeBERTa-v3: the layout "
                               "modelled)"),
        "conv_kernel_size": whole(0, 1024, nullable="no convolution", want=(0, None),
                                  rule="0 or null (no convolution layer, as DeBERTa-v3: the layout modelled)"),
        "pos_att_type": Key("att_types", "'p2c|c2p' or ['p2c', 'c2p'] (both of DeBERTa-v3's position terms: the "
                            "layout modelled)", nullable=True, max_items=8),
        "position_buckets": whole(2, LIMITS["position_buckets"][1], rule=(
            f"a whole number between 2 and {LIMITS['position_buckets'][1]:,} (DeBERTa-v3's log buckets, 256 in its "
            "published files): without it (transformers' -1, or below 1) DeBERTa scores raw relative positions "
            "clipped at max_relative_positions, which the live model does not build")),
        "max_relative_positions": whole(-1_000_000, LIMITS["max_position_embeddings"][1], rule=(
            "-1 (or any whole number below 1: the whole max_position_embeddings, DeBERTa-v3's) or "
            "max_position_embeddings")),
        "legacy": flag(),
        "attention_head_size": whole(1, LIMITS["hidden_size"][1], nullable="hidden_size / num_attention_heads"),
    },
    "modernbert": _COMMON | {
        "hidden_activation": _ACT,
        "classifier_activation": _ACT,
        "norm_eps": _EPS,
        "norm_bias": flag(), "attention_bias": flag(), "mlp_bias": flag(), "classifier_bias": flag(),
        "decoder_bias": flag(),
        "local_attention": whole(2, LIMITS["local_window"][1], " (the whole window: an even number of tokens)"),
        "sliding_window": whole(1, LIMITS["local_window"][1] // 2, nullable="local_attention / 2"),
        "global_attn_every_n_layers": limit("global_every", nullable="from layer_types"),
        "layer_types": Key("layer_types", f"null or a list of at most {LIMITS['num_layers'][1]} of "
                           "'full_attention' and 'sliding_attention'", nullable=True,
                           max_items=LIMITS["num_layers"][1]),
        "rope_parameters": Key("rope_by_layer", "null or an object with full_attention and/or sliding_attention, each "
                               "with rope_type 'default' and rope_theta a number in (0, 1e12] (no rotary scaling is "
                               "modelled)", nullable=True),
        "global_rope_theta": number(0, MAX_THETA, lo_open=True),
        "local_rope_theta": number(0, MAX_THETA, lo_open=True),
        "rope_scaling": _ROTARY["rope_scaling"],
    },
    "eurobert": _COMMON | _ROTARY | {
        "hidden_act": _ACT,
        "rms_norm_eps": _EPS,
        "num_key_value_heads": limit("num_kv_heads", lo=1, nullable="num_attention_heads"),
        "head_dim": whole(1, LIMITS["hidden_size"][1], nullable="hidden_size / num_attention_heads"),
        "attention_bias": flag(), "mlp_bias": flag(),
    },
    "nomic_bert": _COMMON | _ROTARY | {
        "type_vocab_size": limit("type_vocab_size", lo=0),
        "hidden_act": _ACT,
        "layer_norm_eps": _EPS,
        "head_dim": whole(1, LIMITS["hidden_size"][1], nullable="hidden_size / num_attention_heads"),
    },
})
_LEAF_RULES = {  # the parts of a rotary object, named in a message by their path
    "rope_type": "'default' (no rotary scaling is modelled)",
    "type": "'default' (no rotary scaling is modelled)",
    "rope_theta": "a number in (0, 1e12]",
    "partial_rotary_factor": "null or 1.0 (rotary over the whole head: partial rotary is not modelled)",
}


# ----------------------------------------------------------------------------- messages
class _Excerpt(reprlib.Repr):
    """reprlib with every part cut short, and an integer too long to print described by its length (repr of an int
    over 4,300 digits raises)."""

    def __init__(self) -> None:
        super().__init__()
        self.maxstring = self.maxother = 40
        self.maxlist = self.maxtuple = self.maxdict = self.maxset = 4
        self.maxlevel = 2

    def repr_int(self, x: int, level: int) -> str:
        bits = x.bit_length()
        if bits <= 128:
            return repr(x)
        if bits <= 13_000:  # str() is exact below Python's 4,300-digit limit
            return f"a number of {len(str(abs(x))):,} digits"
        return f"a number of about {int(bits * math.log10(2)) + 1:,} digits"


_EXCERPT = _Excerpt()


def excerpt(value: Any) -> str:
    """A short, inert rendering of a value from a file for a message (at most about 100 characters)."""
    try:
        text = _EXCERPT.repr(value)
    except Exception:  # noqa: BLE001 (a value from a caller's object whose repr fails: name its type only)
        text = f"a {type(value).__name__}"
    return text if len(text) <= 120 else text[:117] + "..."


def problem(key: str, rule: str, value: Any = _ABSENT, default: Any = _ABSENT) -> str:
    """The one message: ``<key> must be <rule>, got <excerpt>`` (an absent key: what its absence means)."""
    if value is _ABSENT:
        got = "nothing: the key is absent" + ("" if default is _ABSENT else f" (which means {excerpt(default)})")
    else:
        got = excerpt(value)
    return f"{key} must be {rule}, got {got}"


# ----------------------------------------------------------------------------- the check
def family_keys(family: str, nomic_code: bool = False) -> Mapping[str, Key]:
    """The keys ``family``'s reader uses (``nomic_code``: with those of nomic's own class, `NOMIC_CODE_KEYS`)."""
    return {**FAMILY_KEYS[family], **NOMIC_CODE_KEYS} if nomic_code else FAMILY_KEYS[family]


def check_keys(family: str, data: Mapping[str, Any], defaults: Mapping[str, Any],
               nomic_code: bool = False) -> dict[str, Any]:
    """Every key ``family``'s reader uses: the file's value, else ``defaults``' (transformers' for the family, or
    nomic's class's), else the key's own; its type and range checked (pydantic, strict), then the modelled layout's
    values (`Key.want`). ValueError naming the first key that fails, its rule and an excerpt of the value."""
    from pydantic import ValidationError

    keys = family_keys(family, nomic_code)
    values = {k: data[k] if k in data else defaults.get(k, key.absent) for k, key in keys.items()}
    try:
        _model(family, nomic_code).model_validate(values)
    except ValidationError as exc:
        raise ValueError(_first_problem(exc, keys, data, defaults)) from None
    for k, key in keys.items():
        if key.want and values[k] not in key.want:
            raise ValueError(problem(k, key.rule, *((data[k],) if k in data else (_ABSENT, values[k]))))
    return values


def _first_problem(exc: Any, keys: Mapping[str, Key], data: Mapping[str, Any], defaults: Mapping[str, Any]) -> str:
    err = exc.errors(include_url=False)[0]
    loc = err["loc"]
    key = str(loc[0])
    rule = keys[key].rule
    path = key
    inner = loc[1:-2] if loc[-1] == "[key]" else loc[1:]  # a key of a map: named by the map
    for part in inner:
        if isinstance(part, int):
            path += f"[{part}]"
        else:
            path += f".{part}"
            rule = _LEAF_RULES.get(str(part), rule)
    if loc[-1] == "[key]":
        path += " (its keys)"
    if len(loc) == 1 and key not in data:
        return problem(path, rule, _ABSENT, defaults.get(key, keys[key].absent))
    return problem(path, rule, err.get("input"))


@cache
def _model(family: str, nomic_code: bool) -> Any:
    """The pydantic model of ``family``'s keys (built on first use; strict: no coercion between types)."""
    from pydantic import ConfigDict, create_model

    fields = {k: (_annotation(key), ...) for k, key in family_keys(family, nomic_code).items()}
    config = ConfigDict(strict=True, extra="ignore", protected_namespaces=(), allow_inf_nan=False)
    return create_model(f"{family.replace('-', '_')}_config_json", __config__=config, **fields)


@cache
def _rope_model() -> Any:
    from pydantic import ConfigDict, create_model

    config = ConfigDict(strict=True, extra="ignore", allow_inf_nan=False)
    theta = _annotation(number(0, MAX_THETA, lo_open=True, nullable="the family's default"))
    fraction = _annotation(number(0, 1, lo_open=True, nullable="whole head"))
    return create_model("rope_parameters", __config__=config, rope_type=(_literal(("default",)) | None, None),
                        type=(_literal(("default",)) | None, None), rope_theta=(theta, None),
                        partial_rotary_factor=(fraction, None))


def _literal(choices: tuple[str, ...]) -> Any:
    from typing import Literal

    return Literal[choices]  # type: ignore[valid-type]


def _annotation(key: Key) -> Any:
    from typing import Annotated

    from pydantic import Field

    if key.kind == "whole":
        kind: Any = Annotated[int, Field(ge=key.lo, le=key.hi)]
    elif key.kind == "number":
        bounds = {"gt" if key.lo_open else "ge": key.lo, "lt" if key.hi_open else "le": key.hi}
        kind = Annotated[float, Field(allow_inf_nan=False, **bounds)]
    elif key.kind == "flag":
        kind = bool
    elif key.kind == "choice":
        kind = _literal(key.choices) if key.choices else Any
    elif key.kind == "names":
        kind = Annotated[list[Annotated[str, Field(max_length=MAX_NAME_CHARS)]], Field(max_length=key.max_items)]
    elif key.kind == "layer_types":
        kind = Annotated[list[_literal(("full_attention", "sliding_attention"))], Field(max_length=key.max_items)]
    elif key.kind == "att_types":
        kind = Annotated[list[_literal(("p2c", "c2p"))], Field(max_length=key.max_items)]
    elif key.kind == "rope":
        kind = _rope_model()
    elif key.kind == "rope_by_layer":
        kind = dict[_literal(("full_attention", "sliding_attention")), _rope_model() | None]
    else:
        raise AssertionError(key.kind)
    return kind | None if key.nullable else kind
