"""Quality vs cost page (AppTest): no exception, one protocol by default, the choices in the URL, and a link that
reopens the same chart."""

from __future__ import annotations

import json

import plotly.graph_objects as go

from albert_core.quality import PROTOCOLS
from tests.helpers.app import charts
from tests.helpers.facts import MODEL_COUNTS

PAGE = "ui/quality/page.py"
PARAMS_CHART = "Published quality vs parameters"
FLOPS_CHART = "Published quality vs FLOPs per token"


def _protocols(spec: dict) -> set[str]:
    """The protocol labels of a chart's scored points (their hover's fifth field)."""
    return {c[4] for t in spec["data"] if t.get("hovertemplate", "").startswith("<b>%{customdata[0]}</b>: ")
            for c in t["customdata"]}


def _captions(at) -> str:
    """The page's captions as read (markdown escapes removed)."""
    return " ".join(c.value for c in at.caption).replace("\\", "")


def test_default_page_shows_one_protocol_and_the_table(app):
    at = app(page=PAGE)
    assert not at.exception and not at.error
    specs = charts(at)
    assert set(specs) == {PARAMS_CHART, FLOPS_CHART}  # nothing published in H100-hours under Table 2: no chart
    for spec in specs.values():
        assert _protocols(spec) == {PROTOCOLS["albert-t2"].label}
        assert json.loads(go.Figure(spec).to_json()) == spec  # what validation makes of it
        names = {t["name"] for t in spec["data"]}
        assert {"ALBERT", "BERT", "Pareto front", "your config (sidebar)"} <= names
    assert at.selectbox(key="quality_metric").value == "albert-avg"
    assert at.toggle(key="quality_mix").value is False
    assert not {"qm", "qp", "qmix"} & set(at.query_params)  # defaults stay out of the link
    assert "ALBERT-xxlarge against BERT-large: +3.5 points with 0.66x the parameters" in _captions(at)
    table = next(d.value for d in at.dataframe if "training FLOPs" in d.value.columns)
    assert len(table) == 8
    row = table.set_index("model").loc["ALBERT-base"]
    assert round(row["params"] * 1e6) == MODEL_COUNTS["albert-base"] and row["Avg"] == 80.1


def test_the_choices_travel_in_the_url_and_a_link_reopens_the_same_chart(app):
    at = app(page=PAGE)
    at.selectbox(key="quality_metric").set_value("glue").run()
    at.selectbox(key="quality_protocol").set_value("mmbert").run()
    assert not at.exception
    link = {k: at.query_params[k] for k in ("qm", "qp")}
    assert link == {"qm": "glue", "qp": "mmbert"}
    before = charts(at)
    assert _protocols(before[PARAMS_CHART]) == {PROTOCOLS["mmbert"].label}
    assert "Published quality vs training compute" in before  # mmBERT's runs: three models with H100-hours
    reopened = app(query=dict(at.query_params), page=PAGE)
    assert not reopened.exception
    assert reopened.selectbox(key="quality_metric").value == "glue"
    assert reopened.selectbox(key="quality_protocol").value == "mmbert"
    for box in (reopened.selectbox(key="quality_metric"), reopened.selectbox(key="quality_protocol")):
        assert box.proto.default == box.index  # drawn with its value (a box without it shows option 0 first)
    assert charts(reopened) == before


def test_mixing_is_a_visible_choice(app):
    at = app(query={"qm": "glue", "qmix": "1"}, page=PAGE)
    assert not at.exception
    assert at.toggle(key="quality_mix").value is True and at.toggle(key="quality_mix").proto.default is True
    assert any("Protocols mixed" in w.value for w in at.warning)
    assert len(_protocols(charts(at)[PARAMS_CHART])) >= 6
    at.toggle(key="quality_mix").set_value(False).run()
    assert "qmix" not in at.query_params
    assert _protocols(charts(at)[PARAMS_CHART]) == {PROTOCOLS["modernbert"].label}


def test_a_bad_link_falls_back_to_the_defaults(app):
    at = app(query={"qm": "<b>nope</b>", "qp": "mine"}, page=PAGE)
    assert not at.exception
    assert at.selectbox(key="quality_metric").value == "albert-avg"
    assert at.selectbox(key="quality_protocol").value == "albert-t2"
    # a protocol of another metric: that metric's default
    at = app(query={"qm": "mteb-v2-eng", "qp": "albert-t2"}, page=PAGE)
    assert at.selectbox(key="quality_protocol").value == "ettin"


def test_the_sidebar_config_is_placed_on_the_cost_axis_only(app):
    at = app(query={"family": "bert", "V": "30522", "H": "1024", "L": "24", "heads": "16", "I": "4096"}, page=PAGE)
    assert not at.exception
    spec = charts(at)[PARAMS_CHART]
    [star] = [t for t in spec["data"] if t["name"] == "your config (sidebar)"]
    assert star["x"] == [MODEL_COUNTS["bert-large"]] and star["yaxis"] == "y2"  # the strip: no score
    assert "has no published score; nearest in cost: BERT-large (335.14M, 85.2)" in _captions(at)
