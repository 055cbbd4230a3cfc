"""The one rule that turns partial or changed values into a `ModelConfig`.

Every entry point that edits a config calls `coerce`: the sidebar (each interaction), the URL decoder,
the CLI overrides, Compare's pins, the BERT twin and the sweeps (through `bert_fields`). The rule:

* **Family.** A BERT has E = H, no sharing, G = K = 1 (`bert_fields`). Switching ALBERT -> BERT sets
  them. Switching BERT -> ALBERT gives the fields ALBERT-only values that were not given explicitly:
  E = min(128, H), all layers shared, G = K = 1 (an ALBERT as the paper builds it; the sidebar gives
  back what it held before the switch by passing those values explicitly).
* **Families after BERT.** Switching to one (RoBERTa, ModernBERT, EuroBERT, ...) gives every field not given
  explicitly that family's layout (its record's, `albert_core.configuration.families`): its axes, token types,
  activation and norm epsilon, E = H and no sharing (ALBERTizing is a separate edit, `albertize`); the size (V,
  H, L, heads, I, P) stays. Switching from one back to BERT or ALBERT restores the paper's layout on the axes the
  same way. A pretraining head (MLM + SOP/NSP) becomes masked-lm outside BERT and ALBERT. Outside ALBERT an
  unfactorized embedding (E = H) follows H.
* **Derived fields.** When H changes and the heads were not given, the heads become the divisor of H
  whose head size is nearest 64 (`fit_heads`; kept if they still divide H). When H changes and I was
  not given, I stays 4H if it was 4H (``keep_4h=None``), or always (``True``), or never (``False``).
* **Sharing schemes** (block order, unique ends, repeat, LoRA: `SHARING_SCHEME`). A BERT and a family switched to
  (unless given) take ALBERT's own scheme: contiguous groups, no unique ends, no repeat, no LoRA. When sharing
  becomes 'none' the block order and unique ends that order shared blocks return to ALBERT's (unless given), and a
  LoRA keeps only the matrices whose block some positions still share (no LoRA when none is left), unless the
  LoRA fields were given. A rank given without its matrices (the sidebar's rank box) takes the matrices of the
  blocks some positions share, from those the config holds (all six when it had no LoRA).
* **Explicit values win or fail.** A value that was given explicitly and that the rule would change
  (``family=bert`` with ``sharing=all``, ``keep_4h=True`` with another I) is a conflict. ``strict=True``
  (CLI, pins) raises ValueError naming the field and the rule; ``strict=False`` (URL) applies the rule
  anyway and reports the field it reset. Values that are each valid but cannot form a model (G > L,
  heads that do not divide H) raise ModelConfig's own ValueError in both modes.

This module imports neither torch nor numpy (`bert_fields` also works on numpy columns).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from albert_core.checks import is_whole_number
from albert_core.configuration.config import (
    ACTIVATIONS,
    ATTENTION_MATRICES,
    AXIS_FIELDS,
    FAMILIES,
    HEADS,
    LIMITS,
    SHARING_SCHEME,
    ModelConfig,
    family_of,
)
from albert_core.configuration.family import LAYOUT_EXTRA

ALBERT_EMBEDDING = 128  # the paper's E for every ALBERT size


def divisors(n: int, limit: int = LIMITS["num_heads"][1]) -> list[int]:
    """Every head count that divides a hidden size ``n`` (up to the heads limit)."""
    return [d for d in range(1, min(n, limit) + 1) if n % d == 0]


def fit_heads(hidden: int, heads: int) -> int:
    """``heads`` if it divides ``hidden``, else the divisor giving the head size nearest 64."""
    options = divisors(hidden)
    return heads if heads in options else min(options, key=lambda n: (abs(hidden // n - 64), n))


def bert_fields(hidden_size: Any) -> dict[str, Any]:
    """What the BERT family fixes, given its hidden size (a number or a numpy column)."""
    return {"embedding_size": hidden_size, "sharing": "none", "num_hidden_groups": 1, "inner_group_num": 1,
            **SHARING_SCHEME}


# The BERT an ALBERT is compared with is the paper's BERT: GELU (not ALBERT's tanh approximation
# gelu_new) and BERT's dropout 0.1 (the memory estimate's family default, `albert_core.counting.memory`).
BERT_TWIN_ACT = "gelu"
# An ALBERT's own activation: transformers' AlbertConfig default (gelu_new), every ALBERT preset's.
ALBERT_ACT = ModelConfig().hidden_act


def twin_fields(hidden_size: Any) -> dict[str, Any]:
    """What the BERT twin of an ALBERT of this hidden size changes (a number or a numpy column)."""
    return {"family": "bert", **bert_fields(hidden_size), "hidden_act": BERT_TWIN_ACT}


def bert_twin(cfg: ModelConfig) -> ModelConfig:
    """The paper's BERT of ``cfg``'s size: same V, H, L, heads, I, P, T, head and tying, no factorization,
    no sharing, GELU. A BERT is its own twin."""
    if not family_of(cfg.family).albert_ideas:
        return cfg
    return coerce({"family": "bert", "hidden_act": BERT_TWIN_ACT}, cfg).config


def albert_defaults(hidden_size: int) -> dict[str, Any]:
    """The ALBERT-only fields a BERT gets when it becomes an ALBERT (unless given)."""
    return {"embedding_size": min(ALBERT_EMBEDDING, hidden_size), "sharing": "all", "num_hidden_groups": 1,
            "inner_group_num": 1}


def family_layout(family: str, base: ModelConfig) -> dict[str, Any]:
    """The fields a config switching from ``base``'s family to ``family`` takes unless given (see the rule)."""
    record, was = family_of(family), family_of(base.family)
    if record.paper:
        if was.paper:
            return {}  # BERT <-> ALBERT: the paper's own rule (bert_fields, albert_defaults)
        out: dict[str, Any] = {name: record.layout[name] for name in AXIS_FIELDS}
        out["type_vocab_size"] = base.type_vocab_size or record.layout["type_vocab_size"]
        out["layer_norm_eps"] = record.layout["layer_norm_eps"]
        if base.hidden_act not in ACTIVATIONS:
            out["hidden_act"] = record.layout["hidden_act"]
        if base.head not in HEADS:
            out["head"] = "model"
        if "sharing" in record.class_axes:  # ALBERT: a factorized embedding and all layers shared, as the paper
            out |= albert_defaults(base.hidden_size)
        return out
    out = {name: record.layout[name] for name in (*AXIS_FIELDS, *LAYOUT_EXTRA)}
    out |= {"embedding_size": base.hidden_size, "sharing": "none", "num_hidden_groups": 1, "inner_group_num": 1,
            **SHARING_SCHEME}
    if base.head == "pretraining":
        out["head"] = "masked-lm"
    return out


@dataclass(frozen=True)
class Coerced:
    """The config, and the explicitly given fields the rule reset (field -> (given, used, reason))."""

    config: ModelConfig
    reset: Mapping[str, tuple[Any, Any, str]] = field(default_factory=dict)

    def notes(self, names: Mapping[str, str] | None = None) -> list[str]:
        """One plain sentence per reset field; ``names`` maps field names to the caller's (URL keys)."""
        names = names or {}
        return [f"{names.get(f, f)}={given} reset to {used}: {why}" for f, (given, used, why) in self.reset.items()]


_FIELDS = frozenset(f.name for f in dataclasses.fields(ModelConfig))


def coerce(
    values: Mapping[str, Any],
    base: ModelConfig | None = None,
    *,
    keep_4h: bool | None = None,
    strict: bool = True,
) -> Coerced:
    """``base`` (default ALBERT-base) with the explicit ``values`` (ModelConfig field names) applied
    under the family and derived-field rule of this module's docstring."""
    base = base or ModelConfig()
    unknown = sorted(set(values) - _FIELDS)
    if unknown:
        raise ValueError(f"unknown field(s): {', '.join(map(str, unknown))}")
    given = dict(values)
    out = {**base.to_dict(), **given}
    reset: dict[str, tuple[Any, Any, str]] = {}

    def force(name: str, value: Any, why: str) -> None:
        if name in given and given[name] != value:
            if strict:
                raise ValueError(f"{name} must be {value!r} {why}, got {given[name]!r}")
            reset[name] = (given[name], value, why)
        out[name] = value

    hidden = out["hidden_size"]
    lo, hi = LIMITS["hidden_size"]
    if not is_whole_number(hidden) or not lo <= hidden <= hi:
        return Coerced(ModelConfig(**out))  # ModelConfig names the bad value
    target = family_of(out["family"]) if out["family"] in FAMILIES else None
    if target is not None and not target.albert_ideas:
        for name, value in bert_fields(hidden).items():
            if name != "embedding_size":  # E follows H silently: it is not a choice for a BERT
                force(name, value, f"for family {target.name!r} ({target.label} has no cross-layer sharing or "
                                   "inner groups)")
        out["embedding_size"] = hidden
    elif not family_of(base.family).albert_ideas:
        out.update({name: value for name, value in albert_defaults(hidden).items() if name not in given})
    if target is not None and out["family"] != base.family:
        layout = family_layout(out["family"], base)
        if "embedding_size" in layout and "hidden_size" in given:
            layout["embedding_size"] = hidden  # E = H at the new size
        out.update({name: value for name, value in layout.items() if name not in given})

    if (target is not None and not target.paper and base.embedding_size == base.hidden_size
            and "embedding_size" not in given):
        out["embedding_size"] = hidden  # an unfactorized embedding (E = H) follows H outside ALBERT

    if out["sharing"] == "none":
        _unshared_scheme(out, given)
    elif out["sharing"] in ("attention", "ffn"):
        _partly_shared_lora(out, given)

    heads = out["num_heads"]
    if hidden != base.hidden_size and "num_heads" not in given and isinstance(heads, int) and heads > 0:
        out["num_heads"] = fit_heads(hidden, heads)
    if keep_4h:  # kept explicitly (the sidebar's toggle): I = 4H whatever else changed
        force("intermediate_size", 4 * hidden, "while I = 4H is kept")
    elif (keep_4h is None and base.intermediate_size == 4 * base.hidden_size and hidden != base.hidden_size
          and "intermediate_size" not in given):
        out["intermediate_size"] = 4 * hidden
    return Coerced(ModelConfig(**out), reset)


def _unshared_scheme(out: dict[str, Any], given: Mapping[str, Any]) -> None:
    """The scheme fields of a config with no shared block (the rule in the module docstring), in place."""
    for name in ("block_order", "unique_ends"):
        if name not in given:
            out[name] = SHARING_SCHEME[name]
    if "lora_rank" in given or "lora_targets" in given or out["lora_rank"] == 0:
        return
    repeated = isinstance(out["repeat"], int) and out["repeat"] > 1
    if repeated or not isinstance(out["lora_targets"], str):
        return
    # no block shared and no repeat: no position shares a matrix, so no LoRA is left
    out["lora_rank"] = 0
    out["lora_targets"] = SHARING_SCHEME["lora_targets"]


def _partly_shared_lora(out: dict[str, Any], given: Mapping[str, Any]) -> None:
    """A LoRA on a config that shares one kind of block: only that kind's matrices keep it, unless the matrices were
    given (a rank given alone is trimmed the same way; with none left ModelConfig refuses it, naming the rule)."""
    if "lora_targets" in given or not out["lora_rank"]:
        return
    if not isinstance(out["lora_targets"], str) or (isinstance(out["repeat"], int) and out["repeat"] > 1):
        return
    kind = ATTENTION_MATRICES if out["sharing"] == "attention" else None if out["sharing"] == "all" else ("in", "out")
    if kind is None:
        return
    kept = [m for m in out["lora_targets"].split("-") if m in kind]
    if kept:
        out["lora_targets"] = "-".join(kept)
    elif "lora_rank" not in given:
        out["lora_rank"], out["lora_targets"] = 0, SHARING_SCHEME["lora_targets"]


def albertize(
    cfg: ModelConfig,
    embedding_size: int | None = ALBERT_EMBEDDING,
    sharing: str | None = "all",
    num_hidden_groups: int | None = None,
    inner_group_num: int | None = None,
) -> ModelConfig:
    """``cfg`` with ALBERT's two ideas, by the coerce rule: a factorized embedding of size ``embedding_size``
    and/or cross-layer ``sharing`` (G groups, K inner blocks); None leaves a field as it is. Any family takes
    them (the result of a family other than ALBERT has no transformers class: `hf_class_mismatch`); a BERT
    becomes an ALBERT of its size, as the paper builds it."""
    changes: dict[str, Any] = {
        name: value for name, value in (("embedding_size", embedding_size), ("sharing", sharing),
                                        ("num_hidden_groups", num_hidden_groups),
                                        ("inner_group_num", inner_group_num)) if value is not None
    }
    if not family_of(cfg.family).albert_ideas:
        changes["family"] = "albert"
    if changes.get("sharing") == "none" and "num_hidden_groups" not in changes:
        changes["num_hidden_groups"] = 1
    return coerce(changes, cfg).config


def is_albertized(cfg: ModelConfig) -> bool:
    """A family after BERT with ALBERT's ideas applied: any sharing or inner repeats, or a factorized E where the
    family's own class has none (`Family.class_axes`)."""
    record = family_of(cfg.family)
    if record.paper:
        return False
    factorized = cfg.embedding_size != cfg.hidden_size and "embedding_size" not in record.class_axes
    scheme = any(getattr(cfg, name) != value for name, value in SHARING_SCHEME.items())
    return cfg.sharing != "none" or cfg.inner_group_num > 1 or factorized or scheme


def original_of(cfg: ModelConfig) -> ModelConfig:
    """An ALBERTized encoder's original: no sharing, G = K = 1, and E = H where the family has no projection."""
    changes: dict[str, Any] = {"sharing": "none", "num_hidden_groups": 1, "inner_group_num": 1, **SHARING_SCHEME}
    if "embedding_size" not in family_of(cfg.family).class_axes:
        changes["embedding_size"] = cfg.hidden_size
    return coerce(changes, cfg).config


def twin_of(cfg: ModelConfig) -> tuple[ModelConfig, str]:
    """The config the explorer compares ``cfg`` with, and what it is: an ALBERT's BERT twin ("bert"; a BERT is
    its own), an encoder's ALBERTized twin ("albertized": E = 128, all layers shared) or an ALBERTized encoder's
    original ("original")."""
    if family_of(cfg.family).paper:
        return bert_twin(cfg), "bert"
    if is_albertized(cfg):
        return original_of(cfg), "original"
    return albertize(cfg, embedding_size=min(ALBERT_EMBEDDING, cfg.hidden_size)), "albertized"


def switch_family(cfg: ModelConfig, family: str) -> ModelConfig:
    """``cfg`` as the other family, by the rule (BERT twin, or a BERT's ALBERT counterpart)."""
    return coerce({"family": family}, cfg).config
