"""The pages' cached computations, decorated once, when this module is imported.

A function decorated with `st.cache_resource` in a page script is decorated again on every rerun (a page's code
runs top to bottom each time), and the decorator keys the function by its source (`inspect.getsource` and a
tokenizer: ~0.5 ms a function on a 2-vCPU host, eight of them ~4 ms of a Scaling rerun). Here they are made once
per process. What they return is shared between sessions and never mutated (the pages and the builders only read).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from albert_core import PRESETS, ModelConfig, Workload
from albert_core.counting.report import albert_counterpart
from albert_core.counting.sweeps import sweep
from albert_core.hardware.profiles import load_measured
from albert_core.hardware.time_model import (
    TABLE2_CHIPS,
    TABLE2_COMM_EFFICIENCY,
    TimeEstimate,
    estimate_time,
    paper_table2,
    table2_chip_checks,
)
from albert_core.text.pretraining_inputs import make_pairs
from ui import figures_explorer, figures_hardware, plotly_dicts, tables, urls
from ui import figures_paper as fp
from ui import figures_scaling as fs
from ui import scaling_takeaways as tk
from ui.state import CONFIG_HASH_FUNCS, cached_result

if TYPE_CHECKING:
    import pyarrow as pa


# ----------------------------------------------------------------------------- Explorer
@st.cache_resource(max_entries=64, show_spinner=False, hash_funcs=CONFIG_HASH_FUNCS)
def explorer_figures(cfg: ModelConfig, wl: Workload) -> tuple[go.Figure, go.Figure, go.Figure | None]:
    """The page's three figures, built once per config and workload (never mutated afterwards). For a
    BERT the third compares its ALBERT counterpart with it (a BERT's own twin is itself)."""
    res = cached_result(cfg, wl)
    if cfg.family == "albert":
        twin = figures_explorer.twin_bars(res)
    else:
        alt = albert_counterpart(cfg)
        twin = None if alt is None else figures_explorer.twin_bars(
            cached_result(alt, wl), names=("ALBERT counterpart", "this BERT"))
    return (figures_explorer.breakdown_treemap(res.own.params),
            figures_explorer.flops_bars(res.own.flops_sequence.by_name()),
            twin)


# ----------------------------------------------------------------------------- Compare
@dataclass(frozen=True)
class CompareView:
    """What the Compare page shows of a pinned set at a workload (it does not depend on the sidebar's config)."""

    notes: tuple[str, ...]  # pins whose sequence length was lowered to their P
    base: str  # the first pin's name: the baseline
    cost: pa.Table  # `figures_explorer.compare_cost_table`
    formats: dict[str, str]
    badges: dict[str, str]
    arch: pa.Table  # name, family, V, E, H, L, heads, I, sharing, G, K
    bars: go.Figure
    takeaway: str


COMPARE_ARCH_COLUMNS = ["name", "family", "V", "E", "H", "L", "heads", "I", "sharing", "G", "K"]


@st.cache_resource(max_entries=64, show_spinner=False, hash_funcs=CONFIG_HASH_FUNCS)
def compare_view(pins: tuple[str, ...], wl: Workload) -> CompareView:
    """Each pin's numbers at ``wl`` (its sequence length capped at the pin's P), the two tables, the bars and
    the takeaway, made once per pinned set and workload: a move of a sidebar slider changes none of them."""
    rows, notes = [], []
    for entry in pins:
        pcfg, name = urls.decode_pin(entry), urls.pin_name(entry)
        pwl = wl if wl.seq_len <= pcfg.max_position_embeddings else wl.replace(seq_len=pcfg.max_position_embeddings)
        if pwl is not wl:
            notes.append(f"{name}: sequence length lowered to its P = {pcfg.max_position_embeddings}.")
        own = cached_result(pcfg, pwl).own
        rows.append({
            "name": name, "family": pcfg.family.upper(), "V": pcfg.vocab_size, "E": pcfg.embedding_size,
            "H": pcfg.hidden_size, "L": pcfg.num_layers, "heads": pcfg.num_heads, "I": pcfg.intermediate_size,
            "sharing": pcfg.sharing, "G": pcfg.num_hidden_groups, "K": pcfg.inner_group_num,
            "params": own.params.total, "forward_flops": own.flops_sequence.forward,
            "training_memory": own.memory.total,
        })
    df = figures_explorer.compare_frame(rows)
    cost, formats, badges = figures_explorer.compare_cost_table(df)
    return CompareView(tuple(notes), rows[0]["name"], tables.arrow(cost), formats, badges,
                       tables.arrow(df[COMPARE_ARCH_COLUMNS]), plotly_dicts.frozen(figures_explorer.compare_bars(df)),
                       figures_explorer.compare_takeaway(df))


# ----------------------------------------------------------------------------- Hardware
@st.cache_resource(max_entries=128, show_spinner=False, hash_funcs=CONFIG_HASH_FUNCS)
def hardware_estimate(cfg: ModelConfig, wl: Workload, hw: str, chips: int, overlap: bool) -> TimeEstimate:
    return estimate_time(cfg, wl, hw, chips, overlap=overlap)


@st.cache_resource(max_entries=1, show_spinner=False)
def hardware_measured_allreduce():
    return load_measured()


@st.cache_resource(max_entries=1, show_spinner=False)
def hardware_table2():
    """The Table 2 section (it does not depend on the sidebar): built once per process, not on every rerun."""
    df = paper_table2()
    return (plotly_dicts.frozen(figures_hardware.table2_bars(df)), figures_hardware.table2_frame(df),
            figures_hardware.table2_takeaway(df, TABLE2_COMM_EFFICIENCY, TABLE2_CHIPS),
            figures_hardware.table2_method(df, table2_chip_checks()))


# ----------------------------------------------------------------------------- Paper & formulas
@st.cache_resource(max_entries=8, show_spinner=False)
def paper_frame(builder: str) -> pd.DataFrame:
    """``ui.figures_paper.<builder>()`` (the tables depend on nothing the visitor changes), built once per process
    and shared (never changed); a difference in percent, as its column shows it (+1.00%)."""
    df = getattr(fp, builder)()
    return df.assign(difference=df["difference"] * 100) if "difference" in df else df


# What a table shows of its frame, where that is not the whole frame as it is.
PAPER_SHOWN = {
    "embedding_formula_frame": lambda df: df.drop(columns="hidden_size"),
    # quoted as printed, 15.8M and 63M (the browser's compact format would round 15.8M to 16M): text
    "estimate_formula_frame": lambda df: df.assign(quoted=df["quoted"].map(fp.fmt_printed)),
}


@st.cache_resource(max_entries=8, show_spinner=False)
def paper_table(builder: str):
    """The table of ``paper_frame(builder)`` as sent to the browser, converted to Arrow once (ui/tables.py)."""
    df = paper_frame(builder)
    return tables.arrow(PAPER_SHOWN.get(builder, lambda d: d)(df))


@functools.cache
def paper_table3_savings() -> tuple[int, int]:
    """What shrinking E and then sharing save in Table 3 (its takeaway), read once."""
    return fp.table3_savings(paper_frame("table3_frame"))


@st.cache_resource(max_entries=32, show_spinner=False)
def paper_pair_tables(text: str) -> dict[str, object]:
    """The SOP and NSP pairs of ``text`` (seeded: the same text gives the same pairs) as Arrow tables, made once
    per text, not on every rerun a sidebar move causes. A text without pairs raises, and nothing is kept."""
    return {task: tables.arrow(pd.DataFrame([vars(p) for p in make_pairs(text, task)],
                                            columns=["kind", "a", "b", "label"])) for task in ("sop", "nsp")}


# ----------------------------------------------------------------------------- Scaling
# st.cache_resource, not st.cache_data: cache_data pickles the frame on every hit (a dozen per rerun here).
# The frames are shared between sessions, so nothing may mutate them (the page and the builders only read).
@st.cache_resource(max_entries=64, show_spinner=False, hash_funcs=CONFIG_HASH_FUNCS)
def scaling_sweep(base: ModelConfig, x: str, values: tuple, y: str | None = None, y_values: tuple | None = None,
                 *, wl: Workload) -> pd.DataFrame:
    """`sweep` at the sidebar's workload (int8 is inference-only: memory columns then say so)."""
    return sweep(base, x, list(values), y, None if y_values is None else list(y_values), batch=wl.batch,
                 seq_len=wl.seq_len, dtype=wl.dtype, optimizer=wl.optimizer)


@st.cache_resource(max_entries=64, show_spinner=False, hash_funcs=CONFIG_HASH_FUNCS)
def scaling_workload_frame(cfg: ModelConfig, wl: Workload, field: str, values: tuple[int, ...]) -> pd.DataFrame:
    return fs.workload_frame(cfg, wl, field, values)


# Each frame comes with the numbers its takeaway quotes (ui/scaling_takeaways.py), read once when it is built.
@st.cache_resource(max_entries=16, show_spinner=False)
def scaling_presets(seq_len: int, head: str) -> tuple[pd.DataFrame, tuple[float, float]]:
    df = fs.presets_frame(PRESETS, seq_len, head)
    return df, tk.preset_ratios(df)


@st.cache_resource(max_entries=1, show_spinner=False)
def scaling_table4() -> tuple[pd.DataFrame, tuple[int, int]]:
    t4 = fs.table4_frame()
    return t4, tk.sharing_savings(t4, 128)


@st.cache_resource(max_entries=64, show_spinner=False, hash_funcs=CONFIG_HASH_FUNCS)
def scaling_hidden_frame(cfg: ModelConfig, hs: tuple[int, ...]
                        ) -> tuple[pd.DataFrame, str, float | None, float | None]:
    """The H lines, how I was set, and ALBERT's share of BERT's parameters at the config's H and the largest."""
    df, note = fs.hidden_frame(cfg, hs)
    return df, note, tk.albert_share(df, cfg.hidden_size), tk.albert_share(df, max(hs))


@st.cache_resource(max_entries=64, show_spinner=False, hash_funcs=CONFIG_HASH_FUNCS)
def scaling_heatmap_frame(cfg: ModelConfig, es: tuple[int, ...], hs: tuple[int, ...]
                         ) -> tuple[pd.DataFrame, tk.GridSpan]:
    df = fs.heatmap_frame(cfg, es, hs)
    return df, tk.grid_span(df, cfg.embedding_size, cfg.hidden_size)


@st.cache_resource(max_entries=64, show_spinner=False, hash_funcs=CONFIG_HASH_FUNCS)
def scaling_embedding_frame(acfg: ModelConfig, vs: tuple[int, ...], es: tuple[int, ...], wl: Workload
                           ) -> pd.DataFrame:
    """Embedding parameters over V x E, only the columns charted; ``acfg`` at any depth (`fs.any_depth`):
    embedding parameters do not depend on it, so one frame serves every L."""
    df = scaling_sweep(acfg, "vocab_size", vs, "embedding_size", es, wl=wl)
    return df[["model", "vocab_size", "embedding_size", "hidden_size", "embedding_params"]]


@st.cache_resource(max_entries=64, show_spinner=False, hash_funcs=CONFIG_HASH_FUNCS)
def scaling_seed_table(cfg: ModelConfig) -> pd.DataFrame:
    """The circulating embedding chart's rows for the ALBERT sizes, and the current config's when it factorizes."""
    seed = fs.seed_embedding_table({name.removeprefix("albert-"): p for name, p in PRESETS.items()
                                    if p.family == "albert"})
    if cfg.family == "albert" and cfg.embedding_size < cfg.hidden_size:
        mine = fs.seed_embedding_table({"current": cfg}, cfg.vocab_size, cfg.embedding_size)
        seed = pd.concat([seed, mine], ignore_index=True)
    return seed
