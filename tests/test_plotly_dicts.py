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
from ui import figures_architecture as fa
from ui import figures_explorer as fe
from ui import plotly_dicts

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


@pytest.mark.parametrize("page", ["pages/explorer.py", "pages/scaling.py", "pages/compare.py"])
@pytest.mark.parametrize("query", PAGE_QUERIES, ids=lambda q: "&".join(f"{k}={v}" for k, v in q.items()) or "default")
def test_every_chart_a_page_sends_is_what_validation_makes_of_it(app, page, query):
    # whatever path built them (graph objects, trusted dicts, cached bases with marks), the charts the browser gets
    at = app(query=query, page=page)
    assert not at.exception
    specs = [json.loads(el.proto.spec) for el in at.get("plotly_chart")]
    assert specs
    for spec in specs:
        assert json.loads(go.Figure(spec).to_json()) == spec, spec["layout"].get("title")
