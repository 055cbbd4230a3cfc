"""The Explorer's downloadable files (pure functions, no streamlit): the transformers `config.json`, the
breakdown CSV and the JSON report (derived from the typed `albert_core.results.Result`)."""

from __future__ import annotations

import json
import re

import pandas as pd

from albert_core import ModelConfig
from albert_core.params import ParamBreakdown
from albert_core.results import Result


def file_name(cfg: ModelConfig, what: str, ext: str) -> str:
    """A download's file name after the config: 'bert-base_params.csv', 'albert-h768-l12-e128-all-shared-
    v50000_report.json' (`ModelConfig.name`, lower case, every run of other characters one '-')."""
    slug = re.sub(r"[^a-z0-9]+", "-", cfg.name.lower().replace("=", "")).strip("-")
    return f"{slug}_{what}.{ext}"


def hf_config_json(cfg: ModelConfig) -> str:
    """transformers `config.json` text; ValueError for partial sharing (no transformers equivalent)."""
    return json.dumps(cfg.to_hf(), indent=2) + "\n"


def breakdown_frame(breakdown: ParamBreakdown) -> pd.DataFrame:
    """One row per component: name, label, group, unique params, params without sharing, share."""
    return breakdown.to_frame()


def breakdown_csv(breakdown: ParamBreakdown) -> str:
    return breakdown_frame(breakdown).to_csv(index=False)


def report_json(result: Result) -> str:
    """The JSON report download: `Result.to_dict` (schema in `albert_core.results`)."""
    return result.to_json()
