"""Typed results: every number the app shows for one config and workload, with its BERT twin's.

`analyze(cfg, wl) -> Result` counts once; pages read attributes (``result.own.params.total``,
``result.twin.memory.total``) and the JSON download is derived from it (`Result.to_dict`, schema
below, version `SCHEMA_VERSION`). No torch import.

JSON schema (version 2; every count an exact integer unless noted)::

    version                   2
    config                    {label, name, <every ModelConfig field>}   (name: `config_name`, unique)
    workload                  {batch, seq_len, dtype, optimizer, precision, checkpointing}
    params                    {total, without_sharing, saved_by_sharing,
                               groups: {embeddings, encoder, heads},
                               components: [{name, label, group, params, unshared}]}
    flops                     {convention (with "+ the encoder layers' forward again" under gradient
                               checkpointing), forward_per_sequence, forward_per_batch, training_per_batch,
                               macs_per_batch, recomputed_per_batch (gradient checkpointing, else 0),
                               training_per_token (float),
                               components_per_sequence: {component name: forward FLOPs}}
    memory                    {dtype (the workload's dtype name, e.g. "bf16"),
                               bytes_per_element (bytes of one weight / activation element in it, e.g. 2),
                               training: {weights, gradients, optimizer, activations, total} or null (int8),
                               master_weights (fp32 master copy under mixed precision, inside optimizer),
                               inference: {weights, gradients, optimizer, activations, total}}
    bert_twin                 {config, params (total), groups, flops (as above),
                               memory: {training, inference}}
                              (BERT and ALBERT; for the families after BERT the same object is
                               ``albertized_twin`` (E = 128, all layers shared) or, for an ALBERTized
                               encoder, ``original``: `coerce.twin_of`)

Version 1 held the dtype name under ``bytes_per_element`` and had no ``memory.dtype`` or
``config.name``. Every byte count is in bytes (the app prints them in GB = 10^9 bytes).

Activation bytes are estimates; everything else is exact. The twin is the paper's BERT of the
config's size (`coerce.bert_twin`: GELU, no factorization or sharing) with BERT's dropout 0.1,
so it shows the same memory as that BERT pinned on Compare or counted by the CLI.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from typing import Any

from albert_core.configuration.coerce import ALBERT_ACT, BERT_TWIN_ACT, bert_twin, switch_family, twin_of
from albert_core.configuration.config import ModelConfig, family_of
from albert_core.configuration.presets import config_name
from albert_core.configuration.workload import DTYPE_BYTES, Workload
from albert_core.counting.flops import FlopBreakdown, count_flops, training_rule
from albert_core.counting.memory import MemoryEstimate, estimate_memory
from albert_core.counting.params import ParamBreakdown, count_params

SCHEMA_VERSION = 2
FLOP_CONVENTION = "matmul FLOPs (2 per multiply-add)"


@dataclass(frozen=True)
class Costs:
    """One config's counts at a workload."""

    config: ModelConfig
    params: ParamBreakdown
    flops_sequence: FlopBreakdown  # one sequence (batch 1)
    flops_batch: FlopBreakdown  # the workload's batch
    training_memory: MemoryEstimate | None  # None for int8 weights (inference only)
    inference_memory: MemoryEstimate

    @property
    def memory(self) -> MemoryEstimate:
        """Training memory, or the inference working set where training is impossible (int8)."""
        return self.training_memory or self.inference_memory

    @property
    def memory_kind(self) -> str:
        return "training" if self.training_memory is not None else "inference"

    @property
    def groups(self) -> dict[str, int]:
        return self.params.group_totals()

    def flops_dict(self) -> dict[str, Any]:
        one, step = self.flops_sequence, self.flops_batch
        return {
            "convention": f"{FLOP_CONVENTION}; {training_rule(step.recompute)}",
            "forward_per_sequence": int(one.forward),
            "forward_per_batch": int(step.forward),
            "training_per_batch": int(step.training),
            "macs_per_batch": int(step.macs),
            "recomputed_per_batch": int(step.recomputed),
            "training_per_token": float(step.per_token_training),
            "components_per_sequence": {k: int(v) for k, v in one.by_name().items()},
        }

    def memory_dict(self) -> dict[str, Any]:
        train = self.training_memory
        return {"training": None if train is None else train.as_dict(), "inference": self.inference_memory.as_dict(),
                "master_weights": 0 if train is None else train.master_weights}


def costs(cfg: ModelConfig, wl: Workload, dropout: float | None = None) -> Costs:
    """Every count of ``cfg`` at ``wl`` (``dropout``: for the activation estimate; the family's default)."""
    wl.check_fits(cfg)
    dropout = family_of(cfg.family).dropout if dropout is None else dropout

    def memory(training: bool) -> MemoryEstimate:
        return estimate_memory(cfg, wl.batch, wl.seq_len, wl.dtype, wl.optimizer, training, dropout=dropout,
                               precision=wl.precision if training else "pure",
                               checkpointing=wl.checkpointing and training)

    return Costs(
        config=cfg,
        params=count_params(cfg),
        flops_sequence=count_flops(cfg, 1, wl.seq_len),
        flops_batch=count_flops(cfg, wl.batch, wl.seq_len, recompute=wl.checkpointing),
        training_memory=None if wl.dtype == "int8" else memory(True),
        inference_memory=memory(False),
    )


@dataclass(frozen=True)
class Result:
    """A config and workload, its counts (``own``) and its BERT twin's (``twin``; a BERT is its own)."""

    config: ModelConfig
    workload: Workload
    own: Costs
    twin: Costs
    twin_kind: str = "bert"  # "bert", "albertized" or "original" (`coerce.twin_of`)

    @property
    def is_bert(self) -> bool:
        return not family_of(self.config.family).albert_ideas

    def to_dict(self) -> dict[str, Any]:
        """The JSON export (schema in the module docstring)."""
        own, twin = self.own, self.twin
        return {
            "version": SCHEMA_VERSION,
            "config": _config_dict(self.config),
            "workload": dataclasses.asdict(self.workload),
            "params": {
                "total": own.params.total,
                "without_sharing": own.params.unshared_total,
                "saved_by_sharing": own.params.saved_by_sharing,
                "groups": own.groups,
                "components": [dataclasses.asdict(c) for c in own.params.components],
            },
            "flops": own.flops_dict(),
            "memory": {"dtype": self.workload.dtype, "bytes_per_element": DTYPE_BYTES[self.workload.dtype],
                       **own.memory_dict()},
            _TWIN_KEYS[self.twin_kind]: {
                "config": _config_dict(twin.config),
                "params": twin.params.total,
                "groups": twin.groups,
                "flops": twin.flops_dict(),
                "memory": twin.memory_dict(),
            },
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2) + "\n"


_TWIN_KEYS = {"bert": "bert_twin", "albertized": "albertized_twin", "original": "original"}


def _config_dict(cfg: ModelConfig) -> dict[str, Any]:
    return {"label": cfg.label, "name": config_name(cfg), **cfg.to_dict()}


def analyze(cfg: ModelConfig, wl: Workload) -> Result:
    """All counts for ``cfg`` at ``wl`` and for its twin (`coerce.twin_of`: an ALBERT's BERT, an encoder's
    ALBERTized twin or original), each with its family's dropout."""
    own = costs(cfg, wl)
    twin_cfg, kind = twin_of(cfg)
    twin = own if twin_cfg == cfg else costs(twin_cfg, wl)
    return Result(cfg, wl, own, twin, kind)


def albert_counterpart(cfg: ModelConfig) -> ModelConfig | None:
    """For a BERT: the ALBERT whose BERT twin it is (the family rule of `albert_core.configuration.coerce`:
    E = 128 or H if smaller, all layers shared, and ALBERT's own activation where the BERT runs the twin's GELU),
    so a "smaller or faster than BERT?" comparison has something to compare; None if there is no such ALBERT.
    The twin and the counterpart are one pair either way round: ``albert_counterpart(bert_twin(a)) == a`` for
    an ALBERT ``a`` with ALBERT's activation (every paper preset)."""
    try:
        alt = switch_family(cfg, "albert")
    except ValueError:
        return None
    if cfg.hidden_act == BERT_TWIN_ACT:
        alt = alt.replace(hidden_act=ALBERT_ACT)
    return alt if bert_twin(alt) == cfg else None


def albert_pair(cfg: ModelConfig) -> tuple[ModelConfig, ModelConfig] | None:
    """The two configs every "what do ALBERT's ideas change?" answer compares, the one with them first: an
    ALBERT and its BERT twin, a BERT's ALBERT counterpart and the BERT, an encoder's ALBERTized twin and the
    encoder, an ALBERTized encoder and its original (`coerce.twin_of`). None for a BERT without a counterpart.
    Asked from either config of a pair that is each other's twin, the same pair in the same order."""
    if not family_of(cfg.family).albert_ideas:
        alt = albert_counterpart(cfg)
        return None if alt is None else (alt, cfg)
    twin, kind = twin_of(cfg)
    return (twin, cfg) if kind == "albertized" else (cfg, twin)


def result_from_dict(data: dict[str, Any]) -> Result:
    """Rebuild a Result from its JSON export (recounted from the config and workload; ValueError if the
    export's version is not this schema's)."""
    if not isinstance(data, dict) or data.get("version") != SCHEMA_VERSION:
        raise ValueError(f"version must be {SCHEMA_VERSION}")
    config = {k: v for k, v in data["config"].items() if k not in ("label", "name")}
    return analyze(ModelConfig.from_dict(config), Workload(**data["workload"]))
