"""Issue 42: Paper & formulas shows each family's own closed forms; every formula shown, evaluated at the config's
numbers, equals `count_params`, component by component, and every component counted has its formula."""

from __future__ import annotations

import pytest

from albert_core import count_params
from albert_core.configuration.coerce import albertize
from albert_core.configuration.presets import ALL_PRESETS
from ui.paper.formulas import formulas, one_layer


def _variants(cfg):
    yield cfg
    for head in ("model", "masked-lm"):
        yield cfg.replace(head=head)
    yield cfg.replace(head="masked-lm", tie_word_embeddings=False)
    yield albertize(cfg)  # E = 128, all shared
    yield albertize(cfg, embedding_size=None, sharing="attention", num_hidden_groups=2)


@pytest.mark.parametrize("name", list(ALL_PRESETS))
def test_every_formula_evaluates_to_the_counter(name):
    for cfg in _variants(ALL_PRESETS[name]):
        counted = count_params(cfg).by_name()
        shown = {f.component: f.value(cfg) for f in formulas(cfg)}
        assert shown == counted, (name, cfg.head, cfg.sharing)


def test_the_axes_decide_the_terms():
    modern = ALL_PRESETS["modernbert-base"]
    tex = {f.component: f.tex() for f in formulas(modern)}
    assert tex["encoder.attention.qkv"] == r"n_{att}\cdot 3H^2"  # bias-free: not 3(H^2 + H)
    assert tex["encoder.ffn.ffn"] == r"n_{ffn}\cdot 2H\,I"  # a GLU's gate and up
    assert "embeddings.position_embeddings" not in tex  # rotary: no position table
    assert tex["encoder.attention.LayerNorm"] == r"n_{an}\cdot H"  # bias-free norm, the first block's identity
    bert = {f.component: f.tex() for f in formulas(ALL_PRESETS["bert-base"])}
    assert bert["encoder.attention.qkv"] == r"n_{att}\,(3H^2 + 3H)" and bert["encoder.ffn.ffn"] == r"n_{ffn}\,(H\,I + I)"
    assert one_layer(ALL_PRESETS["bert-base"]).tex() == r"4H^2 + 2H\,I + 9H + I"
    gqa = ALL_PRESETS["eurobert-610m"]
    assert gqa.kv_size != gqa.hidden_size
    assert {f.component: f.tex() for f in formulas(gqa)}["encoder.attention.qkv"] == r"n_{att}\,(H^2 + 2H\,H_{kv})"


def _schemes():
    from albert_core.configuration.coerce import coerce

    albert = ALL_PRESETS["albert-base"]
    yield coerce({"num_hidden_groups": 2, "block_order": "cycle", "unique_ends": True, "repeat": 2,
                  "lora_rank": 8}, albert).config
    yield coerce({"sharing": "attention", "lora_rank": 4, "lora_targets": "k-o"}, albert).config
    yield coerce({"sharing": "none", "repeat": 3, "lora_rank": 2, "lora_targets": "in-out"}, albert).config
    yield coerce({"lora_rank": 8, "lora_targets": "q-v-in"}, albertize(ALL_PRESETS["modernbert-base"])).config
    yield coerce({"lora_rank": 4, "unique_ends": True}, albertize(ALL_PRESETS["eurobert-610m"])).config  # GQA, GLU


def test_the_sharing_schemes_formulas_evaluate_to_the_counter():
    """Issue 44: each LoRA component has its closed form r (d_in + d_out) times the positions that carry it; unique
    ends hold G + 2 copy sets; every formula still equals count_params."""
    for cfg in _schemes():
        counted = count_params(cfg).by_name()
        shown = {f.component: f.value(cfg) for f in formulas(cfg)}
        assert shown == counted, cfg.label


def test_the_lora_formulas_read_as_written():
    cfg = next(_schemes())
    tex = {f.component: f.tex() for f in formulas(cfg)}
    assert tex["encoder.lora.q"] == r"n_{la}\cdot 2r\,H"
    assert tex["encoder.lora.in"] == r"n_{lf}\,(r\,H + r\,I)"
    assert one_layer(cfg).tex() == r"4H^2 + 2H\,I + 9H + I"  # a LoRA is per position, not part of a layer
    gqa = list(_schemes())[-1]
    tex = {f.component: f.tex() for f in formulas(gqa)}
    assert tex["encoder.lora.k"] == r"n_{la}\,(r\,H + r\,H_{kv})" and tex["encoder.lora.in"] == r"n_{lf}\,(r\,H + 2r\,I)"
