"""Published quality beside exact cost: each figure of `albert_core.quality` with its model's exact parameters
(`count_params`) and forward FLOPs per token (`count_flops` at 512 tokens), and the published training compute;
the Pareto front, the published models nearest to a config's cost, each family's ALBERTized twin (a cost, never a
score), and the paper's Table 2 trade-off complete (its accuracy columns beside exact parameters and training FLOPs,
with the same-training-time comparison of its Table 6).

The scores are published (their provenance travels with them); every cost is counted here. Nothing in this module
estimates a score: a configuration nobody trained and evaluated has none.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from types import MappingProxyType
from typing import Any

from albert_core.configuration.coerce import albertize
from albert_core.configuration.config import ModelConfig, family_of
from albert_core.configuration.presets import ALL_PRESETS, ENCODER_PRESETS, PRESETS, config_name
from albert_core.counting.flops import count_flops
from albert_core.counting.params import count_params
from albert_core.hardware.time_model import TABLE2_MLM_FRACTION, TABLE2_WORKLOAD
from albert_core.paper import PAPER_SAME_TIME, PAPER_TABLE2_SPEEDUP
from albert_core.quality import (
    COMPUTE,
    COMPUTE_DEVICE,
    FIGURES,
    METRICS,
    PROTOCOLS,
    Figure,
    check_metric,
    check_protocol,
    compute_of,
    default_protocol,
    figures,
)

COST_SEQ_LEN = 512  # forward FLOPs per token are counted at this length (every preset takes it; the papers' setting)

# Published models without a preset whose sizes are a preset's layout at other sizes (their config.json's sizes).
EXTRA_CONFIGS: Mapping[str, ModelConfig] = MappingProxyType({
    "ELECTRA-large": ENCODER_PRESETS["electra-base-discriminator"].replace(
        embedding_size=1024, hidden_size=1024, num_layers=24, num_heads=16, intermediate_size=4096),
    "DeBERTa-v3-small": ENCODER_PRESETS["deberta-v3-base"].replace(num_layers=6),
})
EXTRA_SOURCES: Mapping[str, str] = MappingProxyType({
    "ELECTRA-large": "not a preset: the ELECTRA discriminator preset at google/electra-large-discriminator's "
                     "config.json sizes (E = H = 1024, L = 24, 16 heads, I = 4096)",
    "DeBERTa-v3-small": "not a preset: the DeBERTa-v3-base preset at microsoft/deberta-v3-small's config.json "
                        "depth (L = 6)",
})
# Which published series a model belongs to (its name's start), for colours and legends; ALBERT before BERT.
SERIES = ("ALBERT", "BERT", "RoBERTa", "XLM-R", "ELECTRA", "DeBERTa-v3", "ModernBERT", "Ettin", "mmBERT", "EuroBERT",
          "NomicBERT", "NeoBERT", "MosaicBERT")
AXES: Mapping[str, str] = MappingProxyType({
    "params": "parameters (exact count)",
    "flops": f"forward FLOPs per token at {COST_SEQ_LEN} tokens (exact count)",
    "compute": f"published training compute ({COMPUTE_DEVICE}-hours)",
})


def series_of(model: str) -> str:
    return next((s for s in SERIES if model.startswith(s)), "other")


def config_of(figure: Figure) -> ModelConfig | None:
    """The architecture behind a figure: its preset, else a published config of a known layout, else None."""
    if figure.preset is not None:
        return ALL_PRESETS[figure.preset]
    return EXTRA_CONFIGS.get(figure.model)


@dataclass(frozen=True)
class Cost:
    """A config's exact cost: unique parameters, and forward matmul FLOPs per token at `COST_SEQ_LEN` (None when
    the config takes fewer positions)."""

    params: int
    flops_per_token: float | None


@lru_cache(maxsize=512)
def cost_of(cfg: ModelConfig) -> Cost:
    params = count_params(cfg).total
    try:
        flops = count_flops(cfg, batch=1, seq_len=COST_SEQ_LEN).forward / COST_SEQ_LEN
    except ValueError:  # fewer than COST_SEQ_LEN positions
        flops = None
    return Cost(int(params), flops)


def _device_hours(model: str) -> float | None:
    c = compute_of(model)
    return c.device_hours if c is not None and c.device == COMPUTE_DEVICE else None


def points(metric: str, protocol: str | None = None, mix: bool = False) -> list[dict[str, Any]]:
    """One row per figure of ``metric`` under ``protocol`` (default: `default_protocol`), or under every protocol
    when ``mix``: the figure's every field, its series, its exact cost (params, flops; None without an
    architecture) and its published training compute in `COMPUTE_DEVICE`-hours (None if unpublished;
    ``compute_approximate``: the source says "about")."""
    check_metric(metric)
    chosen = None if mix else check_protocol(protocol or default_protocol(metric))
    rows = []
    for f in figures(metric, chosen):
        cfg = config_of(f)
        cost = cost_of(cfg) if cfg is not None else None
        rows.append({
            **f.to_dict(), "series": series_of(f.model), "protocol_label": PROTOCOLS[f.protocol].label,
            "config": config_name(cfg) if cfg is not None else None,
            "family": cfg.family if cfg is not None else None,
            "params": cost.params if cost else None, "flops": cost.flops_per_token if cost else None,
            "compute": _device_hours(f.model),
            "compute_approximate": bool(_device_hours(f.model)) and compute_of(f.model).approximate,
        })
    return rows


def pareto_front(rows: Iterable[Mapping[str, Any]], axis: str) -> list[Mapping[str, Any]]:
    """The rows no other row beats on both counts (no more ``axis`` cost and a higher value, or less cost and no
    lower value), cheapest first; rows without a cost on ``axis`` take no part."""
    pts = sorted((r for r in rows if r.get(axis) is not None), key=lambda r: (r[axis], -r["value"]))
    front, best = [], -math.inf
    for r in pts:
        if r["value"] > best:
            front.append(r)
            best = r["value"]
    return front


def nearest(rows: Iterable[Mapping[str, Any]], axis: str, value: float, k: int = 2) -> list[Mapping[str, Any]]:
    """The ``k`` rows whose ``axis`` cost is nearest ``value`` on a log scale (one row per model), nearest first."""
    best: dict[str, Mapping[str, Any]] = {}
    for r in rows:
        if r.get(axis) and r["model"] not in best:
            best[r["model"]] = r
    return sorted(best.values(), key=lambda r: abs(math.log(r[axis] / value)))[:k]


@dataclass(frozen=True)
class Twin:
    """A published model's ALBERTized twin (E = 128, all layers shared): an exact cost and no published score."""

    of: tuple[str, ...]  # the published models of this architecture
    config: ModelConfig
    params: int
    flops: float | None
    original_params: int

    @property
    def label(self) -> str:
        return f"{' / '.join(self.of)} ALBERTized"


def twins(rows: Iterable[Mapping[str, Any]]) -> list[Twin]:
    """The ALBERTized twin of every architecture among ``rows`` whose family is not the paper's (BERT's ALBERTized
    form is ALBERT itself, with published scores of its own), one per architecture, cheapest original first."""
    by_cfg: dict[ModelConfig, list[str]] = {}
    for r in rows:
        cfg = ALL_PRESETS.get(r["preset"]) if r.get("preset") else EXTRA_CONFIGS.get(r["model"])
        if cfg is not None and not family_of(cfg.family).paper:
            names = by_cfg.setdefault(cfg, [])
            if r["model"] not in names:
                names.append(r["model"])
    out = []
    for cfg, names in by_cfg.items():
        twin = albertize(cfg)
        c = cost_of(twin)
        out.append(Twin(tuple(names), twin, c.params, c.flops_per_token, cost_of(cfg).params))
    return sorted(out, key=lambda t: t.original_params)


# ----------------------------------------------------------------------------- the paper's Table 2, complete
TABLE2_MODELS = ("bert-base", "bert-large", "albert-base", "albert-large", "albert-xlarge", "albert-xxlarge")
TABLE2_STEPS = 125_000  # the paper's section 4.1: "We train all models for 125,000 steps unless otherwise specified"
TABLE2_COLUMNS = ("squad1-f1", "squad1-em", "squad2-f1", "squad2-em", "mnli", "sst2", "race", "albert-avg")


def training_flops_per_step(preset: str) -> int:
    """Exact training FLOPs of one step of the paper's pretraining: batch 4,096 x 512 tokens, the pretraining
    heads, MLM on 15 % of the positions (`albert_core.hardware.time_model`'s Table 2 setting)."""
    wl = TABLE2_WORKLOAD
    cfg = PRESETS[preset].replace(head="pretraining")
    return int(count_flops(cfg, wl.batch, wl.seq_len, mlm_fraction=TABLE2_MLM_FRACTION).training)


def table2_tradeoff() -> list[dict[str, Any]]:
    """The paper's Table 2 (125k steps) and Table 6 (the same training time) in one table: per row the published
    accuracy columns (`TABLE2_COLUMNS`, with their protocol), the paper's speedup or hours, and this project's exact
    parameters (the preset) and training FLOPs (per step and for the row's steps)."""
    rows = []
    runs = [(p, "albert-t2", TABLE2_STEPS, PAPER_TABLE2_SPEEDUP[p], None) for p in TABLE2_MODELS]
    runs += [(p, "albert-t6", r["steps"], None, r["hours"]) for p, r in PAPER_SAME_TIME.items()]
    for preset, protocol, steps, speedup, hours in runs:
        figs = [f for f in figures(protocol=protocol, preset=preset) if f.metric in TABLE2_COLUMNS]
        per_step = training_flops_per_step(preset)
        rows.append({
            "model": figs[0].model, "preset": preset, "protocol": protocol, "source": PROTOCOLS[protocol].source,
            "steps": steps, **{f.metric: f.value for f in figs}, "speedup": speedup, "hours": hours,
            "params": cost_of(PRESETS[preset]).params, "training_flops_per_step": per_step,
            "training_flops": per_step * steps,
        })
    return rows


# ----------------------------------------------------------------------------- a config's published figures
@lru_cache(maxsize=1)
def _presets_by_architecture() -> dict[ModelConfig, tuple[str, ...]]:
    out: dict[ModelConfig, tuple[str, ...]] = {}
    for name, cfg in ALL_PRESETS.items():
        key = cfg.replace(head="model")
        out[key] = (*out.get(key, ()), name)
    return out


@lru_cache(maxsize=256)
def presets_of(cfg: ModelConfig) -> tuple[str, ...]:
    """The presets of ``cfg``'s architecture, whatever its head (a fine-tuned score is of the encoder): () for a
    configuration no preset describes; two names for one architecture (modernbert-base, ettin-encoder-150m)."""
    try:
        key = cfg.replace(head="model")
    except ValueError:  # a head the family cannot drop (none today): no preset
        return ()
    return _presets_by_architecture().get(key, ())


def published_quality(cfg: ModelConfig) -> dict[str, Any] | None:
    """What the record publishes of ``cfg``'s architecture (the JSON report's ``published_quality``): its presets,
    every figure with every field and the published training compute; None when nothing is published (no score is
    estimated for it)."""
    names = presets_of(cfg)
    data = record(presets=names) if names else None
    if not data or not data["figures"]:
        return None
    return {"presets": list(names), "figures": data["figures"], "training_compute": data["training_compute"],
            "about": "Published figures with their sources, not measured here; compare values within one protocol "
                     "only (docs/quality.md)."}


def record(metric: str | None = None, presets: Iterable[str] | None = None) -> dict[str, Any]:
    """The whole record as plain data (the CLI's JSON): every figure with every field, the metrics, protocols and
    published training compute; optionally only ``metric`` and only these presets."""
    wanted = None if presets is None else set(presets)
    figs = [f for f in FIGURES if (metric is None or f.metric == check_metric(metric))
            and (wanted is None or f.preset in wanted)]
    return {
        "figures": [f.to_dict() for f in figs],
        "metrics": {k: {"label": m.label, "aggregation": m.aggregation} for k, m in METRICS.items()},
        "protocols": {k: {"label": p.label, "split": p.split, "fine_tuned_by": p.fine_tuned_by, "source": p.source,
                          "about": p.about} for k, p in PROTOCOLS.items()},
        "training_compute": [c.to_dict() for c in COMPUTE if wanted is None or c.preset in wanted],
    }
