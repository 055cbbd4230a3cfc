"""Figure builders of the Explorer and Compare pages: trace types and values equal to their inputs."""

from __future__ import annotations

import plotly.graph_objects as go
import pytest

from albert_core import PRESETS, Workload, count_params
from ui import exports, figures_explorer


@pytest.mark.parametrize("name", ["albert-base", "bert-base"])
def test_treemap_values_are_the_breakdown(name):
    bd = count_params(PRESETS[name].replace(head="pretraining"))
    fig = figures_explorer.breakdown_treemap(bd)
    (tm,) = fig.data
    assert isinstance(tm, go.Treemap) and tm.branchvalues == "total"
    values = dict(zip(tm.ids, tm.values, strict=True))
    parents = dict(zip(tm.ids, tm.parents, strict=True))
    assert values["model"] == bd.total
    for c in bd.components:
        assert values[c.name] == c.params and parents[c.name] == c.group
    for group in ("embeddings", "encoder", "heads"):  # "total" branch values: children sum to the parent
        assert values[group] == sum(c.params for c in bd.components if c.group == group)
        assert parents[group] == "model"


def test_flops_bars_sorted_and_equal_to_components():
    comps = {"encoder.attention.qkv": 30, "encoder.attention.scores": 50, "pooler": 0, "encoder.ffn.ffn": 10}
    (bar,) = figures_explorer.flops_bars(comps).data
    assert isinstance(bar, go.Bar) and bar.orientation == "h"
    assert list(bar.x) == [10, 30, 50]  # zero dropped, largest at the top
    assert list(bar.y) == ["FFN up H→I", "Attention Q/K/V", "Attention scores QKᵀ and weighted values"]


def test_twin_bars_relative_to_bert_twin():
    rep = exports.report(PRESETS["albert-base"], Workload())
    fig = figures_explorer.twin_bars(rep)
    cfg_trace, twin_trace = fig.data
    assert fig.layout.barmode == "group" and list(twin_trace.y) == [1.0] * 4
    assert cfg_trace.y[0] == pytest.approx(11_683_584 / (109_482_240 - 522 * 768))
    assert cfg_trace.y[1] == pytest.approx(1.0, abs=0.01)  # sharing saves no compute
    assert list(cfg_trace.customdata) == [r[1] for r in figures_explorer.twin_metrics(rep)]


def test_twin_metrics_int8_uses_inference_memory():
    rep = exports.report(PRESETS["albert-base"], Workload(dtype="int8"))
    rows = figures_explorer.twin_metrics(rep)
    assert rows[3][1] == 11_683_584  # int8 weights: one byte each


def test_compare_frame_and_bars():
    rows = [
        {"name": "a", "params": 100, "forward_flops": 10, "training_memory": 1000},
        {"name": "b", "params": 50, "forward_flops": 20, "training_memory": 1000},
    ]
    df = figures_explorer.compare_frame(rows)
    assert list(df["params_delta"]) == [0.0, -0.5] and list(df["forward_flops_delta"]) == [0.0, 1.0]
    fig = figures_explorer.compare_bars(df)
    assert [t.name for t in fig.data] == ["a", "b"] and fig.layout.barmode == "group"
    assert list(fig.data[1].y) == [0.5, 2.0, 1.0]
    assert fig.data[1].text[0].endswith("(-50%)")
