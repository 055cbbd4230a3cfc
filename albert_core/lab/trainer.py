"""Train one `RunSpec`: the live model (`albert_core.build_model`) with MLM + SOP/NSP, bounded first.

- `check_run(spec, limits)` refuses a run before it starts (LabLimitError naming the limit): steps,
  training FLOPs (`count_flops(...).training` x steps), training memory (`estimate_memory` with AdamW
  states, fp32) against the live-model memory budget. Time is bounded while training (max_seconds).
- `train(spec, on_progress, should_stop, out_dir)` runs it: AdamW (the paper used LAMB at batch
  4096; AdamW is the usual choice at small batch), linear warmup then linear decay to 0, loss = MLM
  cross-entropy on masked positions (+ the sentence-order / next-sentence cross-entropy unless the
  task is "none"), gradient clipping at norm 1.0, evaluation every ``eval_every`` steps (and at step 0
  and at the end) on fixed validation batches. Deterministic from the seed: model initialisation,
  torch's global RNG and the data pipeline's own seeding; the validation data always uses seed 0 and the
  default 15 % masking, so runs with different seeds or mask rates are measured on the same held-out batches.
- Threads: each run sets torch's intra-op threads of its own thread (OpenMP keeps the setting per
  thread) to ``threads`` (default $ALBERT_EXPLORER_LAB_THREADS or 1; see docs/benchmarks.md).

The live model has no dropout (ALBERT pretrains with dropout 0; BERT used 0.1, not reproduced here).
"""

from __future__ import annotations

import dataclasses
import functools
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
import torch
import torch.nn.functional as F

from albert_core import settings
from albert_core.format import fmt_bytes, fmt_flops
from albert_core.lab.baselines import Baselines
from albert_core.lab.optim import adamw, warmup_then_linear
from albert_core.lab.outcome import (
    HISTORY_COLUMNS,
    Progress,
    RunResult,
    baseline_fields,
    final_metrics,
)
from albert_core.lab.spec import DEFAULT_MASK_RATE, GRAD_CLIP, LAB_BASE, RunSpec
from albert_core.live.losses import masked_logits, shard_losses

EVAL_BATCH = 64  # examples per evaluation forward (independent of the run's batch)
MAX_EVAL_EXAMPLES = 2048  # a bound; the lab corpus holds 1,070 SOP and 1,242 NSP held-out pairs at V 512, sequence 32
# (1,567 and 1,974 at sequence 64)
VALIDATION_SEED = 0


# ----------------------------------------------------------------------------- limits
class LabLimitError(ValueError):
    """A run that exceeds a configured limit; the message names the limit and how to change it."""




@dataclass(frozen=True)
class LabLimits:
    """What one run may cost. Defaults suit a shared 2-vCPU host; each is overridable by
    $ALBERT_EXPLORER_LAB_<NAME> (e.g. ALBERT_EXPLORER_LAB_MAX_STEPS=5000). ``memory_budget`` None
    means the live model's budget (`albert_core.live.model.memory_budget`, $ALBERT_EXPLORER_MEMORY_BUDGET)."""

    max_steps: int = 10_000
    max_seconds: float = 900.0
    max_flops: float = 6e13  # training FLOPs of the whole run (60 TFLOP: minutes on 2 cores)
    memory_budget: int | None = None

    @classmethod
    def from_env(cls) -> LabLimits:
        """The limits set in the environment (`albert_core.settings.lab_limits`), defaults for the rest."""
        return cls(**settings.lab_limits())

    def budget(self) -> int:
        return memory_budget(self.memory_budget)


def memory_budget(budget_bytes: int | None = None) -> int:
    """The live-model memory budget: the one place the lab reads it."""
    from albert_core.live.budget import memory_budget as live_budget

    return live_budget(budget_bytes)


@dataclass(frozen=True)
class RunCost:
    """What a run will cost, from albert_core's exact counts (memory: its estimate)."""

    params: int
    flops_per_step: int  # training FLOPs (forward + backward), count_flops convention "matmul"
    flops: int  # training (per step x steps) plus every evaluation pass (`eval_flops`) and the probe's
    memory_bytes: int  # estimate_memory(training=True, AdamW, fp32): weights, grads, states, activations (the
    # larger of the pretraining's and the probe's fine-tuning)
    tokens: int  # token positions (batch x seq_len x steps)
    eval_flops: int = 0  # forward FLOPs of the evaluations, at most (`eval_examples_bound` examples each)
    data_bytes: int = 0  # the run's data: corpus pipeline, held-out batches, baselines (+ tokenizer training)
    probe_flops: int = 0  # the downstream probe's fine-tuning and scoring (an estimate: `probe.probe_cost`)

    @property
    def reserved_bytes(self) -> int:
        """What the run holds in the process's memory budget while it runs: its model and its data."""
        return self.memory_bytes + self.data_bytes


# Peak memory of a run's data, measured (peak RSS growth in a fresh process, Intel Xeon, torch 2.13, the corpus
# of Python's documentation and the World English Bible): the corpus, its encoding, the training pipeline, the
# held-out batches and the baselines' counts took 87 MiB at V 512 and 80 MiB at V 8,192; training a tokenizer
# of a size the lab does not ship 84-88 MiB more (Unigram V 3,000 and 16,000; WordPiece 18 MiB). Reserved with
# the model's memory (about 10 % above the measured peaks), so a run's data counts against the budget like its
# weights.
DATA_BYTES = 96 * 2**20
TOKENIZER_TRAINING_BYTES = 96 * 2**20


def data_bytes(spec: RunSpec) -> int:
    """The memory a run's data needs (`DATA_BYTES`, plus `TOKENIZER_TRAINING_BYTES` when the run must
    train its tokenizer), known without building anything."""
    from albert_core.text.tokenizers import is_shipped

    return DATA_BYTES + (0 if is_shipped(spec.tokenizer_kind, spec.vocab_size) else TOKENIZER_TRAINING_BYTES)


def eval_examples_bound(spec: RunSpec) -> int:
    """At most this many held-out examples per evaluation (the MLM pairs, plus the NSP pairs for NSP),
    known without building the data (a request is checked before any work)."""
    return MAX_EVAL_EXAMPLES * (2 if spec.task == "nsp" else 1)


@functools.lru_cache(maxsize=256)
def run_cost(spec: RunSpec) -> RunCost:
    """What ``spec`` will cost (exact counts; memory an estimate), computed once per spec: the worker, the
    plan and the polling page ask for it again and again."""
    from albert_core.counting.flops import count_flops
    from albert_core.counting.memory import estimate_memory
    from albert_core.counting.params import count_params

    cfg = spec.config
    per_step = count_flops(cfg, spec.batch_size, spec.seq_len).training
    mem = estimate_memory(
        cfg, spec.batch_size, spec.seq_len, "fp32", optimizer="adamw", training=True, dropout=0.0,
        device="cuda" if _device().type == "cuda" else "cpu",
    )
    evals = count_flops(cfg, 1, spec.seq_len).forward * eval_examples_bound(spec) * eval_count(spec)
    probe_flops, probe_bytes = 0, 0
    if spec.probe:
        from albert_core.lab.probe import probe_cost

        probe_flops, probe_bytes = probe_cost(cfg)
    return RunCost(
        params=count_params(cfg).total,
        flops_per_step=per_step,
        flops=per_step * spec.steps + evals + probe_flops,
        memory_bytes=max(mem.total, probe_bytes),
        tokens=spec.tokens_per_step * spec.steps,
        eval_flops=evals,
        data_bytes=data_bytes(spec),
        probe_flops=probe_flops,
    )


def check_run(spec: RunSpec, limits: LabLimits | None = None) -> RunCost:
    """The run's cost if it is within ``limits`` (default `LabLimits.from_env()`), else LabLimitError."""
    if not isinstance(spec, RunSpec):
        raise ValueError(f"spec must be a RunSpec, got {type(spec).__name__}")
    limits = LabLimits.from_env() if limits is None else limits
    from albert_core.text.tokenizers import check_request

    check_request(spec.tokenizer_kind, spec.vocab_size)  # a vocabulary size the lab can train a tokenizer for
    if spec.steps > limits.max_steps:
        raise LabLimitError(
            f"steps ({spec.steps:,}) is over this server's limit of {limits.max_steps:,} steps per run"
        )
    cost = run_cost(spec)
    budget = limits.budget()
    if cost.reserved_bytes > budget:
        raise LabLimitError(
            f"training {spec.config.label} at batch {spec.batch_size} x seq {spec.seq_len} needs about "
            f"{fmt_bytes(cost.reserved_bytes)} ({fmt_bytes(cost.memory_bytes)} for weights, gradients, AdamW states "
            f"and activations, {fmt_bytes(cost.data_bytes)} for its data), over the memory budget of "
            f"{fmt_bytes(budget)}; use a smaller model, batch or sequence"
        )
    if cost.flops > limits.max_flops:
        raise LabLimitError(
            f"the run needs {fmt_flops(cost.flops)} of compute ({fmt_flops(cost.flops_per_step)} per "
            f"step x {spec.steps:,} steps, plus at most {fmt_flops(cost.eval_flops)} for its evaluations"
            + (f" and about {fmt_flops(cost.probe_flops)} for its downstream probe" if cost.probe_flops else "")
            + "), "
            f"over the lab's limit of {fmt_flops(limits.max_flops)} per run "
            f"on this server; use fewer steps or a smaller model, batch or sequence"
        )
    return cost


# ----------------------------------------------------------------------------- results
# ----------------------------------------------------------------------------- data
def make_data(spec: RunSpec, split: str, task: str | None = None, seed: int | None = None):
    """The data pipeline of ``spec`` (albert_core.lab.examples.PretrainingData) for a split: the train split
    masks ``spec.mask_rate`` of the pieces, the validation split always DEFAULT_MASK_RATE (15 %), so runs of any
    mask rate are scored on the same masked pieces."""
    from albert_core.lab.examples import PretrainingData

    return PretrainingData(
        spec.tokenizer_kind,
        spec.vocab_size,
        spec.seq_len,
        task or spec.task,
        split=split,
        seed=spec.seed if seed is None else seed,
        max_ngram=spec.ngram,
        mlm_prob=spec.mask_rate if split == "train" else DEFAULT_MASK_RATE,
    )


def validation_batches(spec: RunSpec, task: str | None = None) -> list[dict[str, torch.Tensor]]:
    """The fixed held-out batches of ``spec``'s data pipeline (tokenizer, vocabulary, sequence length,
    n-gram masking), seed 0 whatever the run's seed, 15 % of the pieces masked whatever the run's mask rate,
    EVAL_BATCH examples a batch, every held-out pair up to MAX_EVAL_EXAMPLES. Sentence pairs are balanced (half
    of them label 1). ``task`` None gives the MLM batches: the SOP pairs whatever the run's task, so every run
    of an experiment (MLM only, NSP, SOP, any architecture, any mask rate) is scored on the same masked pieces.
    Built once per setting (only read)."""
    task = "sop" if task is None or task == "none" else task
    return list(_validation(spec.tokenizer_kind, spec.vocab_size, spec.seq_len, task, spec.ngram))


@functools.lru_cache(maxsize=16)
def _validation(kind: str, vocab: int, seq_len: int, task: str, ngram: int) -> tuple:
    probe = RunSpec(LAB_BASE.replace(vocab_size=vocab, max_position_embeddings=max(seq_len, 8)), task=task, steps=1,
                    batch_size=EVAL_BATCH, seq_len=seq_len, warmup=0, tokenizer=kind, max_ngram=ngram)
    data = make_data(probe, "validation", seed=VALIDATION_SEED)
    return tuple(data.eval_batches(EVAL_BATCH, max_batches=-(-MAX_EVAL_EXAMPLES // EVAL_BATCH)))


def baselines_of(spec: RunSpec) -> Baselines:
    """The baselines of ``spec``'s held-out batches (albert_core.lab.baselines): frequency-only and
    neighbour MLM models on the MLM batches, the majority class of the run's sentence pairs."""
    return _baselines(spec.tokenizer_kind, spec.vocab_size, spec.seq_len, spec.ngram, spec.task)


@functools.lru_cache(maxsize=16)
def _baselines(kind: str, vocab: int, seq_len: int, ngram: int, task: str) -> Baselines:
    from albert_core.lab import baselines

    probe = RunSpec(LAB_BASE.replace(vocab_size=vocab, max_position_embeddings=max(seq_len, 8)), task=task, steps=1,
                    seq_len=seq_len, warmup=0, tokenizer=kind, max_ngram=ngram)
    counts = baselines.train_counts(kind, vocab)
    mlm = baselines.score(validation_batches(probe), counts)
    if task == "none":
        return mlm
    order = baselines.score(validation_batches(probe, task), counts, order_key="order_labels")
    return dataclasses.replace(mlm, order_majority=order.order_majority, pairs=order.pairs)


# ----------------------------------------------------------------------------- model pieces
def _device() -> torch.device:
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def default_threads() -> int:
    return settings.lab_threads()


def model_inputs(batch: dict[str, torch.Tensor], device: torch.device, masked: bool = False) -> dict[str, torch.Tensor]:
    """The model's keyword arguments for ``batch``; with ``masked`` the MLM head scores the masked
    positions only (``prediction_logits`` (N, V), row-major: the order of ``labels[labels != -100]``)."""
    kw = {k: batch[k].to(device) for k in ("input_ids", "attention_mask", "token_type_ids")}
    if masked:
        kw["mlm_mask"] = batch["mlm_labels"].to(device) != -100
    return kw


def trains(name: str, task: str) -> bool:
    """Whether parameter ``name`` gets a gradient in a run of ``task``: with task 'none' nothing reads the
    pooler or the order head (they are frozen, so DDP neither waits for nor all-reduces them)."""
    if task != "none":
        return True
    return not name.startswith(("pooler.", "sop_classifier.", "nsp_classifier."))


def _chunks(batch: dict[str, torch.Tensor], rows: int) -> list[dict[str, torch.Tensor]]:
    n = batch["input_ids"].shape[0]
    return [{k: v[i : i + rows] for k, v in batch.items()} for i in range(0, n, rows)]


@torch.no_grad()
def evaluate(model: torch.nn.Module, batches: list[dict[str, torch.Tensor]], task: str,
             order_batches: list[dict[str, torch.Tensor]] | None = None) -> dict[str, float]:
    """Validation MLM loss (mean over masked pieces) and accuracy of ``model`` on ``batches``; unless
    task is 'none', the sentence-order accuracy and the share of "1" answers on ``order_batches``
    (default: ``batches``). Batches larger than the model's memory check covered run in slices."""
    was_training = model.training
    model.eval()
    device = next(model.parameters()).device
    guard = getattr(model, "guard", None)
    rows = guard.batch * guard.seq_len // max(1, batches[0]["input_ids"].shape[1]) if guard is not None else 1 << 30
    loss_sum, correct, masked, order_ok, pairs, ones = 0.0, 0, 0, 0, 0, 0
    same = order_batches is None
    for batch in batches:
        for part in _chunks(batch, rows):
            out = model(**model_inputs(part, device, masked=True))
            logits, labels = masked_logits(out, part)
            loss_sum += F.cross_entropy(logits, labels, reduction="sum").item()
            correct += int((logits.argmax(-1) == labels).sum())
            masked += labels.numel()
            if task != "none" and same:
                answers = out.order_logits.argmax(-1)
                order_ok += int((answers == part["order_labels"].to(device)).sum())
                pairs += answers.numel()
                ones += int(answers.sum())
    if task != "none" and not same:
        for batch in order_batches:
            for part in _chunks(batch, rows):
                answers = model(**model_inputs(part, device, masked=True)).order_logits.argmax(-1)
                order_ok += int((answers == part["order_labels"].to(device)).sum())
                pairs += answers.numel()
                ones += int(answers.sum())
    model.train(was_training)
    return {
        "val_mlm_loss": loss_sum / max(masked, 1),
        "val_mlm_acc": correct / max(masked, 1),
        "val_order_acc": order_ok / pairs if pairs else math.nan,
        "val_order_ones": ones / pairs if pairs else math.nan,
    }


def eval_count(spec: RunSpec) -> int:
    """Evaluations in a full run: step 0, every ``eval_every`` steps, and the last step."""
    return 1 + spec.steps // spec.eval_every + (spec.steps % spec.eval_every != 0)


@torch.no_grad()
def start_output_bias(model: torch.nn.Module, spec: RunSpec) -> None:
    """The MLM output bias starts at the log-frequencies of the train split's pieces (the frequency-only
    model), not at 0: the encoder's first steps then go to context instead of to fitting frequencies,
    which Adam's bounded steps take hundreds of steps to do (docs/lab.md, "Why the lab did not learn").
    An initialisation, not an architecture change: the bias is a parameter of both papers' MLM heads."""
    from albert_core.lab import baselines

    head = getattr(model, "predictions", None)
    if head is None:
        return
    p = baselines.frequency_probs(baselines.train_counts(spec.tokenizer_kind, spec.vocab_size))
    floor = float(p[p > 0].min())
    log_p = torch.tensor(p, dtype=torch.float64).clamp_min(floor).log()
    log_p -= log_p.mean()
    target = head.decoder.bias if hasattr(head, "decoder") else head.bias
    target.copy_(log_p.to(target.dtype))


def _optimizer(model: torch.nn.Module, spec: RunSpec) -> torch.optim.Optimizer:
    # fused: one kernel per parameter group instead of a dozen element-wise passes (the step's AdamW
    # cost falls from about 9 % of a base-size step; docs/benchmarks.md, "Training")
    return adamw(model, spec.lr, spec.weight_decay, fused=True)


def lr_factor(spec: RunSpec, step: int) -> float:
    """Linear warmup over ``warmup`` steps, then linear decay to 0 at ``steps`` (step counts from 0)."""
    return warmup_then_linear(step, spec.warmup, spec.steps)


def log_every(spec: RunSpec) -> int:
    """History rows: every step up to 100 steps, then about 100 rows per run."""
    return max(1, spec.steps // 100)


# ----------------------------------------------------------------------------- memory
def reserve_run(
    spec: RunSpec,
    cost: RunCost | None = None,
    *,
    wait_s: float = 0.0,
    should_stop: Callable[[], bool] | None = None,
    on_wait: Callable[[str], Any] | None = None,
) -> Any:
    """Reserve the run's memory (``cost.reserved_bytes``: its model's estimate and its data, as `check_run` bounds) in
    the process-wide budget (`albert_core.live.budget.reserve`), waiting up to ``wait_s`` seconds while other
    runs or Live-model visitors hold it: `budget.BusyError` (the budget's own message) after that,
    `budget.MemoryBudgetError` if it can never fit. While it waits, ``on_wait(message)`` hears why
    (about once a second) and ``should_stop()`` ends the wait early (returns None)."""
    from albert_core.live import budget

    cost = run_cost(spec) if cost is None else cost
    what = f"training {spec.name}"
    deadline = time.monotonic() + max(0.0, wait_s)
    while True:
        left = deadline - time.monotonic()
        try:
            return budget.reserve(cost.reserved_bytes, what, wait_s=min(1.0, max(0.0, left)))
        except budget.BusyError as exc:
            if left <= 0:
                raise
            if on_wait is not None:
                on_wait(str(exc))
            if should_stop is not None and should_stop():
                return None


# ----------------------------------------------------------------------------- training
def train(
    spec: RunSpec,
    on_progress: Callable[[Progress], Any] | None = None,
    should_stop: Callable[[], bool] | None = None,
    out_dir: Path | str | None = None,
    *,
    limits: LabLimits | None = None,
    threads: int | None = None,
    memory: Any = None,
    wait_s: float = 0.0,
) -> RunResult:
    """Train ``spec`` (checked with `check_run` first) and return its RunResult; with ``out_dir``
    the finished run is saved there as a checkpoint (albert_core.lab.checkpoint). ``should_stop``
    is asked before every step: a True ends the run after the current step (cancelled=True). The
    run also stops at ``limits.max_seconds`` (message says so).

    Memory: the run holds its training bytes in the process-wide budget from before the model is built
    until it returns: ``memory`` is a reservation the caller made with `reserve_run` (it is released
    here), else `reserve_run` is called with ``wait_s`` (BusyError when the bytes are not free in time).

    Data parallel: inside a torch.distributed process group of several processes (torchrun, see
    `albert_core.lab.parallel`) every rank trains its shard of each global batch under
    DistributedDataParallel; the curve equals one process's. Only rank 0 saves ``out_dir``."""
    limits = LabLimits.from_env() if limits is None else limits
    cost = check_run(spec, limits)
    threads = default_threads() if threads is None else threads
    held = reserve_run(spec, cost, wait_s=wait_s) if memory is None else memory
    previous_threads = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        return _train(spec, on_progress, should_stop, out_dir, limits)
    finally:
        torch.set_num_threads(previous_threads)
        held.release()


class Interval:
    """The training log's sums between two history rows: mean losses, tokens per second, accuracy."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.mlm = self.order = 0.0
        self.steps = self.tokens = self.correct = self.masked = 0
        self.t0 = time.perf_counter()

    def add(self, *, mlm: float, order: float, tokens: int, correct: int, masked: int) -> None:
        self.mlm += mlm
        self.order += order
        self.steps += 1
        self.tokens += tokens
        self.correct += correct
        self.masked += masked

    def mean(self, name: str) -> float:
        return getattr(self, name) / self.steps if self.steps else math.nan

    def rate(self) -> float:
        return self.tokens / max(time.perf_counter() - self.t0, 1e-9) if self.steps else math.nan

    def accuracy(self) -> float:
        return self.correct / self.masked if self.masked else math.nan


def _probe(spec: RunSpec, model: Any, tokenizer: Any, limits: LabLimits, t_start: float,
           should_stop: Callable[[], bool] | None, on_progress: Callable[[int, int], Any]) -> tuple[Any, str]:
    """The downstream probe of a trained run (albert_core.lab.probe), within the run's time limit:
    (ProbeResult, "") or (None, why it stopped)."""
    from albert_core.lab import probe

    why = []

    def stop() -> bool:
        if should_stop is not None and should_stop():
            why.append("cancelled")
        elif time.perf_counter() - t_start > limits.max_seconds:
            why.append(f"stopped at this server's time limit of {limits.max_seconds:g} s per run (during the probe)")
        return bool(why)

    result = probe.probe_model(model, spec.config, tokenizer, std=spec.weight_std, should_stop=stop,
                               on_progress=on_progress, budget_bytes=limits.budget())
    return (result, "") if result is not None else (None, why[0] if why else "stopped")


def _train(spec, on_progress, should_stop, out_dir, limits) -> RunResult:
    from albert_core.lab import parallel
    from albert_core.live.model import build_model

    t_start = time.perf_counter()
    group = parallel.Group.current(spec.batch_size)
    device = group.device if group.world > 1 else _device()
    torch.manual_seed(spec.seed)
    train_data = make_data(spec, "train")
    val_batches = validation_batches(spec)
    order_batches = validation_batches(spec, "nsp") if spec.task == "nsp" else None
    base = baselines_of(spec)
    # the run's own reservation covers the model (weights, gradients, states, activations): the model is
    # built against the budget's total without reserving its weights a second time
    model = build_model(spec.config, device=device, batch=spec.batch_size, seq_len=spec.seq_len, seed=spec.seed,
                        budget_bytes=limits.budget(), init_std=spec.weight_std)
    start_output_bias(model, spec)
    model.train()
    for name, p in model.named_parameters():
        p.requires_grad_(trains(name, spec.task))
    net = group.wrap(model)
    opt = _optimizer(model, spec)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: lr_factor(spec, s))
    every = log_every(spec)

    rows: list[dict[str, float]] = []
    tokens = 0
    acc = Interval()
    nan = math.nan

    def emit(step: int, row: dict[str, float] | None) -> None:
        if on_progress is None:
            return
        elapsed = time.perf_counter() - t_start
        done = step / spec.steps
        eta = elapsed * (1 - done) / done if done > 0 else None
        rate = rows[-1]["tokens_per_s"] if rows and rows[-1]["tokens_per_s"] == rows[-1]["tokens_per_s"] else None
        on_progress(Progress(step, spec.steps, elapsed, eta, rate, row, base))

    probe_start: list[float] = []

    def emit_probe(done: int, total: int) -> None:
        if on_progress is not None:
            now = time.perf_counter()
            # the time left at the probe's own pace (issue 42: none was shown while it ran, 4-5 min a run)
            eta = (now - probe_start[0]) * (total - done) / done if done > 0 else None
            on_progress(Progress(spec.steps, spec.steps, now - t_start, eta, None, None, base, done, total))

    def log(step: int, lr: float, evaluated: bool) -> dict[str, float]:
        """The history row of ``step`` from the interval's sums (evaluated on the held-out pairs or not);
        starts the next interval."""
        row = {"step": step, "tokens": tokens, "elapsed_s": time.perf_counter() - t_start, "lr": lr,
               "train_mlm_loss": acc.mean("mlm"), "train_order_loss": acc.mean("order") if spec.task != "none" else nan,
               "val_mlm_loss": nan, "val_mlm_acc": nan, "val_order_acc": nan, "val_order_ones": nan,
               "tokens_per_s": acc.rate(), "train_mlm_acc": acc.accuracy()}
        if evaluated:
            row.update(evaluate(model, val_batches, spec.task, order_batches))
        rows.append(row)
        acc.reset()
        return row

    emit(0, log(0, spec.lr * lr_factor(spec, 0), evaluated=True))
    message = ""
    step = 0
    for step in range(1, spec.steps + 1):
        if should_stop is not None and should_stop():
            message = "cancelled"
        elif time.perf_counter() - t_start > limits.max_seconds:
            message = f"stopped at this server's time limit of {limits.max_seconds:g} s per run"
        if group.world > 1 and group.sum([1.0 if message else 0.0])[0] and not message:
            message = "stopped: another process of the run stopped (cancelled or at the time limit)"
        if message:  # every rank stops at the same step
            step -= 1
            break
        # one path for one process and for several: each rank trains its rows of the global batch (all of
        # it in one process); the losses are scaled so that DDP's averaged gradient is the gradient of the
        # global batch's mean losses (`shard_losses`), and the logged sums add up over the ranks
        batch = train_data.batch(step - 1, spec.batch_size)
        mine = group.shard(batch)
        lr_now = opt.param_groups[0]["lr"]
        out = net(**model_inputs(mine, device, masked=True))
        sums = shard_losses(out, mine, batch, spec.task, group.world)
        torch.nn.utils.clip_grad_norm_(model.parameters(), GRAD_CLIP)
        opt.step()
        sched.step()
        opt.zero_grad(set_to_none=True)
        group.end_step()
        with torch.no_grad():
            logits, labels = masked_logits(out, mine)
            correct = int((logits.argmax(-1) == labels).sum())
        mlm_sum, order_sum, correct_sum = group.sum([*sums, correct])  # no communication in one process
        n_tok, n_masked = int(batch["attention_mask"].sum()), int((batch["mlm_labels"] != -100).sum())
        tokens += n_tok
        acc.add(mlm=mlm_sum / n_masked, order=order_sum / batch["mlm_labels"].shape[0], tokens=n_tok,
                correct=int(round(correct_sum)), masked=n_masked)
        is_eval = step % spec.eval_every == 0 or step == spec.steps
        row = None
        if step % every == 0 or is_eval:
            row = log(step, lr_now, evaluated=is_eval)  # the rate this interval's last step trained with
        emit(step, row)

    if message and step > 0 and rows[-1]["step"] != step:  # stopped early: log and evaluate where it stopped
        log(step, opt.param_groups[0]["lr"], evaluated=True)
    model.eval()
    probed, probe_stopped = None, ""
    if spec.probe and not message and group.world == 1:
        # the probe copies the trained weights: the pretraining's AdamW states and its last batch are freed first
        del net, opt, sched, out, batch, mine, logits, labels
        probe_start[:] = [time.perf_counter()]  # the probe's pace counts from here (its data and models included)
        probed, probe_stopped = _probe(spec, model, train_data.tokenizer, limits, t_start, should_stop, emit_probe)
    if probe_stopped:
        # a probe stopped (nobody watched it, cancelled, the time limit) keeps the training it follows: the result
        # is the same run without the probe (its own key), never a probed run without its probe
        message = f"its downstream probe stopped ({probe_stopped}); the training is kept as the run without the probe"
        spec = spec.replace(probe=False, label=spec.label.removesuffix(", probed"))
    seconds = time.perf_counter() - t_start
    history = pd.DataFrame(rows, columns=list(HISTORY_COLUMNS))
    history["step"] = history["step"].astype(int)
    history["tokens"] = history["tokens"].astype(int)
    final = {**final_metrics(history, seconds), **baseline_fields(base)}
    if probed is not None:
        final.update(probed.final_fields())
    result = RunResult(spec, history, final, None, seconds, cancelled=bool(message) and not probe_stopped,
                       message=message, model=model, processes=group.world,
                       allreduce_bytes=list(group.bytes_per_step), probe=probed, probe_stopped=probe_stopped)
    if out_dir is not None and not result.cancelled and group.rank == 0:  # rank 0 alone writes
        from albert_core.lab.checkpoint import save_run

        result.checkpoint = save_run(result, model, train_data.tokenizer, Path(out_dir))
    return result
