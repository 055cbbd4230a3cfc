"""The counter audit: on a grid of configs (families, sharing modes, G and K, heads, activations) every tool runs
and its difference from the exact figure equals the sum of the causes computed from the config; a few figures
against hand arithmetic (tests/facts.py); a missing tool is a row, not an error; the CLI."""

from __future__ import annotations

import importlib.util
import json

import pytest
from facts import EXACT_COUNTS, forward_flops_closed_form

from albert_core import PRESETS, ModelConfig
from albert_core import audit as audit_mod
from albert_core.audit import TOOLS, audit
from albert_core.cli import main

TINY = dict(
    vocab_size=50,
    embedding_size=8,
    hidden_size=16,
    num_layers=4,
    num_heads=2,
    intermediate_size=24,
    max_position_embeddings=32,
)
GRID = [
    *(
        dict(
            sharing=sharing,
            num_layers=L,
            num_hidden_groups=G,
            inner_group_num=K,
            head=head,
            hidden_act=act,
            tie_word_embeddings=tied,
        )
        for sharing, (L, G, K), head, act, tied in [
            ("all", (4, 1, 1), "model", "gelu_new", True),
            ("all", (5, 2, 1), "pretraining", "gelu", True),  # G does not divide L
            ("all", (4, 2, 3), "masked-lm", "relu", False),
            ("none", (4, 1, 1), "pretraining", "gelu_new", True),
            ("none", (3, 1, 2), "masked-lm", "gelu", True),
            ("attention", (4, 2, 1), "model", "relu", True),
            ("attention", (5, 2, 3), "pretraining", "gelu_new", False),
            ("attention", (4, 1, 2), "masked-lm", "gelu", True),
            ("ffn", (4, 2, 1), "pretraining", "relu", True),
            ("ffn", (5, 2, 3), "model", "gelu_new", True),
            ("ffn", (6, 4, 2), "masked-lm", "gelu_new", False),
        ]
    ),
    dict(family="bert", sharing="none", head="model", hidden_act="gelu"),
    dict(family="bert", sharing="none", head="pretraining", hidden_act="gelu"),
    dict(family="bert", sharing="none", head="masked-lm", hidden_act="relu", tie_word_embeddings=False),
]


def _missing() -> list[str]:
    return sorted({t.module for t in TOOLS if t.dist and importlib.util.find_spec(t.module) is None})


def test_the_audit_extra_is_installed():
    """The tests' install (`make .venv/.dev`) installs requirements-audit.txt: every tool runs here."""
    assert _missing() == []


@pytest.mark.parametrize("changes", GRID, ids=lambda c: "-".join(f"{k}={v}" for k, v in c.items()))
def test_every_difference_is_explained(changes):
    cfg = ModelConfig(**TINY).replace(**changes)
    result = audit(cfg, batch=2, seq_len=8)
    assert len(result.rows) == len(TOOLS)
    for row in result.rows:
        assert row.status in ("ran", "computed"), (row.tool.key, row.status)
        assert row.explained == row.figure - row.exact, (row.tool.key, row.causes)
    assert result.unexplained == 0


def test_figures_against_hand_arithmetic():
    """albert-base with pre-training heads, one sequence of 128 tokens: V = 30,000, E = 128, H = 768."""
    cfg = PRESETS["albert-base"].replace(head="pretraining")
    rows = {r.tool.key: r for r in audit(cfg, 1, 128).rows}
    params = EXACT_COUNTS["albert-base"][1]
    assert rows["parameters"].figure == params
    assert rows["state_dict"].figure == params + 30_000 * 128 + 30_000  # tied decoder weight and bias again
    assert rows["torchinfo"].figure == params + 30_000 * 128
    layer_norm = 128 * 128 + 2 * 128 * 768 * 12 + 128 * 128  # embeddings, 2 per layer, MLM transform
    model_forward = forward_flops_closed_form(PRESETS["albert-base"], 1, 128)
    heads = 2 * 128 * (768 * 128 + 128 * 30_000) + 2 * 768 * 2  # MLM transform + decoder, SOP
    assert rows["flop_counter-sdpa"].figure == model_forward + heads
    assert rows["thop-sdpa"].figure == (model_forward + heads) // 2 + 4 * layer_norm
    assert rows["6n_unique"].figure == 6 * params * 128


def test_the_sdpa_gap_is_the_attention_matmuls():
    """fvcore skips scaled_dot_product_attention: its sdpa and eager figures differ by 2*B*S^2*H*L MACs."""
    cfg = ModelConfig(**TINY)
    rows = {r.tool.key: r.figure for r in audit(cfg, 2, 8).rows}
    assert rows["fvcore-eager"] - rows["fvcore-sdpa"] == 2 * 2 * 8 * 8 * 16 * 4


def test_a_missing_tool_is_listed_not_raised(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(
        audit_mod.importlib.util, "find_spec", lambda name, *a: None if name == "thop" else real(name, *a)
    )
    rows = {r.tool.key: r for r in audit(ModelConfig(**TINY), 1, 8).rows}
    assert rows["thop-sdpa"].status == "not installed" and rows["thop-sdpa"].figure is None
    assert rows["thop-sdpa"].unexplained is None and rows["thop-sdpa"].ratio is None
    assert rows["fvcore-sdpa"].status == "ran"


def test_the_small_twin_keeps_the_structure():
    cfg = PRESETS["albert-xxlarge"].replace(num_hidden_groups=3, inner_group_num=2, head="pretraining")
    twin = audit_mod.small_twin(cfg, 128)
    for name in (
        "family",
        "num_layers",
        "num_hidden_groups",
        "inner_group_num",
        "sharing",
        "head",
        "hidden_act",
    ):
        assert getattr(twin, name) == getattr(cfg, name)
    assert twin.hidden_size == 32 and twin.intermediate_size == 128 and twin.vocab_size == 512


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"batch": 0}, "batch must be a whole number between 1 and 64"),
        ({"seq_len": 64}, "seq_len (64) must not exceed max_position_embeddings (32)"),
    ],
)
def test_bad_workloads_name_the_field(kwargs, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        audit(ModelConfig(**TINY), **{"batch": 1, "seq_len": 8, **kwargs})


def test_cli_json_and_text(capsys):
    assert main(["audit", "--preset", "albert-base", "--num-layers", "2", "--seq-len", "16", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["unexplained_rows"] == 0
    assert {r["tool"] for r in data["rows"]} == {t.key for t in TOOLS}
    assert main(["audit", "--preset", "bert-base", "--num-layers", "1", "--seq-len", "8"]) == 0
    out = capsys.readouterr().out
    assert "unexplained differences: 0" in out and "small twin" in out


def test_cli_bad_input_is_one_line(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["audit", "--preset", "albert-base", "--seq-len", "1024"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "max_position_embeddings" in err


@pytest.mark.slow
@pytest.mark.parametrize("name", list(PRESETS))
def test_presets_at_full_size(name):
    for head in ("model", "pretraining"):
        assert audit(PRESETS[name].replace(head=head), 1, 128).unexplained == 0
