"""The Explorer's ALBERTize panel: what ALBERTizing an encoder after BERT saves, in one place (parameters, FLOPs,
training memory, largest batch, step time), the factorization alone and the sharing alone apart
(`albert_core.hardware.albertized.albertizing_savings`), against the config it was made from.

An ALBERTized config compares with the preset or the uploaded file it was made from (issue 42: an ALBERTized
DeBERTa-v3 or ELECTRA twin's "original" kept the family's native E = 128, so one pair read -73.9 % from one side and
-51.5 % from the other): the session's last config without ALBERT's ideas, or a preset, when it differs from the
config only in E, sharing, G and K; else the library's `original_of`.
"""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from albert_core import ModelConfig, Workload
from albert_core.configuration.coerce import is_albertized, original_of
from albert_core.configuration.presets import ALL_PRESETS
from albert_core.counting.report import Result, costs
from albert_core.format import fmt_bytes, fmt_count, fmt_duration, fmt_flops, fmt_params
from albert_core.hardware.albertized import AlbertizingSavings, albertized_from, albertizing_savings
from ui.explorer import figures as figures_explorer
from ui.figure_style import fmt_delta
from ui.state import CONFIG_HASH_FUNCS, ORIGIN_KEY

FIT_GB = (16, 80)  # the device sizes the panel shows the largest batch for (the fit table has them all)
STEP_PROFILE = "H100"  # the step time shown (an estimate on the datasheet profile)


def origin_of(cfg: ModelConfig, remembered: ModelConfig | None = None) -> ModelConfig | None:
    """The config an ALBERTized ``cfg`` compares with: ``remembered`` (the session's last config without ALBERT's
    ideas: a preset, an upload, a link), else a preset, it was made from; else `original_of`. None for a config
    that is not ALBERTized."""
    if not is_albertized(cfg):
        return None
    return albertized_from(cfg, (remembered, *ALL_PRESETS.values())) or original_of(cfg)


@st.cache_resource(max_entries=64, show_spinner=False, hash_funcs=CONFIG_HASH_FUNCS)
def result_with_original(cfg: ModelConfig, wl: Workload, original: ModelConfig, _base: Result) -> Result:
    """``base`` (the config's result) with ``original`` as the twin it compares with."""
    if _base.twin.config == original:
        return _base
    return Result(cfg, wl, _base.own, costs(original, wl), "original")


def explorer_result(res: Result) -> Result:
    """The Explorer's result: an ALBERTized config's twin is the config it was made from (`origin_of`)."""
    if res.twin_kind == "bert":
        return res
    original = origin_of(res.config, st.session_state.get(ORIGIN_KEY))
    if original is None:
        return res
    return result_with_original(res.config, res.workload, original, res)


@st.cache_resource(max_entries=64, show_spinner=False, hash_funcs=CONFIG_HASH_FUNCS)
def twin_figure(cfg: ModelConfig, wl: Workload, twin: ModelConfig, _res: Result) -> go.Figure:
    """The config against its twin (``twin``: the key; ``_res`` holds its counts), once per pair and workload. On an
    original's page the ALBERTized twin is drawn against the original (= 100%): what ALBERTizing saves, not the
    original's excess."""
    if _res.twin_kind == "albertized":
        swapped = Result(_res.twin.config, _res.workload, _res.twin, _res.own, "original")
        return figures_explorer.twin_bars(swapped, names=("ALBERTized twin", "original"))
    return figures_explorer.twin_bars(_res, names=figures_explorer.TWIN_NAMES[_res.twin_kind])


@st.cache_resource(max_entries=64, show_spinner=False, hash_funcs=CONFIG_HASH_FUNCS)
def twin_summary(cfg: ModelConfig, wl: Workload, twin: ModelConfig, _res: Result) -> str:
    """The panel's bullets (`family_twin_summary`) for the config and the twin it compares with."""
    return figures_explorer.family_twin_summary(_res)


@st.cache_resource(max_entries=64, show_spinner=False, hash_funcs=CONFIG_HASH_FUNCS)
def savings(original: ModelConfig, albertized: ModelConfig, wl: Workload) -> AlbertizingSavings:
    return albertizing_savings(original, albertized, wl)


_FORMATS = {"params": fmt_params, "FLOPs": fmt_flops, "bytes": fmt_bytes, "sequences": fmt_count,
            "seconds": lambda s: fmt_duration(s, 3)}


def savings_rows(pair_measures: list[str]) -> list[str]:
    """The measures the panel shows, in order, from a pair's measures (names follow `compare_albertized`)."""
    wanted = ["parameters", "forward FLOPs per sequence", "training FLOPs per step",
              "training memory (activations estimated)", "inference working set (activations estimated)",
              *(f"largest batch on {gb} GB" for gb in FIT_GB)]
    wanted += [m for m in pair_measures if m.startswith("training step on") and STEP_PROFILE in m]
    return [m for m in wanted if m in pair_measures]


def savings_frame(sv: AlbertizingSavings) -> pd.DataFrame:
    """One row a cost: the original's value, then each variant's value with its change against the original
    (negative = less; for the largest batch, positive = more fits). Every value from the library's counts."""
    first = sv.variants[0][1]
    rows = []
    for measure in savings_rows([r.measure for r in first.rows]):
        base = first.row(measure)
        fmt = _FORMATS[base.unit]
        name = measure.replace(" (activations estimated)", "")
        row = {"cost": name[0].upper() + name[1:] + (" (estimate)" if base.kind == "estimate" else ""),
               "original": fmt(base.original)}
        for label, pair in sv.variants:
            r = pair.row(measure)
            change = "" if r.original == r.twin or not r.original else f" ({fmt_delta(r.ratio - 1)})"
            row[label] = fmt(r.twin) + change
        rows.append(row)
    return pd.DataFrame(rows)
