"""The lab's runs in the process-wide memory budget, and data-parallel lab training (torchrun, 2 CPU
processes, gloo): the same curve as one process, and the gradient bytes DDP all-reduces per step equal
4 bytes x the parameters that get a gradient (count_params), in every sharing mode."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from albert_core import count_params, settings
from albert_core.lab.parallel import torchrun_command
from albert_core.lab.spec import RunSpec
from albert_core.lab.trainer import run_cost, train
from albert_core.lab.worker import Worker
from albert_core.live import budget
from albert_core.live.model import build_model
from tests.helpers.lab import TINY, tiny_spec

ROOT = Path(__file__).resolve().parents[1]
LIVE = TINY.replace(head="model")  # what a Live-model visitor builds


# ----------------------------------------------------------------------------- one memory budget
def _free_models_earlier_tests_kept() -> None:
    """The Live page keeps its last models (and their budget) for minutes: a page test run just before holds
    them still. Drop them, as the page does when memory is short, so this test starts from an empty budget."""
    import gc
    import sys

    for module, caches in (("ui.live.models", ("_MODELS", "_CHECKPOINTS")), ("ui.live.runs", ("_RUNS",))):
        if (live := sys.modules.get(module)) is not None:
            for cache in caches:
                getattr(live, cache).clear()
    gc.collect()


@pytest.fixture
def small_budget(monkeypatch):
    """A process budget just big enough for the tiny run plus a Live model of LIVE's weights."""
    spec = tiny_spec()
    run_bytes = run_cost(spec).reserved_bytes
    live_bytes = count_params(LIVE).total * 4 + budget.INIT_SCRATCH_BYTES
    total = run_bytes + live_bytes + 2**16
    monkeypatch.setenv(settings.MEMORY_BUDGET, str(total))
    _free_models_earlier_tests_kept()
    assert budget.PROCESS_BUDGET.used == 0
    return spec, run_bytes, total


def test_a_run_over_what_the_live_model_left_is_refused_with_the_budgets_message(small_budget, runs_dir):
    spec, run_bytes, total = small_budget
    with budget.reserve(total - run_bytes + 1, what="a Live-model build"):
        with pytest.raises(budget.BusyError, match="the server is busy: 1 visitor ahead"):
            train(spec)
        w = Worker(cache=None, wait_s=0.0)
        try:
            status = w.wait(w.submit(spec), timeout=60)
        finally:
            w.close()
        assert status.state == "failed"
        assert status.message.startswith("the server is busy") and "memory budget in use" in status.message
    assert budget.PROCESS_BUDGET.used == 0


def test_a_live_model_and_a_run_that_fit_together_both_run(small_budget, runs_dir):
    spec, run_bytes, total = small_budget
    live = build_model(LIVE, batch=1, seq_len=16)  # holds its weights in the process budget while it lives
    seen = []

    def during(p):
        if p.step == 1:
            seen.append(dict(budget.PROCESS_BUDGET.holders()))
            with pytest.raises(budget.BusyError):  # no second Live model while the run holds its bytes
                build_model(LIVE.replace(num_layers=4, sharing="none"), batch=1, seq_len=16)

    result = train(spec, on_progress=during)
    assert not result.cancelled and result.final["steps"] == spec.steps
    holders = seen[0]
    assert holders[f"training {spec.name}"] == run_bytes
    assert sum(holders.values()) <= total
    out = live(__import__("torch").ones(1, 8, dtype=__import__("torch").long))
    assert out.last_hidden_state.shape == (1, 8, LIVE.hidden_size)
    del live, out
    assert budget.PROCESS_BUDGET.used == 0


def test_a_run_that_does_not_fit_now_waits_in_the_queue_and_runs_when_the_memory_is_free(small_budget, runs_dir):
    spec, run_bytes, total = small_budget
    held = budget.reserve(total - run_bytes + 1, what="a Live-model build")
    w = Worker(cache=None, wait_s=120.0)
    try:
        run_id = w.submit(spec)
        deadline = time.monotonic() + 60
        while "waiting for memory" not in (status := w.status(run_id)).message and time.monotonic() < deadline:
            time.sleep(0.05)
        assert status.state == "queued" and status.position == 1 and status.step == 0
        assert "the server is busy" in status.message
        held.release()
        status = w.wait(run_id, timeout=120)
    finally:
        held.release()
        w.close()
    assert status.state == "done" and status.final["steps"] == spec.steps


def test_a_run_waiting_for_memory_can_be_cancelled_by_its_owner(small_budget, runs_dir):
    spec, run_bytes, total = small_budget
    held = budget.reserve(total - run_bytes + 1, what="a Live-model build")
    w = Worker(cache=None, wait_s=120.0)
    try:
        run_id = w.submit(spec, owner="me")
        deadline = time.monotonic() + 60
        while "waiting for memory" not in w.status(run_id).message and time.monotonic() < deadline:
            time.sleep(0.05)
        assert w.status(run_id).state == "queued"
        assert w.cancel(run_id, "me")  # the Cancel a visitor presses exactly when the server is busy
        status = w.wait(run_id, timeout=30)
        assert status.state == "cancelled" and status.message == "cancelled before it started"
        assert status.step == 0
    finally:
        held.release()
        w.close()
    assert budget.PROCESS_BUDGET.used == 0


def test_nproc_must_divide_the_batch_and_is_bounded(capsys):
    from albert_core.cli.main import main

    for extra, why in ((["--batch", "5", "--nproc", "2"], "--batch (5) must be a multiple of the number of processes"),
                       (["--nproc", "99"], "nproc must be a whole number between 1 and 16")):
        with pytest.raises(SystemExit) as exc:
            main(["train", "--steps", "2", *extra])
        assert exc.value.code == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert why in err[-1]


# ----------------------------------------------------------------------------- data parallel
def _env() -> dict[str, str]:
    return {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(ROOT)}


CLI = ["train", "--vocab-size", "512", "--embedding-size", "16", "--hidden-size", "32", "--num-layers", "2",
       "--num-heads", "2", "--intermediate-size", "64", "--max-position", "64", "--steps", "10", "--batch", "4",
       "--seq-len", "32", "--lr", "3e-3", "--warmup", "2", "--eval-every", "5", "--tokenizer", "unigram", "--json"]


def test_two_processes_give_the_one_process_curve_and_move_four_bytes_per_parameter(tmp_path, runs_dir):
    out = tmp_path / "run"
    done = subprocess.run([sys.executable, "-m", "albert_core", *CLI, "--nproc", "2", "--out", str(out)],
                          capture_output=True, text=True, env=_env(), timeout=240, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    data = json.loads(done.stdout)
    spec = RunSpec.from_dict(data["spec"])  # the run the processes trained, now in this one process
    assert spec.config == TINY and spec.batch_size == 4 and spec.steps == 10
    one = train(spec)
    assert data["processes"] == 2
    assert data["allreduce_bytes_per_step"] == 4 * count_params(TINY).total  # fp32 gradients, every parameter
    evals = one.history.dropna(subset=["val_mlm_loss"])
    assert [e["step"] for e in data["evaluations"]] == evals["step"].tolist() == [0, 5, 10]
    for e, (_, row) in zip(data["evaluations"], evals.iterrows(), strict=True):
        assert e["val_mlm_loss"] == pytest.approx(row["val_mlm_loss"], abs=1e-4)
        if e["step"]:
            assert e["train_mlm_loss"] == pytest.approx(row["train_mlm_loss"], abs=1e-4)
    assert one.final["val_mlm_loss"] < one.history["val_mlm_loss"].iloc[0]  # it trained
    saved = json.loads((out / "history.json").read_text())  # rank 0 wrote the run
    assert len(saved["data"]) == len(one.history)
    names = sorted(p.name for p in out.iterdir())  # rank 0 alone wrote: one event file, not two
    assert [n for n in names if not n.startswith("events.out.tfevents.")] == sorted(
        ["config.json", "model.safetensors", "tokenizer.json", "run.json", "history.json", "history.csv"])
    assert sum(n.startswith("events.out.tfevents.") for n in names) == 1


def test_every_sharing_mode_all_reduces_four_bytes_per_trained_parameter(runs_dir):
    from tests.helpers.lab_ddp_worker import RUNS

    cmd = torchrun_command(2, ["-m", "tests.helpers.lab_ddp_worker"])
    done = subprocess.run(cmd, capture_output=True, text=True, env=_env(), timeout=240, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    rows = {r["name"]: r for r in map(json.loads, (x for x in done.stdout.splitlines() if x.startswith("{")))}
    assert set(rows) == set(RUNS)
    for name, spec in RUNS.items():
        parts = count_params(spec.config).by_name()
        # MLM only: nothing reads the pooler or the sentence head, so they get no gradient
        frozen = parts["pooler"] + parts["sop_classifier"] if spec.task == "none" else 0
        expected = 4 * (count_params(spec.config).total - frozen)
        assert rows[name]["processes"] == 2
        assert rows[name]["bytes"] == [expected, expected], name
    assert rows["albert-all"]["bytes"][0] < rows["albert-attention"]["bytes"][0] < rows["albert-none"]["bytes"][0]
