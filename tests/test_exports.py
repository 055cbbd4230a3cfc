"""Export files: parsed back and compared with independent oracles (transformers models on the meta
device, the published closed forms, the matmul FLOP formula)."""

from __future__ import annotations

import io
import json

import pandas as pd
import pytest
import torch
import transformers
from hypothesis import given, settings
from hypothesis import strategies as st

from albert_core import PRESETS, ModelConfig, Workload
from albert_core.configuration.hf_config import config_from_hf
from albert_core.configuration.presets import config_name
from albert_core.counting.report import analyze, result_from_dict
from tests.helpers.facts import MODEL_COUNTS as FACTS_MODEL
from tests.helpers.facts import albert_model_closed_form, forward_flops_closed_form
from tests.helpers.strategies import configs
from ui import urls
from ui.explorer import exports


# Exact transformers counts (transformers' exact count), XModel.
@pytest.mark.parametrize("name", ["albert-base", "bert-large"])
def test_breakdown_csv_parses_back_to_the_exact_count(name):
    from albert_core import count_params

    df = pd.read_csv(io.StringIO(exports.breakdown_csv(count_params(PRESETS[name]))))
    assert {"component", "label", "group", "params", "unshared", "share"} <= set(df.columns)
    assert df["params"].sum() == FACTS_MODEL[name]
    assert df["share"].sum() == pytest.approx(1.0)
    assert (df["unshared"] >= df["params"]).all()
    if name == "albert-base":  # all-shared: one layer held, twelve run
        qkv = df.set_index("component").loc["encoder.attention.qkv"]
        assert qkv["unshared"] == 12 * qkv["params"] == 12 * 3 * (768 * 768 + 768)


def test_json_report_numbers():
    cfg, wl = PRESETS["albert-base"], Workload(batch=2, seq_len=64, dtype="fp16", optimizer="adam")
    rep = json.loads(analyze(cfg, wl).to_json())
    assert rep["config"]["hidden_size"] == 768 and rep["workload"] == {
        "batch": 2, "seq_len": 64, "dtype": "fp16", "optimizer": "adam", "precision": "pure", "checkpointing": False}
    assert rep["params"]["total"] == FACTS_MODEL["albert-base"] == sum(c["params"] for c in rep["params"]["components"])
    assert rep["params"]["groups"]["embeddings"] == (30_000 + 512 + 2) * 128 + 2 * 128 + 128 * 768 + 768
    assert rep["flops"]["forward_per_sequence"] == forward_flops_closed_form(cfg, 1, 64)
    assert rep["flops"]["forward_per_batch"] == forward_flops_closed_form(cfg, 2, 64)
    assert rep["flops"]["training_per_batch"] == 3 * rep["flops"]["forward_per_batch"]
    assert rep["flops"]["macs_per_batch"] * 2 == rep["flops"]["forward_per_batch"]
    assert rep["flops"]["training_per_token"] == pytest.approx(rep["flops"]["training_per_batch"] / 128)
    train = rep["memory"]["training"]
    n = FACTS_MODEL["albert-base"]
    assert (train["weights"], train["gradients"], train["optimizer"]) == (2 * n, 2 * n, 2 * 2 * n)
    assert train["total"] == sum(train[k] for k in ("weights", "gradients", "optimizer", "activations"))
    twin = rep["bert_twin"]
    assert twin["config"]["family"] == "bert" and twin["config"]["vocab_size"] == 30_000
    assert twin["params"] == FACTS_MODEL["bert-base"] - 522 * 768  # BERT-base at V = 30,000
    # Sharing saves no compute: the twin's encoder FLOPs are the same matmuls.
    twin_f, f = twin["flops"]["components_per_sequence"], rep["flops"]["components_per_sequence"]
    assert twin_f["encoder.attention.qkv"] == f["encoder.attention.qkv"]
    assert twin_f["encoder.attention.scores"] == f["encoder.attention.scores"] == 12 * 4 * 64 * 64 * 768


def test_json_report_convention_states_the_training_rule_its_numbers_follow():
    """Under gradient checkpointing the backward runs the encoder layers' forward again: training is 3 x forward
    plus those layers' forward (not the embeddings or heads), and the convention says so."""
    cfg = PRESETS["albert-base"]
    plain, ckpt = (analyze(cfg, Workload(batch=2, seq_len=64, checkpointing=c)).to_dict()["flops"]
                   for c in (False, True))
    assert plain["training_per_batch"] == 3 * plain["forward_per_batch"]
    assert plain["convention"].endswith("training = 3 x forward")
    layers = 2 * cfg.num_layers * (8 * 64 * 768**2 + 4 * 64**2 * 768 + 4 * 64 * 768 * 3072)  # closed form, B = 2
    assert ckpt["training_per_batch"] == 3 * ckpt["forward_per_batch"] + layers == 3 * ckpt["forward_per_batch"] + \
        ckpt["recomputed_per_batch"]
    assert "gradient checkpointing" in ckpt["convention"] and "encoder layers' forward" in ckpt["convention"]


def test_json_report_int8_has_no_training_memory():
    rep = analyze(PRESETS["albert-base"], Workload(dtype="int8")).to_dict()
    assert rep["memory"]["training"] is None
    assert rep["memory"]["inference"]["weights"] == FACTS_MODEL["albert-base"]


@pytest.mark.parametrize("cfg", [
    PRESETS["albert-base"].replace(head="pretraining", num_layers=6, num_hidden_groups=2, inner_group_num=2),
    PRESETS["bert-base"].replace(head="masked-lm", tie_word_embeddings=False),
    PRESETS["albert-large"].replace(sharing="none"),
], ids=["albert-grouped", "bert-untied", "albert-unshared"])
def test_hf_config_json_builds_the_same_model_in_transformers(cfg):
    from albert_core import count_params

    data = json.loads(exports.hf_config_json(cfg))
    family = transformers.AlbertConfig if data["model_type"] == "albert" else transformers.BertConfig
    cls = getattr(transformers, data["architectures"][0])
    with torch.device("meta"):
        model = cls(family(**data))
    assert sum(p.numel() for p in model.parameters()) == count_params(cfg).total
    # Read back (unshared ALBERT comes back as all-shared with G = L: the same model).
    assert count_params(config_from_hf(data)).total == count_params(cfg).total


def test_hf_config_unavailable_for_partial_sharing():
    with pytest.raises(ValueError, match="sharing"):
        exports.hf_config_json(PRESETS["albert-base"].replace(sharing="ffn"))


def test_closed_form_oracle_agrees_with_facts():
    for name in ("albert-base", "albert-large", "albert-xlarge", "albert-xxlarge"):
        assert albert_model_closed_form(PRESETS[name]) == FACTS_MODEL[name]


# ----------------------------------------------------------------------------- pin codec
@settings(max_examples=60, deadline=None)
@given(configs().map(lambda c: c.replace(layer_norm_eps=1e-12)))  # a pin holds the URL fields; eps is none
def test_pin_round_trip(cfg):
    entry = urls.encode_pin(cfg)
    assert "," not in entry and urls.decode_pin(entry) == cfg
    assert urls.decode_pins(urls.encode_pins([entry, "bert-base"]))[0][-1] == "bert-base"


@settings(max_examples=200, deadline=None)
@given(configs(), configs())
def test_config_names_are_unique(a, b):
    assert (config_name(a) == config_name(b)) == (a == b)


def test_config_names_read_as_label_plus_differences():
    base = PRESETS["albert-base"]
    assert config_name(base) == "albert-base"
    assert config_name(base.replace(vocab_size=50_000)) == "ALBERT H=768 L=12 E=128 all-shared V=50000"
    assert config_name(base.replace(sharing="none", num_hidden_groups=3)) == "ALBERT H=768 L=12 E=128 not shared G=3"
    assert config_name(PRESETS["bert-base"].replace(hidden_act="gelu_new", tie_word_embeddings=False)) \
        == "BERT H=768 L=12 act=gelu_new untied"


@settings(max_examples=60, deadline=None)
@given(configs().map(lambda c: c.replace(layer_norm_eps=1e-12)), st.text("ab -_9", min_size=1, max_size=32))
def test_named_pin_round_trip(cfg, name):
    entry = urls.encode_pin(cfg, name)
    assert urls.decode_pin(entry) == cfg and urls.pin_name(entry) == (name.strip() or config_name(cfg))
    assert urls.decode_pins(urls.encode_pins([entry]))[0] == [entry]


def test_pin_names_are_checked():
    with pytest.raises(ValueError, match="letters, digits"):
        urls.encode_pin(PRESETS["bert-base"], "a,b")
    with pytest.raises(ValueError, match="at most 32"):
        urls.encode_pin(PRESETS["bert-base"], "x" * 33)
    entries, problems = urls.decode_pins("bert-base~name.x,albert-base~name.x,albert-base")
    assert entries == ["bert-base~name.x", "albert-base"] and "used twice" in problems[0]


def test_pins_are_canonical_and_bounded():
    assert urls.encode_pin(PRESETS["albert-large"]) == "albert-large"
    assert urls.encode_pin(ModelConfig(hidden_size=1024, num_heads=16, intermediate_size=4096, num_layers=24)) \
        == "albert-large"
    entries, problems = urls.decode_pins("bert-base,H.1024~heads.16,nope,H.abc,<b>x</b>,bert-base")
    assert entries == ["bert-base", "H.1024~heads.16"]
    assert len(problems) == 3 and any("H='abc'" in p for p in problems)
    many = ",".join(f"L.{n}" for n in range(1, 12))
    entries, problems = urls.decode_pins(many)
    assert len(entries) == urls.MAX_PINS and "at most" in problems[-1]
    assert urls.decode_pins("x" * 5000) == ([], ["URL value pin is too long (5,000 characters)"])


SCHEMA_KEYS = {  # the documented schema (albert_core.counting.report), written out independently
    "": {"version", "config", "workload", "params", "flops", "memory", "bert_twin"},
    "params": {"total", "without_sharing", "saved_by_sharing", "groups", "components"},
    "flops": {"convention", "forward_per_sequence", "forward_per_batch", "training_per_batch", "macs_per_batch",
              "recomputed_per_batch", "training_per_token", "components_per_sequence"},
    "memory": {"dtype", "bytes_per_element", "training", "inference", "master_weights"},
    "bert_twin": {"config", "params", "groups", "flops", "memory"},
}


@pytest.mark.parametrize("name", ["albert-base", "bert-large"])
@pytest.mark.parametrize("dtype", ["bf16", "int8"])
def test_json_report_follows_the_schema_and_round_trips(name, dtype):
    result = analyze(PRESETS[name], Workload(batch=4, seq_len=256, dtype=dtype))
    data = json.loads(result.to_json())
    for part, keys in SCHEMA_KEYS.items():
        assert set(data[part] if part else data) == keys, part
    assert data["version"] == 2
    assert data["memory"]["dtype"] == dtype and data["memory"]["bytes_per_element"] == {"bf16": 2, "int8": 1}[dtype]
    assert data["config"]["name"] == name and data["bert_twin"]["config"]["name"] == {
        "albert-base": "BERT H=768 L=12 V=30000", "bert-large": "bert-large"}[name]
    assert result_from_dict(data) == result  # the export determines the result
    assert json.loads(result_from_dict(data).to_json()) == data
    # The typed attributes are what the export says.
    assert result.own.params.total == data["params"]["total"] == FACTS_MODEL[name]
    assert result.twin.params.total == data["bert_twin"]["params"]
    assert result.own.memory.total == (data["memory"]["training"] or data["memory"]["inference"])["total"]
    assert result.own.memory_kind == ("inference" if dtype == "int8" else "training")
    with pytest.raises(ValueError, match="version"):
        result_from_dict({**data, "version": 1})


def test_flop_and_memory_csvs_against_closed_forms():
    from ui.explorer.exports import flops_csv, memory_csv

    n = FACTS_MODEL["bert-base"]
    S, H, I, L, B = 128, 768, 3072, 12, 8  # noqa: E741
    res = analyze(PRESETS["bert-base"], Workload(batch=B, seq_len=S, dtype="bf16", precision="mixed",
                                                 checkpointing=True))
    f = pd.read_csv(io.StringIO(flops_csv(res))).set_index("component")
    assert f.loc["encoder.attention.qkv", "forward_per_sequence"] == L * 2 * S * H * 3 * H
    assert f.loc["encoder.attention.scores", "forward_per_batch"] == B * L * 4 * S * S * H
    assert f.loc["encoder.ffn.ffn", "training_per_batch"] == 4 * B * L * 2 * S * H * I  # fwd + 2 bwd + recompute
    assert f.loc["pooler", "recomputed_per_batch"] == 0 and f.loc["pooler", "forward_per_sequence"] == 2 * H * H
    m = pd.read_csv(io.StringIO(memory_csv(res)), keep_default_na=False)
    train = m[m["memory"] == "training"].set_index("part")
    assert train.loc["weights", "bytes"] == train.loc["gradients", "bytes"] == 2 * n
    assert train.loc["optimizer", "bytes"] == 12 * n and "fp32 master copy" in train.loc["optimizer", "label"]
    assert train.loc["master_weights", "bytes"] == 4 * n and train.loc["master_weights", "included_in"] == "optimizer"
    assert not train.loc["activations", "exact"] and "estimate" in train.loc["activations", "label"]
    parts = ["weights", "gradients", "optimizer", "activations"]
    assert train.loc["total", "bytes"] == train.loc[parts, "bytes"].sum()
    assert set(m["memory"]) == {"training", "inference"}


def test_explorer_offers_the_flop_and_memory_csvs(app):
    at = app()
    assert not at.exception
    keys = {b.proto.id for b in at.get("download_button")}
    assert any("dl_flops_csv" in k for k in keys) and any("dl_memory_csv" in k for k in keys)
