"""The published configurations (ALBERT paper, Table 1; BERT base and large)."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from albert_core.checks import short_repr
from albert_core.configuration.config import ModelConfig

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


def matching_preset(cfg: ModelConfig) -> str | None:
    """The name of the preset equal to ``cfg``, or None."""
    return next((name for name, p in PRESETS.items() if p == cfg), None)


# The fields `ModelConfig.label` leaves out, in the order a name lists them (URL keys as names).
_UNLABELLED = (
    ("vocab_size", "V"), ("num_heads", "heads"), ("intermediate_size", "I"), ("max_position_embeddings", "P"),
    ("type_vocab_size", "T"), ("hidden_act", "act"), ("num_hidden_groups", "G"), ("inner_group_num", "K"),
    ("embedding_size", "E"), ("sharing", "sharing"), ("head", "head"), ("tie_word_embeddings", "tied"),
    ("layer_norm_eps", "eps"),
)


def preset(name: str) -> ModelConfig:
    """The preset called ``name``; ValueError naming the choices for any other name."""
    try:
        return PRESETS[name]
    except (KeyError, TypeError):
        raise ValueError(f"preset must be one of {', '.join(PRESETS)}; got {short_repr(name)}") from None


def reference_config(cfg: ModelConfig) -> ModelConfig:
    """The config ``cfg``'s label describes: its family's base preset (BERT-base, ALBERT-base) with the
    label's fields applied by the coerce rule (heads and I follow H). A function of the label alone."""
    from albert_core.configuration.coerce import coerce

    base = PRESETS["bert-base" if cfg.family == "bert" else "albert-base"]
    labelled = {"family": cfg.family, "hidden_size": cfg.hidden_size, "num_layers": cfg.num_layers}
    if cfg.family != "bert":  # what `ModelConfig.label` shows of an ALBERT
        labelled |= {"embedding_size": cfg.embedding_size, "sharing": cfg.sharing}
        if cfg.sharing != "none" and cfg.num_hidden_groups > 1:
            labelled["num_hidden_groups"] = cfg.num_hidden_groups
        if cfg.inner_group_num > 1:
            labelled["inner_group_num"] = cfg.inner_group_num
    try:
        return coerce(labelled, base, strict=False).config
    except ValueError:  # the label's fields alone cannot form a model with the base's other fields
        return cfg


def config_name(cfg: ModelConfig) -> str:
    """A unique, readable name: the preset's name, or the label plus every field that differs from the
    config the label describes (`reference_config`), e.g. 'ALBERT H=768 L=12 E=128 all-shared V=50000
    heads=16'. Two configs have the same name only if they are equal."""
    preset = matching_preset(cfg)
    if preset:
        return preset
    ref = reference_config(cfg)
    parts = [cfg.label]
    for name, key in _UNLABELLED:
        value = getattr(cfg, name)
        if value == getattr(ref, name):
            continue
        if name == "tie_word_embeddings":
            parts.append("tied" if value else "untied")
        elif name == "head":
            parts.append(f"head={value}")
        else:
            parts.append(f"{key}={value}")
    return " ".join(parts)
