"""The sidebar with the encoders after BERT: presets, links, the family switch and ALBERTizing through E and
sharing, the numbers checked against the counters (AppTest)."""

from __future__ import annotations

import json

import plotly.graph_objects as go
import pytest

from albert_core import count_params
from albert_core.configuration.coerce import twin_of
from albert_core.configuration.presets import ENCODER_PRESETS
from albert_core.format import fmt_params
from tests.helpers.app import charts
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



@pytest.mark.parametrize("page", ["ui/explorer/page.py", "ui/scaling/page.py", "ui/compare/page.py"])
@pytest.mark.parametrize("which", ["modernbert-base", "its ALBERTized twin"])
def test_family_pages_show_exact_numbers_in_valid_charts(app, page, which):
    base = ENCODER_PRESETS["modernbert-base"]
    cfg = base if which == "modernbert-base" else twin_of(base)[0]
    at = app(query=config_to_query(cfg), page=page)
    assert not at.exception and not at.error
    specs = [json.loads(el.proto.spec) for el in at.get("plotly_chart")]
    assert specs
    for spec in specs:  # what the browser gets is Plotly's valid form
        assert json.loads(go.Figure(spec).to_json()) == spec, spec["layout"].get("title")
    if page.endswith("scaling/page.py"):
        share = charts(at)["Embedding share vs vocabulary V"]
        by_name = {t["name"]: dict(zip(t["x"], t["y"], strict=True)) for t in share["data"] if t.get("mode") == "lines+markers"}
        for name, model in (("this encoder (E = 768)", base), ("factorized, E = 128", base.replace(embedding_size=128))):
            bd = count_params(model.replace(vocab_size=50_000))
            assert by_name[name][50_000] == pytest.approx(bd.group_totals()["embeddings"] / bd.total, rel=1e-12)
        assert "Parameters vs layers L" in charts(at)


@pytest.mark.parametrize("which", ["ettin-encoder-17m", "its ALBERTized twin"])
def test_the_live_page_runs_a_family_model_on_the_visitors_text(app, which):
    """The lab tokenizer of the family (ModernBERT: no token types, so no segment ids are passed), one forward
    pass timed; the ALBERTized twin, which no transformers class builds, runs too."""
    base = ENCODER_PRESETS["ettin-encoder-17m"]
    cfg = base if which == "ettin-encoder-17m" else twin_of(base)[0]
    at = app(query={**config_to_query(cfg), "seq": "64"}, page="ui/live/page.py")
    assert not at.exception and not at.error
    labels = {m.label for m in at.metric}
    assert {"Tokens", "Median latency", "Forward FLOPs"} <= labels


def test_the_paper_page_lists_every_family_preset_with_its_exact_count(app):
    at = app(page="ui/paper/page.py")
    assert not at.exception
    table = next(df.value for df in at.dataframe if "published" in df.value.columns)
    assert dict(zip(table["preset"], table["params"], strict=True)) == {
        name: count_params(cfg).total for name, cfg in ENCODER_PRESETS.items()}


# ModernBERT-base's config.json as its authors published it (transformers 4.48's keys: the pattern as
# global_attn_every_n_layers, the rotary bases as global_rope_theta / local_rope_theta)
MODERNBERT_BASE_JSON = {
    "architectures": ["ModernBertForMaskedLM"], "attention_bias": False, "attention_dropout": 0.0,
    "bos_token_id": 50281, "classifier_activation": "gelu", "classifier_bias": False, "classifier_dropout": 0.0,
    "classifier_pooling": "mean", "cls_token_id": 50281, "decoder_bias": True, "deterministic_flash_attn": False,
    "embedding_dropout": 0.0, "eos_token_id": 50282, "global_attn_every_n_layers": 3, "global_rope_theta": 160000.0,
    "gradient_checkpointing": False, "hidden_activation": "gelu", "hidden_size": 768, "initializer_cutoff_factor": 2.0,
    "initializer_range": 0.02, "intermediate_size": 1152, "layer_norm_eps": 1e-05, "local_attention": 128,
    "local_rope_theta": 10000.0, "max_position_embeddings": 8192, "mlp_bias": False, "mlp_dropout": 0.0,
    "model_type": "modernbert", "norm_bias": False, "norm_eps": 1e-05, "num_attention_heads": 12,
    "num_hidden_layers": 22, "pad_token_id": 50283, "position_embedding_type": "absolute", "sep_token_id": 50282,
    "tie_word_embeddings": True, "torch_dtype": "float32", "transformers_version": "4.47.0.dev0",
    "vocab_size": 50368,
}


def test_uploading_modernberts_config_json_and_albertizing_it(app):
    """The issue's first step, in the app: ModernBERT-base's config.json is loaded (it was refused), counted as
    transformers counts ModernBertForMaskedLM, and ALBERTized through E."""
    at = app()
    at.file_uploader(key="sb_upload").set_value(("config.json", json.dumps(MODERNBERT_BASE_JSON).encode(),
                                                  "application/json")).run()
    assert not at.exception and not at.error
    expected = ENCODER_PRESETS["modernbert-base"].replace(head="masked-lm")
    assert _metric(at, "Total parameters") == fmt_params(count_params(expected).total)
    assert at.query_params["family"] == "modernbert" and at.query_params["head"] == "masked-lm"
    at.number_input(key="cfg_E").set_value(128).run()
    assert not at.exception
    assert _metric(at, "Total parameters") == fmt_params(count_params(expected.replace(embedding_size=128)).total)
