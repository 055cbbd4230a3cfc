"""count_params against transformers' own models (built on the meta device), and the closed forms."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings

from albert_core import PRESETS, ModelConfig, count_params
from albert_core.counting.params import COMPONENT_INFO, component_of
from tests.helpers.facts import EXACT_COUNTS, SHARING_COUNTS
from tests.helpers.hf_models import hf_model
from tests.helpers.strategies import configs

# transformers parameter name (prefix albert./bert. removed) -> our component name. Written from
# modeling_albert.py / modeling_bert.py, independently of albert_core.counting.params.
_HF_RULES = [
    (r"embeddings\.(word_embeddings|position_embeddings|token_type_embeddings|LayerNorm)\.", r"embeddings.\1"),
    (r"encoder\.embedding_hidden_mapping_in\.", "encoder.embedding_hidden_mapping_in"),
    (r"encoder\..*\.attention\.(query|key|value)\.", "encoder.attention.qkv"),
    (r"encoder\..*\.attention\.self\.(query|key|value)\.", "encoder.attention.qkv"),
    (r"encoder\..*\.attention\.(output\.)?dense\.", "encoder.attention.dense"),
    (r"encoder\..*\.attention\.(output\.)?LayerNorm\.", "encoder.attention.LayerNorm"),
    (r"encoder\..*\.ffn\.", "encoder.ffn.ffn"),
    (r"encoder\..*\.intermediate\.dense\.", "encoder.ffn.ffn"),
    (r"encoder\..*\.ffn_output\.", "encoder.ffn.ffn_output"),
    (r"encoder\.layer\.\d+\.output\.dense\.", "encoder.ffn.ffn_output"),
    (r"encoder\..*\.full_layer_layer_norm\.", "encoder.ffn.LayerNorm"),
    (r"encoder\.layer\.\d+\.output\.LayerNorm\.", "encoder.ffn.LayerNorm"),
    (r"pooler\.", "pooler"),
    (r"(cls\.)?predictions\.(transform\.)?dense\.", "predictions.dense"),
    (r"(cls\.)?predictions\.(transform\.)?LayerNorm\.", "predictions.LayerNorm"),
    (r"(cls\.)?predictions\.decoder\.", "predictions.decoder"),
    (r"(cls\.)?predictions\.bias$", "predictions"),
    (r"sop_classifier\.classifier\.", "sop_classifier"),
    (r"cls\.seq_relationship\.", "nsp_classifier"),
]


def hf_component(name: str) -> str:
    name = re.sub(r"^(albert|bert)\.", "", name)
    for pattern, target in _HF_RULES:
        m = re.match(pattern, name)
        if m:
            return m.expand(target)
    raise AssertionError(f"unmapped transformers parameter {name}")


def hf_counts(model) -> dict[str, int]:
    out: dict[str, int] = {}
    for name, p in model.named_parameters():  # named_parameters yields a tied tensor once
        key = hf_component(name)
        out[key] = out.get(key, 0) + p.numel()
    return out


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(configs(sharing=("none", "all")))
def test_matches_transformers_per_component(cfg: ModelConfig) -> None:
    model = hf_model(cfg, device="meta")
    expected = hf_counts(model)
    got = count_params(cfg)
    assert got.by_name() == expected
    assert got.total == sum(p.numel() for p in model.parameters())
    assert [c.name for c in got.components] == [n for n in COMPONENT_INFO if n in expected]


@pytest.mark.parametrize("family", ["albert", "bert"])
def test_untied_decoder_matches_a_real_cpu_model(family: str) -> None:
    # The meta device must not hide tying: on real small models transformers 5 ties the decoder's
    # weight to the word embeddings (and its bias to predictions.bias) only when tie_word_embeddings.
    cfg = ModelConfig(family=family, vocab_size=50, embedding_size=8, hidden_size=16, num_layers=2,
                      num_heads=2, intermediate_size=32, head="pretraining", tie_word_embeddings=False,
                      sharing="all" if family == "albert" else "none")
    E = cfg.embedding_size
    model = hf_model(cfg, device="cpu")
    assert count_params(cfg).total == sum(p.numel() for p in model.parameters())
    assert count_params(cfg).by_name()["predictions.decoder"] == 50 * E + 50
    tied = hf_model(cfg.replace(tie_word_embeddings=True), device="cpu")
    decoder = tied.predictions.decoder if family == "albert" else tied.cls.predictions.decoder
    assert decoder.weight is tied.get_input_embeddings().weight
    assert "predictions.decoder" not in count_params(cfg.replace(tie_word_embeddings=True)).by_name()


def test_facts_table_and_closed_forms() -> None:
    # transformers' exact counts (transformers 5.24).
    for name, (model, pretraining) in EXACT_COUNTS.items():
        cfg = PRESETS[name]
        assert count_params(cfg).total == model, name
        assert count_params(cfg.replace(head="pretraining")).total == pretraining, name


def closed_form(cfg: ModelConfig) -> int:
    """The published closed forms, extended to partial sharing by its stated rule (a shared block
    is held G*K times, an unshared one L*K times)."""
    V, E, H, P, T, L = (cfg.vocab_size, cfg.embedding_size, cfg.hidden_size,
                        cfg.max_position_embeddings, cfg.type_vocab_size, cfg.num_layers)
    I = cfg.intermediate_size  # noqa: E741 (paper notation)
    G, K, C = cfg.num_hidden_groups, cfg.inner_group_num, 2
    attention, ffn = 4 * H * H + 4 * H + 2 * H, 2 * H * I + I + H + 2 * H
    n_att = (G if cfg.sharing in ("all", "attention") else L) * K
    n_ffn = (G if cfg.sharing in ("all", "ffn") else L) * K
    model = (V + P + T) * E + 2 * E + (E * H + H) + n_att * attention + n_ffn * ffn + H * H + H
    return {
        "model": model,
        "pretraining": model + H * E + 3 * E + V + C * H + C,
        "masked-lm": model - (H * H + H) + H * E + 3 * E + V,
    }[cfg.head]


def test_partial_sharing_closed_forms() -> None:
    base = PRESETS["albert-base"]
    assert count_params(base.replace(sharing="attention")).total == SHARING_COUNTS["attention"]
    assert count_params(base.replace(sharing="ffn")).total == SHARING_COUNTS["ffn"]
    for sharing in ("attention", "ffn"):
        for head in ("model", "pretraining", "masked-lm"):
            for G, K in ((1, 1), (3, 1), (4, 2), (12, 3)):
                cfg = base.replace(sharing=sharing, head=head, num_hidden_groups=G, inner_group_num=K)
                assert count_params(cfg).total == closed_form(cfg), (sharing, head, G, K)


@settings(max_examples=30, deadline=None)
@given(configs(sharing=("none", "all", "attention", "ffn")))
def test_unshared_is_one_copy_per_executed_layer(cfg: ModelConfig) -> None:
    b = count_params(cfg)
    X = cfg.num_layers * cfg.inner_group_num
    # Unsharing = the same model with one copy of every block per executed layer: ALBERT with G = L*K
    # layers, K = 1 and no sharing holds exactly that.
    flat = count_params(cfg.replace(num_layers=X, inner_group_num=1, num_hidden_groups=1, sharing="none"))
    assert b.unshared_total == flat.total
    assert b.saved_by_sharing >= 0  # sharing never adds parameters
    if cfg.sharing == "none" and cfg.inner_group_num == 1:
        assert b.saved_by_sharing == 0
    groups = b.group_totals()
    assert set(groups) == {"embeddings", "encoder", "heads"} and sum(groups.values()) == b.total
    frame = b.to_frame()
    assert list(frame.columns) == ["component", "label", "group", "params", "unshared", "share"]
    assert frame["params"].sum() == b.total and abs(frame["share"].sum() - 1) < 1e-9


def test_scalar_results_are_python_ints() -> None:
    b = count_params(PRESETS["albert-xxlarge"])
    assert all(type(c.params) is int and type(c.unshared) is int for c in b.components)
    assert type(b.total) is int


def test_component_of_rule() -> None:
    assert component_of("encoder.attention.3.1.qkv.weight") == "encoder.attention.qkv"
    assert component_of("encoder.ffn.0.0.LayerNorm.bias") == "encoder.ffn.LayerNorm"
    assert component_of("predictions.bias") == "predictions"
    assert component_of("predictions.decoder.weight") == "predictions.decoder"
    assert component_of("embeddings.word_embeddings.weight") == "embeddings.word_embeddings"


def test_bad_input() -> None:
    with pytest.raises(ValueError, match="cfg must be a ModelConfig"):
        count_params({"hidden_size": 768})  # type: ignore[arg-type]


def test_counting_never_imports_torch() -> None:
    code = (
        "import sys, albert_core\n"
        "from albert_core import count_params, count_flops, PRESETS\n"
        "from albert_core.counting.sweeps import sweep\n"
        "count_params(PRESETS['albert-base']); count_flops(PRESETS['albert-base'])\n"
        "sweep(PRESETS['albert-base'], 'hidden_size', [256, 512])\n"
        "import importlib, pkgutil\n"
        "for sub in ('configuration', 'counting', 'text'):\n"
        "    pkg = importlib.import_module('albert_core.' + sub)\n"
        "    for m in pkgutil.iter_modules(pkg.__path__):\n"
        "        importlib.import_module(f'albert_core.{sub}.{m.name}')\n"
        "import albert_core.cli.main, albert_core.paper, albert_core.checks, albert_core.format, albert_core.disk_cache\n"
        "from albert_core import Workload, analyze, coerce\n"
        "analyze(coerce({'hidden_size': 1024}).config, Workload()).to_json()\n"
        "bad = [m for m in ('torch', 'transformers', 'streamlit') if m in sys.modules]\n"
        "assert not bad, bad\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=str(_root()))


def _root():
    from pathlib import Path

    return Path(__file__).resolve().parents[1]
