"""The Explorer's downloadable files (pure functions, no streamlit): the transformers `config.json`, the
breakdown CSV and the JSON report (derived from the typed `albert_core.counting.report.Result`)."""

from __future__ import annotations

import json
import re

import pandas as pd

from albert_core import ModelConfig
from albert_core.configuration.hf_config import config_to_hf
from albert_core.configuration.presets import config_name
from albert_core.counting.flops import training_factor
from albert_core.counting.params import ParamBreakdown
from albert_core.counting.report import Result


def file_name(cfg: ModelConfig, what: str, ext: str) -> str:
    """A download's file name after the config: 'bert-base_params.csv', 'albert-h768-l12-e128-all-shared-
    v50000_report.json' (`config_name`, lower case, every run of other characters one '-')."""
    slug = re.sub(r"[^a-z0-9]+", "-", config_name(cfg).lower().replace("=", "")).strip("-")
    return f"{slug}_{what}.{ext}"


def hf_config_json(cfg: ModelConfig) -> str:
    """transformers `config.json` text; ValueError for partial sharing (no transformers equivalent)."""
    return json.dumps(config_to_hf(cfg), indent=2) + "\n"


def breakdown_frame(breakdown: ParamBreakdown) -> pd.DataFrame:
    """One row per component: name, label, group, unique params, params without sharing, share."""
    return breakdown.to_frame()


def breakdown_csv(breakdown: ParamBreakdown) -> str:
    return breakdown_frame(breakdown).to_csv(index=False)


def report_json(result: Result) -> str:
    """The JSON report download: `Result.to_dict` (schema in `albert_core.counting.report`), and where the config's
    architecture has published scores, ``published_quality`` (`albert_core.quality_cost.published_quality`: every
    figure with its provenance; absent for a configuration nobody published)."""
    # imported on a click only: the page's imports stay as they were
    from albert_core.quality_cost import published_quality

    data = result.to_dict()
    if (published := published_quality(result.config)) is not None:
        data["published_quality"] = published
    return json.dumps(data, indent=2) + "\n"


def flops_frame(result: Result) -> pd.DataFrame:
    """One row per FLOP component: forward FLOPs for one sequence and for the workload's batch, training
    FLOPs for the batch (forward + backward, + the recomputed forward under gradient checkpointing)."""
    one = result.own.flops_sequence.by_name()
    step = result.own.flops_batch
    return pd.DataFrame([
        {"component": c.name, "label": c.label, "group": c.group, "forward_per_sequence": one[c.name],
         "forward_per_batch": c.forward, "training_per_batch": c.training,
         "recomputed_per_batch": c.training - training_factor(False, c.name) * c.forward}
        for c in step.components
    ])


def flops_csv(result: Result) -> str:
    return flops_frame(result).to_csv(index=False)


def memory_frame(result: Result) -> pd.DataFrame:
    """One row per memory part (bytes) of the training estimate (int8: none) and the inference working
    set, with its visitor-facing name and whether it is exact; the fp32 master copy of mixed precision
    is its own row, marked as included in the optimizer row."""
    rows = []
    for kind, mem in (("training", result.own.training_memory), ("inference", result.own.inference_memory)):
        if mem is None:
            continue
        names = mem.part_labels()
        for part, nbytes in mem.as_dict().items():
            rows.append({"memory": kind, "part": part, "label": names.get(part, part), "bytes": nbytes,
                         "exact": mem.exact.get(part, False),  # the total holds the activation estimate
                         "included_in": ""})
        if mem.master_weights:
            rows.append({"memory": kind, "part": "master_weights", "label": "fp32 master copy",
                         "bytes": mem.master_weights, "exact": True, "included_in": "optimizer"})
    return pd.DataFrame(rows)


def memory_csv(result: Result) -> str:
    return memory_frame(result).to_csv(index=False)
