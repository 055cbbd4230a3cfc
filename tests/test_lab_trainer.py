"""The pretraining lab's trainer, checkpoints, run cache, experiments and CLI, at tiny sizes."""

from __future__ import annotations

import io
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
from tokenizers import Tokenizer

from albert_core.cli.main import main as cli_main
from albert_core.configuration.coerce import bert_twin
from albert_core.counting.params import count_params
from albert_core.lab import trainer
from albert_core.lab.checkpoint import TOKENIZER_FILE, load_model, load_run
from albert_core.lab.experiments import EXPERIMENTS, depth_dial, separation_step, twins
from albert_core.lab.runs import RunCache, run_cached
from albert_core.lab.spec import RunSpec
from albert_core.lab.trainer import LabLimitError, LabLimits, check_run, train
from tests.helpers.lab import TINY, CountingTrain, V, tiny_spec

LOSS_COLUMNS = ["train_mlm_loss", "train_order_loss", "val_mlm_loss", "val_mlm_acc", "val_order_acc"]


@pytest.fixture(autouse=True)
def _isolated(runs_dir):
    return runs_dir


# ----------------------------------------------------------------------------- spec
def test_spec_round_trips_through_json_and_keys_what_matters():
    spec = tiny_spec(label="a run", task="nsp")
    again = RunSpec.from_dict(json.loads(json.dumps(spec.to_dict())))
    assert again == spec and again.key == spec.key
    assert spec.replace(seed=1).key != spec.key
    assert spec.replace(steps=9).key != spec.key
    assert spec.replace(config=TINY.replace(embedding_size=8)).key != spec.key
    assert spec.replace(label="another name").key == spec.key  # a label names a run, it does not change it
    assert RunSpec(TINY.replace(head="model")).config.head == "pretraining"


@pytest.mark.parametrize(
    ("changes", "field"),
    [({"task": "xyz"}, "task"), ({"steps": 0}, "steps"), ({"lr": -1.0}, "lr"), ({"lr": float("nan")}, "lr"),
     ({"batch_size": 2.5}, "batch_size"), ({"seq_len": 100}, "seq_len"), ({"warmup": 9}, "warmup"),
     ({"tokenizer": "bpe"}, "tokenizer"), ({"max_ngram": 4}, "max_ngram"), ({"seed": -1}, "seed"),
     ({"mask_rate": 0.6}, "mask_rate"), ({"mask_rate": 0.01}, "mask_rate"), ({"mask_rate": "0.3"}, "mask_rate"),
     ({"mask_rate": True}, "mask_rate"), ({"mask_rate": float("nan")}, "mask_rate")],
)
def test_spec_rejects_bad_values_naming_the_field(changes, field):
    with pytest.raises(ValueError, match=field):
        tiny_spec(**changes)


def test_the_mask_rate_is_part_of_a_run_but_leaves_every_shipped_runs_key_alone():
    from albert_core.lab.reference import REFERENCE_DIR
    from albert_core.lab.spec import DEFAULT_MASK_RATE

    run = json.loads((REFERENCE_DIR / "table4.json").read_text())["runs"][0]
    shipped = RunSpec.from_dict(run["spec"])
    assert "mask_rate" not in run["spec"] and shipped.mask_rate == DEFAULT_MASK_RATE == 0.15
    assert shipped.key == run["key"]  # a spec stored before the mask rate existed keeps its key
    assert RunSpec.from_dict({**run["spec"], "mask_rate": 0.15}).key == run["key"]  # present at the default too
    at30 = shipped.replace(mask_rate=0.3)
    assert at30.key != shipped.key
    assert shipped.to_dict() == run["spec"] and "mask_rate" not in shipped.to_dict()
    assert at30.to_dict()["mask_rate"] == 0.3
    assert RunSpec.from_dict(json.loads(json.dumps(at30.to_dict()))) == at30
    # the default description names a mask rate that is not the default; a label is left as it is
    bare = tiny_spec()
    assert bare.name == "ALBERT H=32 L=2 E=16 all-shared, SOP"
    assert bare.replace(mask_rate=0.3).name == bare.name + ", mask 30 %"
    assert bare.replace(mask_rate=0.2, label="mine").name == "mine"
    with pytest.raises(ValueError, match=r"^mask_rate must be a number in \[0.05, 0.5\], got 0.7$"):
        bare.replace(mask_rate=0.7)


def test_a_higher_mask_rate_masks_more_training_pieces_and_the_same_held_out_ones():
    # sequence 64: each example's budget is rounded to whole pieces (at sequence 32 a full row masks 4 of its 29
    # pieces at 15 % and 9 at 30 %, a ratio of 2.25 from the rounding alone)
    at15, at30 = tiny_spec(seq_len=64), tiny_spec(seq_len=64, mask_rate=0.3)

    def masked(spec: RunSpec) -> int:
        data = trainer.make_data(spec, "train")
        return sum(int((data.batch(step, 16)["mlm_labels"] != -100).sum()) for step in range(4))

    ratio = masked(at30) / masked(at15)
    assert 1.8 < ratio < 2.2, ratio
    # held out: 15 % whatever the run's rate, so both are scored on the very same masked pieces
    trainer._validation.cache_clear()
    trainer._baselines.cache_clear()
    v30 = trainer.validation_batches(at30)
    v15 = trainer.validation_batches(at15)
    assert len(v30) == len(v15) > 0
    assert all(torch.equal(a[k], b[k]) for a, b in zip(v30, v15, strict=True) for k in a)
    direct = trainer.make_data(at30, "validation", seed=trainer.VALIDATION_SEED)  # not through the cache
    assert all(torch.equal(a[k], b[k]) for a, b in zip(direct.eval_batches(trainer.EVAL_BATCH, 2), v15, strict=False)
               for k in a)
    assert trainer.baselines_of(at30) == trainer.baselines_of(at15)


# ----------------------------------------------------------------------------- bounds
def test_bounds_refuse_over_budget_runs_with_a_message():
    spec = tiny_spec()
    cost = check_run(spec, LabLimits())
    # the evaluations count too: steps 0, 4 and 8, each a forward pass over at most MAX_EVAL_EXAMPLES held-out
    # pairs (the bound the cost check charges, whatever its value)
    from albert_core.counting.flops import count_flops

    evals = 3 * trainer.MAX_EVAL_EXAMPLES * count_flops(spec.config, 1, spec.seq_len).forward
    assert cost.eval_flops == evals > 0
    assert cost.flops == cost.flops_per_step * spec.steps + evals
    with pytest.raises(LabLimitError, match=r"steps \(8\) is over this server's limit of 5 steps per run$"):
        check_run(spec, LabLimits(max_steps=5))
    with pytest.raises(LabLimitError, match="over the memory budget of 1.0 MB"):
        check_run(spec, LabLimits(memory_budget=2**20))
    with pytest.raises(LabLimitError, match="compute .* plus at most .* for its evaluations.* over the lab's limit"):
        check_run(spec, LabLimits(max_flops=cost.flops - 1))
    with pytest.raises(LabLimitError):  # train() checks before building anything
        train(spec, limits=LabLimits(max_steps=1))


def test_limits_from_the_environment(monkeypatch):
    monkeypatch.setenv("ALBERT_EXPLORER_LAB_MAX_STEPS", "7")
    assert LabLimits.from_env().max_steps == 7
    with pytest.raises(LabLimitError, match="limit of 7 steps"):
        check_run(tiny_spec())
    monkeypatch.setenv("ALBERT_EXPLORER_LAB_MAX_STEPS", "many")
    with pytest.raises(ValueError, match="ALBERT_EXPLORER_LAB_MAX_STEPS must be a number"):
        LabLimits.from_env()


def test_time_limit_stops_a_run_during_training():
    result = train(tiny_spec(steps=50), limits=LabLimits(max_seconds=1e-9))
    assert result.cancelled and "time limit" in result.message
    assert result.final["steps"] < 50


# ----------------------------------------------------------------------------- training
def test_a_short_run_logs_evaluates_and_starts_at_the_frequency_level():
    spec = tiny_spec(steps=60, eval_every=20, warmup=6, batch_size=8)
    result = train(spec)
    h = result.history
    assert list(h.columns[:10]) == ["step", "tokens", "elapsed_s", "lr", "train_mlm_loss", "train_order_loss",
                                    "val_mlm_loss", "val_mlm_acc", "val_order_acc", "tokens_per_s"]
    base = result.baselines
    assert base is not None and base.frequency_loss < math.log(V)
    # the output bias starts at the frequency-only model: the untrained model scores about its loss (a little
    # above: the random tied embeddings add noise to the logits), far below a uniform guess's ln V
    assert 0 <= h["val_mlm_loss"].iloc[0] - base.frequency_loss < 0.25 < math.log(V) - base.frequency_loss
    assert h.dropna(subset=["val_mlm_loss"])["step"].tolist() == [0, 20, 40, 60]
    assert result.final["steps"] == 60 and result.final["tokens"] == h["tokens"].iloc[-1] > 0
    assert 0 <= result.final["val_order_acc"] <= 1 and not result.cancelled
    assert 0 <= result.final["val_order_ones"] <= 1
    assert h["lr"].max() == pytest.approx(spec.lr, rel=1e-6)


def test_the_same_seed_gives_the_same_curve_and_another_seed_another():
    spec = tiny_spec(steps=6, eval_every=3)
    a, b = train(spec), train(spec)
    pd.testing.assert_frame_equal(a.history[["step", "tokens", *LOSS_COLUMNS]], b.history[["step", "tokens", *LOSS_COLUMNS]])
    c = train(spec.replace(seed=1))
    assert not np.allclose(a.history["train_mlm_loss"].iloc[1:], c.history["train_mlm_loss"].iloc[1:])


def test_task_none_trains_mlm_only():
    result = train(tiny_spec(task="none", steps=4))
    assert result.history["train_order_loss"].isna().all()
    assert result.history["val_order_acc"].isna().all()


def test_should_stop_cancels_after_the_current_step():
    seen = []

    def on_progress(p):
        seen.append(p.step)

    result = train(tiny_spec(steps=50), on_progress, should_stop=lambda: len(seen) > 3)
    assert result.cancelled and result.message == "cancelled"
    assert result.final["steps"] == 3 == seen[-1]


# ----------------------------------------------------------------------------- checkpoints
@pytest.mark.parametrize(
    ("config", "cls", "order"),
    [(TINY, "AlbertForPreTraining", "sop_logits"),
     (TINY.replace(sharing="none"), "AlbertForPreTraining", "sop_logits"),
     (bert_twin(TINY), "BertForPreTraining", "seq_relationship_logits")],
)
def test_checkpoint_loads_in_transformers_with_our_outputs(tmp_path, config, cls, order):
    import transformers

    from albert_core.live.interop import load_pretrained_folder

    spec = tiny_spec(config=config, steps=3)
    result = train(spec, out_dir=tmp_path / "ck")
    folder = result.checkpoint
    assert {"config.json", "model.safetensors", "tokenizer.json", "run.json", "history.json"} <= {
        p.name for p in folder.iterdir()}
    hf = getattr(transformers, cls).from_pretrained(folder, local_files_only=True).eval()
    batch = {k: v[: spec.batch_size] for k, v in trainer.validation_batches(spec)[0].items()}
    kw = trainer.model_inputs(batch, torch.device("cpu"))
    with torch.no_grad():
        ours, theirs = result.model(**kw), hf(**kw)
        loaded = load_pretrained_folder(folder, allowed_roots=[tmp_path], batch=spec.batch_size, seq_len=spec.seq_len)
        again = loaded(**kw)
    for got in (theirs.prediction_logits, again.prediction_logits):
        torch.testing.assert_close(got, ours.prediction_logits, atol=1e-4, rtol=0)
    torch.testing.assert_close(getattr(theirs, order), ours.order_logits, atol=1e-4, rtol=0)
    torch.testing.assert_close(again.order_logits, ours.order_logits, atol=1e-4, rtol=0)
    # our own loader, the run record and the tokenizer
    assert load_model(folder, batch=spec.batch_size)(**kw).prediction_logits.allclose(ours.prediction_logits, atol=1e-5)
    record = load_run(folder)
    assert record.spec == spec and record.final == pytest.approx(result.final, nan_ok=True)
    pd.testing.assert_frame_equal(record.history, result.history, check_exact=False, rtol=1e-9)
    assert Tokenizer.from_file(str(Path(folder) / TOKENIZER_FILE)).get_vocab_size() == V


def test_partial_sharing_is_saved_in_our_layout(tmp_path):
    spec = tiny_spec(config=TINY.replace(sharing="ffn"), steps=2)
    result = train(spec, out_dir=tmp_path / "ck")
    names = {p.name for p in result.checkpoint.iterdir()}
    assert "lab_model.safetensors" in names and "config.json" not in names
    batch = trainer.model_inputs({k: v[: spec.batch_size] for k, v in trainer.validation_batches(spec)[0].items()},
                                 torch.device("cpu"))
    with torch.no_grad():
        torch.testing.assert_close(load_model(result.checkpoint, batch=spec.batch_size)(**batch).prediction_logits,
                                   result.model(**batch).prediction_logits)


def test_an_empty_lab_weights_file_is_refused_naming_it(tmp_path):
    from safetensors.torch import save_file

    spec = tiny_spec(config=TINY.replace(sharing="ffn"))
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "run.json").write_text(json.dumps({"spec": spec.to_dict()}))
    save_file({}, folder / "lab_model.safetensors")
    with pytest.raises(ValueError, match=r"lab_model\.safetensors holds no tensors"):
        load_model(folder)


# ----------------------------------------------------------------------------- cache
def test_a_cache_hit_does_not_train_again(monkeypatch, runs_dir):
    counter = CountingTrain(monkeypatch)
    spec = tiny_spec(steps=3)
    first = run_cached(spec)
    second = run_cached(spec.replace(label="same run, other name"))
    assert len(counter.calls) == 1
    assert second.checkpoint == first.checkpoint == runs_dir / spec.key
    assert second.spec.label == "same run, other name"
    assert second.final == pytest.approx(first.final, nan_ok=True)
    run_cached(spec.replace(seed=5))
    assert len(counter.calls) == 2


def test_the_cache_evicts_the_least_recently_used_runs(tmp_path):
    cache = RunCache(tmp_path / "c", max_bytes=10**9)
    a, b = run_cached(tiny_spec(steps=1), cache), run_cached(tiny_spec(steps=1, seed=1), cache)
    one = sum(size for _, size, _ in cache.entries()) // 2
    cache.get(a.spec.key)  # a is now the most recently used
    small = RunCache(tmp_path / "c", max_bytes=int(one * 2.5))
    c = run_cached(tiny_spec(steps=1, seed=2), small)
    assert a.spec.key in small and c.spec.key in small and b.spec.key not in small
    assert sum(size for _, size, _ in small.entries()) <= small.max_bytes


# ----------------------------------------------------------------------------- experiments
def test_separation_step_on_hand_made_histories():
    def h(values):
        return pd.DataFrame({"step": [0, 10, 20, 30, 40], "val_mlm_loss": values})

    a = [h([6, 5.0, 4.0, 3.0, 2.0]), h([6, 5.2, 4.1, 3.1, 2.1])]
    b = [h([6, 5.1, 4.5, 3.5, 2.5]), h([6, 5.3, 4.6, 3.6, 2.6])]
    assert separation_step(a, b) == 20  # ranges overlap at 10, apart from 20 on
    assert separation_step(b, a) == 20
    assert separation_step(a, [h([6, 5.1, 4.05, 3.5, 2.5]), h([6, 5.3, 4.6, 3.6, 2.6])]) == 30
    together = [h([6, 5.1, 4.05, 3.05, 2.05]), h([6, 5.3, 4.6, 3.6, 2.6])]
    assert separation_step(a, together) is None  # "not separated yet"
    crossing = [h([6, 6.0, 4.5, 2.0, 2.05]), h([6, 6.1, 4.6, 2.2, 2.08])]
    assert separation_step(a, crossing) is None  # apart, then back together at the end
    with pytest.raises(ValueError, match="at least 2 seeds"):
        separation_step(a[:1], b)


def test_experiments_build_valid_runs():
    assert set(EXPERIMENTS) == {"table3", "table3-v8192", "table4", "table5", "figure2", "depth"}
    for ex in EXPERIMENTS.values():
        specs = ex.specs(seeds=(0, 1))
        assert specs and all(s.seed in (0, 1) for s in specs)
        assert {s.tokenizer_kind for s in specs} == {"unigram"} and {s.ngram for s in specs} == {3}
        assert len({s.key for s in specs}) == len(specs)
        for s in specs:
            check_run(s, LabLimits())
        assert ex.paper.source.startswith("Lan et al.") or ex.name == "depth"  # the dial is not in the paper
    large = {s.label: s for s in EXPERIMENTS["table3-v8192"].specs(seeds=(0,))}
    small = {s.label: s for s in EXPERIMENTS["table3"].specs(seeds=(0,))}
    assert large.keys() == small.keys()  # the same variants, at V 8,192 and the probe's sequence length
    for label, spec in large.items():
        assert spec.vocab_size == 8192 and small[label].vocab_size == 512
        assert (spec.seq_len, spec.batch_size) == (128, 4)  # 512 pieces a step, as the lab's 16 x 32
        assert small[label].seq_len * small[label].batch_size == 512
        # by hand: 7,680 more rows of E in the word table and 7,680 more decoder biases (tied decoder)
        e = spec.config.embedding_size
        assert count_params(spec.config).total - count_params(small[label].config).total == 7680 * (e + 1)
    sharing = {s.label: s.config.sharing for s in EXPERIMENTS["table4"].specs(seeds=(0,))}
    assert sorted(sharing.values()) == ["all", "attention", "ffn", "none"]
    assert [s.task for s in EXPERIMENTS["table5"].specs(seeds=(0,))] == ["none", "nsp", "sop"]
    t = twins(TINY)
    assert [c.family for c in t.values()] == ["bert", "albert", "albert", "albert"]
    assert [(c.embedding_size, c.sharing) for c in t.values()] == [(32, "none"), (16, "none"), (32, "all"), (16, "all")]


def test_depth_dial_runs_the_same_shared_weights_at_other_depths():
    result = run_cached(tiny_spec(steps=4))
    dial = depth_dial(result)
    assert dial["depth"].tolist() == [1, 2, 4]
    at_trained = trainer.evaluate(result.model, trainer.validation_batches(result.spec), "none")["val_mlm_loss"]
    assert dial.set_index("depth").loc[2, "val_mlm_loss"] == pytest.approx(at_trained)
    assert dial["val_mlm_loss"].nunique() == 3  # other depths really run other numbers of layers
    with pytest.raises(ValueError, match="all-shared"):
        depth_dial(run_cached(tiny_spec(steps=1, config=TINY.replace(sharing="none"))))


# ----------------------------------------------------------------------------- CLI
def test_cli_train_json(tmp_path, capsys):
    out = tmp_path / "run"
    args = ["train", "--vocab-size", str(V), "--embedding-size", "16", "--hidden-size", "32", "--num-layers", "2",
            "--num-heads", "2", "--intermediate-size", "64", "--steps", "4", "--eval-every", "2", "--batch", "4",
            "--seq-len", "32", "--task", "nsp", "--seed", "3", "--out", str(out), "--json"]
    assert cli_main(args) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["out"] == str(out) and (out / "model.safetensors").is_file()
    assert [e["step"] for e in data["evaluations"]] == [0, 2, 4]
    assert data["spec"]["task"] == "nsp" and data["spec"]["seed"] == 3 and data["final"]["steps"] == 4
    for key in ("train_mlm_loss", "train_mlm_acc", "val_mlm_loss", "val_mlm_acc", "val_order_acc", "tokens_per_s",
                "seconds"):
        assert isinstance(data["final"][key], float), key
    assert data["params"] > 0 and data["training_flops_per_step"] > 0
    # the baselines of the same held-out pairs, and what the run is worth against them
    base = trainer.baselines_of(RunSpec.from_dict(data["spec"]))
    assert data["baselines"]["frequency_loss"] == pytest.approx(base.frequency_loss)
    assert data["baselines"]["neighbour_loss"] == pytest.approx(base.neighbour_loss)
    assert data["baselines"]["order_majority"] == pytest.approx(0.5, abs=0.01)
    assert data["below_frequency_only"] == pytest.approx(base.frequency_loss - data["final"]["val_mlm_loss"])
    assert data["verdicts"]["order"] in ("learned", "not learned") and "mlm" in data["verdicts"]

    # the run opens in other tools: TensorBoard reads its event file (its own reader), pandas its CSV
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    history = pd.read_json(io.StringIO((out / "history.json").read_text()), orient="split")
    events = EventAccumulator(str(out))
    events.Reload()
    vals = events.Scalars("loss/validation_mlm")
    evals = history.dropna(subset=["val_mlm_loss"])
    assert [v.step for v in vals] == [0, 2, 4] == [int(s) for s in evals["step"]]
    assert [v.value for v in vals] == pytest.approx(list(evals["val_mlm_loss"]), rel=1e-6)
    assert [v.value for v in events.Scalars("accuracy/validation_order")] == pytest.approx(
        list(evals["val_order_acc"]), rel=1e-6)
    flat = [v.value for v in events.Scalars("baseline/frequency_only_loss")]
    assert [v.step for v in events.Scalars("baseline/frequency_only_loss")] == [0, 4]  # a flat line over the run
    assert flat == pytest.approx([base.frequency_loss] * 2, rel=1e-6)
    times = [v.wall_time for v in vals]
    assert times == sorted(times) and times[-1] - times[0] == pytest.approx(
        evals["elapsed_s"].iloc[-1] - evals["elapsed_s"].iloc[0], abs=1e-3)
    csv = pd.read_csv(out / "history.csv")
    assert list(csv["step"]) == list(history["step"])
    assert csv["val_mlm_loss"].dropna().tolist() == pytest.approx(evals["val_mlm_loss"].tolist())
    run = json.loads((out / "run.json").read_text())
    assert run["seed"] == 3 and run["code_version"] and run["environment"]["torch"] == torch.__version__
    assert run["environment"]["cpu"] and run["environment"]["torch_threads"] >= 1


def test_a_runs_zip_opens_in_tensorboard_even_for_a_run_saved_before_the_exports(tmp_path, runs_dir):
    import zipfile

    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    from albert_core.lab.checkpoint import export_zip

    result = run_cached(tiny_spec(steps=4, eval_every=2), RunCache(runs_dir))
    for old in [*result.checkpoint.glob("events.out.tfevents.*"), result.checkpoint / "history.csv"]:
        old.unlink()  # as a run cached before the exports existed
    with zipfile.ZipFile(io.BytesIO(export_zip(result))) as zf:
        names = {n.split("/", 1)[1] for n in zf.namelist()}
        assert {"run.json", "history.json", "history.csv", "tokenizer.json"} <= names
        assert "model.safetensors" not in names
        zf.extractall(tmp_path / "unzipped")
    events = EventAccumulator(str(tmp_path / "unzipped" / result.spec.key))
    events.Reload()
    got = [(v.step, v.value) for v in events.Scalars("loss/validation_mlm")]
    evals = result.history.dropna(subset=["val_mlm_loss"])
    assert got == [(int(a), pytest.approx(b, rel=1e-6)) for a, b in zip(evals["step"], evals["val_mlm_loss"], strict=True)]


@pytest.mark.parametrize(
    ("args", "message"),
    [(["--steps", "1000000"], "limit of"), (["--task", "qa"], "invalid choice"), (["--lr", "x"], "--lr"),
     (["--hidden-size", "30", "--num-heads", "4"], "divisible")],
)
def test_cli_train_bad_input_exits_2_with_one_line(capsys, args, message):
    with pytest.raises(SystemExit) as exc:
        cli_main(["train", *args])
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1


@pytest.mark.parametrize("workers", ["0", "99"])
def test_train_reference_refuses_a_worker_count_before_any_work(capsys, workers):
    with pytest.raises(SystemExit) as exc:
        cli_main(["train-reference", "--workers", workers, "--out", "/nonexistent/never-written"])
    assert exc.value.code == 2
    assert "--workers must be between 1 and 16" in capsys.readouterr().err


def test_the_command_line_and_the_page_plan_the_same_default_run():
    from albert_core.cli.main import build_parser
    from albert_core.cli.train_cmd import spec_from_args
    from albert_core.lab.spec import DEFAULT_STEPS
    from albert_core.lab.trainer import LabLimits
    from ui.train import runs as tr

    cli = spec_from_args(build_parser().parse_args(["train"]))
    (page,) = tr.twin_specs(tr.TINY, ["ALBERT"], task="sop", steps=DEFAULT_STEPS, seeds=[0],
                            batch_size=tr.RUN_DEFAULTS["batch_size"], seq_len=tr.RUN_DEFAULTS["seq_len"])
    # the visitor's default run is the one the docs measured (the page names the family's tokenizer and masking,
    # the command line leaves them to the family: the same run, one key)
    assert cli.replace(label="ALBERT", tokenizer=cli.tokenizer_kind, max_ngram=cli.ngram) == page
    assert cli.key == page.key
    assert page.steps <= LabLimits().max_steps
    # any length: the command line, the page and a bare RunSpec share one schedule rule, so one key (one training)
    cli300 = spec_from_args(build_parser().parse_args(["train", "--steps", "300"]))
    (page300,) = tr.twin_specs(tr.TINY, ["ALBERT"], task="sop", steps=300, seeds=[0],
                               batch_size=tr.RUN_DEFAULTS["batch_size"], seq_len=tr.RUN_DEFAULTS["seq_len"])
    bare = RunSpec(tr.TINY, steps=300)
    assert cli300.key == page300.key == bare.key
    assert (bare.warmup, bare.eval_every) == (15, 75)  # 5 % of the steps; 4 evaluations at 300 steps


def test_a_shipped_reference_run_reproduces_its_first_steps():
    from albert_core.lab.reference import load_runs

    runs = load_runs("table5")
    assert runs, "albert_core/lab/reference/table5.json is shipped"
    shipped = min(runs, key=lambda r: (r.spec.task != "none", r.spec.seed))
    n = shipped.spec.eval_every  # through the first evaluation after step 0
    steps_seen = []
    result = train(shipped.spec, lambda p: steps_seen.append(p.step), should_stop=lambda: steps_seen[-1] >= n,
                   threads=1)
    assert result.final["steps"] == n
    ours = result.history.set_index("step")
    theirs = shipped.history.set_index("step")
    common = [s for s in theirs.index if s <= n and s in ours.index]
    assert len(common) >= 3 and n in common
    for column in ("train_mlm_loss", "train_order_loss", "val_mlm_loss"):
        a, b = ours.loc[common, column].to_numpy(float), theirs.loc[common, column].to_numpy(float)
        np.testing.assert_allclose(a, b, rtol=2e-4, equal_nan=True, err_msg=column)


def test_the_shipped_twins_give_their_recorded_validation_loss_and_beat_the_frequency_model():
    from albert_core.lab.reference import CHECKPOINTS_DIR, live_twins

    folders = sorted(p for p in CHECKPOINTS_DIR.iterdir() if (p / "run.json").is_file())
    assert {f.name for f in folders} == {s.key for s in live_twins().values()}  # the two Live twins, nothing more
    for folder in folders:
        run = load_run(folder)
        assert run.spec.key == folder.name
        model = load_model(folder, batch=run.spec.batch_size)
        order = trainer.validation_batches(run.spec, "nsp") if run.spec.task == "nsp" else None
        again = trainer.evaluate(model, trainer.validation_batches(run.spec), run.spec.task, order)
        assert again["val_mlm_loss"] == pytest.approx(run.final["val_mlm_loss"], rel=1e-5)
        assert again["val_order_acc"] == pytest.approx(run.final["val_order_acc"])
        # the baselines it was shipped with are those of today's held-out pairs
        assert run.baselines == trainer.baselines_of(run.spec)
        assert run.baselines.frequency_loss - again["val_mlm_loss"] > 0.4
        assert Tokenizer.from_file(str(Path(folder) / TOKENIZER_FILE)).get_vocab_size() == run.spec.vocab_size
