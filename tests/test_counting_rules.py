"""Rules of the counting layer the pages state: a BERT's ALBERT counterpart (the ALBERT whose BERT twin it is,
`counting.results`) and the N of the "6N" rule of thumb (`counting.flops`). Expected values are closed forms."""

from __future__ import annotations

import pytest

from albert_core import PRESETS, Workload, count_params
from albert_core.configuration.coerce import bert_twin
from albert_core.counting.flops import six_n_flops, six_n_params
from albert_core.counting.report import albert_counterpart, analyze
from tests.helpers.facts import MODEL_COUNTS


def test_albert_counterpart_of_a_bert_is_its_twin():
    bert = PRESETS["bert-base"]
    alt = albert_counterpart(bert)
    assert alt.family == "albert" and alt.sharing == "all" and alt.embedding_size == 128
    assert bert_twin(alt) == bert
    # albert-base's closed form at BERT's vocabulary V = 30,522: 522 more rows of E = 128.
    assert count_params(alt).total == MODEL_COUNTS["albert-base"] + 522 * 128
    rep = analyze(alt, Workload())
    assert rep.twin.params.total == MODEL_COUNTS["bert-base"]  # transformers' exact count, BertModel


def test_a_bert_no_albert_twins_has_no_counterpart():
    # an ALBERT's BERT twin always runs GELU, so a ReLU BERT is nobody's twin
    assert albert_counterpart(PRESETS["bert-base"].replace(hidden_act="relu")) is None


def _encoder_layer(h: int, i: int) -> int:
    """One encoder layer's weights by hand: Q, K, V and the output projection (4 x (H^2 + H)), the FFN
    (H x I + I and I x H + H) and two LayerNorms (2 x 2H)."""
    return 4 * (h * h + h) + (h * i + i) + (i * h + h) + 4 * h


def test_six_n_takes_the_encoder_weights_once_per_executed_layer():
    layer = _encoder_layer(768, 3072)
    assert layer == 12 * 768**2 + 13 * 768  # the usual 12 H^2 (+ biases and LayerNorms) with I = 4H
    # BERT-base: 12 layers, about 85M non-embedding parameters (of its ~110M)
    assert six_n_params(PRESETS["bert-base"]) == 12 * layer == 85_054_464
    # ALBERT-base holds one layer and runs it 12 times: N counts the 12 runs, not the 7M unique weights
    albert = PRESETS["albert-base"]
    assert six_n_params(albert) == 12 * layer
    assert count_params(albert).group_totals()["encoder"] == layer
    # K = 2 runs every layer twice: twice the N; the heads and the E->H projection never count
    assert six_n_params(albert.replace(inner_group_num=2)) == 24 * layer
    assert six_n_params(albert.replace(head="pretraining")) == 12 * layer
    assert six_n_params(count_params(albert)) == six_n_params(albert)  # a breakdown or a config


def test_six_n_flops_are_six_per_parameter_per_token():
    n = 12 * _encoder_layer(768, 3072)
    assert six_n_flops(PRESETS["bert-base"]) == 6 * n
    assert six_n_flops(PRESETS["bert-base"], tokens=8 * 128) == 6 * n * 1024
    for bad in (0, 1.5, True):
        with pytest.raises(ValueError, match="tokens"):
            six_n_flops(PRESETS["bert-base"], tokens=bad)
    with pytest.raises(ValueError, match="params"):
        six_n_params("bert-base")  # type: ignore[arg-type]
