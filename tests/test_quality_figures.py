"""The Quality page's builders as pure functions (no server): each chart is what Plotly's validation makes of it,
shows one protocol unless mixed, marks test figures, ALBERT's models, the front, the twins (no score) and the
current config; each sentence states its numbers."""

from __future__ import annotations

import json

import plotly.graph_objects as go
import plotly.io as pio
import pytest

from albert_core.configuration.presets import ALL_PRESETS, PRESETS
from albert_core.quality import METRICS, protocols_of
from albert_core.quality_cost import cost_of, points, table2_tradeoff, training_flops_per_step, twins
from ui.quality import figures as fq


def _json(fig) -> dict:
    return json.loads(pio.to_json(fig, validate=False))


def _cases():
    for metric in METRICS:
        for protocol in protocols_of(metric):
            yield metric, protocol, False
        yield metric, None, True


@pytest.mark.parametrize(("metric", "protocol", "mix"), list(_cases()), ids=lambda x: str(x))
def test_every_chart_is_what_validation_makes_of_it(metric, protocol, mix):
    rows = points(metric, protocol, mix=mix)
    ts = twins(rows)
    cfg = PRESETS["albert-base"]
    for axis in ("params", "flops", "compute"):
        current = None if axis == "compute" else ("albert-base", cost_of(cfg).params if axis == "params"
                                                  else cost_of(cfg).flops_per_token)
        fig = fq.quality_chart(rows, axis, metric, ts if axis != "compute" else (), current)
        assert _json(fig) == _json(go.Figure(fig.to_dict())), (metric, protocol, axis)
        assert len(fig.to_dict()["layout"]["title"]["text"]) <= 45  # fits a phone


def _scored(fig) -> list[dict]:
    return [t for t in fig.to_dict()["data"] if t.get("hovertemplate", "").startswith("<b>%{customdata[0]}</b>: ")]


def test_default_chart_shows_one_protocol_with_albert_marked_and_the_front():
    rows = points("albert-avg")
    fig = fq.quality_chart(rows, "params", "albert-avg", twins(rows), ("albert-base", 11_683_584))
    scored = _scored(fig)
    assert {t["name"] for t in scored} == {"ALBERT", "BERT"}
    assert {c[4] for t in scored for c in t["customdata"]} == {"ALBERT Table 2 (125k steps)"}  # one protocol
    albert = next(t for t in scored if t["name"] == "ALBERT")
    assert set(albert["marker"]["symbol"]) == {"diamond"} and len(albert["x"]) == 4
    front = next(t for t in fig.to_dict()["data"] if t["name"] == "Pareto front")
    assert front["line"]["shape"] == "hv" and front["y"] == [80.1, 82.4, 85.5, 88.7]
    star = next(t for t in fig.to_dict()["data"] if t["name"] == "your config (sidebar)")
    assert star["yaxis"] == "y2" and star["x"] == [11_683_584]
    assert fig.to_dict()["layout"]["xaxis"]["type"] == "log"
    # the end points' labels lean inwards
    positions = dict(zip(albert["text"], albert["textposition"], strict=True))
    assert positions["ALBERT-base"] == "top right" and positions["ALBERT-xxlarge"] == "top left"
    assert "11.68M" in star["hovertemplate"] and "no published score" in star["hovertemplate"]


def test_mixed_chart_shows_every_protocol_and_marks_test_figures_open():
    rows = points("glue", mix=True)
    fig = fq.quality_chart(rows, "params", "glue")
    scored = _scored(fig)
    protocols = {c[4] for t in scored for c in t["customdata"]}
    assert len(protocols) >= 6
    bert = next(t for t in scored if t["name"] == "BERT")
    by_split = {c[2]: s for c, s in zip(bert["customdata"], bert["marker"]["symbol"], strict=True)}
    assert by_split == {"dev": "circle", "test": "circle-open"}
    assert "Pareto front" not in {t["name"] for t in fig.to_dict()["data"]}  # it would rank protocols together
    assert "No Pareto front is drawn" in fq.chart_sentence(rows, "params", mixed=True)
    # every point's hover names its split and who fine-tuned
    assert all(c[2] in ("dev", "test") and c[3] for t in scored for c in t["customdata"])


def test_twins_sit_on_the_strip_without_a_score():
    rows = points("glue", "ettin")
    ts = twins(rows)
    fig = fq.quality_chart(rows, "params", "glue", ts)
    [twin] = [t for t in fig.to_dict()["data"] if t["name"] == fq.TWIN_NAME]
    assert twin["yaxis"] == "y2" and twin["y"] == [0] * 6
    assert "no published score" in twin["hovertemplate"] and "none is estimated" in twin["hovertemplate"]
    assert sorted(twin["x"]) == sorted(t.params for t in ts)
    assert fig.to_dict()["layout"]["yaxis2"]["ticktext"] == ["no score"]


def test_sentences_state_the_numbers():
    rows = points("albert-avg")
    albert_base = ("albert-base", cost_of(PRESETS["albert-base"]))
    text = fq.chart_sentence(rows, "params", twins(rows), albert_base)
    assert "ALBERT-xxlarge against BERT-large: +3.5 points with 0.66x the parameters and 7.54x the forward FLOPs" in text
    assert "On the front (no model both cheaper and better): ALBERT-base, ALBERT-large, ALBERT-xlarge, ALBERT-xxlarge." \
        in text
    assert "Your config (albert-base, 11.68M) has no published score; nearest in cost: ALBERT-base (11.68M, 80.1)" \
        in text
    flops = fq.chart_sentence(rows, "flops", current=albert_base)
    assert "BERT-base, BERT-large, ALBERT-xlarge, ALBERT-xxlarge" in flops
    # no compute published for any model of ALBERT's table: said, with where it is published
    compute = fq.chart_sentence(rows, "compute") + fq.compute_hint(rows, "albert-avg")
    assert "nothing to plot" in compute and "GLUE average under mmBERT's runs (3)" in compute
    mm = points("glue", "mmbert")
    text = fq.chart_sentence(mm, "compute")
    assert "ModernBERT-base against mmBERT-small: +2.7 points for 1.02x the published training compute." in text
    ettin = points("glue", "ettin")
    text = fq.chart_sentence(ettin, "params", twins(ettin))
    assert "Ettin-1b against Ettin-17m: +12.4 points" in text and "6 ALBERTized twins" in text
    tiny = ("tiny", cost_of(ALL_PRESETS["albert-base"].replace(max_position_embeddings=128)))
    assert "fewer than 512 positions" in fq.chart_sentence(rows, "flops", current=tiny)


def test_table2_frame_and_sentence():
    rows = table2_tradeoff()
    df, formats = fq.table2_frame(rows)
    assert len(df) == 8 and list(df["table"]).count("Table 6") == 2
    assert formats["params"] == "%.2fM" and df.loc[df["model"] == "ALBERT-base", "params"].item() == 11.683584
    assert df.loc[df["model"] == "BERT-large", "Avg"].item() == 85.2
    assert formats["training FLOPs"] == "%.1f EFLOP"
    xx = df[df["model"] == "ALBERT-xxlarge"].iloc[0]  # the per-step count x 125k steps, in EFLOP
    assert xx["training FLOPs"] == pytest.approx(training_flops_per_step("albert-xxlarge") * 125_000 / 1e18)
    assert xx["training FLOPs / step"] * 1e12 == pytest.approx(training_flops_per_step("albert-xxlarge"))
    text = fq.table2_sentence(rows)
    assert "ALBERT-xxlarge scores 88.7 against BERT-large's 85.2 (+3.5 points) with 0.66x the parameters" in text
    assert "0.3x training speed" in text and "reaches 87.2: ALBERT-xxlarge is still +1.5 points" in text


def test_compute_chart_says_which_published_figures_are_approximate():
    fig = fq.quality_chart(points("glue", "mmbert"), "compute", "glue")
    costs = {c[0]: c[7] for t in _scored(fig) for c in t["customdata"]}
    assert costs == {"mmBERT-small": "about 1,920 H100-hours", "mmBERT-base": "about 7,680 H100-hours",
                     "ModernBERT-base": "1,965 H100-hours"}
    assert "yaxis2" not in fig.to_dict()["layout"]  # no twin or config strip: nothing of theirs is published
