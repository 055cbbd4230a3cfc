"""What a model is used for: batch, sequence length, dtype and optimizer (`Workload`)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, fields
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from albert_core.checks import check_flag, check_whole_number, short_repr

if TYPE_CHECKING:
    from albert_core.configuration.config import ModelConfig

DTYPE_BYTES: Mapping[str, int] = MappingProxyType({"fp32": 4, "fp16": 2, "bf16": 2, "int8": 1})
OPTIMIZERS = ("none", "sgd", "adam", "adamw")  # sgd means SGD with momentum (one state per weight)
WORKLOAD_LIMITS: Mapping[str, tuple[int, int]] = MappingProxyType(
    {"batch": (1, 4096), "seq_len": (1, 65_536)}
)
# "pure": everything in the dtype; "mixed": a bf16/fp16 model with an fp32 master copy and fp32 states.
PRECISIONS = ("pure", "mixed")
MIXED_DTYPES = ("fp16", "bf16")


@dataclass(frozen=True)
class Workload:
    """What the model is used for: batch, sequence length, weight dtype, optimizer, precision recipe
    (``precision``: "pure" or "mixed", see `albert_core.counting.memory`) and gradient checkpointing."""

    batch: int = 8
    seq_len: int = 128
    dtype: str = "fp32"
    optimizer: str = "adamw"
    precision: str = "pure"
    checkpointing: bool = False

    def __post_init__(self) -> None:
        for name, (lo, hi) in WORKLOAD_LIMITS.items():
            value = getattr(self, name)
            check_whole_number(name, value, lo, hi)
        if self.dtype not in DTYPE_BYTES:
            raise ValueError(f"dtype must be one of {', '.join(DTYPE_BYTES)}; got {short_repr(self.dtype)}")
        if self.optimizer not in OPTIMIZERS:
            raise ValueError(f"optimizer must be one of {', '.join(OPTIMIZERS)}; got {short_repr(self.optimizer)}")
        if self.precision not in PRECISIONS:
            raise ValueError(f"precision must be one of {', '.join(PRECISIONS)}; got {short_repr(self.precision)}")
        if self.precision == "mixed" and self.dtype not in MIXED_DTYPES:
            raise ValueError(f"precision 'mixed' needs dtype fp16 or bf16 (the compute dtype), got {self.dtype}")
        check_flag("checkpointing", self.checkpointing)
        if self.checkpointing and self.dtype == "int8":
            raise ValueError("checkpointing applies to training, and dtype int8 is inference-only")

    @property
    def training(self) -> bool:
        """int8 weights are inference-only; every other dtype trains."""
        return self.dtype != "int8"

    @property
    def summary(self) -> str:
        """The workload in words, with every field a memory or FLOP figure depends on: 'batch 8 × 128 tokens,
        bf16 mixed precision (fp32 master weights), optimizer adamw, gradient checkpointing'."""
        return (f"batch {self.batch} × {self.seq_len} tokens, {self.dtype}"
                + (" mixed precision (fp32 master weights)" if self.precision == "mixed" else "")
                + f", optimizer {self.optimizer}" + (", gradient checkpointing" if self.checkpointing else ""))

    def check_fits(self, cfg: ModelConfig) -> None:
        """Sequence length cannot exceed the position table."""
        check_seq_len(cfg, self.seq_len)

    def replace(self, **changes: Any) -> Workload:
        unknown = sorted(set(changes) - {f.name for f in fields(self)})
        if unknown:
            raise ValueError(f"unknown field(s): {', '.join(unknown)}")
        return dataclasses.replace(self, **changes)


def check_seq_len(cfg: ModelConfig, seq_len: int) -> None:
    if seq_len > cfg.max_seq_len:
        if cfg.position_offset:
            raise ValueError(f"seq_len ({seq_len}) must not exceed {cfg.max_seq_len} (max_position_embeddings "
                             f"{cfg.max_position_embeddings} less the position table's offset {cfg.position_offset})")
        raise ValueError(
            f"seq_len ({seq_len}) must not exceed max_position_embeddings ({cfg.max_position_embeddings})"
        )
