"""`python -m albert_core`: numbers against the closed forms and exact counts of transformers
(tests/helpers/facts.py), exports against transformers, and bad input -> exit code 2 with one line on
stderr."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from albert_core import PRESETS
from albert_core.cli.main import main
from albert_core.configuration.hf_config import config_from_hf
from albert_core.configuration.presets import ALL_PRESETS
from tests.helpers.cli import fails, run, run_json
from tests.helpers.facts import EXACT_COUNTS, SHARING_COUNTS

ROOT = Path(__file__).resolve().parents[1]


# ----------------------------------------------------------------------------- params
# Exact transformers counts (tests/helpers/facts.py) (XModel, XForPreTraining).
FACTS = EXACT_COUNTS


@pytest.mark.parametrize("preset", FACTS)
def test_params_json_matches_transformers_counts(capsys, preset):
    model, pretraining = FACTS[preset]
    got = run_json(capsys, "params", "--preset", preset)
    assert got["total"] == model
    assert sum(c["params"] for c in got["components"]) == model
    assert run_json(capsys, "params", "--preset", preset, "--head", "pretraining")["total"] == pretraining


def test_params_overrides_rebuild_a_preset(capsys):
    # albert-base widened to albert-large's shape must count exactly as albert-large.
    argv = ("params", "--hidden-size", "1024", "--num-heads", "16", "--num-layers", "24",
            "--intermediate-size", "4,096")
    assert run_json(capsys, *argv)["total"] == FACTS["albert-large"][0]


def test_params_partial_sharing_matches_paper_table_4_counts(capsys):
    # transformers' exact count: ALBERT-base E=128 shared-attention 63,647,232, shared-FFN 37,686,528.
    assert run_json(capsys, "params", "--sharing", "attention")["total"] == SHARING_COUNTS["attention"]
    assert run_json(capsys, "params", "--sharing", "ffn")["total"] == SHARING_COUNTS["ffn"]
    comps = run_json(capsys, "params")["components"]
    assert sum(c["unshared"] for c in comps) > sum(c["params"] for c in comps)


def test_params_closed_form_with_groups_inner_groups_and_untied_decoder(capsys):
    V, E, H, L, F, P, T, G, K = 1000, 32, 64, 6, 256, 512, 2, 3, 2  # F: intermediate size
    argv = ("params", "--vocab-size", str(V), "--embedding-size", str(E), "--hidden-size", str(H),
            "--num-heads", "4", "--num-layers", str(L), "--intermediate-size", str(F), "--groups", str(G),
            "--inner-groups", str(K), "--head", "masked-lm")
    layer = 4 * H * H + 2 * H * F + 9 * H + F
    model = (V + P + T) * E + 2 * E + (E * H + H) + G * K * layer + (H * H + H)
    masked_lm = model - (H * H + H) + H * E + 3 * E + V  # closed form (tests/helpers/facts.py)
    assert run_json(capsys, *argv)["total"] == masked_lm
    # Untied, transformers' decoder holds its own weight [V, E] and its own bias [V].
    assert run_json(capsys, *argv, "--untied")["total"] == masked_lm + V * E + V


def test_params_table_is_readable(capsys):
    out = run(capsys, "params", "--preset", "albert-base")
    assert "11,683,584" in out and "11.68M" in out
    assert "embeddings.word_embeddings" in out and "without sharing" in out
    assert "{" not in out  # a table, not JSON


def test_family_switch_drops_what_bert_cannot_have(capsys):
    assert run_json(capsys, "params", "--family", "bert", "--vocab-size", "30522")["total"] == FACTS["bert-base"][0]


# ----------------------------------------------------------------------------- hf config in and out
def test_hf_config_file_with_overrides(capsys, tmp_path):
    transformers = pytest.importorskip("transformers")
    transformers.AlbertConfig(
        hidden_size=1024, num_attention_heads=16, num_hidden_layers=24, intermediate_size=4096,
        architectures=["AlbertForPreTraining"],
    ).save_pretrained(tmp_path)
    path = str(tmp_path / "config.json")
    assert run_json(capsys, "params", "--hf-config", path)["total"] == FACTS["albert-large"][1]
    assert run_json(capsys, "params", "--hf-config", str(tmp_path), "--head", "model")["total"] == \
        FACTS["albert-large"][0]
    xl = run_json(capsys, "params", "--hf-config", path, "--hidden-size", "2048", "--intermediate-size", "8192")
    assert xl["total"] == FACTS["albert-xlarge"][1]


@pytest.mark.parametrize("preset", ["albert-base", "bert-large"])
def test_export_hf_loads_in_transformers(capsys, tmp_path, preset):
    transformers = pytest.importorskip("transformers")
    data = json.loads(run(capsys, "export-hf", "--preset", preset, "--head", "masked-lm"))
    cls = transformers.AlbertConfig if preset.startswith("albert") else transformers.BertConfig
    hf = cls(**data)
    assert config_from_hf(hf) == PRESETS[preset].replace(head="masked-lm")
    out = tmp_path / "exported.json"
    assert main(["export-hf", "--preset", preset, "--output", str(out)]) == 0
    assert capsys.readouterr().out == ""
    assert config_from_hf(out) == PRESETS[preset]


def test_export_hf_of_unshared_albert_uses_one_group_per_layer(capsys):
    data = json.loads(run(capsys, "export-hf", "--sharing", "none", "--num-layers", "6"))
    assert (data["num_hidden_groups"], data["num_hidden_layers"]) == (6, 6)


# ----------------------------------------------------------------------------- flops and memory
def test_flops_json_matches_the_closed_form(capsys):
    pytest.importorskip("albert_core.counting.flops")
    B, S = 2, 64
    for preset in ("albert-base", "bert-base"):
        c = PRESETS[preset]
        E, H, F, L = c.embedding_size, c.hidden_size, c.intermediate_size, c.num_layers
        fwd = L * (8 * B * S * H * H + 4 * B * S * S * H + 4 * B * S * H * F) + 2 * B * H * H
        if preset.startswith("albert"):
            fwd += 2 * B * S * E * H  # the E -> H projection
        got = run_json(capsys, "flops", "--preset", preset, "--batch", str(B), "--seq-len", str(S))
        assert got["forward"] == fwd
        assert sum(c["forward"] for c in got["components"]) == fwd
        assert abs(got["training"] / (3 * fwd) - 1) < 0.01  # forward + twice the forward


def test_flops_table_and_options(capsys):
    pytest.importorskip("albert_core.counting.flops")
    out = run(capsys, "flops", "--preset", "albert-base")
    assert "GFLOP" in out and "MACs" in out
    base = run_json(capsys, "flops", "--head", "pretraining")
    assert run_json(capsys, "flops", "--head", "pretraining", "--mlm-fraction", "0.15")["forward"] < base["forward"]
    assert run_json(capsys, "flops", "--convention", "full")["forward"] > run_json(capsys, "flops")["forward"]
    assert run_json(capsys, "flops", "--recompute")["training"] > run_json(capsys, "flops")["training"]


def test_memory_json_is_bytes(capsys):
    got = run_json(capsys, "memory", "--preset", "bert-base", "--dtype", "fp16", "--optimizer", "adam")
    assert set(got) == {"weights", "gradients", "optimizer", "activations", "total", "master_weights"}
    assert got["weights"] == FACTS["bert-base"][0] * 2  # exact: every parameter in 2 bytes
    assert got["optimizer"] > 0 and got["activations"] > 0
    assert got["total"] == got["weights"] + got["gradients"] + got["optimizer"] + got["activations"]
    inference = run_json(capsys, "memory", "--preset", "bert-base", "--inference")
    assert (inference["gradients"], inference["optimizer"]) == (0, 0)
    assert inference["weights"] == FACTS["bert-base"][0] * 4
    assert "MB" in run(capsys, "memory")
    assert got["master_weights"] == 0


def test_memory_precision_and_checkpointing(capsys):
    params = FACTS["bert-base"][0]  # BertModel: every parameter gets a gradient
    mixed = run_json(capsys, "memory", "--preset", "bert-base", "--dtype", "bf16", "--precision", "mixed")
    assert (mixed["weights"], mixed["gradients"], mixed["master_weights"]) == (2 * params, 2 * params, 4 * params)
    assert mixed["optimizer"] == 12 * params  # fp32 master copy + two fp32 AdamW moments
    pure = run_json(capsys, "memory", "--preset", "bert-base", "--dtype", "bf16")
    assert pure["optimizer"] == 4 * params and pure["activations"] == mixed["activations"]
    for flag in ("--checkpointing", "--recompute"):
        ckpt = run_json(capsys, "memory", "--preset", "bert-base", "--dtype", "bf16", flag)
        assert ckpt["activations"] < pure["activations"] and ckpt["weights"] == pure["weights"]
    assert "master weights" in run(capsys, "memory", "--dtype", "fp16", "--precision", "mixed")
    assert "checkpointing" in run(capsys, "memory", "--checkpointing")
    flops = run_json(capsys, "flops", "--checkpointing")
    assert flops == run_json(capsys, "flops", "--recompute")


def test_presets_lists_every_preset(capsys):
    got = run_json(capsys, "presets")
    assert set(got) == set(ALL_PRESETS) > set(PRESETS)
    assert {name: got[name]["params"] for name in FACTS} == {k: v[0] for k, v in FACTS.items()}
    out = run(capsys, "presets")
    assert all(name in out for name in ALL_PRESETS)


# ----------------------------------------------------------------------------- train
TINY_TRAIN = ["train", "--vocab-size", "512", "--embedding-size", "16", "--hidden-size", "32", "--num-layers", "2",
              "--num-heads", "2", "--intermediate-size", "64", "--steps", "2", "--batch", "4", "--seq-len", "32"]


def test_train_mask_rate_masks_the_training_pieces_it_names(capsys, tmp_path):
    from albert_core.cli.main import build_parser
    from albert_core.cli.train_cmd import spec_from_args
    from albert_core.lab.spec import RunSpec

    default = spec_from_args(build_parser().parse_args(["train"]))
    assert default.mask_rate == 0.15 and "mask_rate" not in default.to_dict()
    at30 = spec_from_args(build_parser().parse_args(["train", "--mask-rate", "0.3"]))
    assert at30 == default.replace(mask_rate=0.3) and at30.key != default.key
    data = run_json(capsys, *TINY_TRAIN, "--mask-rate", "0.3", "--out", str(tmp_path / "run"))
    assert data["spec"]["mask_rate"] == 0.3 and data["final"]["steps"] == 2
    assert RunSpec.from_dict(data["spec"]).key == data["key"]
    assert data["key"] != RunSpec.from_dict({**data["spec"], "mask_rate": 0.15}).key


def test_train_probe_fine_tunes_the_trained_encoder_and_reports_it(capsys, tmp_path, monkeypatch):
    from albert_core.lab import probe

    monkeypatch.setattr(probe, "RECIPE", probe.Recipe(epochs=1, batch_size=128, lr=3e-3, seeds=(0, 1)))
    data = run_json(capsys, *TINY_TRAIN, "--probe", "--out", str(tmp_path / "run"))
    assert data["spec"]["probe"] is True
    got = data["probe"]
    assert len(got["pretrained"]) == len(got["scratch"]) == 2 and got["dev_sentences"] == 1694
    assert got["verdict"] in probe.VERDICTS
    # what the run folder holds is what was reported
    saved = json.loads((tmp_path / "run" / "run.json").read_text())["probe"]
    assert saved["pretrained"] == got["pretrained"]
    text = run(capsys, "finetune", "--experiment", "table4")
    assert "val MLM loss" in text and "downstream %" in text and "validation MLM loss" in text


# ----------------------------------------------------------------------------- bad input
@pytest.mark.parametrize(
    "argv, names",
    [
        ([], "COMMAND"),
        (["fly"], "fly"),  # no such command
        (["params", "--preset", "albert-huge"], "preset"),
        (["params", "--hidden-size", "big"], "--hidden-size"),
        (["params", "--hidden-size", "7.5"], "--hidden-size"),
        (["params", "--hidden-size", "-768"], "hidden_size"),
        (["params", "--hidden-size", "0"], "hidden_size"),
        (["params", "--vocab-size", "9" * 19], "vocab_size"),
        (["params", "--vocab-size", "9" * 400], "--vocab-size"),
        (["params", "--num-heads", "7"], "num_heads"),
        (["params", "--groups", "13"], "num_hidden_groups"),
        (["params", "--preset", "bert-base", "--sharing", "all"], "sharing"),
        (["params", "--family", "bert", "--inner-groups", "2"], "inner_group_num"),
        (["params", "--sharing", "some"], "--sharing"),
        (["params", "--preset", "bert-base", "--hf-config", "x.json"], "--hf-config"),
        (["params", "--hf-config", "/no/such/config.json"], "config"),
        (["params", "--batch", "2"], "--batch"),  # params has no workload
        (["flops", "--seq-len", "1024"], "seq_len"),  # beyond the 512 positions
        (["flops", "--batch", "0"], "batch"),
        (["flops", "--mlm-fraction", "nan"], "--mlm-fraction"),
        (["train", "--mask-rate", "0.7"], "argument --mask-rate: must be a number in [0.05, 0.5]"),
        (["train", "--mask-rate", "30"], "(a share: 0.3 for 30 %)"),  # a percentage typed
        (["train", "--mask-rate", "0.01"], "argument --mask-rate"),
        (["train", "--mask-rate", "nan"], "argument --mask-rate"),
        (["train", "--mask-rate", "a lot"], "argument --mask-rate"),
        (["finetune", "--run", "/no/such/run"], "--run must be a run folder"),
        (["finetune", "--run", "x", "--measure"], "--measure goes with --twin"),
        (["finetune", "--twin", "roberta"], "--twin"),
        (["finetune", "--twin", "albert", "--experiment", "table4"], "not allowed with"),
        (["finetune", "--reference", "--workers", "0"], "--workers must be between 1 and 8"),
        (["train", "--probe", "--nproc", "2"], "--probe runs in one process"),
        (["memory", "--dtype", "fp8"], "--dtype"),
        (["memory", "--optimizer", "lion"], "--optimizer"),
        (["memory", "--precision", "amp"], "--precision"),
        (["memory", "--precision", "mixed"], "precision"),  # fp32 is no mixed precision
        (["memory", "--checkpointing", "--inference"], "checkpointing"),
        (["export-hf", "--sharing", "ffn"], "sharing"),
        (["export-hf", "--sharing", "attention"], "sharing"),
    ],
)
def test_bad_input_exits_2_with_one_line(capsys, argv, names):
    assert names in fails(capsys, *argv)


@pytest.mark.parametrize(
    "argv, option",
    [
        (["params", "--hidden-size", "\u0667\u0666\u0668"], "--hidden-size"),  # Arabic-Indic 768: int() reads it
        (["params", "--num-layers", "\uff11\uff12"], "--num-layers"),  # fullwidth 12
        (["flops", "--batch", "\u00b2"], "--batch"),  # superscript two: a digit to str.isdigit, not to int()
        (["time", "--chips", "\u0664"], "--chips"),
        (["train", "--seed", "\u0663", "--steps", "0"], "--seed"),  # --steps 0: a parse that let it through stops
    ],
)
def test_whole_number_options_take_only_ascii_digits(capsys, argv, option):
    err = fails(capsys, *argv)
    assert f"argument {option}: must be a whole number written with the digits 0-9" in err


def test_unreadable_config_files(capsys, tmp_path):
    bad = tmp_path / "config.json"
    bad.write_text("{not json", encoding="utf-8")
    assert "JSON" in fails(capsys, "params", "--hf-config", str(bad))
    bad.write_text(json.dumps({"model_type": "gpt2"}), encoding="utf-8")
    assert "model_type" in fails(capsys, "params", "--hf-config", str(bad))
    assert "config" in fails(capsys, "params", "--hf-config", str(tmp_path / "none"))
    target = tmp_path / "no" / "such" / "dir" / "out.json"
    assert fails(capsys, "export-hf", "--output", str(target))


def test_module_entry_point_runs_without_torch():
    code = (
        "import sys, runpy; sys.argv = ['albert_core', 'params', '--json'];"
        "\ntry:\n    runpy.run_module('albert_core', run_name='__main__')\nexcept SystemExit as e:\n"
        "    assert not e.code, e.code\n"
        "heavy = sorted(m for m in sys.modules if m.split('.')[0] in ('torch', 'transformers', 'streamlit'))\n"
        "assert not heavy, heavy"
    )
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["total"] == FACTS["albert-base"][0]
    bad = subprocess.run([sys.executable, "-m", "albert_core", "params", "--num-heads", "5"], cwd=ROOT,
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and bad.stdout == ""
    assert bad.stderr.count("\n") == 1 and "num_heads" in bad.stderr


def test_closed_pipe_is_quiet() -> None:
    """`python -m albert_core ... | head`: when the reader has gone, exit 0 without a traceback."""
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before anything is written
    proc = subprocess.run(
        [sys.executable, "-m", "albert_core", "flops", "--preset", "bert-base", "--json"],
        stdout=write_end, stderr=subprocess.PIPE, text=True, cwd=Path(__file__).resolve().parents[1],
    )
    os.close(write_end)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr


# ----------------------------------------------------------------------------- sharing schemes since ALBERT
# ALBERT-base's shapes, written out: H 768, I 3072, 12 layers; one layer's weights (4H^2 + 2HI + 9H + I); a LoRA per
# unit of rank on q, k, v, o (H x H: H + H each) and FFN in / out (H x I: H + I each), at each of the 12 positions.
H, I, L = 768, 3072, 12  # noqa: E741
LAYER = 4 * H * H + 2 * H * I + 9 * H + I
LORA_PER_RANK = {"q": L * 2 * H, "k": L * 2 * H, "v": L * 2 * H, "o": L * 2 * H, "in": L * (H + I), "out": L * (I + H)}
ALBERT_BASE = FACTS["albert-base"][0]


def components(got: dict) -> dict[str, int]:
    return {c["name"]: c["params"] for c in got["components"]}


def test_lora_rank_8_adds_its_exact_parameters(capsys):
    got = run_json(capsys, "params", "--lora-rank", "8")
    assert got["total"] == ALBERT_BASE + 1_327_104 == ALBERT_BASE + 8 * sum(LORA_PER_RANK.values())
    lora = {name.removeprefix("encoder.lora."): n for name, n in components(got).items() if "lora" in name}
    assert lora == {m: 8 * n for m, n in LORA_PER_RANK.items()}  # every matrix listed, in LORA_MATRICES order
    assert list(lora) == ["q", "k", "v", "o", "in", "out"]
    out = run(capsys, "params", "--lora-rank", "8")
    assert "encoder.lora.in" in out and "LoRA on the shared FFN up (per position)" in out and "13,010,688" in out
    # rank 16: 13.75M without the pooler
    assert run_json(capsys, "params", "--lora-rank", "16")["total"] - (H * H + H) == 13_747_200


@pytest.mark.parametrize("typed", ["q-v-in", "q,v,in", "in,v,q", " q , v , in "])
def test_lora_targets_take_dashes_or_commas(capsys, typed):
    got = run_json(capsys, "params", "--lora-rank", "4", "--lora-targets", typed)
    assert got["total"] == ALBERT_BASE + 4 * (LORA_PER_RANK["q"] + LORA_PER_RANK["v"] + LORA_PER_RANK["in"])
    assert [n for n in components(got) if "lora" in n] == ["encoder.lora.q", "encoder.lora.v", "encoder.lora.in"]


def test_lora_flops_are_listed_per_matrix(capsys):
    plain = run_json(capsys, "flops", "--seq-len", "128")
    got = run_json(capsys, "flops", "--seq-len", "128", "--lora-rank", "8")
    lora = {c["name"]: c["forward"] for c in got["components"] if "lora" in c["name"]}
    # 2 r (d_in + d_out) per token at each of the 12 positions, 128 tokens
    assert lora == {f"encoder.lora.{m}": 2 * 128 * 8 * n for m, n in LORA_PER_RANK.items()}
    assert got["forward"] - plain["forward"] == 2 * 128 * 8 * sum(LORA_PER_RANK.values())
    assert "encoder.lora.q" in run(capsys, "flops", "--lora-rank", "8")


def test_repeat_unique_ends_and_block_order(capsys):
    # each layer twice: the same weights, every encoder matmul twice
    assert run_json(capsys, "params", "--repeat", "2")["total"] == ALBERT_BASE
    once, twice = (run_json(capsys, "flops", "--repeat", r)["components"] for r in ("1", "2"))
    qkv = {c["name"]: c["forward"] for c in once}["encoder.attention.qkv"]
    assert {c["name"]: c["forward"] for c in twice}["encoder.attention.qkv"] == 2 * qkv
    # unique first and last layers: two more copies of the layer
    assert run_json(capsys, "params", "--unique-ends")["total"] == ALBERT_BASE + 2 * LAYER
    # the order of the groups moves no parameter
    groups = run_json(capsys, "params", "--groups", "2")["total"]
    assert groups == ALBERT_BASE + LAYER
    assert run_json(capsys, "params", "--groups", "2", "--block-order", "cycle")["total"] == groups
    # all four at once: 4 copies (2 groups, the ends), a LoRA at (12 - 2) x 2 = 20 positions
    got = run_json(capsys, "params", "--groups", "2", "--block-order", "cycle", "--unique-ends", "--repeat", "2",
                   "--lora-rank", "8")
    assert got["total"] == ALBERT_BASE + 3 * LAYER + 20 * 8 * sum(LORA_PER_RANK.values()) // L


def test_albertize_puts_the_lora_on_the_twin(capsys):
    """RoBERTa shares nothing, so the LoRA goes on its ALBERTized twin (E = 128, all shared), not the original."""
    twin = run_json(capsys, "albertize", "--preset", "roberta-base")["albertized"]
    with_lora = run_json(capsys, "albertize", "--preset", "roberta-base", "--lora-rank", "8", "--lora-targets", "q,v")
    assert with_lora["albertized"]["lora_rank"] == 8 and with_lora["albertized"]["lora_targets"] == "q-v"
    params = {r["measure"]: r for r in with_lora["rows"]}["parameters"]
    base_params = {r["measure"]: r for r in run_json(capsys, "albertize", "--preset", "roberta-base")["rows"]}
    assert params["albertized"] == base_params["parameters"]["albertized"] + 8 * 2 * L * 2 * H
    assert twin["lora_rank"] == 0


@pytest.mark.parametrize(("argv", "names"), [
    (("params", "--lora-rank", "8", "--sharing", "none"), "lora_targets 'q' is on the attention block"),
    (("params", "--repeat", "0"), "repeat must be a whole number between 1 and 16, got 0"),
    (("params", "--repeat", "17"), "repeat must be a whole number between 1 and 16"),
    (("params", "--repeat", "two"), "--repeat: must be a whole number"),
    (("params", "--lora-rank", "1000"), "lora_rank must be at most 768 on 'q'"),
    (("params", "--lora-rank", "4", "--lora-targets", "q-x"), "lora_targets must be one or more of q, k, v, o, in"),
    (("params", "--lora-rank", "4", "--lora-targets", "q,q"), "lora_targets must be one or more"),
    (("params", "--lora-targets", "q-v"), "lora_targets 'q-v' needs a LoRA"),
    (("albertize", "--preset", "roberta-base", "--lora-targets", "q-v"), "lora_targets 'q-v' needs a LoRA"),
    (("params", "--unique-ends", "--groups", "11"), "num_hidden_groups must be at most num_layers - 2 (10)"),
    (("params", "--unique-ends", "--num-layers", "2"), "unique_ends needs at least 3 layers"),
    (("params", "--preset", "bert-base", "--repeat", "2"), "repeat must be 1 for family 'bert'"),
    (("params", "--preset", "bert-base", "--lora-rank", "8"), "for family 'bert'"),
    (("params", "--preset", "roberta-base", "--lora-rank", "8"), "lora_targets 'q' is on the attention block"),
    (("params", "--block-order", "cycle", "--sharing", "none"), "block_order 'cycle' orders shared blocks"),
    (("params", "--block-order", "abab"), "--block-order: invalid choice"),
    (("flops", "--lora-rank", "8", "--sharing", "none"), "lora_targets"),
])
def test_bad_scheme_options_exit_2_naming_the_field(capsys, argv, names):
    assert names in fails(capsys, *argv)
