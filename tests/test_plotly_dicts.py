"""Figures written as dicts and wrapped without validation (ui/plotly_dicts.py) are exactly what Plotly's
validation makes of them: for every builder that uses the trusted path and a grid of configs, the figure's JSON
equals the JSON of the same figure validated property by property."""

from __future__ import annotations

import json

import plotly.graph_objects as go
import plotly.io as pio
import pytest

from albert_core import Workload
from albert_core.configuration.config import SHARING_LABELS
from albert_core.configuration.presets import PRESETS
from albert_core.counting.report import analyze
from albert_core.counting.sweeps import sweep
from albert_core.hardware.time_model import estimate_time, paper_table2
from ui import plotly_dicts
from ui.explorer import architecture as fa
from ui.explorer import figures as fe
from ui.hardware import figures as fh
from ui.scaling import figures as fs

CONFIGS = [PRESETS[name] for name in ("albert-base", "albert-xxlarge", "bert-base", "bert-large")]
CONFIGS += [PRESETS["albert-base"].replace(sharing=mode, num_hidden_groups=g, inner_group_num=k)
            for mode in sorted(SHARING_LABELS) if mode != "none" for g, k in ((1, 1), (3, 1), (2, 2), (12, 1))]
CONFIGS += [PRESETS["albert-base"].replace(num_layers=48, num_hidden_groups=5, inner_group_num=3)]  # unlabelled


def _builders(cfg):
    res = analyze(cfg, Workload(batch=2, seq_len=128))
    yield "architecture_diagram", fa.architecture_diagram(cfg)
    yield "breakdown_treemap", fe.breakdown_treemap(res.own.params)
    yield "flops_bars", fe.flops_bars(res.own.flops_sequence.by_name())
    if cfg.family == "albert":
        yield "twin_bars", fe.twin_bars(res)
        yield "params_heatmap_base", fs.params_heatmap_base(fs.heatmap_frame(cfg, (64, 128, 256), (256, 768)))
        yield "embedding_vs_vocab_base", fs.embedding_vs_vocab_base(
            sweep(cfg, "vocab_size", [1000, 30000], "embedding_size", [64, 128], batch=2, seq_len=128, dtype="fp32",
                  optimizer="adamw"))
    seed = fs.seed_embedding_table({name: p for name, p in PRESETS.items() if p.family == "albert"})
    yield "embedding_reduction", fs.embedding_reduction(seed, "albert-base")
    yield "flops_vs_params_base", fs.flops_vs_params_base(fs.presets_frame(PRESETS, 128, cfg.head))
    yield "sharing_modes_base", fs.mark_sharing_modes(fs.sharing_modes_base(fs.table4_frame()), 12_000_000)
    yield "step_breakdown", fh.step_breakdown(estimate_time(cfg, Workload(batch=64, seq_len=128, dtype="bf16"),
                                                            "tpu-v3", 8))
    yield "table2_bars", fh.table2_bars(paper_table2())


def _json(fig: go.Figure) -> dict:
    return json.loads(pio.to_json(fig, validate=False))


@pytest.mark.parametrize("cfg", CONFIGS, ids=lambda c: f"{c.label} G{c.num_hidden_groups} K{c.inner_group_num}")
def test_trusted_figures_are_what_validation_makes_of_them(cfg):
    for name, fig in _builders(cfg):
        validated = go.Figure(fig.to_dict())  # raises on a property Plotly does not know or a bad value
        assert _json(fig) == _json(validated), name


def test_the_trusted_path_does_not_validate():
    # why the test above exists: a misspelt property goes through unnoticed at run time
    fig = plotly_dicts.figure([dict(type="bar", x=[1], colour="red")], dict(titel="x"))
    assert fig.to_dict()["data"][0]["colour"] == "red"
    with pytest.raises(ValueError):
        go.Figure(fig.to_dict())


PAGE_QUERIES = [
    {},  # the default ALBERT
    {"family": "bert"},
    {"sharing": "attention", "L": "6", "G": "3", "K": "2", "E": "64"},
]


@pytest.mark.parametrize("page", ["ui/explorer/page.py", "ui/scaling/page.py", "ui/compare/page.py"])
@pytest.mark.parametrize("query", PAGE_QUERIES, ids=lambda q: "&".join(f"{k}={v}" for k, v in q.items()) or "default")
def test_every_chart_a_page_sends_is_what_validation_makes_of_it(app, page, query):
    # whatever path built them (graph objects, trusted dicts, cached bases with marks), the charts the browser gets
    at = app(query=query, page=page)
    assert not at.exception
    specs = [json.loads(el.proto.spec) for el in at.get("plotly_chart")]
    assert specs
    for spec in specs:
        assert json.loads(go.Figure(spec).to_json()) == spec, spec["layout"].get("title")


def _built(fig) -> bool:
    return "_data_objs" in object.__getattribute__(fig, "__dict__")


def test_streamlit_sends_a_trusted_figure_without_building_or_copying_it():
    # st.plotly_chart turns a figure into its dict with plotly.tools and then into JSON: nothing else
    import plotly.tools

    fig = fa.architecture_diagram(PRESETS["albert-base"])
    assert isinstance(fig, plotly_dicts.TrustedFigure) and not _built(fig)
    sent = plotly.tools.return_figure_from_figure_or_data(fig, validate_figure=True)
    assert sent is fig.to_dict()  # the dict itself: no copy
    assert not _built(fig)
    assert _json(fig) == _json(go.Figure(sent))  # and it is what validation makes of it, template included
    assert sent["layout"]["template"] == pio.templates[pio.templates.default].to_plotly_json()


def test_a_trusted_figure_becomes_an_ordinary_figure_when_asked():
    fig = plotly_dicts.figure([dict(type="bar", x=[1, 2], y=[3, 4], name="b")], dict(title=dict(text="t")))
    before = fig.to_dict()
    assert fig.data[0].y == (3, 4) and fig.layout.title.text == "t"  # built on first use
    assert _built(fig)
    fig.update_layout(title_text="changed")
    assert fig.to_dict()["layout"]["title"]["text"] == "changed"  # changes show in its dict from then on
    assert before["layout"]["title"]["text"] == "t"  # the dict it was made from is not touched


def test_frozen_holds_an_ordinary_figure_as_its_dict():
    fig = go.Figure(go.Bar(x=[1], y=[2]))
    held = plotly_dicts.frozen(fig)
    assert isinstance(held, plotly_dicts.TrustedFigure) and not _built(held)
    assert _json(held) == _json(fig)
    assert plotly_dicts.frozen(held) is held
    assert plotly_dicts.frozen({"not": "a figure"}) == {"not": "a figure"}  # cached builders may return data


def test_marks_leave_the_cached_base_as_it_was():
    from albert_core.counting.sweeps import sweep
    from ui.scaling import figures as fs

    cfg = PRESETS["albert-base"]
    base = plotly_dicts.frozen(fs.params_vs_layers_base(sweep(cfg, "num_layers", range(1, 25))))
    before = json.dumps(base.to_dict(), sort_keys=True)
    marked = fs.mark_params_vs_layers(base, cfg, 11_000_000)
    fs.mark_params_vs_layers(base, cfg.replace(num_layers=3), 12_000_000)
    assert json.dumps(base.to_dict(), sort_keys=True) == before
    assert len(marked.to_dict()["data"]) == len(base.to_dict()["data"]) + 1
    assert not _built(base)  # the marks read the base's dict, not its graph objects


def test_the_current_config_star_is_what_validation_makes_of_it():
    from ui.scaling import figures as fs

    star = fs.star_point(768, 11_683_584, "ALBERT-base: 11.68M")
    assert go.Scatter(star).to_plotly_json() == star


# ----------------------------------------------------------------------------- the internals TrustedFigure relies on
def test_st_plotly_chart_sends_a_trusted_figure_without_building_it(monkeypatch):
    """Streamlit's st.plotly_chart asks a figure for its dict only (through plotly.tools, then plotly.io.to_json
    without validation): a TrustedFigure reaches the browser without graph objects. If an upgrade of Streamlit
    reads the figure another way (copies, validates, reads .data), the figure gets built and this fails."""
    import streamlit as st

    fig = fa.architecture_diagram(PRESETS["albert-base"])
    sent = []
    real = pio.to_json
    monkeypatch.setattr(pio, "to_json", lambda figure, *a, **kw: sent.append(figure) or real(figure, *a, **kw))
    st.plotly_chart(fig)  # bare mode: the element is made, nothing is served
    assert not _built(fig)
    assert len(sent) == 1 and sent[0] is fig.to_dict()


def test_plotly_builds_a_trusted_figure_without_validating_it():
    """Plotly's private `_validate=False` (BaseFigure.__init__), which a TrustedFigure builds its graph objects with
    when something reads them: a misspelt property is kept, not rejected. If an upgrade drops the keyword (TypeError)
    or ignores it (ValueError), this fails."""
    fig = plotly_dicts.TrustedFigure({"data": [{"type": "bar", "x": [1], "colour": "red"}], "layout": {}})
    assert fig.data[0].type == "bar" and _built(fig)
    with pytest.raises(ValueError):  # what validation would have done
        go.Figure({"data": [{"type": "bar", "x": [1], "colour": "red"}], "layout": {}})


def _train_and_live_figures():
    """Every figure builder of the Live model and Train pages on small synthetic inputs (baselines, a separation,
    smoothing, log axes, several seeds), for the validation check below."""
    import numpy as np
    import pandas as pd

    from albert_core.lab.baselines import Baselines
    from ui.live import figures as fl
    from ui.train import figures as ft

    rng = np.random.default_rng(0)

    def history(seed: int) -> pd.DataFrame:
        steps = np.arange(21)
        evaluated = steps % 5 == 0
        df = pd.DataFrame({"step": steps, "tokens": steps * 512, "elapsed_s": steps * 0.1 + seed * 0.01,
                           "train_mlm_loss": 5 - steps * 0.1 + rng.random(21), "train_mlm_acc": rng.random(21)})
        for col in ("val_mlm_loss", "val_mlm_acc", "val_order_acc"):
            df[col] = np.where(evaluated, rng.random(21) * 3, np.nan)
        return df

    groups = {"a": [history(0), history(1)], "b": [history(2)]}
    baselines = Baselines(4.5, 0.05, 3.9, 0.1, 100, 0.5, 40)
    for metric in ft.METRICS:
        yield f"curves {metric}", ft.curves_figure(groups, metric, ft.Separation("a", "b", 10), baselines=baselines,
                                                    smoothing=0.5, log_y=True)
        yield f"curves {metric} by tokens", ft.curves_figure(groups, metric, ft.Separation("a", "b", None, "overlap"),
                                                              x="tokens", training=False, log_x=True)
    matrix = pd.DataFrame([[0.9, np.nan], [0.55, 0.8]], index=["nsp", "sop"], columns=["nsp", "sop"])
    yield "cross_accuracy_heatmap", ft.cross_accuracy_heatmap(matrix, "Table 5")
    yield "depth_dial_bars", ft.depth_dial_bars(pd.DataFrame({"depth": [1, 2, 4], "val_mlm_loss": [4, 3.5, 3.6]}), 2,
                                                baselines)
    smooth = pd.DataFrame({"layer": [1, 2, 3], "l2_distance": [1.0, 2.0, 1.5], "cosine_similarity": [0.9, 0.8, 0.95]})
    smooth["angle_degrees"] = np.degrees(np.arccos(smooth["cosine_similarity"]))
    yield "smoothness_figure", fl.smoothness_figure(smooth)
    yield "smoothness_runs", ft.smoothness_runs({"x": smooth, "y": smooth.assign(l2_distance=[2.0, 1.0, 0.5])})
    weights = rng.random((4, 4))
    yield "attention_heatmap", fl.attention_heatmap(weights / weights.sum(1, keepdims=True), list("abcd"), 0, 1)
    yield "activation_bars", fl.activation_bars(1_000_000, 1_200_000)


def test_train_and_live_figures_are_what_validation_makes_of_them():
    for name, fig in _train_and_live_figures():
        assert isinstance(fig, plotly_dicts.TrustedFigure), name  # one way of building figures: dicts
        validated = go.Figure(fig.to_dict())
        assert _json(fig) == _json(validated), name
