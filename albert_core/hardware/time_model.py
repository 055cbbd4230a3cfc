"""An estimate of time per training step and per inference batch on a hardware profile.

Built on the exact counters (`count_flops`, `count_params`, `estimate_memory`), split into parts
that run one after another on each chip, each a roofline (the larger of its compute time and its
memory time, and labelled by which one it is):

- matmuls: FLOPs / (peak x efficiency) against the weights read (one read per executed layer in
  the forward, one in the backward, one weight-gradient write);
- element-wise work (LayerNorm, softmax, GELU, dropout, residuals): the ELECTRA-convention
  element-wise FLOPs against the activation traffic: every saved activation is written and read
  once in the forward and, in training, read again in the backward with a gradient of the same
  size written and read (5 passes; 2 for inference);
- local attention (ModernBERT's local layers) as a sliding-window kernel in every part (`LOCAL_ATTENTION`): the
  matmuls, the softmax's element-wise work and the saved probabilities cover the window's pairs only;
- optimizer update: every unique parameter's weight, gradient and states read, weight and states
  written (memory-bound);
- gradient all-reduce (data parallelism): a ring moves 2 (n-1)/n x gradient bytes per chip over
  the slowest link of the ring, overlapped with the backward pass or not.

Sharing changes the optimizer and the all-reduce (unique parameters), never the matmul FLOPs or
the activations. It is an estimate and says so; `TimeEstimate.assumptions` lists what it assumes.
This module imports neither torch nor streamlit.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from albert_core.checks import check_flag, check_number, check_whole_number
from albert_core.configuration.config import ModelConfig
from albert_core.configuration.presets import PRESETS
from albert_core.configuration.workload import DTYPE_BYTES, Workload, check_seq_len
from albert_core.counting.flops import count_flops
from albert_core.counting.memory import OPTIMIZER_STATES, estimate_memory
from albert_core.counting.params import count_params
from albert_core.hardware.profiles import HardwareProfile, get_profile
from albert_core.paper import PAPER_SAME_TIME, PAPER_TABLE2_SPEEDUP, PAPER_TPU_RANGE

PARALLEL_MODES = ("data",)
MAX_CHIPS = 65_536
TRAIN_ACTIVATION_PASSES = 5  # forward write + read, backward read + gradient write + read
INFER_ACTIVATION_PASSES = 2  # forward write + read
TRAIN_WEIGHT_PASSES = 3  # forward read, backward read (input gradient), weight-gradient write
ELEMENTWISE_TRAIN_FACTOR = 3  # the backward of element-wise work costs about twice its forward
EMBEDDING_TABLES = ("embeddings.word_embeddings", "embeddings.position_embeddings",
                    "embeddings.token_type_embeddings")

# How the estimate runs local attention (ModernBERT's local layers), in every part alike.
LOCAL_ATTENTION = ("Local attention is estimated as a sliding-window kernel: its layers score, normalise and keep "
                   "only the pairs inside the window (no S x S tensor); global layers as eager attention.")

PART_LABELS: Mapping[str, str] = MappingProxyType({
    "matmuls": "Matmuls",
    "elementwise": "Element-wise work",
    "optimizer": "Optimizer update",
    "allreduce": "Gradient all-reduce",
})


@dataclass(frozen=True)
class TimePart:
    """One part of a step on one chip: its work, its two roofline times and the larger one."""

    name: str
    flops: float
    bytes: float  # bytes read and written in memory (all-reduce: bytes sent per chip)
    compute_s: float
    memory_s: float  # all-reduce: time on the link
    seconds: float  # what the part adds to the step (an overlapped all-reduce: its exposed part)
    bound: str  # "compute", "memory" or "communication"

    @property
    def label(self) -> str:
        return PART_LABELS[self.name]

    def to_dict(self) -> dict[str, Any]:
        return {"label": self.label, "seconds": self.seconds, "bound": self.bound, "flops": self.flops,
                "bytes": self.bytes, "compute_s": self.compute_s, "memory_s": self.memory_s}


@dataclass(frozen=True)
class TimeEstimate:
    """Seconds per training step (global batch over ``chips``) and per inference batch (the same
    per-chip share, no communication), with the parts and the assumptions. An estimate."""

    config: ModelConfig
    hardware: HardwareProfile
    chips: int
    batch: int
    seq_len: int
    dtype: str
    optimizer: str
    overlap: bool
    comm_efficiency: float
    training: tuple[TimePart, ...]
    inference: tuple[TimePart, ...]
    memory_per_chip: int | None  # training bytes per chip (weights, gradients, optimizer, activations)
    assumptions: tuple[str, ...]

    @property
    def training_s(self) -> float:
        return sum(p.seconds for p in self.training)

    @property
    def inference_s(self) -> float:
        return sum(p.seconds for p in self.inference)

    @property
    def per_chip_batch(self) -> float:
        return self.batch / self.chips

    @property
    def tokens_per_second(self) -> float:
        return self.batch * self.seq_len / self.training_s

    @property
    def fits(self) -> bool | None:
        """Whether a training step's memory fits one chip (None when the profile has no size)."""
        if self.memory_per_chip is None or not self.hardware.memory_bytes:
            return None
        return self.memory_per_chip <= self.hardware.memory_bytes

    def part(self, name: str, training: bool = True) -> TimePart:
        return next(p for p in (self.training if training else self.inference) if p.name == name)

    def to_dict(self) -> dict[str, Any]:
        return {
            "estimate": True,
            "config": self.config.label,
            "hardware": self.hardware.name,
            "chips": self.chips,
            "parallel": "data",
            "batch": self.batch,
            "per_chip_batch": self.per_chip_batch,
            "seq_len": self.seq_len,
            "dtype": self.dtype,
            "optimizer": self.optimizer,
            "training_step_s": self.training_s,
            "training_parts": {p.name: p.to_dict() for p in self.training},
            "inference_batch_s": self.inference_s,
            "inference_parts": {p.name: p.to_dict() for p in self.inference},
            "tokens_per_second": self.tokens_per_second,
            "memory_per_chip_bytes": self.memory_per_chip,
            "fits_in_chip_memory": self.fits,
            "assumptions": list(self.assumptions),
        }


def _roofline(name: str, flops: float, nbytes: float, rate: float, bandwidth: float) -> TimePart:
    compute = flops / rate
    memory = nbytes / bandwidth
    bound = "compute" if compute >= memory else "memory"
    return TimePart(name, flops, nbytes, compute, memory, max(compute, memory), bound)


def _check_fraction(name: str, value: Any) -> float:
    return check_number(name, value, 0, 1, lo_open=True)


def weight_read_params(cfg: ModelConfig) -> int:
    """Parameters a forward pass reads: one copy per executed layer (shared blocks re-read by every
    layer that runs them), embedding tables only through the rows looked up (left out) except the
    word table when the MLM decoder multiplies by it."""
    bd = count_params(cfg)
    unshared = {c.name: c.unshared for c in bd.components}
    total = sum(unshared.values()) - sum(unshared.get(n, 0) for n in EMBEDDING_TABLES)
    if cfg.has_mlm_head:
        total += unshared["embeddings.word_embeddings"]
    return total


def gradient_bytes(cfg: ModelConfig, dtype: str = "fp32") -> int:
    """The gradient bytes a data-parallel step all-reduces, as the time model counts them: every unique
    parameter once, in the gradients' dtype (a ring then sends 2(n-1)/n of it per chip)."""
    return count_params(cfg).total * DTYPE_BYTES[dtype]


def estimate_time(
    cfg: ModelConfig,
    workload: Workload,
    hardware: str | HardwareProfile,
    chips: int = 1,
    parallel: str = "data",
    *,
    overlap: bool = True,
    efficiency: float | None = None,
    comm_efficiency: float = 1.0,
    mlm_fraction: float = 1.0,
) -> TimeEstimate:
    """Estimated seconds per training step and per inference batch of ``cfg`` (see the module docstring).

    ``workload.batch`` is the global batch, split evenly over ``chips`` (data parallelism: every chip
    holds the whole model). ``efficiency`` overrides the profile's achievable fraction of its peak;
    ``comm_efficiency`` is the fraction of the datasheet link bandwidth the all-reduce reaches;
    ``overlap`` hides the all-reduce behind the backward pass as far as it is shorter.
    """
    if not isinstance(cfg, ModelConfig):
        raise ValueError(f"cfg must be a ModelConfig, got {type(cfg).__name__}")
    if not isinstance(workload, Workload):
        raise ValueError(f"workload must be a Workload, got {type(workload).__name__}")
    hw = hardware if isinstance(hardware, HardwareProfile) else get_profile(hardware)
    if parallel not in PARALLEL_MODES:
        raise ValueError(f"parallel must be one of {', '.join(PARALLEL_MODES)}; got {parallel!r:.40}")
    check_whole_number("chips", chips, 1, MAX_CHIPS)
    if chips > workload.batch:
        raise ValueError(f"chips ({chips}) must not exceed batch ({workload.batch}): data parallelism gives "
                         "every chip at least one sequence")
    if chips > 1 and not hw.link_bandwidth:
        raise ValueError(f"chips must be 1 on {hw.label} (no interconnect is modelled), got {chips}")
    check_flag("overlap", overlap)
    eff = hw.efficiency if efficiency is None else _check_fraction("efficiency", efficiency)
    comm_eff = _check_fraction("comm_efficiency", comm_efficiency)
    check_seq_len(cfg, workload.seq_len)
    if workload.dtype == "int8":
        raise ValueError("dtype 'int8' is not modelled by the time model: pick fp32, fp16 or bf16")
    dtype, B, S = workload.dtype, workload.batch, workload.seq_len
    rate = hw.peak(dtype) * eff
    train_rate = hw.peak(dtype, training=True) * eff
    bw = hw.memory_bandwidth
    nb = DTYPE_BYTES[dtype]

    fl = count_flops(cfg, B, S, mlm_fraction=mlm_fraction)
    full = count_flops(cfg, B, S, convention="full", mlm_fraction=mlm_fraction)
    elementwise = full.forward - fl.forward
    unique = count_params(cfg).total
    weights = weight_read_params(cfg) * nb
    # one attention implementation for every part: eager in the global layers, a sliding-window kernel in the local
    # ones (`LOCAL_ATTENTION`), whose matmuls, element-wise work and saved probabilities cover the window's pairs
    train_mem = estimate_memory(cfg, B, S, dtype=dtype, optimizer=workload.optimizer, training=True,
                                attention="windowed")
    infer_act = estimate_memory(cfg, B, S, dtype=dtype, optimizer="none", training=True, dropout=0.0,
                                attention="windowed").activations
    n = chips

    matmuls = _roofline("matmuls", fl.training / n, TRAIN_WEIGHT_PASSES * weights, train_rate, bw)
    elem = _roofline("elementwise", ELEMENTWISE_TRAIN_FACTOR * elementwise / n,
                     TRAIN_ACTIVATION_PASSES * train_mem.activations / n, train_rate, bw)
    states = OPTIMIZER_STATES[workload.optimizer]
    opt_bytes = unique * nb * (3 + 2 * states) if states else unique * nb * 3  # sgd without momentum: w, g, w
    opt = _roofline("optimizer", 2 * unique * (1 + states), opt_bytes, train_rate, bw)
    sent = 2 * (n - 1) / n * gradient_bytes(cfg, dtype)
    link = hw.ring_bandwidth(n) * comm_eff if n > 1 else math.inf
    comm_s = sent / link if n > 1 else 0.0
    backward_s = 2 / 3 * (matmuls.seconds + elem.seconds)
    exposed = max(0.0, comm_s - backward_s) if overlap else comm_s
    allreduce = TimePart("allreduce", 0.0, sent, 0.0, comm_s, exposed, "communication")

    inference = (
        _roofline("matmuls", fl.forward / n, weights, rate, bw),
        _roofline("elementwise", elementwise / n, INFER_ACTIVATION_PASSES * infer_act / n, rate, bw),
    )
    per_chip = train_mem.weights + train_mem.gradients + train_mem.optimizer + train_mem.activations // n
    assumptions = (
        "An estimate from exact FLOP, parameter and byte counts; not a measurement.",
        f"{hw.label}: {_si(hw.peak(dtype))}FLOP/s dense {dtype} peak x {eff:.0%} achievable, "
        f"{_si(bw)}B/s memory"
        + (f", training matmuls at {_si(hw.peak(dtype, training=True))}FLOP/s" if train_rate != rate else "")
        + (f", {_si(hw.ring_bandwidth(n))}B/s per-chip ring link" if n > 1 else "")
        + (" (measured here)" if hw.measured else " (datasheet)") + ".",
        f"Data parallelism over {n} chip{'s' if n > 1 else ''}: {B / n:g} sequences of {S} tokens per chip, "
        "every chip holds the whole model.",
        "Parts run one after another; each is the larger of its compute and memory time (roofline).",
        f"Matmuls read the weights of every executed layer ({TRAIN_WEIGHT_PASSES} passes in training); "
        f"activations move {TRAIN_ACTIVATION_PASSES}x their saved bytes in training, "
        f"{INFER_ACTIVATION_PASSES}x in inference.",
        f"Optimizer {workload.optimizer}: {states} state(s) per unique parameter, in {dtype}.",
        f"Gradient all-reduce: ring, 2(n-1)/n x {nb}-byte gradients of the {unique:,} unique parameters"
        + (f", {comm_eff:.1%} of the link bandwidth" if comm_eff != 1 else "")
        + (", overlapped with the backward pass" if overlap else ", after the backward pass") + ".",
        f"MLM head on {mlm_fraction:.0%} of the positions." if cfg.has_mlm_head else "No MLM head.",
        *((LOCAL_ATTENTION,) if cfg.local_layers else ()),
    )
    return TimeEstimate(cfg, hw, n, B, S, dtype, workload.optimizer, overlap, comm_eff,
                        (matmuls, elem, opt, allreduce), inference, int(per_chip), assumptions)


def _si(x: float) -> str:
    for scale, prefix in ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if x >= scale:
            return f"{x / scale:.3g} {prefix}"
    return f"{x:.3g} "


# ----------------------------------------------------------------------------- the paper's Table 2
# Training speed relative to BERT-large, the paper's Table 2 (albert_core.paper).
PAPER_SPEEDUP = PAPER_TABLE2_SPEEDUP
TABLE2_WORKLOAD = Workload(batch=4096, seq_len=512, dtype="fp32", optimizer="adamw")
TABLE2_CHIPS = 512
TABLE2_MLM_FRACTION = 0.15
TABLE2_HARDWARE = "tpu-v3"
# The one calibrated constant: the fraction of the TPU v3 datasheet all-reduce bandwidth that makes the
# recomputed speedups closest to the paper's (least squares on log ratios, all rows; see calibrate_table2).
TABLE2_COMM_EFFICIENCY = 0.052
# A recomputed speedup "meets" the paper's when it is within this fraction of it (either side).
TABLE2_BAND = 0.2


def _table2_estimates(chips: int) -> dict[str, TimeEstimate]:
    return {
        name: estimate_time(PRESETS[name].replace(head="pretraining"), TABLE2_WORKLOAD, TABLE2_HARDWARE,
                            chips, overlap=False, mlm_fraction=TABLE2_MLM_FRACTION)
        for name in PAPER_SPEEDUP
    }


def _step_with(est: TimeEstimate, comm_efficiency: float) -> float:
    """Training step time of a (comm_efficiency = 1, not overlapped) estimate at another efficiency."""
    return sum(p.seconds / (comm_efficiency if p.name == "allreduce" else 1.0) for p in est.training)


def calibrate_table2(chips: int = TABLE2_CHIPS, points: int = 601) -> float:
    """The comm efficiency (log grid from 0.1% to 100%) that minimises the squared log error of all
    six recomputed Table 2 speedups against the paper's."""
    ests = _table2_estimates(chips)
    best, best_err = 1.0, math.inf
    for i in range(points):
        e = 10 ** (-3 + 3 * i / (points - 1))
        ref = _step_with(ests["bert-large"], e)
        err = sum(math.log(ref / _step_with(est, e) / PAPER_SPEEDUP[n]) ** 2 for n, est in ests.items())
        if err < best_err:
            best, best_err = e, err
    return best


def paper_table2(chips: int = TABLE2_CHIPS, comm_efficiency: float = TABLE2_COMM_EFFICIENCY):
    """The paper's speed column recomputed: a pandas DataFrame with, per preset, the paper's speedup,
    the FLOPs-only speedup, the time model's (datasheet links, and links at ``comm_efficiency``),
    each model's ratio to the paper, and the predicted step time.

    ``reach_lo`` / ``reach_hi``: the range of speedups that *any* time model adding up these parts can
    give, whatever efficiency or bandwidth it assumes for each part. A speedup is a ratio of sums,
    (sum of w_i * BERT-large part i) / (sum of w_i * this row's part i) with weights w_i >= 0, and such a
    ratio always lies between the smallest and the largest ratio of its parts. ``reachable``: whether
    the paper's figure within +-`TABLE2_BAND` overlaps that range. ``allreduce_share``: the all-reduce's
    share of the calibrated step; ``datasheet_allreduce_share``: of the step with datasheet links."""
    import pandas as pd

    check_whole_number("chips", chips, 1, TABLE2_WORKLOAD.batch)
    _check_fraction("comm_efficiency", comm_efficiency)
    ests = _table2_estimates(chips)
    ref = ests["bert-large"]
    rows = []
    for name, est in ests.items():
        flops_only = ref.part("matmuls").flops / est.part("matmuls").flops
        datasheet = ref.training_s / est.training_s
        calibrated = _step_with(ref, comm_efficiency) / _step_with(est, comm_efficiency)
        paper = PAPER_SPEEDUP[name]
        part_ratios = [ref.part(p.name).seconds / p.seconds for p in est.training if p.seconds > 0]
        lo, hi = min(part_ratios), max(part_ratios)
        rows.append({
            "preset": name, "paper": paper, "flops_only": flops_only, "flops_only_ratio": flops_only / paper,
            "datasheet": datasheet, "datasheet_ratio": datasheet / paper,
            "model": calibrated, "model_ratio": calibrated / paper,
            "within_20pct": abs(calibrated / paper - 1) <= TABLE2_BAND,
            "reach_lo": lo, "reach_hi": hi,
            "reachable": lo <= (1 + TABLE2_BAND) * paper and hi >= (1 - TABLE2_BAND) * paper,
            "step_s": _step_with(est, comm_efficiency),
            "allreduce_share": est.part("allreduce").seconds / comm_efficiency / _step_with(est, comm_efficiency),
            "datasheet_allreduce_share": est.part("allreduce").seconds / est.training_s,
            "unique_params": count_params(est.config).total,
        })
    return pd.DataFrame(rows)


def table2_size_ratios(name: str) -> dict[str, float]:
    """``name``'s training FLOPs per step, unique parameters and saved activations as fractions of
    BERT-large's, in the Table 2 setting (pre-training heads, MLM on `TABLE2_MLM_FRACTION` of the positions):
    what the time model's parts scale with, so the largest of their inverses bounds any recomputed speedup."""
    wl = TABLE2_WORKLOAD
    cfgs = {n: PRESETS[n].replace(head="pretraining") for n in (name, "bert-large")}
    flops = {n: count_flops(c, wl.batch, wl.seq_len, mlm_fraction=TABLE2_MLM_FRACTION).training
             for n, c in cfgs.items()}
    params = {n: count_params(c).total for n, c in cfgs.items()}
    acts = {n: estimate_memory(c, wl.batch, wl.seq_len, dtype=wl.dtype, optimizer=wl.optimizer).activations
            for n, c in cfgs.items()}
    return {k: v[name] / v["bert-large"] for k, v in (("flops", flops), ("params", params), ("activations", acts))}


@dataclass(frozen=True)
class ChipCheck:
    """One pod size for the paper's same-training-time runs (`albert_core.paper.PAPER_SAME_TIME`): each run's
    seconds per step as the paper's hours and steps give it, against the least a step can take on ``chips``
    chips (its training matmuls alone at 100% of the chips' peak)."""

    chips: int
    paper_step_s: Mapping[str, float]
    peak_step_s: Mapping[str, float]

    @property
    def too_fast(self) -> tuple[str, ...]:
        """The runs whose measured step is shorter than their matmuls at peak: impossible on this many chips."""
        return tuple(n for n, s in self.paper_step_s.items() if s < self.peak_step_s[n])

    @property
    def consistent(self) -> bool:
        return not self.too_fast


def table2_chip_checks() -> tuple[ChipCheck, ...]:
    """`ChipCheck` for every power of two in the paper's TPU range (`albert_core.paper.PAPER_TPU_RANGE`),
    fewest chips first: the pod sizes the paper's own step times allow are the consistent ones."""
    wl = TABLE2_WORKLOAD
    peak = get_profile(TABLE2_HARDWARE).peak(wl.dtype, training=True)
    paper_s = {n: r["hours"] * 3600 / r["steps"] for n, r in PAPER_SAME_TIME.items()}
    flops = {n: count_flops(PRESETS[n].replace(head="pretraining"), wl.batch, wl.seq_len,
                            mlm_fraction=TABLE2_MLM_FRACTION).training for n in PAPER_SAME_TIME}
    lo, hi = PAPER_TPU_RANGE
    sizes = [2**k for k in range(lo.bit_length() - 1, hi.bit_length()) if lo <= 2**k <= hi]
    return tuple(ChipCheck(n, paper_s, {m: f / (n * peak) for m, f in flops.items()}) for n in sizes)
