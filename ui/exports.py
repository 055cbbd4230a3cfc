"""Everything the app reports about one config and workload, and the downloadable files built from it.

Pure functions (no streamlit): `report` gathers every number once (the Explorer and Compare pages
show it, the JSON export is it), `hf_config_json` and `breakdown_csv` build the other downloads.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pandas as pd

from albert_core import PRESETS, ModelConfig, Workload, count_flops, count_params, estimate_memory
from albert_core.config import QUERY_KEYS
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


# ----------------------------------------------------------------------------- Compare pin codec
# The Compare page's pinned set travels in one URL value: comma-separated entries, each a preset name
# or the config's non-default URL fields as `key.value` pairs joined by `~` (e.g. `H.1024~L.24`).
# Neither separator occurs in a URL key or value, so decoding is a plain split.
MAX_PINS = 8
_MAX_PIN_TEXT = 1200


def encode_pin(cfg: ModelConfig) -> str:
    preset = next((name for name, p in PRESETS.items() if p == cfg), None)
    if preset:
        return preset
    default = ModelConfig().to_query()
    pairs = [f"{k}.{v}" for k, v in cfg.to_query().items() if default[k] != v]
    return "~".join(pairs) or "albert-base"


def decode_pin(entry: str) -> ModelConfig:
    """Strict: ValueError (naming the entry) for anything that is not a preset or a valid config."""
    if entry in PRESETS:
        return PRESETS[entry]
    fields: dict[str, str] = {}
    for pair in entry.split("~"):
        key, dot, value = pair.partition(".")
        if not dot or key not in QUERY_KEYS or key in fields:
            raise ValueError(f"pin {entry[:40]!r}: expected a preset name or key.value pairs joined by ~")
        fields[key] = value
    return ModelConfig.from_query(fields)


def decode_pins(text: str) -> tuple[list[str], list[str]]:
    """Lenient: (valid entries in canonical form, plain-text problems). At most MAX_PINS entries."""
    problems: list[str] = []
    if len(text) > _MAX_PIN_TEXT:
        return [], [f"URL value pin is too long ({len(text):,} characters)"]
    entries: list[str] = []
    for raw in filter(None, text.split(",")):
        try:
            entry = encode_pin(decode_pin(raw))
        except ValueError as exc:
            problems.append(str(exc))
            continue
        if entry not in entries:
            entries.append(entry)
    if len(entries) > MAX_PINS:
        problems.append(f"URL value pin: at most {MAX_PINS} configs can be pinned; kept the first {MAX_PINS}")
        entries = entries[:MAX_PINS]
    return entries, problems


def encode_pins(entries: list[str]) -> str:
    return ",".join(entries)
