"""The published configurations: the paper's (ALBERT paper, Table 1; BERT base and large) in `PRESETS`, the
encoders designed since (RoBERTa, XLM-R, ELECTRA, DeBERTa-v3, ModernBERT, Ettin, mmBERT, EuroBERT, NomicBERT) in
`ENCODER_PRESETS`, each with its source and the total its authors publish (`PRESET_SOURCES`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from albert_core.checks import short_repr
from albert_core.configuration.config import FAMILIES, ModelConfig, family_of

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



def _family(family: str, vocab: int, hidden: int, layers: int, heads: int, inner: int, **changes: Any) -> ModelConfig:
    """A published model of a family after BERT: its layout (its record's) at this size, E = H unless given."""
    return ModelConfig(**{
        "family": family, "vocab_size": vocab, "embedding_size": hidden, "hidden_size": hidden,
        "num_layers": layers, "num_heads": heads, "intermediate_size": inner, "sharing": "none",
        **family_of(family).layout, **changes,
    })


def _modernbert(vocab: int, hidden: int, inner: int, layers: int, heads: int) -> ModelConfig:
    """ModernBERT's layout at 8,192 positions (Ettin and mmBERT use it too)."""
    return _family("modernbert", vocab, hidden, layers, heads, inner, max_position_embeddings=8192)


def _eurobert(hidden: int, inner: int, layers: int, heads: int, kv_heads: int) -> ModelConfig:
    """EuroBERT's layout: vocabulary 128,256, 8,192 positions, grouped-query attention, an untied decoder."""
    return _family("eurobert", 128_256, hidden, layers, heads, inner, max_position_embeddings=8192,
                   num_kv_heads=0 if kv_heads == heads else kv_heads, tie_word_embeddings=False)


def _roberta(vocab: int, hidden: int, layers: int, heads: int, family: str = "roberta") -> ModelConfig:
    """RoBERTa's layout: 514 position rows (512 tokens after the offset)."""
    return _family(family, vocab, hidden, layers, heads, 4 * hidden, max_position_embeddings=514)


def _electra(embedding: int, hidden: int, layers: int, heads: int) -> ModelConfig:
    """ELECTRA's discriminator: its own embedding size E and the replaced-token head."""
    return _family("electra", 30_522, hidden, layers, heads, 4 * hidden, embedding_size=embedding,
                   head="discriminator")


def _deberta_v3(hidden: int, layers: int, heads: int) -> ModelConfig:
    """DeBERTa-v3: a 128,100-token vocabulary."""
    return _family("deberta-v2", 128_100, hidden, layers, heads, 4 * hidden)


_NOMIC = _family("nomic_bert", 30_528, 768, 12, 12, 3072, max_position_embeddings=2048)

# The encoders designed since BERT, as their authors published them (the bare encoder: transformers' XModel,
# ELECTRA's with its discriminator head). Sources and published totals: `PRESET_SOURCES`.
ENCODER_PRESETS: Mapping[str, ModelConfig] = MappingProxyType(
    {
        "roberta-base": _roberta(50_265, 768, 12, 12),
        "roberta-large": _roberta(50_265, 1024, 24, 16),
        "xlm-roberta-base": _roberta(250_002, 768, 12, 12, "xlm-roberta"),
        "xlm-roberta-large": _roberta(250_002, 1024, 24, 16, "xlm-roberta"),
        "electra-small-discriminator": _electra(128, 256, 12, 4),
        "electra-base-discriminator": _electra(768, 768, 12, 12),
        "deberta-v3-xsmall": _deberta_v3(384, 12, 6),
        "deberta-v3-base": _deberta_v3(768, 12, 12),
        "deberta-v3-large": _deberta_v3(1024, 24, 16),
        "modernbert-base": _modernbert(50_368, 768, 1152, 22, 12),
        "modernbert-large": _modernbert(50_368, 1024, 2624, 28, 16),
        "ettin-encoder-17m": _modernbert(50_368, 256, 384, 7, 4),
        "ettin-encoder-32m": _modernbert(50_368, 384, 576, 10, 6),
        "ettin-encoder-68m": _modernbert(50_368, 512, 768, 19, 8),
        "ettin-encoder-150m": _modernbert(50_368, 768, 1152, 22, 12),
        "ettin-encoder-400m": _modernbert(50_368, 1024, 2624, 28, 16),
        "ettin-encoder-1b": _modernbert(50_368, 1792, 3840, 28, 28),
        "mmbert-small": _modernbert(256_000, 384, 1152, 22, 6),
        "mmbert-base": _modernbert(256_000, 768, 1152, 22, 12),
        "eurobert-210m": _eurobert(768, 3072, 12, 12, 12),
        "eurobert-610m": _eurobert(1152, 4096, 26, 18, 6),
        "eurobert-2.1b": _eurobert(2304, 6144, 32, 18, 6),
        "nomic-bert-2048": _NOMIC,
    }
)
ALL_PRESETS: Mapping[str, ModelConfig] = MappingProxyType({**PRESETS, **ENCODER_PRESETS})
# The preset a name without one is read against (`reference_config`), per family: its record's base preset.
FAMILY_BASE_PRESET: Mapping[str, str] = MappingProxyType({name: family_of(name).base_preset for name in FAMILIES})


@dataclass(frozen=True)
class PresetSource:
    """Where a preset's numbers come from, and the parameter total its authors publish (rounded as printed;
    some count without the MLM head, as the presets' bare encoders do)."""

    source: str
    published_params: float  # as printed, e.g. 149e6 for "149M"
    published_as: str  # the printed figure and where


_ALBERT_PAPER = "Lan et al. 2020, ALBERT, Table 1 (github.com/google-research/albert)"
PRESET_SOURCES: Mapping[str, PresetSource] = MappingProxyType({
    "bert-base": PresetSource("Devlin et al. 2019, BERT, section 3 (google-research/bert config)", 110e6,
                              "110M (BERT paper; ALBERT Table 1: 108M)"),
    "bert-large": PresetSource("Devlin et al. 2019, BERT, section 3", 340e6, "340M (BERT paper; ALBERT Table 1: 334M)"),
    "albert-base": PresetSource(_ALBERT_PAPER, 12e6, "12M (ALBERT Table 1)"),
    "albert-large": PresetSource(_ALBERT_PAPER, 18e6, "18M (ALBERT Table 1)"),
    "albert-xlarge": PresetSource(_ALBERT_PAPER, 60e6, "60M (ALBERT Table 1)"),
    "albert-xxlarge": PresetSource(_ALBERT_PAPER, 235e6, "235M (ALBERT Table 1)"),
    "roberta-base": PresetSource("Liu et al. 2019, RoBERTa; FacebookAI/roberta-base config.json", 125e6,
                                 "125M (RoBERTa model card)"),
    "roberta-large": PresetSource("Liu et al. 2019, RoBERTa; FacebookAI/roberta-large config.json", 355e6,
                                  "355M (RoBERTa model card)"),
    "xlm-roberta-base": PresetSource("Conneau et al. 2020, XLM-R; FacebookAI/xlm-roberta-base config.json", 270e6,
                                     "270M (XLM-R paper, Table 7; counted without part of the vocabulary)"),
    "xlm-roberta-large": PresetSource("Conneau et al. 2020, XLM-R; FacebookAI/xlm-roberta-large config.json", 550e6,
                                      "550M (XLM-R paper, Table 7)"),
    "electra-small-discriminator": PresetSource("Clark et al. 2020, ELECTRA, Table 6 (google/electra-small-"
                                                "discriminator config.json)", 14e6, "14M (ELECTRA Table 1)"),
    "electra-base-discriminator": PresetSource("Clark et al. 2020, ELECTRA, Table 6 (google/electra-base-"
                                               "discriminator config.json)", 110e6, "110M (ELECTRA Table 1)"),
    "deberta-v3-xsmall": PresetSource("He et al. 2021, DeBERTaV3; microsoft/deberta-v3-xsmall config.json", 70e6,
                                      "22M backbone + 48M embedding (model card)"),
    "deberta-v3-base": PresetSource("He et al. 2021, DeBERTaV3; microsoft/deberta-v3-base config.json", 184e6,
                                    "86M backbone + 98M embedding (model card)"),
    "deberta-v3-large": PresetSource("He et al. 2021, DeBERTaV3; microsoft/deberta-v3-large config.json", 435e6,
                                     "304M backbone + 131M embedding (model card)"),
    "modernbert-base": PresetSource("Warner et al. 2024, ModernBERT, Table 4; answerdotai/ModernBERT-base "
                                    "config.json", 149e6, "149M (model card)"),
    "modernbert-large": PresetSource("Warner et al. 2024, ModernBERT, Table 4; answerdotai/ModernBERT-large "
                                     "config.json", 395e6, "395M (model card)"),
    **{f"ettin-encoder-{size}": PresetSource(
        f"Weller et al. 2025, Ettin (ModernBERT's architecture); jhu-clsp/ettin-encoder-{size} config.json",
        total, f"{size.upper()} (the model's name)")
       for size, total in (("17m", 17e6), ("32m", 32e6), ("68m", 68e6), ("150m", 150e6), ("400m", 400e6),
                           ("1b", 1e9))},
    "mmbert-small": PresetSource("Marone et al. 2025, mmBERT (ModernBERT's architecture, Gemma 2's 256k "
                                 "vocabulary); jhu-clsp/mmBERT-small config.json", 140e6, "140M (model card)"),
    "mmbert-base": PresetSource("Marone et al. 2025, mmBERT; jhu-clsp/mmBERT-base config.json", 307e6,
                                "307M (model card)"),
    "eurobert-210m": PresetSource("Boizard et al. 2025, EuroBERT; the EuroBERT training library's size table "
                                  "(210m)", 210e6, "210M (the model's name; without the MLM head)"),
    "eurobert-610m": PresetSource("Boizard et al. 2025, EuroBERT; the training library's size table (610m)",
                                  610e6, "610M (the model's name; without the MLM head)"),
    "eurobert-2.1b": PresetSource("Boizard et al. 2025, EuroBERT; the training library's size table (2b)", 2.1e9,
                                  "2.1B (the model's name; without the MLM head)"),
    "nomic-bert-2048": PresetSource("Nussbaum et al. 2024, nomic-embed-text-v1 (nomic-ai/nomic-bert-2048 "
                                    "config.json)", 137e6, "137M (model card)"),
})


_NAME_OF_PRESET: dict[ModelConfig, str] = {}
for _name, _cfg in ALL_PRESETS.items():
    _NAME_OF_PRESET.setdefault(_cfg, _name)  # two names of one model (ettin-encoder-150m is modernbert-base): the first


def matching_preset(cfg: ModelConfig) -> str | None:
    """The name of the preset equal to ``cfg`` (the first listed), or None: one hash, however many presets (the
    pages ask it for every option of their preset lists on every rerun)."""
    return _NAME_OF_PRESET.get(cfg)


# The fields `ModelConfig.label` leaves out, in the order a name lists them (URL keys as names).
_UNLABELLED = (
    ("vocab_size", "V"), ("num_heads", "heads"), ("intermediate_size", "I"), ("max_position_embeddings", "P"),
    ("type_vocab_size", "T"), ("hidden_act", "act"), ("num_hidden_groups", "G"), ("inner_group_num", "K"),
    ("embedding_size", "E"), ("sharing", "sharing"), ("head", "head"), ("tie_word_embeddings", "tied"),
    ("layer_norm_eps", "eps"),
    # the architecture axes (the URL's keys), for two configs of one family that differ only there
    ("ffn_kind", "ffn"), ("position", "pos"), ("position_offset", "poff"), ("position_buckets", "pbk"),
    ("norm", "norm"), ("norm_bias", "nb"), ("norm_placement", "place"), ("embedding_norm", "en"),
    ("first_layer_norm", "fn"), ("attention_bias", "ab"), ("mlp_bias", "mb"), ("num_kv_heads", "kv"),
    ("local_window", "win"), ("global_every", "gev"), ("pooler", "pool"), ("head_transform", "ht"),
    ("head_bias", "hb"), ("decoder_bias", "db"), ("rope_theta", "rope"), ("local_rope_theta", "lrope"),
    ("projection_bias", "pb"), ("norm_after_projection", "nap"), ("separate_decoder_bias", "sdb"),
    ("head_act", "hact"), ("always_project", "proj"),
    # the sharing schemes since ALBERT
    ("block_order", "order"), ("unique_ends", "ends"), ("repeat", "rep"), ("lora_rank", "lora"),
    ("lora_targets", "lorat"),
)


def preset(name: str) -> ModelConfig:
    """The preset called ``name``; ValueError naming the choices for any other name."""
    try:
        return ALL_PRESETS[name]
    except (KeyError, TypeError):
        raise ValueError(f"preset must be one of {', '.join(ALL_PRESETS)}; got {short_repr(name)}") from None


def reference_config(cfg: ModelConfig) -> ModelConfig:
    """The config ``cfg``'s label describes: its family's base preset (BERT-base, ALBERT-base) with the
    label's fields applied by the coerce rule (heads and I follow H). A function of the label alone."""
    from albert_core.configuration.coerce import coerce

    record = family_of(cfg.family)
    base = ALL_PRESETS[record.base_preset]
    labelled = {"family": cfg.family, "hidden_size": cfg.hidden_size, "num_layers": cfg.num_layers}
    if record.albert_ideas:  # what `ModelConfig.label` shows of an ALBERT (of the others: E and sharing)
        labelled |= {"embedding_size": cfg.embedding_size, "sharing": cfg.sharing}
        if cfg.sharing != "none" and cfg.num_hidden_groups > 1:
            labelled["num_hidden_groups"] = cfg.num_hidden_groups
        if cfg.inner_group_num > 1:
            labelled["inner_group_num"] = cfg.inner_group_num
        # the schemes the label names (its LoRA's matrices it does not)
        labelled |= {name: getattr(cfg, name) for name in ("block_order", "unique_ends", "repeat", "lora_rank")}
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
