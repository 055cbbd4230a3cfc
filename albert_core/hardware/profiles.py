"""Hardware profiles for the time model: peak throughput, memory and interconnect, each with its source.

Every figure of a datasheet profile is the vendor's *dense* figure (never the "with sparsity" one,
which is twice the dense peak and only holds for 2:4 structured-sparse weights). Bandwidths are in
bytes per second, throughput in FLOP/s, both per chip. The profile of this machine is probed (matmul
throughput with `albert_core.live.analysis.measure_matmul_gflops`, memory bandwidth with a large copy),
once, and cached on disk keyed by CPU model, torch thread count and torch version.

This module imports torch only inside `probe_this_machine`.
"""

from __future__ import annotations

import json
import os
import platform
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from albert_core import settings

THIS_MACHINE = "this-machine"
_COPY_BYTES = 256 * 2**20  # far past every CPU cache, so the copy runs at DRAM bandwidth
PROBE_BUDGET_S = 1.0  # seconds the matmul kernels are timed for
PROBE_ABOUT_S = PROBE_BUDGET_S + 1.0  # a whole probe: the kernels, then about 1 s for the copy
_PROBE_VERSION = 3  # 3: the fastest of short repeats, CPU time at one thread
TRAINING_KERNEL = "torch.matmul"  # what autograd's mm / addmm run on the CPU (oneDNN is inference-only here)

# Fraction of the dense peak a large, well-shaped matmul reaches on an accelerator. An assumption
# (a round figure for cuBLAS / XLA GEMMs at transformer shapes), not a measurement; the time model
# shows it with every result and takes another value through `efficiency=`.
DATASHEET_EFFICIENCY = 0.6


@dataclass(frozen=True)
class HardwareProfile:
    """One accelerator (or this CPU), per chip.

    ``peak_flops``: dense matmul FLOP/s by compute dtype; ``memory_bandwidth``: bytes/s of the chip's
    main memory; ``link_bandwidth``: bytes/s one chip sends (one direction) in a ring all-reduce
    within a node (NVLink) or a pod slice (TPU ICI); ``scale_out_bandwidth``: the same between nodes
    (the network card per GPU), used when more than ``chips_per_node`` chips take part;
    ``efficiency``: fraction of ``peak_flops`` a large matmul reaches (1.0 for a probed profile: the
    probe already measures what a matmul achieves). ``sources`` names where each figure comes from.
    """

    name: str
    label: str
    peak_flops: Mapping[str, float]
    memory_bandwidth: float
    memory_bytes: int
    link_bandwidth: float
    chips_per_node: int
    scale_out_bandwidth: float
    efficiency: float
    sources: Mapping[str, str]
    measured: bool = False
    notes: tuple[str, ...] = field(default_factory=tuple)
    # FLOP/s of the matmul kernels autograd runs in training, where they differ from ``peak_flops``
    # (on this CPU the live model's inference runs oneDNN, its training torch's default GEMM).
    training_peak_flops: Mapping[str, float] | None = None

    def peak(self, dtype: str, training: bool = False) -> float:
        """Dense FLOP/s for matmuls in ``dtype`` (of the training kernels if ``training``); ValueError
        if the profile has no figure for it."""
        if dtype not in self.peak_flops:
            raise ValueError(
                f"dtype {dtype!r} has no throughput figure on {self.label} "
                f"(it has {', '.join(self.peak_flops)})"
            )
        if training and self.training_peak_flops and dtype in self.training_peak_flops:
            return self.training_peak_flops[dtype]
        return self.peak_flops[dtype]

    def ring_bandwidth(self, chips: int) -> float:
        """Per-chip bandwidth of a ring over ``chips``: the slowest link of the ring."""
        return self.link_bandwidth if chips <= self.chips_per_node else min(
            self.link_bandwidth, self.scale_out_bandwidth
        )

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["peak_flops"] = dict(self.peak_flops)
        out["sources"] = dict(self.sources)
        out["notes"] = list(self.notes)
        out["training_peak_flops"] = dict(self.training_peak_flops or {})
        return out


_TPU_V3_PAGE = "Google Cloud, 'TPU v3' (Cloud TPU documentation, system architecture table)"
_A100 = "NVIDIA A100 Tensor Core GPU datasheet"
_H100 = "NVIDIA H100 Tensor Core GPU datasheet (H100 SXM column)"
_H200 = "NVIDIA H200 Tensor Core GPU datasheet (H200 SXM column)"
_NVLINK_HALF = "; a ring sends in one direction, half of the bidirectional NVLink figure"


def _nvidia(name: str, label: str, sheet: str, *, dense: float, sparse: float, fp32: float,
            bandwidth: tuple[float, str], memory: tuple[int, str], nvlink: float,
            nic: tuple[int, str, str]) -> HardwareProfile:
    """An NVIDIA SXM GPU in an 8-GPU node. ``sparse`` is the datasheet's "with sparsity" tensor-core
    figure, quoted in the source and never used; ``nvlink`` the bidirectional NVLink figure; ``nic``
    (Gb/s per GPU, node datasheet, card)."""
    gbits, node, card = nic
    return HardwareProfile(
        name=name,
        label=label,
        peak_flops={"bf16": dense, "fp16": dense, "fp32": fp32},
        memory_bandwidth=bandwidth[0],
        memory_bytes=memory[0] * 10**9,
        link_bandwidth=nvlink / 2,
        chips_per_node=8,
        scale_out_bandwidth=gbits * 1e9 / 8,
        efficiency=DATASHEET_EFFICIENCY,
        sources={
            "peak_flops": f"{sheet}: BF16/FP16 Tensor Core {dense / 1e12:,.0f} TFLOPS dense ({sparse / 1e12:,.0f} is "
            f"the sparsity figure, not used); FP32 {fp32 / 1e12:g} TFLOPS (torch keeps TF32 off for matmuls by "
            "default)",
            "memory_bandwidth": f"{sheet}: {bandwidth[1]}",
            "memory_bytes": f"{sheet}: {memory[1]}",
            "link_bandwidth": f"{sheet}: NVLink {nvlink / 1e9:,.0f} GB/s{_NVLINK_HALF}",
            "scale_out_bandwidth": f"NVIDIA {node} datasheet: one {gbits} Gb/s {card} port per GPU",
            "efficiency": "assumption (DATASHEET_EFFICIENCY)",
        },
    )


DATASHEET_PROFILES: Mapping[str, HardwareProfile] = MappingProxyType(
    {
        "tpu-v3": HardwareProfile(
            name="tpu-v3",
            label="Cloud TPU v3 (per chip, 2 TensorCores)",
            # XLA runs fp32 matmuls on TPU as one bf16 pass by default, so fp32 gets the bf16 peak.
            peak_flops={"bf16": 123e12, "fp16": 123e12, "fp32": 123e12},
            memory_bandwidth=900e9,
            memory_bytes=32 * 2**30,
            # 340 TB/s all-reduce bandwidth per 1,024-chip pod -> 332 GB/s per chip
            link_bandwidth=340e12 / 1024,
            chips_per_node=1024,
            scale_out_bandwidth=340e12 / 1024,
            efficiency=DATASHEET_EFFICIENCY,
            sources={
                "peak_flops": f"{_TPU_V3_PAGE}: peak compute per chip 123 teraflops (bf16); fp32 matmuls "
                "run at XLA's default (one bf16 pass) on TPU",
                "memory_bandwidth": f"{_TPU_V3_PAGE}: HBM2 32 GiB, 900 GBps",
                "memory_bytes": f"{_TPU_V3_PAGE}: HBM2 32 GiB",
                "link_bandwidth": f"{_TPU_V3_PAGE}: all-reduce bandwidth per pod 340 TB/s over a 1,024-chip "
                "pod (2D torus ICI), i.e. 332 GB/s per chip",
                "scale_out_bandwidth": "the whole pod is on ICI (no separate network between hosts)",
                "efficiency": "assumption (DATASHEET_EFFICIENCY)",
            },
            notes=("The ALBERT paper trained on Cloud TPU v3, 64 to 512 TPUs depending on model size.",),
        ),
        "a100": _nvidia(
            "a100", "NVIDIA A100 SXM 80GB", _A100, dense=312e12, sparse=624e12, fp32=19.5e12,
            bandwidth=(2039e9, "2,039 GB/s (80GB SXM; the 40GB card has 1,555 GB/s)"), memory=(80, "80GB HBM2e"),
            nvlink=600e9, nic=(200, "DGX A100", "HDR InfiniBand"),
        ),
        "h100": _nvidia(
            "h100", "NVIDIA H100 SXM 80GB", _H100, dense=989e12, sparse=1979e12, fp32=67e12,
            bandwidth=(3.35e12, "3.35 TB/s"), memory=(80, "80GB HBM3"), nvlink=900e9,
            nic=(400, "DGX H100", "ConnectX-7"),
        ),
        "h200": _nvidia(
            "h200", "NVIDIA H200 SXM 141GB", _H200, dense=989e12, sparse=1979e12, fp32=67e12,
            bandwidth=(4.8e12, "4.8 TB/s"), memory=(141, "141GB HBM3e"), nvlink=900e9,
            nic=(400, "DGX H200", "ConnectX-7"),
        ),
    }
)
HARDWARE_NAMES = (*DATASHEET_PROFILES, THIS_MACHINE)


def get_profile(name: str, *, probe: bool = True) -> HardwareProfile:
    """A profile by name (see HARDWARE_NAMES). ``this-machine`` is probed on first use and cached
    (``probe=False`` returns it only from the cache, ValueError if it was never probed)."""
    if name in DATASHEET_PROFILES:
        return DATASHEET_PROFILES[name]
    if name == THIS_MACHINE:
        return this_machine(probe=probe)
    raise ValueError(f"hardware must be one of {', '.join(HARDWARE_NAMES)}; got {str(name)[:40]!r}")


# ----------------------------------------------------------------------------- this machine
def cpu_name() -> str:
    """The CPU's model name as the kernel reports it (as `lscpu` shows it)."""
    try:
        text = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
    except OSError:
        text = ""
    names = [line.partition(":")[2].strip() for line in text.splitlines() if line.startswith("model name")]
    return names[0] if names else (platform.processor() or "unknown CPU")


def cache_path() -> Path:
    """Where the probe is cached: $ALBERT_EXPLORER_CACHE_DIR, else ~/.cache/albert-explorer."""
    return settings.cache_dir() / "hardware-probe.json"


def _probe_key(threads: int) -> str:
    import torch

    return f"v{_PROBE_VERSION}|{cpu_name()}|threads={threads}|torch={torch.__version__}"


def measure_copy_bandwidth(nbytes: int = _COPY_BYTES, repeats: int = 5) -> float:
    """Memory bandwidth in bytes/s: a large tensor copy reads and writes ``nbytes`` each (the fastest of
    ``repeats``: other processes on a busy host only ever slow a copy down)."""
    import torch

    src = torch.ones(nbytes // 4, dtype=torch.float32)
    dst = torch.empty_like(src)
    dst.copy_(src)  # first touch of the pages
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        dst.copy_(src)
        times.append(time.perf_counter() - t0)
    return 2 * nbytes / min(times)


def measure_kernel_flops(budget_s: float = PROBE_BUDGET_S,
                         clock: Callable[[], float] = time.perf_counter) -> dict[str, float]:
    """fp32 FLOP/s of each matmul kernel of `albert_core.live.analysis.probe_kernels` (best over its
    PROBE_SHAPES of the fastest of several short repeats, about ``budget_s`` in all: a busy host only ever
    slows a run down, so the fastest is the machine's own rate), timed with ``clock`` (wall time by
    default; a one-thread probe passes the thread's CPU time, which other processes cannot inflate)."""
    import torch

    from albert_core.live.analysis import PROBE_SHAPES, probe_kernels

    gen = torch.Generator().manual_seed(0)
    kernels = probe_kernels()
    per_run = budget_s / (len(PROBE_SHAPES) * len(kernels))
    best = dict.fromkeys((name for name, _ in kernels), 0.0)
    with torch.inference_mode():
        for m, k, n in PROBE_SHAPES:
            a, w = torch.randn(m, k, generator=gen), torch.randn(n, k, generator=gen)
            for name, fn in kernels:
                fn(a, w)  # warm up
                times: list[float] = []
                deadline = time.perf_counter() + per_run
                while len(times) < 3 or (time.perf_counter() < deadline and len(times) < 50):
                    t0 = clock()
                    fn(a, w)
                    times.append(clock() - t0)
                best[name] = max(best[name], 2 * m * k * n / max(min(times), 1e-9))
    return best


def probe_this_machine(budget_s: float = PROBE_BUDGET_S) -> dict[str, Any]:
    """Measure fp32 matmul throughput per kernel and copy bandwidth now (about ``budget_s`` + 1 s)."""
    import torch

    threads = torch.get_num_threads()
    # one thread: its own CPU time, which a busy host cannot stretch; several: wall time (CPU time would sum them)
    kernels = measure_kernel_flops(budget_s, clock=time.thread_time if threads == 1 else time.perf_counter)
    return {
        "key": _probe_key(threads),
        "cpu": cpu_name(),
        "threads": threads,
        "matmul_flops": max(kernels.values()),
        "kernel_flops": kernels,
        "memory_bandwidth": measure_copy_bandwidth(),
        "memory_bytes": _total_memory(),
        "probed_at": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
    }


def _total_memory() -> int:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 0


def _read_cache(key: str) -> dict[str, Any] | None:
    try:
        data = json.loads(cache_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    entry = data.get(key) if isinstance(data, dict) else None
    if not isinstance(entry, dict):
        return None
    try:
        if float(entry["matmul_flops"]) > 0 and float(entry["memory_bandwidth"]) > 0:
            return entry
    except (KeyError, TypeError, ValueError):
        pass
    return None


def _write_cache(entry: dict[str, Any]) -> None:
    path = cache_path()
    try:
        old = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    except (OSError, ValueError):
        old = {}
    old = old if isinstance(old, dict) else {}
    old[entry["key"]] = entry
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(old, indent=1), encoding="utf-8")
        tmp.replace(path)
    except OSError:
        pass  # a read-only home: the probe is simply repeated by the next process


_MEMO: dict[str, HardwareProfile] = {}


def this_machine(*, probe: bool = True, refresh: bool = False) -> HardwareProfile:
    """This machine's profile: from the in-process memo, else the disk cache, else a probe (if allowed)."""
    import torch

    key = _probe_key(torch.get_num_threads())
    if not refresh and key in _MEMO:
        return _MEMO[key]
    entry = None if refresh else _read_cache(key)
    if entry is None:
        if not probe:
            raise ValueError("this machine has not been probed yet")
        entry = probe_this_machine()
        _write_cache(entry)
    profile = profile_from_probe(entry)
    _MEMO[key] = profile
    return profile


def profile_from_probe(entry: Mapping[str, Any]) -> HardwareProfile:
    """A profile from probe results (see `probe_this_machine`): fp32 only, one chip, no links."""
    when = entry.get("probed_at", "")
    how = f"probed on {entry.get('cpu', 'this CPU')} with {entry.get('threads', '?')} torch threads {when}"
    kernels = entry.get("kernel_flops") or {}
    training = float(kernels[TRAINING_KERNEL]) if TRAINING_KERNEL in kernels else None
    return HardwareProfile(
        name=THIS_MACHINE,
        label=f"this machine ({entry.get('cpu', 'CPU')}, {entry.get('threads', '?')} threads)",
        peak_flops={"fp32": float(entry["matmul_flops"])},
        memory_bandwidth=float(entry["memory_bandwidth"]),
        memory_bytes=int(entry.get("memory_bytes") or 0),
        link_bandwidth=0.0,
        chips_per_node=1,
        scale_out_bandwidth=0.0,
        efficiency=1.0,
        sources={
            "peak_flops": f"measured: best fp32 matmul throughput (torch.matmul / oneDNN linear), {how}",
            "training_peak_flops": f"measured: {TRAINING_KERNEL} alone (the kernel autograd runs in training), "
            f"{how}",
            "memory_bandwidth": f"measured: a {_COPY_BYTES // 2**20} MiB tensor copy (read + write), {how}",
            "memory_bytes": "os.sysconf physical pages",
            "efficiency": "1.0: the probe measures what a matmul achieves here",
        },
        measured=True,
        notes=("One process on one CPU: no data-parallel links are modelled.",),
        training_peak_flops=None if training is None else {"fp32": training},
    )


# ----------------------------------------------------------------------------- measured gradient traffic
# The bytes DDP all-reduced per training step for every preset, measured here with several CPU processes by
# `albert_core.hardware.allreduce.measure_presets` (the command below) and shipped, so the Hardware page shows a
# measurement without running one.
MEASURED_FILE = Path(__file__).with_name("data") / "allreduce_measured.json"
MEASURE_PRESETS = ("bert-base", "albert-base", "bert-large", "albert-large", "albert-xlarge", "albert-xxlarge")
MEASURE_COMMAND = "make measure-ddp"


def load_measured(path: Path | str = MEASURED_FILE) -> dict[str, Any] | None:
    """The shipped measurement (`measure_presets`' JSON), None if the file is absent or unreadable."""
    path = Path(path)
    try:
        if path.stat().st_size > 100_000:
            return None
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and isinstance(data.get("rows"), list) else None
