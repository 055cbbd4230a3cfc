"""The sidebar with the encoders after BERT: presets, links, the family switch and ALBERTizing through E and
sharing, the numbers checked against the counters (AppTest)."""

from __future__ import annotations

from albert_core import count_params
from albert_core.configuration.presets import ENCODER_PRESETS
from albert_core.format import fmt_params
from ui.urls import config_to_query, parse_query


def _metric(at, label: str) -> str:
    return next(m.value for m in at.metric if m.label == label)


def test_a_modernbert_link_opens_its_exact_numbers(app):
    cfg = ENCODER_PRESETS["modernbert-base"]
    at = app(config_to_query(cfg))
    assert not at.exception and not at.error
    assert at.selectbox(key="cfg_preset").value == "modernbert-base"
    assert at.radio(key="cfg_family").value == "modernbert"
    assert _metric(at, "Total parameters") == fmt_params(count_params(cfg).total) == "149.01M"
    assert parse_query(dict(at.query_params))[0] == cfg  # the address bar reopens the same config


def test_preset_family_switch_and_albertizing(app):
    at = app()
    at.selectbox(key="cfg_preset").set_value("eurobert-610m").run()
    assert not at.exception
    assert at.query_params["kv"] == "6" and at.query_params["family"] == "eurobert"
    assert _metric(at, "Total parameters") == fmt_params(count_params(ENCODER_PRESETS["eurobert-610m"]).total)
    # ALBERTize: E = 128 and all layers shared, through the sidebar's own widgets
    at.number_input(key="cfg_E").set_value(128).run()
    at.selectbox(key="cfg_sharing").set_value("all").run()
    assert not at.exception
    twin = ENCODER_PRESETS["eurobert-610m"].replace(embedding_size=128, sharing="all")
    assert _metric(at, "Total parameters") == fmt_params(count_params(twin).total)
    assert at.selectbox(key="cfg_preset").value == "custom"
    # the family switch takes the family's layout, keeping the size
    at.radio(key="cfg_family").set_value("modernbert").run()
    assert not at.exception
    assert at.query_params["ffn"] == "glu" and at.query_params["win"] == "128" and at.query_params["H"] == "1152"
    at.radio(key="cfg_family").set_value("albert").run()
    assert not at.exception and "ffn" not in at.query_params  # an ALBERT link as before
