"""Data-parallel training steps on torch.distributed, with the gradient traffic measured.

`count_allreduce` wraps the live model in DistributedDataParallel and registers a communication hook
that adds up the bytes of every gradient bucket it all-reduces (then runs torch's own allreduce hook).
Per step that is 4 bytes x the unique parameters in fp32 for every sharing mode: DDP sees each shared
tensor once, which is what ALBERT's sharing buys on a cluster.

Run under torchrun (gloo on CPU, nccl on GPU), one line of JSON from rank 0:

    torchrun --nproc-per-node 2 -m albert_core.cli.allreduce_cmd --preset albert-base --num-layers 2 --steps 2
    torchrun --nnodes 2 --node-rank 0 --rdzv-backend c10d --rdzv-endpoint HOST:29500 \\
        --nproc-per-node 8 -m albert_core.cli.allreduce_cmd ...

This module imports torch; the counting modules do not.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import torch
import torch.distributed as dist
from torch.distributed.algorithms.ddp_comm_hooks.default_hooks import allreduce_hook
from torch.nn.parallel import DistributedDataParallel

from albert_core.hardware.profiles import MEASURE_COMMAND, MEASURE_PRESETS, cpu_name

MAX_STEPS = 100


@dataclass
class ByteCounter:
    """State of the counting hook: bytes all-reduced and buckets seen, since the last reset."""

    process_group: Any = None
    bytes: int = 0
    buckets: int = 0
    per_step: list[int] = field(default_factory=list)

    def end_step(self) -> None:
        self.per_step.append(self.bytes)
        self.bytes = 0
        self.buckets = 0


def counting_hook(state: ByteCounter, bucket):  # no annotations: DDP checks them, and they are strings here
    """DDP communication hook: count the bucket's (dist.GradBucket) bytes, then all-reduce it as DDP would
    by default; returns the hook's future."""
    buf = bucket.buffer()
    state.bytes += buf.numel() * buf.element_size()
    state.buckets += 1
    return allreduce_hook(state.process_group, bucket)


def wrap(model: torch.nn.Module) -> tuple[DistributedDataParallel, ByteCounter]:
    """The model in DDP (CPU: no device ids) with the counting hook registered."""
    ddp = DistributedDataParallel(model)
    counter = ByteCounter()
    ddp.register_comm_hook(counter, counting_hook)
    return ddp, counter


def init(backend: str | None = None) -> None:
    """Join the process group torchrun describes in the environment (gloo on CPU, nccl on GPU)."""
    if not dist.is_initialized():
        dist.init_process_group(backend or ("nccl" if torch.cuda.is_available() else "gloo"))


def _batch(cfg, batch: int, seq_len: int, seed: int) -> dict[str, torch.Tensor]:
    gen = torch.Generator().manual_seed(seed)
    ids = torch.randint(0, cfg.vocab_size, (batch, seq_len), generator=gen)
    return {"input_ids": ids, "attention_mask": torch.ones_like(ids), "token_type_ids": torch.zeros_like(ids),
            "mlm_labels": ids.clone(), "order_labels": torch.randint(0, 2, (batch,), generator=gen)}


def count_allreduce(cfg, batch: int, seq_len: int, steps: int = 2, seed: int = 0) -> dict[str, Any]:
    """Run ``steps`` data-parallel training steps (AdamW, MLM + order loss, every position labelled) of
    ``cfg`` with the pre-training heads, each rank on its own ``batch`` sequences; return the bytes
    all-reduced per step and the losses (this rank's)."""
    from albert_core.counting.params import count_params
    from albert_core.live.losses import losses
    from albert_core.live.model import build_model

    if not 1 <= steps <= MAX_STEPS:
        raise ValueError(f"steps must be between 1 and {MAX_STEPS}, got {steps}")
    cfg = cfg.replace(head="pretraining")
    torch.manual_seed(seed)
    model = build_model(cfg, batch=batch, seq_len=seq_len, seed=seed).train()
    ddp, counter = wrap(model)
    opt = torch.optim.AdamW(ddp.parameters(), lr=1e-4)
    rank, world = dist.get_rank(), dist.get_world_size()
    step_losses = []
    for step in range(steps):
        b = _batch(cfg, batch, seq_len, seed=1000 * step + rank)
        out = ddp(input_ids=b["input_ids"], attention_mask=b["attention_mask"], token_type_ids=b["token_type_ids"])
        mlm, order = losses(out, b, "sop")
        loss = mlm + order
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        counter.end_step()
        step_losses.append(loss.item())
    return {
        "world_size": world,
        "allreduce_bytes_per_step": counter.per_step,
        "unique_params": count_params(cfg).total,
        "losses": step_losses,
    }




def measure_presets(names: Sequence[str] = MEASURE_PRESETS, seq_len: int = 8) -> dict[str, Any]:
    """The bytes DDP all-reduces in one training step (forward, backward; no optimizer step is needed to
    count them) of each preset with the pre-training heads, one sequence of ``seq_len`` tokens per process:
    what `load_measured` ships. The models are built on the budget's own terms (fp32 weights; gradients
    come on top), one at a time."""
    from albert_core.configuration.presets import PRESETS
    from albert_core.counting.params import count_params
    from albert_core.live.losses import losses
    from albert_core.live.model import build_model

    rows = []
    for name in names:
        cfg = PRESETS[name].replace(head="pretraining")
        torch.manual_seed(0)
        model = build_model(cfg, batch=1, seq_len=seq_len, budget_bytes=2 * 4 * count_params(cfg).total + 2**30)
        model.train()
        for p in model.parameters():
            p.requires_grad_(True)
        ddp, counter = wrap(model)
        b = _batch(cfg, 1, seq_len, seed=dist.get_rank())
        out = ddp(input_ids=b["input_ids"], attention_mask=b["attention_mask"], token_type_ids=b["token_type_ids"])
        mlm, order = losses(out, b, "sop")
        (mlm + order).backward()
        buckets = counter.buckets
        counter.end_step()
        rows.append({"preset": name, "unique_params": count_params(cfg).total,
                     "allreduce_bytes_per_step": counter.per_step[0], "buckets": buckets})
        del ddp, model, out, mlm, order
    cpu = cpu_name()
    return {
        "what": "bytes of fp32 gradients DDP all-reduced per training step (communication hook), pre-training heads",
        "processes": dist.get_world_size(),
        "backend": dist.get_backend(),
        "torch": torch.__version__,
        "cpu": cpu,
        "seq_len": seq_len,
        "command": MEASURE_COMMAND,
        "rows": rows,
    }
