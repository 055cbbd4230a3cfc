"""What a lab run produces, torch-free: its history columns, `Progress` reports, the `RunResult`, the final
metrics and the baselines stored with them. Read by the worker, the checkpoints, the experiments and the
pages without importing the trainer."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from albert_core.lab.baselines import Baselines
from albert_core.lab.spec import RunSpec

# One row per logged step: what the Train page's curves, the CLI's log and a checkpoint's history read.
# The val_* columns are NaN on steps without an evaluation.
HISTORY_COLUMNS = (
    "step", "tokens", "elapsed_s", "lr", "train_mlm_loss", "train_order_loss",
    "val_mlm_loss", "val_mlm_acc", "val_order_acc", "tokens_per_s",
    "train_mlm_acc",  # MLM accuracy on the training batches: the training curve beside the validation one
    "val_order_ones",  # the share of "1" answers on the held-out sentence pairs (a constant answer: 0 or 1)
)

@dataclass(frozen=True)
class Progress:
    """Reported after every step (and after step 0's evaluation)."""

    step: int
    steps: int
    elapsed_s: float
    eta_s: float | None
    tokens_per_s: float | None
    row: dict[str, float] | None  # the new history row when this step logged one
    baselines: Baselines | None = None  # of the held-out batches the run is scored on
    probe_done: int = 0  # fine-tuning steps of the downstream probe done (after training) ...
    probe_total: int = 0  # ... of this many (0: the run has no probe)


@dataclass
class RunResult:
    spec: RunSpec
    history: pd.DataFrame
    final: dict[str, float]
    checkpoint: Path | None
    seconds: float
    cancelled: bool
    message: str = ""  # why a run stopped early ("cancelled", "time limit ..."), else ""
    model: Any = field(default=None, repr=False)  # the trained EncoderModel when just trained, else None
    processes: int = 1  # data-parallel processes that trained it (albert_core.lab.parallel)
    allreduce_bytes: list[int] = field(default_factory=list)  # bytes DDP all-reduced, per step (several processes)
    probe: Any = None  # the downstream probe's ProbeResult (albert_core.lab.probe) of a run with spec.probe
    probe_stopped: str = ""  # why a probe asked for stopped ("cancelled", ...): the training is kept, unprobed

    @property
    def allreduce_bytes_per_step(self) -> int | None:
        """The gradient bytes all-reduced per step (the same every step), None for one process."""
        if self.processes <= 1 or not self.allreduce_bytes:
            return None
        return max(self.allreduce_bytes)

    @property
    def baselines(self) -> Baselines | None:
        """The baselines of the held-out batches this run was scored on (None: recorded without them)."""
        return baselines_from_final(self.final)


BASELINE_PREFIX = "baseline_"


def baseline_fields(base: Baselines) -> dict[str, float]:
    """The baselines as entries of a run's ``final`` dict (``baseline_<field>``; None as NaN)."""
    return {BASELINE_PREFIX + k: math.nan if v is None else float(v) for k, v in base.to_dict().items()}


def baselines_from_final(final: dict[str, float]) -> Baselines | None:
    """The baselines stored in a run's ``final`` dict, None for a run recorded without them."""
    values = {k[len(BASELINE_PREFIX):]: v for k, v in final.items() if k.startswith(BASELINE_PREFIX)}
    if "frequency_loss" not in values:
        return None
    if "order_majority" in values and not math.isfinite(values["order_majority"]):
        values["order_majority"] = None
    for k in ("masked", "pairs"):
        if k in values:
            values[k] = int(values[k])
    return Baselines.from_dict(values)


def final_metrics(history: pd.DataFrame, seconds: float) -> dict[str, float]:
    """A run's ``final`` dict (`RunResult.final`) from its history: last training loss and MLM accuracy,
    last evaluation, totals."""
    trained = history[history["step"] > 0]
    evals = history.dropna(subset=["val_mlm_loss"])
    last_eval = evals.iloc[-1] if len(evals) else None
    train_loss = float(trained["train_mlm_loss"].iloc[-1]) if len(trained) else math.nan
    tokens = int(history["tokens"].iloc[-1])
    train_time = float(trained["elapsed_s"].iloc[-1] - history["elapsed_s"].iloc[0]) if len(trained) else 0.0
    return {
        "train_mlm_loss": train_loss,
        "train_mlm_acc": float(trained["train_mlm_acc"].iloc[-1]) if len(trained) else math.nan,
        "val_mlm_loss": float(last_eval["val_mlm_loss"]) if last_eval is not None else math.nan,
        "val_mlm_acc": float(last_eval["val_mlm_acc"]) if last_eval is not None else math.nan,
        "val_order_acc": float(last_eval["val_order_acc"]) if last_eval is not None else math.nan,
        "val_order_ones": float(last_eval["val_order_ones"]) if last_eval is not None else math.nan,
        "tokens": tokens,
        "seconds": float(seconds),
        "tokens_per_s": tokens / train_time if train_time > 0 else math.nan,
        "steps": int(history["step"].iloc[-1]),
    }
