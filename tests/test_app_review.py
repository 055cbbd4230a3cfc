"""The Explorer's design-review panels: the config doctor after a sidebar upload, the counter audit on request."""

from __future__ import annotations

import json

from albert_core.review import audit as audit_mod
from albert_core.review.audit import audit
from tests.helpers.audit import TINY
from tests.helpers.facts import official
from ui.explorer import review


def _upload(at, payload: dict, name: str = "config.json"):
    return (
        at.file_uploader(key="sb_upload")
        .set_value((name, json.dumps(payload).encode(), "application/json"))
        .run()
    )


def _texts(at) -> str:
    return " ".join([m.value for m in at.markdown] + [c.value for c in at.caption])


def test_doctor_panel_after_upload(app):
    at = _upload(app(), {**official("v2", "base"), "num_hidden_groups": 5})
    assert not at.exception
    text = _texts(at)
    assert "Config doctor" in [s.value for s in at.subheader]
    assert "groups\\-uneven" in text and "dropout\\-zero" in text
    assert "Config doctor on the Explorer" in text


def test_doctor_panel_also_for_a_config_the_sidebar_refuses(app):
    at = _upload(app(), {**official("v1", "base"), "num_attention_heads": 10})
    assert not at.exception
    assert "heads\\-not\\-dividing" in _texts(at)


def test_audit_runs_on_request(app):
    at = app()
    assert "What the usual counters say" in [s.value for s in at.subheader]
    assert not any("unexplained" in d.value.columns for d in at.dataframe)  # nothing runs before the click
    at.button(key="audit_run").click().run()
    assert not at.exception
    table = next(d.value for d in at.dataframe if "unexplained" in d.value.columns)
    assert len(table) == len(audit_mod.TOOLS) and set(table["unexplained"]) == {"0"}
    assert "Unexplained differences: **0**; per component: **0**." in _texts(at)
    parts = next(d.value for d in at.dataframe if {"component", "unexplained"} <= set(d.value.columns))
    assert set(parts["unexplained"]) == {"0"} and "Layer 0" in set(parts["component"])


def test_tables():
    from albert_core import ModelConfig

    result = audit(ModelConfig(**TINY, head="pretraining"), 1, 8)
    frame = review.audit_frame(result)
    assert list(frame["tool"]) == [r.tool.label for r in result.rows]
    causes = review.causes_frame(result)
    assert set(causes["tool"]) == {r.tool.label for r in result.rows if r.causes}
    parts = review.components_frame(result)
    assert len(parts) == sum(len(r.components) for r in result.rows) > 0
    tied = parts[(parts["tool"] == "torchinfo summary: Total params") & (parts["component"] == "MLM head")]
    assert tied["causes"].str.contains("tied MLM decoder").all()


def test_doctor_reads_a_pasted_config_beside_an_uploaded_one(app, tmp_path):
    at = _upload(app(), {**official("v2", "base"), "num_hidden_groups": 5})
    pasted = {**official("v1", "base"), "embedding_size": 1024}  # E > H
    at.text_area(key="doctor_paste").input(json.dumps(pasted)).run()
    assert not at.exception
    text = _texts(at)
    assert "embedding\\-wider" in text and "groups\\-uneven" in text  # both configs' findings, no key clash
    # a path is never read: the text is JSON or a message
    secret = tmp_path / "config.json"
    secret.write_text(json.dumps(official("v2", "xxlarge")))
    at.text_area(key="doctor_paste").input(str(secret)).run()
    assert not at.exception
    assert any("Cannot read this config" in e.value for e in at.error)


def test_audit_runs_on_a_family_link(app):
    """A ModernBERT-layout preset (GeGLU, rotary, local attention, pre-LN without biases) from its link: every row
    explained, its local attention's masked pairs (128 tokens, a window of 128: 4,032 of 16,384 pairs masked) among
    the causes."""
    from albert_core.configuration.presets import ENCODER_PRESETS
    from ui.urls import config_to_query

    at = app(query={**config_to_query(ENCODER_PRESETS["ettin-encoder-17m"]), "seq": "128"})  # beyond its window
    at.button(key="audit_run").click().run()
    assert not at.exception
    table = next(d.value for d in at.dataframe if "unexplained" in d.value.columns and "run on" in d.value.columns)
    assert set(table["unexplained"]) == {"0"}
    causes = next(d.value for d in at.dataframe if {"cause", "amount"} <= set(d.value.columns))
    assert any(c.startswith("local attention scored on every pair") for c in causes["cause"])
    assert "Unexplained differences: **0**; per component: **0**." in _texts(at)
