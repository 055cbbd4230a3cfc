"""Time model against this machine: predicted / measured time of an inference forward and a training step.

For every preset whose live model fits the live-model memory budget (`check_budget` for inference,
`estimate_memory` with AdamW for training), each round (1 torch thread) probes the machine afresh
(copy bandwidth with `measure_copy_bandwidth`, and right before every job the fp32 matmul throughput
of each kernel with `measure_kernel_flops`), then times, in alternating order, every preset's forward (eval mode, inference_mode, the live model of
`build_model`) and training step (pre-training heads, the lab trainer's `losses` (MLM on 15% of the
positions + sentence order), backward, gradient clipping, AdamW step). The prediction of each job is
`estimate_time` on the profile probed just before it, so the ratio predicted / measured is taken per
job and load from other processes hits probe and model alike. Training steps use torch's fused
AdamW (one pass over weights, gradients and states, as the time model assumes). Goal: 0.8-1.25.
"""

from __future__ import annotations

import os
import time

import torch

from albert_core.configuration.presets import PRESETS
from albert_core.configuration.workload import Workload
from albert_core.counting.flops import count_flops
from albert_core.counting.memory import estimate_memory
from albert_core.hardware.profiles import (
    TRAINING_KERNEL,
    cpu_name,
    measure_copy_bandwidth,
    measure_kernel_flops,
    profile_from_probe,
)
from albert_core.hardware.time_model import estimate_time
from albert_core.lab.spec import GRAD_CLIP
from albert_core.live.budget import check_budget, memory_budget
from albert_core.live.losses import losses
from albert_core.live.model import build_model
from bench.common import figure, load_note, summary

THREADS = 1
INFER = Workload(batch=4, seq_len=128, dtype="fp32", optimizer="none")
TRAIN = Workload(batch=4, seq_len=128, dtype="fp32", optimizer="adamw")
ROUNDS = 3
GOAL = (0.8, 1.25)
MASKED = 0.15
CLOCKS = ("cpu", "wall")
CLOCK_LABEL = {"wall": " (wall clock)", "cpu": " (CPU time)"}
MAX_TRAIN_FLOPS = 1.5e12  # keeps the section to minutes on this host


def _budget() -> int:
    return memory_budget()


def _ids(cfg, wl: Workload, gen: torch.Generator) -> dict[str, torch.Tensor]:
    return {"input_ids": torch.randint(0, cfg.vocab_size, (wl.batch, wl.seq_len), generator=gen)}


class Inference:
    def __init__(self, cfg) -> None:
        # each model checked against the live-model budget on its own (budget_bytes): the bench holds
        # every job's model at once but runs one at a time, unlike the server's process-wide ledger
        self.model = build_model(cfg, batch=INFER.batch, seq_len=INFER.seq_len, budget_bytes=_budget())
        self.kw = _ids(cfg, INFER, torch.Generator().manual_seed(0))

    def __call__(self) -> None:
        with torch.inference_mode():
            self.model(**self.kw)


class TrainStep:
    def __init__(self, cfg) -> None:
        self.model = build_model(cfg, batch=TRAIN.batch, seq_len=TRAIN.seq_len, budget_bytes=_budget()).train()
        gen = torch.Generator().manual_seed(0)
        ids = _ids(cfg, TRAIN, gen)["input_ids"]
        labels = torch.full_like(ids, -100)
        keep = torch.rand(ids.shape, generator=gen) < MASKED
        labels[keep] = ids[keep]
        self.batch = {"input_ids": ids, "attention_mask": torch.ones_like(ids),
                      "token_type_ids": torch.zeros_like(ids), "mlm_labels": labels,
                      "order_labels": torch.randint(0, 2, (TRAIN.batch,), generator=gen)}
        self.opt = torch.optim.AdamW(self.model.parameters(), lr=1e-5, fused=True)  # one pass: w, g, m, v

    def __call__(self) -> None:
        b = self.batch
        out = self.model(input_ids=b["input_ids"], attention_mask=b["attention_mask"],
                         token_type_ids=b["token_type_ids"])
        mlm, order = losses(out, b, "sop")
        (mlm + order).backward()
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), GRAD_CLIP)
        self.opt.step()
        self.opt.zero_grad(set_to_none=True)


def _fits() -> tuple[list[str], list[str], list[str]]:
    infer, train, skipped = [], [], []
    budget = _budget()
    for name, cfg in PRESETS.items():
        if check_budget(cfg, INFER.batch, INFER.seq_len).ok:
            infer.append(name)
        else:
            skipped.append(f"{name} inference (over the memory budget)")
        pre = cfg.replace(head="pretraining")
        mem = estimate_memory(pre, TRAIN.batch, TRAIN.seq_len, dtype="fp32", optimizer="adamw", device="cpu")
        if mem.total > budget or not check_budget(pre, TRAIN.batch, TRAIN.seq_len).ok:
            skipped.append(f"{name} training (over the memory budget)")
        elif count_flops(pre, TRAIN.batch, TRAIN.seq_len).training > MAX_TRAIN_FLOPS:
            skipped.append(f"{name} training (over {MAX_TRAIN_FLOPS / 1e12:g} TFLOP per step)")
        else:
            train.append(name)
    return infer, train, skipped


def _probe(bandwidth: float, clock) -> dict:
    kernels = measure_kernel_flops(0.3, clock)
    return {"cpu": cpu_name(), "threads": THREADS, "matmul_flops": max(kernels.values()), "kernel_flops": kernels,
            "memory_bandwidth": bandwidth, "memory_bytes": 0, "probed_at": "just before the job"}


def _predict(kind: str, name: str, profile) -> float:
    if kind == "inference":
        return estimate_time(PRESETS[name], INFER, profile).inference_s
    # the live MLM head runs on every position
    return estimate_time(PRESETS[name].replace(head="pretraining"), TRAIN, profile, mlm_fraction=1.0).training_s


def run() -> dict:
    torch.set_num_threads(THREADS)
    t0 = time.perf_counter()
    load0 = os.getloadavg()[0]
    infer_names, train_names, skipped = _fits()
    jobs = [("inference", n, Inference(PRESETS[n])) for n in infer_names]
    jobs += [("training step", n, TrainStep(PRESETS[n].replace(head="pretraining"))) for n in train_names]
    for _, _, fn in jobs:  # warm up: first-touch allocation, oneDNN primitive creation
        fn()
    keys = [(k, n) for k, n, _ in jobs]
    ratios = {clock: {key: [] for key in keys} for clock in CLOCKS}
    measured = {clock: {key: [] for key in keys} for clock in CLOCKS}
    predicted = {clock: {key: [] for key in keys} for clock in CLOCKS}
    probes = []
    for i in range(ROUNDS):
        bandwidth = measure_copy_bandwidth()
        order = list(range(len(jobs)))
        if i % 2:
            order.reverse()
        for j in order:
            kind, name, fn = jobs[j]
            # the probe right before the job, so both see the same load from other processes
            profiles = {"wall": profile_from_probe(_probe(bandwidth, time.perf_counter)),
                        "cpu": profile_from_probe(_probe(bandwidth, time.process_time))}
            probes.append(profiles)
            c, t = time.process_time(), time.perf_counter()
            fn()
            seconds = {"wall": time.perf_counter() - t, "cpu": time.process_time() - c}
            for clock in CLOCKS:
                pred = _predict(kind, name, profiles[clock])
                predicted[clock][(kind, name)].append(pred)
                ratios[clock][(kind, name)].append(pred / seconds[clock])
                measured[clock][(kind, name)].append(seconds[clock])
    figs = []
    for clock in CLOCKS:
        for (kind, name), values in ratios[clock].items():
            st = summary(values)
            wl = INFER if kind == "inference" else TRAIN
            m = summary(measured[clock][(kind, name)])["median"]
            p = summary(predicted[clock][(kind, name)])["median"]
            figs.append(figure(
                f"predicted / measured{CLOCK_LABEL[clock]}, {name} {kind}, batch {wl.batch} x {wl.seq_len}", st, "x",
                goal=f"{GOAL[0]}-{GOAL[1]}", met=GOAL[0] <= st["median"] <= GOAL[1], lower_is_better=False,
                reason=f"measured median {m * 1e3:.0f} ms, predicted median {p * 1e3:.0f} ms",
            ))
    for clock in CLOCKS:
        for training, what in ((False, "best kernel (inference)"), (True, f"{TRAINING_KERNEL} (training)")):
            figs.append(figure(f"probed fp32 matmul throughput{CLOCK_LABEL[clock]}, {what}, before each job",
                               summary([p[clock].peak("fp32", training) / 1e9 for p in probes]), "GFLOP/s",
                               lower_is_better=False))
    figs.append(figure("probed copy bandwidth (wall clock), per round",
                       summary([p["wall"].memory_bandwidth / 1e9 for p in probes]), "GB/s", lower_is_better=False))
    return {
        "title": "Time model",
        "figures": figs,
        "notes": [
            f"CPU: {cpu_name()}, {THREADS} torch thread; fp32; {ROUNDS} interleaved rounds (order alternating), "
            "ratio per job (prediction from the probe taken just before it), median and p10-p90 over rounds.",
            "Training step: live model with pre-training heads (logits at every position, the MLM loss on "
            f"{MASKED:.0%} of them, as the lab trainer's `losses`), backward, clipping, AdamW; the live model "
            "has no dropout (the estimate's BERT activations count dropout masks). Inference runs oneDNN linears, "
            f"training autograd's GEMM ({TRAINING_KERNEL}); this machine's profile carries both throughputs "
            "(on this AMD EPYC oneDNN is about twice as fast).",
            f"Live-model memory budget {_budget() / 2**30:.1f} GiB. Not measured: "
            + (", ".join(skipped) or "none") + ".",
            "Two clocks: wall time against the probe in wall time, and process CPU time (1 thread) against the "
            "same probe timed in CPU time. CPU time leaves out time "
            "the scheduler gave to other processes, not a core shared with them (SMT, caches); the probe just "
            "before each job sees the same sharing.",
            load_note(load0, time.perf_counter() - t0),
        ],
    }
