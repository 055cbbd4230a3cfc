"""The Hardware page's questions, answered with the time model (`albert_core.hardware.time_model`): what batch
fits in N GB, how long N tokens take to train, what a profile can time of the sidebar's workload (and what it
lowered, with a note each), and "is ALBERT faster than BERT?". Page rules, kept beside the page; estimates only,
no torch, no streamlit.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from albert_core.checks import check_number
from albert_core.configuration.config import ModelConfig
from albert_core.configuration.workload import WORKLOAD_LIMITS, Workload
from albert_core.counting.memory import max_batch_that_fits
from albert_core.counting.report import albert_pair
from albert_core.format import direction
from albert_core.hardware.profiles import HardwareProfile, get_profile
from albert_core.hardware.time_model import TimeEstimate, estimate_time


# ----------------------------------------------------------------------------- questions users ask
def largest_batch(cfg: ModelConfig, memory_bytes: float, seq_len: int = 512, dtype: str = "fp32",
                  optimizer: str = "adamw", precision: str = "pure") -> int:
    """The largest training batch whose `estimate_memory` total fits ``memory_bytes`` (0 if none):
    `memory.max_batch_that_fits`, capped at the workload's batch limit."""
    check_number("memory_bytes", memory_bytes, 0, math.inf, lo_open=True)
    return min(WORKLOAD_LIMITS["batch"][1],
               max_batch_that_fits(cfg, seq_len, memory_bytes, dtype, optimizer, precision))


def time_to_train(est: TimeEstimate, tokens: float) -> float:
    """Seconds to train on ``tokens`` tokens at the estimate's step time (whole steps)."""
    check_number("tokens", tokens, 0, 1e16, lo_open=True)
    return math.ceil(tokens / (est.batch * est.seq_len)) * est.training_s


# ----------------------------------------------------------------------------- what a profile can time
CHIP_CHOICES = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)  # the chip counts offered (data parallel)
FALLBACK_DTYPE = "fp32"  # every profile has an fp32 figure


@dataclass(frozen=True)
class TimedInputs:
    """The workload and chip count a profile is timed at, and one plain sentence per input it lowered."""

    workload: Workload
    chips: int
    notes: tuple[str, ...]


def timed_inputs(workload: Workload, hardware: str | HardwareProfile, chips: int,
                 choices: tuple[int, ...] = CHIP_CHOICES) -> TimedInputs:
    """What `estimate_time` can time of ``workload`` on ``chips`` x ``hardware``, each change with a note:

    - a dtype the profile has no figure for (and int8, which the time model does not model) is timed in fp32;
    - a profile without links (one chip, e.g. this machine) is timed on 1 chip;
    - more chips than sequences in the batch: the most of ``choices`` the batch can feed (data parallelism
      gives every chip at least one sequence).
    """
    hw = hardware if isinstance(hardware, HardwareProfile) else get_profile(hardware)
    notes = []
    if workload.dtype == "int8" or workload.dtype not in hw.peak_flops:
        notes.append(f"{hw.label} has no {workload.dtype} figure: timed in {FALLBACK_DTYPE}.")
        workload = workload.replace(dtype=FALLBACK_DTYPE)
    if chips > 1 and not hw.link_bandwidth:
        notes.append(f"{hw.label} is one chip: timed on 1.")
        chips = 1
    if chips > workload.batch:
        fed = max(c for c in (1, *choices) if c <= workload.batch)
        notes.append(f"{chips} chips need a batch of at least {chips}: timed on {fed} chips.")
        chips = fed
    return TimedInputs(workload, chips, tuple(notes))


# ----------------------------------------------------------------------------- is ALBERT faster?
SPEED_BATCHES = (1, 64)  # one sequence (latency) and a large batch (throughput)


@dataclass(frozen=True)
class SpeedComparison:
    """An ALBERT's inference against its BERT twin's on one chip: ``ratios`` maps a batch to BERT's seconds
    over ALBERT's (above 1: ALBERT is faster); ``parts`` the seconds of each part of the inference batch at the
    largest batch, (ALBERT's, BERT's). An estimate."""

    albert: ModelConfig
    bert: ModelConfig
    hardware: HardwareProfile
    seq_len: int
    dtype: str
    ratios: Mapping[int, float]
    parts: Mapping[str, tuple[float, float]] = field(default_factory=lambda: MappingProxyType({}))
    # a training step at the sidebar's workload on the page's chips: BERT's seconds over ALBERT's (issue 42: the
    # answer was inference only, "slower", where the page's own training step was faster), and its parts
    training_ratio: float | None = None
    training_workload: Workload | None = None
    chips: int = 1
    training_parts: Mapping[str, tuple[float, float]] = field(default_factory=lambda: MappingProxyType({}))

    @property
    def training_verdict(self) -> int | None:
        """+1: ALBERT's training step is faster, -1: slower, 0: nearly equal (`direction`); None: not timed."""
        return None if self.training_ratio is None else direction(self.training_ratio, 1.0)

    @property
    def verdict(self) -> int | None:
        """+1: ALBERT faster at every batch, -1: slower at every batch, 0: nearly equal at every batch (each by
        `albert_core.format.direction`, the one threshold of every comparison), None: it depends on the batch."""
        ways = {direction(r, 1.0) for r in self.ratios.values()}
        return ways.pop() if len(ways) == 1 else None


def compare_speed(cfg: ModelConfig, workload: Workload, hardware: str | HardwareProfile,
                  batches: tuple[int, ...] = SPEED_BATCHES, chips: int = 1,
                  overlap: bool = True) -> SpeedComparison | None:
    """`albert_core.counting.report.albert_pair` of ``cfg`` (asked from either config of a pair, the same pair)
    timed at inference at ``batches`` (``workload``'s dtype and sequence length, the sequence capped at both
    configs' positions) and for one training step of ``workload`` on ``chips`` (as the page times the sidebar's
    config); None for a BERT without an ALBERT counterpart."""
    pair = albert_pair(cfg)
    if pair is None:
        return None
    hw = hardware if isinstance(hardware, HardwareProfile) else get_profile(hardware)
    albert, bert = pair
    seq = min(workload.seq_len, albert.max_seq_len, bert.max_seq_len)
    ratios, parts = {}, {}
    for b in batches:
        wl = Workload(batch=b, seq_len=seq, dtype=workload.dtype, optimizer="none")
        mine, twin = estimate_time(albert, wl, hw), estimate_time(bert, wl, hw)
        ratios[b] = twin.inference_s / mine.inference_s
        parts = {p.name: (p.seconds, q.seconds) for p, q in zip(mine.inference, twin.inference, strict=True)}
    train_wl = workload.replace(seq_len=seq)
    mine, twin = (estimate_time(c, train_wl, hw, chips, overlap=overlap) for c in (albert, bert))
    train_parts = {p.name: (p.seconds, q.seconds) for p, q in zip(mine.training, twin.training, strict=True)}
    return SpeedComparison(albert, bert, hw, seq, workload.dtype, MappingProxyType(ratios), MappingProxyType(parts),
                           twin.training_s / mine.training_s, train_wl, chips, MappingProxyType(train_parts))
