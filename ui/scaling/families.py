"""Scaling for the encoders after BERT: the encoder beside its ALBERTized twin (E = 128, all layers shared) as V and
L grow, and every family's embedding share at its published size. The counts are the library's (`sweep`, exact);
each chart is one cached unit (`ui.scaling.charts.Chart`), its star added on each run."""

from __future__ import annotations

import plotly.graph_objects as go
import streamlit as st

from albert_core import ModelConfig
from albert_core.configuration.coerce import albertize, original_of, twin_of
from albert_core.configuration.config import FAMILIES, family_of
from albert_core.configuration.presets import ALL_PRESETS
from albert_core.counting.params import count_params
from albert_core.counting.sweeps import sweep
from albert_core.format import fmt_params
from ui import plotly_dicts
from ui.colors import FAMILY_COLORS
from ui.scaling.charts import Chart, make_chart
from ui.scaling.figures import layout_spec, log_ticks, star_point, with_marks
from ui.state import CONFIG_HASH_FUNCS

V_VALUES = (10_000, 30_000, 50_000, 100_000, 150_000, 250_000)
L_VALUES = (1, 2, 4, 8, 12, 16, 24, 32, 48)
TWIN_DASH = "dash"
ORIGINAL_COLOR, TWIN_COLOR = FAMILY_COLORS["BERT"], FAMILY_COLORS["ALBERT"]


def pair(cfg: ModelConfig) -> tuple[ModelConfig, ModelConfig]:
    """(the encoder without ALBERT's ideas, its ALBERTized twin) for any config of a family after BERT."""
    original = original_of(cfg) if twin_of(cfg)[1] == "original" else cfg
    return original, twin_of(original)[0]


def _line(xs: list, ys: list, name: str, color: str, dash: str | None, hover: str) -> dict:
    return dict(type="scatter", x=xs, y=ys, mode="lines+markers", name=name,
                line=dict(color=color, **({"dash": dash} if dash else {})),
                text=[fmt_params(v) if hover == "params" else f"{v:.1%}" for v in ys],
                hovertemplate="%{x:,}: %{text}<extra>" + name + "</extra>")


@st.cache_resource(max_entries=32, show_spinner=False, hash_funcs=CONFIG_HASH_FUNCS)
def embedding_share(original: ModelConfig, twin: ModelConfig, vs: tuple[int, ...]) -> Chart:
    """The embeddings' share of the parameters against V, for the encoder and for it with the twin's factorized E
    alone (sharing would shrink the encoder too, and so raise the embeddings' share: that is the next chart)."""
    factorized = original.replace(embedding_size=twin.embedding_size)
    traces = []
    for cfg, name, color, dash in ((original, f"this encoder (E = {original.embedding_size})", ORIGINAL_COLOR, None),
                                   (factorized, f"factorized, E = {twin.embedding_size}", TWIN_COLOR, TWIN_DASH)):
        df = sweep(cfg, "vocab_size", list(vs), include_bert=False, seq_len=min(128, cfg.max_seq_len))
        share = [float(e / p) for e, p in zip(df["embedding_params"].tolist(), df["params"].tolist(), strict=True)]
        traces.append(_line([int(v) for v in df["x"].tolist()], share, name, color, dash, "share"))
    layout = layout_spec("Embedding share vs vocabulary V", "vocabulary size V", "share of the parameters",
                          yaxis={"title": {"text": "share of the parameters"}, "tickformat": ".0%",
                                 "range": [0, 1]})
    return make_chart(plotly_dicts.figure(traces, layout), mark_share)


def mark_share(base: go.Figure, cfg: ModelConfig) -> go.Figure:
    bd = count_params(cfg)
    share = bd.group_totals()["embeddings"] / bd.total
    return with_marks(base, [star_point(cfg.vocab_size, share, f"V = {cfg.vocab_size:,}: {share:.1%}")])


@st.cache_resource(max_entries=32, show_spinner=False, hash_funcs=CONFIG_HASH_FUNCS)
def params_vs_layers(original: ModelConfig, twin: ModelConfig, ls: tuple[int, ...]) -> Chart:
    """Parameters against L for the encoder and its twin (all-shared: flat), log y."""
    traces = []
    for cfg, name, color, dash in ((original, "this encoder", ORIGINAL_COLOR, None),
                                   (twin, "ALBERTized twin", TWIN_COLOR, TWIN_DASH)):
        df = sweep(cfg, "num_layers", [v for v in ls if v >= cfg.num_hidden_groups], include_bert=False,
                   seq_len=min(128, cfg.max_seq_len))
        traces.append(_line([int(v) for v in df["x"].tolist()], [int(v) for v in df["params"].tolist()], name,
                            color, dash, "params"))
    ys = [v for t in traces for v in t["y"]]
    ticks = log_ticks(min(ys), max(ys), fmt_params)
    layout = layout_spec("Parameters vs layers L", "layers L", "parameters (log scale)",
                          yaxis={"title": {"text": "parameters (log scale)"}, **ticks})
    return make_chart(plotly_dicts.figure(traces, layout), mark_layers)


def mark_layers(base: go.Figure, cfg: ModelConfig) -> go.Figure:
    total = count_params(cfg).total
    return with_marks(base, [star_point(cfg.num_layers, total, f"L = {cfg.num_layers}: {fmt_params(total)}")])


@st.cache_resource(max_entries=1, show_spinner=False)
def family_table() -> dict[str, list]:
    """Every family's base preset: its parameters, its embedding share, and what E = 128 alone and E = 128 with
    every layer shared make of it (exact counts), as columns."""
    out: dict[str, list] = {k: [] for k in ("family", "preset", "V", "H", "params", "embedding share",
                                             "E = 128", "E = 128, all shared")}
    for family in FAMILIES:
        record = family_of(family)
        if "sharing" in record.class_axes:  # ALBERT: its own class shares already
            continue
        name = record.base_preset
        cfg = ALL_PRESETS[name]
        bd = count_params(cfg)
        factorized = albertize(cfg, embedding_size=128, sharing="none")  # a BERT becomes an ALBERT of its size
        shared = factorized.replace(sharing="all")
        out["family"].append(record.label)
        out["preset"].append(name)
        out["V"].append(cfg.vocab_size)
        out["H"].append(cfg.hidden_size)
        out["params"].append(fmt_params(bd.total))
        out["embedding share"].append(bd.group_totals()["embeddings"] / bd.total)
        out["E = 128"].append(fmt_params(count_params(factorized.replace(embedding_size=128)).total))
        out["E = 128, all shared"].append(fmt_params(count_params(shared.replace(embedding_size=128)).total))
    return out
