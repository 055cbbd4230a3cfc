"""The schema of a transformers ``config.json`` as the strict reader (`albert_core.configuration.hf_config`) reads it:
every key a family's reader uses, its type and range (checked with pydantic in strict mode, before any value is
used), the rule in words, and the values of the layout that is modelled.

A key's rule is written once and used for both the check and the message: ``<key> must be <rule>, got <excerpt>``.
The message quotes at most a short excerpt of the value (`excerpt`), never the value itself. Types are strict: a
count is a JSON integer (not 12.0, not "12", not true), a flag is true or false, a number is finite.

Besides the keys the counts read, each family lists the keys of its config class (or of the file's own class, for
NomicBERT's GPT-2-style files) that would change a size or the live model's outputs but are not modelled; a file
setting one of them to anything but the modelled value is refused with the key and the reason (each family's
`Schema` is in its record, `albert_core.configuration.families`; docs/architecture.md "The config.json reader").
Here: the kinds of key, the groups of keys several families share, the messages and the check.

No pydantic import until a file is read (counting starts fast).
"""

from __future__ import annotations

import math
import reprlib
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
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


@dataclass(frozen=True, eq=False)
class Schema:
    """The keys one reader uses (``name`` names its pydantic model): compared and hashed by identity, so the
    model built for it is built once."""

    name: str
    keys: Mapping[str, Key]


# ----------------------------------------------------------------------------- keys several families read
ACT = choice(*ENCODER_ACTIVATIONS, why=" (the activations modelled)")
EPS = number(0, 1, lo_open=True, hi_open=True)
_ROPE_RULE = ("null or an object with rope_type 'default' and rope_theta a number in (0, 1e12] (no rotary scaling "
              "is modelled)")
COMMON = {
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
BERT_LIKE = COMMON | {
    "type_vocab_size": limit("type_vocab_size"),
    "hidden_act": ACT,
    "layer_norm_eps": EPS,
    "position_embedding_type": choice("absolute", why=" (the only position scheme modelled for this family: "
                                      "'relative_key' adds a distance table)", nullable="absolute"),
}
ENCODER_ONLY = {  # BERT's lineage can be built as a decoder; these change its layers
    "is_decoder": flag(False, "an encoder: a decoder attends causally, which is not modelled"),
    "add_cross_attention": flag(False, "a decoder's cross-attention layers are not modelled"),
}
ROTARY = {
    "rope_parameters": Key("rope", _ROPE_RULE, nullable=True),
    "rope_scaling": Key("rope", "null (transformers 4's spelling; no rotary scaling is modelled) or an object with "
                        "rope_type 'default'", nullable=True),
    "rope_theta": number(0, MAX_THETA, lo_open=True, nullable="the family's default"),
    "partial_rotary_factor": number(0, 1, lo_open=True, nullable="the whole head", want=(None, 1.0),
                                    rule="null or 1.0 (rotary over the whole head: partial rotary is not modelled)"),
}
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
def check_keys(schema: Schema, data: Mapping[str, Any], defaults: Mapping[str, Any]) -> dict[str, Any]:
    """Every key of ``schema``: the file's value, else ``defaults``' (transformers' for the family, or nomic's
    class's), else the key's own; its type and range checked (pydantic, strict), then the modelled layout's values
    (`Key.want`). ValueError naming the first key that fails, its rule and an excerpt of the value."""
    from pydantic import ValidationError

    keys = schema.keys
    values = {k: data[k] if k in data else defaults.get(k, key.absent) for k, key in keys.items()}
    try:
        _model(schema).model_validate(values)
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
def _model(schema: Schema) -> Any:
    """The pydantic model of ``schema``'s keys (built on first use; strict: no coercion between types)."""
    from pydantic import ConfigDict, create_model

    fields = {k: (_annotation(key), ...) for k, key in schema.keys.items()}
    config = ConfigDict(strict=True, extra="ignore", protected_namespaces=(), allow_inf_nan=False)
    return create_model(f"{schema.name.replace('-', '_')}_config_json", __config__=config, **fields)


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
