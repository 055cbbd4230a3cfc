"""Everything the app reports about one config and workload, and the downloadable files built from it.

Pure functions (no streamlit): `report` gathers every number once (the Explorer and Compare pages
show it, the JSON export is it), `hf_config_json` and `breakdown_csv` build the other downloads.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pandas as pd

from albert_core import ModelConfig, Workload, count_flops, count_params, estimate_memory
from albert_core.memory import DEFAULT_DROPOUT
from albert_core.params import ParamBreakdown

REPORT_VERSION = 1


def hf_config_json(cfg: ModelConfig) -> str:
    """transformers `config.json` text; ValueError for partial sharing (no transformers equivalent)."""
    return json.dumps(cfg.to_hf(), indent=2) + "\n"


def breakdown_frame(breakdown: ParamBreakdown) -> pd.DataFrame:
    """One row per component: name, label, group, unique params, params without sharing, share."""
    return breakdown.to_frame()


def breakdown_csv(breakdown: ParamBreakdown) -> str:
    return breakdown_frame(breakdown).to_csv(index=False)


def _memory(cfg: ModelConfig, wl: Workload, training: bool, dropout: float) -> dict[str, int] | None:
    if training and wl.dtype == "int8":
        return None  # int8 weights are inference-only
    m = estimate_memory(cfg, wl.batch, wl.seq_len, wl.dtype, wl.optimizer, training, dropout=dropout)
    return m.as_dict()


def _flops(cfg: ModelConfig, wl: Workload) -> dict[str, Any]:
    step = count_flops(cfg, wl.batch, wl.seq_len)
    one = count_flops(cfg, 1, wl.seq_len)
    return {
        "convention": "matmul FLOPs (2 per multiply-add); training = 3 x forward",
        "forward_per_sequence": int(one.forward),
        "forward_per_batch": int(step.forward),
        "training_per_batch": int(step.training),
        "macs_per_batch": int(step.macs),
        "training_per_token": float(step.per_token_training),
        "components_per_sequence": {k: int(v) for k, v in one.by_name().items()},
    }


def report(cfg: ModelConfig, wl: Workload) -> dict[str, Any]:
    """All numbers for ``cfg`` at workload ``wl``, plus its BERT twin's for comparison (JSON-ready).

    The twin's memory uses the config's own dropout so that the comparison isolates the architecture.
    """
    wl.check_fits(cfg)
    bd = count_params(cfg)
    twin = cfg.bert_twin()
    dropout = DEFAULT_DROPOUT[cfg.family]
    twin_params = count_params(twin)
    return {
        "version": REPORT_VERSION,
        "config": {"label": cfg.label, **cfg.to_dict()},
        "workload": dataclasses.asdict(wl),
        "params": {
            "total": bd.total,
            "without_sharing": bd.unshared_total,
            "saved_by_sharing": bd.saved_by_sharing,
            "groups": bd.group_totals(),
            "components": [dataclasses.asdict(c) for c in bd.components],
        },
        "flops": _flops(cfg, wl),
        "memory": {
            "bytes_per_element": wl.dtype,
            "training": _memory(cfg, wl, True, dropout),
            "inference": _memory(cfg, wl, False, dropout),
        },
        "bert_twin": {
            "config": {"label": twin.label, **twin.to_dict()},
            "params": twin_params.total,
            "groups": twin_params.group_totals(),
            "flops": _flops(twin, wl),
            "memory": {
                "training": _memory(twin, wl, True, dropout),
                "inference": _memory(twin, wl, False, dropout),
            },
        },
    }


def dumps(rep: dict[str, Any]) -> str:
    return json.dumps(rep, indent=2) + "\n"


def report_json(cfg: ModelConfig, wl: Workload) -> str:
    return dumps(report(cfg, wl))
