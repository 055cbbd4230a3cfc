"""The Scaling page's charts, each one cached unit: its data, its base figure and the numbers its takeaway quotes,
built together once and keyed by what they depend on; `Chart.marked` adds the current config's marks on each run.

A chart's key holds only what its data depend on (a sweep over L at any depth: `figures.any_depth`; the (E, H)
grid of an all-shared model without its depth: `figures.params_depth_key`), so a move of L rebuilds only the charts
whose data depend on L, and the marks (`figures.with_marks`, a fraction of a build) follow the config on every run.
Decorated here once, at import (a `@st.cache_resource` in the page script would be decorated again on every
rerun). What they return is shared between sessions and never mutated (the page and the builders only read).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import plotly.graph_objects as go
import streamlit as st

from albert_core import PRESETS, ModelConfig, Workload
from albert_core.counting.sweeps import sweep
from ui import plotly_dicts
from ui.scaling import figures as fs
from ui.scaling import takeaways as tk
from ui.state import CONFIG_HASH_FUNCS, cached_result

ENTRIES = 64  # per chart: Plotly figures of 10-50 kB each and their frames


@dataclass(frozen=True)
class Chart:
    """One chart: ``base`` is the figure without the current config (held as its dict: `plotly_dicts.frozen`),
    ``mark`` the function that adds the config's marks to it (None when the key already holds everything the
    figure shows), ``numbers`` what its takeaway quotes."""

    base: go.Figure
    mark: Callable[..., go.Figure] | None = None
    numbers: Any = None

    def marked(self, *args: Any) -> go.Figure:
        """The figure to send: ``mark(base, *args)``, or the base itself when the chart has no marks."""
        return self.base if self.mark is None else self.mark(self.base, *args)


def make_chart(base: go.Figure, mark: Callable[..., go.Figure] | None = None, numbers: Any = None) -> Chart:
    return Chart(plotly_dicts.frozen(base), mark, numbers)


@dataclass(frozen=True)
class HiddenNumbers:
    i_note: str  # how I was set along the H axis
    share_at: float | None  # ALBERT's share of BERT's parameters at the config's H (None for a BERT)
    share_top: float | None  # ... and at the largest H


@st.cache_resource(max_entries=ENTRIES, show_spinner=False, hash_funcs=CONFIG_HASH_FUNCS)
def hidden(cfg: ModelConfig, hs: tuple[int, ...]) -> Chart:
    """Params against H for the config's family and (an ALBERT) its BERT twin."""
    df, note = fs.hidden_frame(cfg, hs)
    return make_chart(fs.params_vs_hidden_base(df), fs.mark_params_vs_hidden,
                  HiddenNumbers(note, tk.albert_share(df, cfg.hidden_size), tk.albert_share(df, max(hs))))


@st.cache_resource(max_entries=ENTRIES, show_spinner=False, hash_funcs=CONFIG_HASH_FUNCS)
def layers(cfg: ModelConfig, ls: tuple[int, ...], wl: Workload) -> Chart:
    """Params against L (``cfg`` at any depth: `fs.any_depth`)."""
    df = _sweep(cfg, "num_layers", ls, wl=wl, columns=("model", "num_layers", "params"))
    return make_chart(fs.params_vs_layers_base(df), fs.mark_params_vs_layers)


@st.cache_resource(max_entries=ENTRIES, show_spinner=False, hash_funcs=CONFIG_HASH_FUNCS)
def embedding(acfg: ModelConfig, vs: tuple[int, ...], es: tuple[int, ...], wl: Workload) -> Chart:
    """Embedding params over V x E; ``acfg`` at any depth (`fs.any_depth`): embedding parameters do not depend on
    it, so one chart serves every L. Only the charted columns are kept of the sweep."""
    df = _sweep(acfg, "vocab_size", vs, "embedding_size", es, wl=wl,
                columns=("model", "vocab_size", "embedding_size", "hidden_size", "embedding_params"))
    return make_chart(fs.embedding_vs_vocab_base(df), fs.mark_embedding_vs_vocab)


@dataclass(frozen=True)
class ReductionNumbers:
    standard: int  # ALBERT-base's token-embedding weights at E = H
    factorized: int  # ... and factorized
    reduction: float


@st.cache_resource(max_entries=ENTRIES, show_spinner=False, hash_funcs=CONFIG_HASH_FUNCS)
def reduction(cfg: ModelConfig) -> Chart:
    """The circulating embedding chart's rows for the ALBERT sizes, and the current config's when it factorizes
    (``cfg`` at any depth: V, E and H matter, not the depth). The current config's bar is in the data: no marks."""
    seed = fs.seed_embedding_table({name.removeprefix("albert-"): p for name, p in PRESETS.items()
                                    if p.family == "albert"})
    if cfg.family == "albert" and cfg.embedding_size < cfg.hidden_size:
        import pandas as pd

        mine = fs.seed_embedding_table({"current": cfg}, cfg.vocab_size, cfg.embedding_size)
        seed = pd.concat([seed, mine], ignore_index=True)
    first = seed.iloc[0]
    return make_chart(fs.embedding_reduction(seed, "current"), None,
                  ReductionNumbers(first["standard"], first["factorized"], first["reduction"]))


@st.cache_resource(max_entries=16, show_spinner=False)
def presets(seq_len: int, head: str) -> Chart:
    """Forward FLOPs against params for the presets; numbers: (ALBERT-xxlarge / BERT-large params, FLOPs)."""
    df = fs.presets_frame(PRESETS, seq_len, head)
    return make_chart(fs.flops_vs_params_base(df), fs.mark_flops_vs_params, tk.preset_ratios(df))


@st.cache_resource(max_entries=ENTRIES, show_spinner=False, hash_funcs=CONFIG_HASH_FUNCS)
def heatmap(cfg: ModelConfig, es: tuple[int, ...], hs: tuple[int, ...]) -> Chart:
    """Params over (E, H) of an ALBERT (``cfg``: `fs.params_depth_key`); numbers: `tk.GridSpan` at its E and H."""
    df = fs.heatmap_frame(cfg, es, hs)
    return make_chart(fs.params_heatmap_base(df), fs.mark_params_heatmap, tk.grid_span(df, cfg.embedding_size,
                                                                                   cfg.hidden_size))


@st.cache_resource(max_entries=1, show_spinner=False)
def sharing() -> Chart:
    """The paper's Table 4, exact and printed; numbers: what sharing attention and the FFN save at E = 128."""
    t4 = fs.table4_frame()
    return make_chart(fs.sharing_modes_base(t4), fs.mark_sharing_modes, tk.sharing_savings(t4, 128))


@dataclass(frozen=True)
class MemoryNumbers:
    kind: str  # "training" or "inference"
    totals: tuple[int, ...]  # the config's, then (an ALBERT) its BERT twin's
    activations: tuple[int, ...]


@st.cache_resource(max_entries=ENTRIES, show_spinner=False, hash_funcs=CONFIG_HASH_FUNCS)
def memory(cfg: ModelConfig, wl: Workload) -> Chart:
    """The memory stacks of the config and (an ALBERT) its BERT twin at the workload."""
    res = cached_result(cfg, wl)
    kind = res.own.memory_kind
    rows = {cfg.label: res.own.memory}
    if cfg.family == "albert":
        rows[f"BERT twin: {res.twin.config.label}"] = res.twin.memory
    mem = fs.memory_frame(rows)
    numbers = MemoryNumbers(kind, tuple(int(v) for v in mem["total"]), tuple(int(v) for v in mem["activations"]))
    return make_chart(fs.memory_bars(mem, cfg.label, kind, res.own.memory.part_labels()), None, numbers)


@dataclass(frozen=True)
class LoraNumbers:
    """What the LoRA chart's takeaway quotes: the ranks charted, the parameters without a LoRA and at the largest
    rank, what one unit of rank adds, the two references (`fs.lora_references`), the largest valid rank."""

    ranks: tuple[int, ...]
    without: int
    at_top: int
    per_rank: int
    unshared: int
    shared: int
    max_rank: int

    @property
    def break_even(self) -> float | None:
        """The rank at which the LoRA holds as many parameters as not sharing at all (None when it never can)."""
        gap = self.unshared - self.without
        return gap / self.per_rank if gap > 0 and self.per_rank else None


@st.cache_resource(max_entries=ENTRIES, show_spinner=False, hash_funcs=CONFIG_HASH_FUNCS)
def lora(base: ModelConfig, ranks: tuple[int, ...]) -> Chart:
    """Parameters against the LoRA rank (``base``: `fs.lora_base`, the same for every rank of one config) beside the
    config not shared and all-shared without a LoRA."""
    df = fs.lora_frame(base, ranks)
    refs = fs.lora_references(base)
    params = dict(zip(df["lora_rank"].tolist(), df["params"].tolist(), strict=True))
    top = max(params)
    numbers = LoraNumbers(tuple(params), params[0], params[top], (params[top] - params[0]) // top if top else 0,
                          refs["unshared"][1], refs["shared"][1], fs.lora_max_rank(base))
    return make_chart(fs.params_vs_lora_rank_base(df, base, refs), fs.mark_params_vs_lora_rank, numbers)


@dataclass(frozen=True)
class WorkloadCharts:
    """The two charts over one workload field (sequence length or batch), the current value outlined in each."""

    flops: go.Figure
    memory: go.Figure
    numbers: tk.SeqSpan | tk.PerSequence


@st.cache_resource(max_entries=ENTRIES, show_spinner=False, hash_funcs=CONFIG_HASH_FUNCS)
def by_workload(cfg: ModelConfig, wl: Workload, field: str, values: tuple[int, ...]) -> WorkloadCharts:
    """FLOPs and memory over ``values`` of ``field`` ("seq_len" or "batch") at the rest of the workload."""
    df = fs.workload_frame(cfg, wl, field, values)
    current = getattr(wl, field)
    memory_fig = plotly_dicts.frozen(fs.memory_vs_workload(df, field, current))
    if field == "seq_len":
        return WorkloadCharts(plotly_dicts.frozen(fs.flops_vs_seq(df, current)), memory_fig, tk.seq_span(df))
    return WorkloadCharts(plotly_dicts.frozen(fs.flops_vs_batch(df, current)), memory_fig, tk.per_sequence(df))


def _sweep(base: ModelConfig, x: str, values: tuple, y: str | None = None, y_values: tuple | None = None, *,
           wl: Workload, columns: tuple[str, ...]):
    """`sweep` at the sidebar's workload, only the charted ``columns`` built."""
    return sweep(base, x, list(values), y, None if y_values is None else list(y_values), batch=wl.batch,
                 seq_len=wl.seq_len, dtype=wl.dtype, optimizer=wl.optimizer, columns=columns)
