"""sweep: every row equals the scalar counters on that row's ModelConfig; invalid rows are dropped exactly
when ModelConfig rejects them."""

from __future__ import annotations

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from albert_core import PRESETS, ModelConfig, count_flops, count_params, estimate_memory
from albert_core.configuration.coerce import bert_twin
from albert_core.configuration.workload import check_seq_len
from albert_core.counting.sweeps import FIELDS, sweep
from tests.helpers.facts import MODEL_COUNTS


def row_config(row) -> ModelConfig:
    return ModelConfig(**{f: (row[f].item() if hasattr(row[f], "item") else row[f]) for f in FIELDS})


def expected(cfg: ModelConfig, batch: int, seq_len: int, dtype: str, optimizer: str) -> dict[str, int]:
    p = count_params(cfg)
    f = count_flops(cfg, batch, seq_len)
    m = estimate_memory(cfg, batch, seq_len, dtype, optimizer, training=dtype != "int8")
    groups = p.group_totals()
    return {
        "params": p.total, "embedding_params": groups["embeddings"], "encoder_params": groups["encoder"],
        "head_params": groups["heads"], "unshared_params": p.unshared_total,
        "forward_flops": f.forward, "training_flops": f.training,
        "weights_bytes": m.weights, "gradients_bytes": m.gradients, "optimizer_bytes": m.optimizer,
        "activation_bytes": m.activations, "training_bytes": m.total,
    }  # fmt: skip


def check_rows(df, batch=1, seq_len=128, dtype="fp32", optimizer="adamw") -> None:
    for _, row in df.iterrows():
        cfg = row_config(row)
        assert row["model"] == cfg.family.upper()
        for key, value in expected(cfg, batch, seq_len, dtype, optimizer).items():
            assert row[key] == value, (cfg.label, key)


@pytest.mark.parametrize(
    ("x", "values", "y", "y_values", "workload"),
    [
        ("hidden_size", [128, 256, 768, 1000], "num_layers", [1, 12, 24], {}),
        ("embedding_size", [64, 128, 768], "sharing", ["none", "all", "attention", "ffn"], {"batch": 4}),
        ("head", ["model", "pretraining", "masked-lm"], "tie_word_embeddings", [True, False], {"dtype": "bf16"}),
        ("hidden_act", ["gelu", "gelu_new", "relu"], "num_hidden_groups", [1, 3, 12, 13], {"optimizer": "sgd"}),
        ("inner_group_num", [1, 2], None, None, {"dtype": "int8", "optimizer": "none", "seq_len": 64}),
        ("family", ["albert", "bert"], None, None, {}),
    ],
)
def test_rows_equal_scalar_counters(x, values, y, y_values, workload) -> None:
    base = PRESETS["albert-base"].replace(head="pretraining")
    df = sweep(base, x, values, y, y_values, **workload)
    check_rows(df, **workload)
    n_albert = (df["model"] == "ALBERT").sum()
    # One BERT twin per ALBERT row, same x value, no factorization or sharing.
    twins = df[df["model"] == "BERT"]
    assert (twins["embedding_size"] == twins["hidden_size"]).all() and (twins["sharing"] == "none").all()
    if x != "family":
        assert len(twins) == n_albert
        assert list(twins["x"]) == list(df[df["model"] == "ALBERT"]["x"])
        albert = [row_config(r) for _, r in df[df["model"] == "ALBERT"].iterrows()]
        assert [row_config(r) for _, r in twins.iterrows()] == [bert_twin(c) for c in albert]


def test_bert_base_and_no_twins() -> None:
    df = sweep(PRESETS["bert-base"], "num_layers", [6, 12], include_bert=False)
    assert list(df["model"]) == ["BERT", "BERT"]
    assert list(df["params"]) == [count_params(PRESETS["bert-base"].replace(num_layers=n)).total for n in (6, 12)]
    # Sweeping E of a BERT config changes nothing: ModelConfig pins E = H for BERT.
    df = sweep(PRESETS["bert-base"], "embedding_size", [64, 128])
    assert (df["embedding_size"] == 768).all() and df["params"].nunique() == 1


@settings(max_examples=30, deadline=None)
@given(
    st.sampled_from(["hidden_size", "num_heads", "num_hidden_groups", "num_layers", "max_position_embeddings",
                     "inner_group_num", "vocab_size", "sharing", "family"]),
    st.lists(st.integers(-2, 2000) | st.sampled_from(["all", "bert", "none", "x"]), min_size=1, max_size=6),
    st.sampled_from(["albert-base", "albert-xlarge", "bert-base"]),
)
def test_skipped_exactly_when_modelconfig_rejects(field, raw, preset) -> None:
    base = PRESETS[preset]
    numeric = field not in ("sharing", "family")
    values = [v for v in raw if isinstance(v, int) == numeric]
    if not values:
        return
    df = sweep(base, field, values, include_bert=False, seq_len=100)
    accepted = []
    for v in values:
        try:
            cfg = base.replace(**{field: v})
            check_seq_len(cfg, 100)
            accepted.append(v)
        except ValueError:
            pass
    assert list(df["x"]) == accepted
    assert len(df.attrs["skipped"]) == len(values) - len(accepted)
    check_rows(df, seq_len=100)


def test_skipped_messages_name_the_rule() -> None:
    df = sweep(PRESETS["albert-base"], "hidden_size", [768, 770], "num_hidden_groups", [1, 13])
    assert df.attrs["skipped"] == [
        "hidden_size=768, num_hidden_groups=13: num_hidden_groups must be between 1 and num_layers (12), got 13",
        "hidden_size=770, num_hidden_groups=1: hidden_size (770) must be divisible by num_heads (12)",
        "hidden_size=770, num_hidden_groups=13: hidden_size (770) must be divisible by num_heads (12)",
    ]
    assert len(df) == 2
    many = sweep(PRESETS["albert-base"], "hidden_size", list(range(1, 2001)), include_bert=False)
    assert len(many) == 2000 // 12 and many.attrs["skipped"][-1].endswith("more combinations skipped")


def test_huge_values_stay_exact() -> None:
    # Beyond int64: the group is recounted with Python ints, still equal to the scalar counters.
    base = ModelConfig(hidden_size=65_536, num_heads=1024, intermediate_size=262_144, num_layers=512,
                       inner_group_num=64, max_position_embeddings=65_536, vocab_size=1_000_000)
    df = sweep(base, "num_hidden_groups", [1, 512], batch=4096, seq_len=65_536)
    check_rows(df, batch=4096, seq_len=65_536)
    assert df["training_flops"].max() > 2**63


@pytest.mark.parametrize(
    ("args", "kwargs", "match"),
    [
        (("hidden", [1]), {}, "x must be one of the ModelConfig fields"),
        (("layer_norm_eps", [1e-5]), {}, "x must be one of the ModelConfig fields"),
        (("hidden_size", []), {}, "values for hidden_size must be a non-empty list"),
        (("hidden_size", [1.5]), {}, "values for hidden_size must be a list of whole numbers"),
        (("hidden_size", [768], "num_layers"), {}, "y and y_values must be given together"),
        (("hidden_size", [768], "hidden_size", [512]), {}, "y must differ from x"),
        (("hidden_size", [768]), {"batch": 0}, "batch must be a whole number between 1"),
        (("hidden_size", [768]), {"seq_len": 1000}, "seq_len .1000. must not exceed"),
        (("hidden_size", [768]), {"dtype": "fp8"}, "dtype must be one of"),
        (("hidden_size", [768]), {"optimizer": "lion"}, "optimizer must be one of"),
    ],
)
def test_bad_input(args, kwargs, match) -> None:
    with pytest.raises(ValueError, match=match):
        sweep(PRESETS["albert-base"], *args, **kwargs)


def test_bad_base() -> None:
    with pytest.raises(ValueError, match="base must be a ModelConfig"):
        sweep({"hidden_size": 768}, "hidden_size", [768])  # type: ignore[arg-type]


def test_public_name_is_callable_in_any_import_order() -> None:
    import albert_core

    df = albert_core.sweep(PRESETS["albert-base"], "num_layers", [1, 2])
    twins = [count_params(bert_twin(PRESETS["albert-base"]).replace(num_layers=n)).total for n in (1, 2)]
    albert_base = MODEL_COUNTS["albert-base"]
    assert list(df["params"]) == [albert_base, albert_base, *twins]  # all-shared: depth is free


@pytest.mark.parametrize("base", [ModelConfig(), ModelConfig(family="bert", sharing="none"),
                                  ModelConfig(sharing="ffn", num_layers=6, num_hidden_groups=2)])
def test_a_sweep_of_some_columns_is_those_columns_of_the_whole_sweep(base):
    cols = ("model", "vocab_size", "embedding_size", "embedding_params", "training_bytes")
    whole = sweep(base, "vocab_size", [1000, 30_000], "embedding_size", [64, 4096], seq_len=128)
    part = sweep(base, "vocab_size", [1000, 30_000], "embedding_size", [64, 4096], seq_len=128, columns=cols)
    assert list(part.columns) == list(cols)
    pd.testing.assert_frame_equal(part, whole[list(cols)])
    assert part.attrs["skipped"] == whole.attrs["skipped"]


@pytest.mark.parametrize("columns, rule", [(("params", "nope"), "no such column"), ((), "non-empty"),
                                           ("params", "non-empty")])
def test_a_sweep_names_a_bad_columns_argument(columns, rule):
    with pytest.raises(ValueError, match=rule):
        sweep(ModelConfig(), "num_layers", [1, 2], columns=columns)
