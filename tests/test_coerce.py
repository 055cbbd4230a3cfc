"""The one rule that turns edits into a config (`albert_core.configuration.coerce`), and the same edits driven through
the CLI, the URL and the sidebar (AppTest) giving the same config each time."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings

from albert_core import PRESETS, ModelConfig, coerce, count_params
from albert_core.cli.args import config_from_args
from albert_core.cli.main import build_parser, main
from albert_core.configuration.coerce import bert_twin, fit_heads, switch_family
from tests.helpers.facts import MODEL_COUNTS
from tests.helpers.strategies import configs
from ui.state import CONFIG_KEY
from ui.urls import config_from_query, parse_query

BERT_BASE_AS_ALBERT = ModelConfig(vocab_size=30_522, hidden_act="gelu")  # E = 128, all-shared: ALBERT's defaults

# (edit, CLI arguments, URL query, URL base, sidebar actions, the config the edit must give)
EDITS = [
    ("H=1024 on ALBERT-base", ["--hidden-size", "1024"], {"H": "1024"}, None,
     [("slider", "cfg_H", 1024)],
     ModelConfig(hidden_size=1024, num_heads=16, intermediate_size=4096)),
    ("BERT-base switched to ALBERT", ["--preset", "bert-base", "--family", "albert"], {"family": "albert"}, "bert-base",
     [("selectbox", "cfg_preset", "bert-base"), ("radio", "cfg_family", "albert")],
     BERT_BASE_AS_ALBERT),
    ("ALBERT-base switched to BERT", ["--family", "bert"], {"family": "bert"}, None,
     [("radio", "cfg_family", "bert")],
     ModelConfig(family="bert", embedding_size=768, sharing="none")),
    ("BERT-base with H=1024", ["--preset", "bert-base", "--hidden-size", "1024"], {"H": "1024"}, "bert-base",
     [("selectbox", "cfg_preset", "bert-base"), ("slider", "cfg_H", 1024)],
     ModelConfig(family="bert", vocab_size=30_522, embedding_size=1024, hidden_size=1024, num_heads=16,
                 intermediate_size=4096, hidden_act="gelu", sharing="none")),
    ("6 layers, shared FFN in 2 groups", ["--num-layers", "6", "--sharing", "ffn", "--groups", "2"],
     {"L": "6", "sharing": "ffn", "G": "2"}, None,
     [("slider", "cfg_L", 6), ("selectbox", "cfg_sharing", "ffn"), ("number_input", "cfg_G", 2)],
     ModelConfig(num_layers=6, sharing="ffn", num_hidden_groups=2)),
]
IDS = [e[0] for e in EDITS]


@pytest.mark.parametrize("name, argv, query, base, actions, expected", EDITS, ids=IDS)
def test_cli_gives_the_config(capsys, name, argv, query, base, actions, expected):
    assert config_from_args(build_parser().parse_args(["params", *argv])) == expected
    assert main(["params", *argv, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["total"] == count_params(expected).total


@pytest.mark.parametrize("name, argv, query, base, actions, expected", EDITS, ids=IDS)
def test_url_gives_the_config(name, argv, query, base, actions, expected):
    assert parse_query(query, PRESETS[base] if base else None) == (expected, [])


@pytest.mark.parametrize("name, argv, query, base, actions, expected", EDITS, ids=IDS)
def test_sidebar_gives_the_config(app, name, argv, query, base, actions, expected):
    at = app()
    for kind, key, value in actions:
        getattr(at, kind)(key=key).set_value(value).run()
        assert not at.exception and not at.error
    assert at.session_state[CONFIG_KEY] == expected
    if base is None:  # the app's URL starts from ALBERT-base: the link it writes decodes to the same config
        assert config_from_query(dict(at.query_params)) == expected
        assert app(query).session_state[CONFIG_KEY] == expected


def test_bert_base_as_albert_counts_as_albert_base_with_bert_vocabulary():
    # transformers' exact count: ALBERT-base 11,683,584 at V = 30,000; BERT's 522 extra words cost E = 128 each.
    assert count_params(BERT_BASE_AS_ALBERT).total == MODEL_COUNTS["albert-base"] + 522 * 128


def test_url_bert_with_sharing_gives_a_bert_and_names_the_reset_field(app):
    cfg, problems = parse_query({"family": "bert", "sharing": "all"})
    assert cfg == ModelConfig(family="bert", embedding_size=768, sharing="none")
    assert len(problems) == 1 and problems[0].startswith("URL value sharing=all reset to none")
    at = app({"family": "bert", "sharing": "all"})
    assert at.session_state[CONFIG_KEY].family == "bert" and "sharing" in at.warning[0].value


def test_strict_mode_names_the_conflicting_field():
    with pytest.raises(ValueError, match="sharing must be 'none' for family 'bert'"):
        coerce({"family": "bert", "sharing": "all"})
    with pytest.raises(ValueError, match="intermediate_size must be 4096 while I = 4H is kept"):
        coerce({"hidden_size": 1024, "intermediate_size": 3000}, keep_4h=True)
    with pytest.raises(ValueError, match="divisible by num_heads"):  # explicit heads are never replaced
        coerce({"hidden_size": 1000, "num_heads": 12})


def test_kept_i_follows_h_only_when_it_was_4h_or_is_kept():
    odd = ModelConfig(intermediate_size=2048)
    assert coerce({"hidden_size": 512}, odd).config.intermediate_size == 2048
    assert coerce({"hidden_size": 512}, odd, keep_4h=True).config.intermediate_size == 4 * 512
    assert coerce({"hidden_size": 512}, keep_4h=False).config.intermediate_size == 3072


@pytest.mark.parametrize("hidden, heads, expected", [
    (768, 12, 12),  # divides: kept
    (1024, 12, 16),  # head size 64
    (100, 12, 2),  # divisors of 100 give head sizes 100, 50, 25, ...: 50 is nearest 64
    (64, 12, 1),
])
def test_fit_heads(hidden, heads, expected):
    assert fit_heads(hidden, heads) == expected


@given(configs(), configs())
@settings(max_examples=60, deadline=None)
def test_no_edit_is_identity_and_every_field_given_wins(cfg, other):
    assert coerce({}, cfg).config == cfg
    assert coerce(cfg.to_dict(), other).config == cfg


@given(configs(family="albert"))
@settings(max_examples=60, deadline=None)
def test_bert_twin_is_the_family_switch_with_berts_gelu(cfg):
    twin = switch_family(cfg, "bert").replace(hidden_act="gelu")  # the paper's BERT uses GELU
    assert twin == bert_twin(cfg)
    assert (twin.embedding_size, twin.sharing, twin.num_hidden_groups, twin.inner_group_num) == \
        (cfg.hidden_size, "none", 1, 1)
    for name in ("vocab_size", "hidden_size", "num_layers", "num_heads", "intermediate_size", "head"):
        assert getattr(twin, name) == getattr(cfg, name)
