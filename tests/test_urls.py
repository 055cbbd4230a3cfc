"""The app's URL codec (ui/urls.py): round trips, lenient fallbacks naming the URL key, strict decoding."""

from __future__ import annotations

import pytest
from hypothesis import given, settings

from albert_core import PRESETS, ModelConfig, Workload
from tests.helpers.strategies import configs
from ui.urls import (
    QUERY_KEYS,
    WORKLOAD_QUERY_KEYS,
    config_from_query,
    config_to_query,
    parse_query,
    parse_workload_query,
    workload_to_query,
)


@settings(max_examples=60, deadline=None)
@given(configs())
def test_url_round_trip(cfg):
    cfg = cfg.replace(layer_norm_eps=ModelConfig().layer_norm_eps)  # eps is not part of the URL
    query = config_to_query(cfg)
    assert set(query) == set(QUERY_KEYS)
    assert all(isinstance(v, str) and v.isascii() for v in query.values())
    assert config_from_query(query) == cfg
    assert parse_query(query) == (cfg, [])
    # Streamlit hands repeated keys over as lists: the last value wins.
    assert parse_query({k: ["junk", v] for k, v in query.items()}) == (cfg, [])


def test_parse_query_falls_back_per_value_and_reports_each_problem():
    base = PRESETS["albert-large"]
    cfg, problems = parse_query({"H": "-5", "L": "abc", "I": "2048", "sharing": "<b>x</b>"}, base)
    assert cfg == base.replace(intermediate_size=2048)
    assert len(problems) == 3
    assert any("H=" in p for p in problems) and any("L=" in p for p in problems)
    assert any("sharing" in p for p in problems)
    assert parse_query({}, base) == (base, [])
    assert parse_query({"page": "scaling", "x": "1"}) == (ModelConfig(), [])  # other keys ignored


@pytest.mark.parametrize("raw", ["", " 768", "768 ", "+768", "7.68e2", "768.0", "nan", "inf", "0x300",
                                 "0", "99999999999999999999", "\u0667\u0666\u0668", "<script>", "768;1"])
def test_url_rejects_anything_but_plain_in_range_digits(raw):
    cfg, problems = parse_query({"H": raw})
    assert cfg == ModelConfig()
    assert len(problems) == 1 and problems[0].startswith("URL value H=")
    with pytest.raises(ValueError, match="URL value H="):
        config_from_query({"H": raw})


def test_url_values_that_do_not_fit_together_fall_back_and_name_the_reset_key():
    cfg, problems = parse_query({"H": "1000", "heads": "12"})  # both given: 12 does not divide 1000
    assert cfg == ModelConfig() and len(problems) == 1
    assert "fit together" in problems[0] and "reset H to 768" in problems[0]
    cfg, problems = parse_query({"L": "4", "G": "6"})  # G > L
    assert cfg.num_hidden_groups <= cfg.num_layers and len(problems) == 1 and "reset L to 12" in problems[0]
    with pytest.raises(ValueError, match="num_hidden_groups"):
        config_from_query({"L": "4", "G": "6"})


def test_url_family_bert_drops_albert_only_defaults():
    cfg, problems = parse_query({"family": "bert"})
    assert problems == [] and cfg.family == "bert" and cfg.sharing == "none"
    cfg, problems = parse_query({"tied": "yes"})
    assert cfg.tie_word_embeddings is True and problems and "tied" in problems[0]


def test_workload_url():
    work = Workload(batch=3, seq_len=64, dtype="bf16", optimizer="sgd")
    assert set(workload_to_query(work)) == set(WORKLOAD_QUERY_KEYS)
    assert parse_workload_query(workload_to_query(work)) == (work, [])
    got, problems = parse_workload_query({"batch": "-1", "seq": "1e3", "dtype": "fp8", "opt": "adam"})
    assert got == Workload(optimizer="adam") and len(problems) == 3
