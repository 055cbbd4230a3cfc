"""Data-parallel lab training on torch.distributed: the process group a run trains in, and its launcher.

Under torchrun (or any launcher that sets RANK / WORLD_SIZE / MASTER_ADDR / MASTER_PORT) `init()` joins
the process group (gloo on the CPU, nccl on CUDA) and `albert_core.lab.trainer.train` then trains with
DistributedDataParallel: every rank draws the same global batch from the deterministic
`PretrainingData.batch(step, batch_size)` and trains on its contiguous shard of it; the losses are
scaled by the global counts (masked tokens, sentence pairs) so that DDP's gradient average is exactly
the one-process gradient, and the same global batch and seed give the same loss curve as one process
(up to float summation order). The DDP communication hook of `albert_core.hardware.allreduce` counts the
bytes all-reduced per step. Rank 0 alone saves the checkpoint, history and metrics.

    torchrun --nproc-per-node 2 -m albert_core train --steps 100 --json
    python -m albert_core train --nproc 2 --steps 100 --json      # launches the line above on loopback

`launch(argv, nproc)` is that second form: `python -m torch.distributed.run` in a subprocess, one node,
a loopback rendezvous, a timeout.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from albert_core.checks import check_whole_number

MAX_PROCESSES = 16
LAUNCH_MARGIN_S = 300.0  # start-up (imports, tokenizing the corpus) on top of the run's own time limit


def under_launcher() -> bool:
    """Whether this process was started by torchrun as one of several processes."""
    raw = os.environ.get("WORLD_SIZE", "").strip()
    return raw.isascii() and raw.isdigit() and int(raw) > 1 and "RANK" in os.environ


def init(backend: str | None = None) -> bool:
    """Join the launcher's process group if there is one (and none is joined yet); True if it joined."""
    import torch
    import torch.distributed as dist

    if not under_launcher() or dist.is_initialized():
        return False
    if torch.cuda.is_available():
        torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", "0")))
    dist.init_process_group(backend or ("nccl" if torch.cuda.is_available() else "gloo"))
    return True


def finish() -> None:
    import torch.distributed as dist

    if dist.is_initialized():
        dist.destroy_process_group()


def rank() -> int:
    """This process's rank (0 without a process group)."""
    import torch.distributed as dist

    return dist.get_rank() if dist.is_available() and dist.is_initialized() else 0


def is_writer() -> bool:
    """Whether this process writes results (rank 0, or no process group)."""
    return rank() == 0


@dataclass
class Group:
    """The processes one run trains on. ``world`` 1: a plain single-process run (nothing wrapped)."""

    world: int = 1
    rank: int = 0
    batch_size: int = 0  # the global batch
    device: Any = None
    counter: Any = None  # albert_core.hardware.allreduce.ByteCounter once wrapped
    bytes_per_step: list[int] = field(default_factory=list)

    @classmethod
    def current(cls, batch_size: int) -> Group:
        import torch
        import torch.distributed as dist

        if not (dist.is_available() and dist.is_initialized()) or dist.get_world_size() == 1:
            return cls(batch_size=batch_size)
        world = dist.get_world_size()
        if batch_size % world:
            raise ValueError(f"batch_size ({batch_size}) must be a multiple of the number of processes ({world})")
        on_gpu = dist.get_backend() == "nccl"
        device = torch.device("cuda", torch.cuda.current_device()) if on_gpu else torch.device("cpu")
        return cls(world=world, rank=dist.get_rank(), batch_size=batch_size, device=device)

    @property
    def local_batch(self) -> int:
        return self.batch_size // self.world

    def wrap(self, model: Any) -> Any:
        """``model`` in DistributedDataParallel with the byte-counting hook (``model`` itself if world 1)."""
        if self.world == 1:
            return model
        from albert_core.hardware.allreduce import wrap

        ddp, self.counter = wrap(model)
        return ddp

    def shard(self, batch: dict[str, Any]) -> dict[str, Any]:
        """This rank's contiguous rows of a global batch."""
        lo = self.rank * self.local_batch
        return {k: v[lo: lo + self.local_batch] for k, v in batch.items()}

    def sum(self, values: Sequence[float]) -> list[float]:
        """Element-wise sum over the ranks (one small all-reduce; outside the counted DDP traffic)."""
        import torch
        import torch.distributed as dist

        t = torch.tensor(list(values), dtype=torch.float64, device=self.device)
        if self.world > 1:
            dist.all_reduce(t)
        return t.tolist()

    def end_step(self) -> None:
        if self.counter is not None:
            self.counter.end_step()
            self.bytes_per_step.append(self.counter.per_step[-1])


def torchrun_command(nproc: int, target: Sequence[str]) -> list[str]:
    """``python -m torch.distributed.run`` for ``nproc`` processes on this machine, then ``target`` (a
    script and its arguments, or ``-m module ...``). The rendezvous is torchrun's own store on loopback
    at port 0: the operating system picks a free port when the store binds, so two launches at once
    cannot race for one (a port probed free and bound later can be taken in between)."""
    check_nproc(nproc)
    return [sys.executable, "-m", "torch.distributed.run", "--nnodes", "1", "--nproc-per-node", str(nproc),
            "--rdzv-backend", "c10d", "--rdzv-endpoint", "127.0.0.1:0", "--rdzv-id", uuid.uuid4().hex,
            *target]


def check_nproc(nproc: int) -> int:
    return check_whole_number("nproc", nproc, 1, MAX_PROCESSES)


def launch(argv: Sequence[str], nproc: int, timeout_s: float) -> int:
    """Run ``python -m albert_core <argv>`` in ``nproc`` processes on this machine through
    `torch.distributed.run` (`torchrun_command`: a loopback rendezvous on a port the OS picks), at most
    ``timeout_s`` seconds; the processes' output passes through (rank 0 alone prints the run). Returns the
    exit code (124 on time-out)."""
    cmd = torchrun_command(nproc, ["-m", "albert_core", *argv])
    env = {**os.environ, "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1")}
    proc = subprocess.Popen(cmd, env=env, start_new_session=True)  # its own group: a time-out ends every rank
    try:
        return proc.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        print(f"train: the {nproc} processes did not finish within {timeout_s:.0f} s; stopped", file=sys.stderr)
        return 124
    except KeyboardInterrupt:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait()
        raise
