"""Shared helpers for the benchmark modules: timing, interleaving, figure records, machine description.

Every `bench/bench_*.py` module exposes `run() -> dict` of the form

    {"title": "Live model", "figures": [figure(...), ...], "notes": ["free text", ...]}

where each figure is the plain dict built by `figure()` below. `python -m bench` runs them all and writes
docs/benchmarks.md and docs/benchmarks.json. Speed goals live here, never in the tests.
"""

from __future__ import annotations

import contextlib
import os
import platform
import statistics
import time
from collections.abc import Callable, Sequence
from typing import Any


def quantile(values: Sequence[float], q: float) -> float:
    """Linear-interpolated quantile (numpy's default method), without importing numpy."""
    xs = sorted(values)
    if not xs:
        raise ValueError("values must not be empty")
    pos = (len(xs) - 1) * q
    lo = int(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def summary(values: Sequence[float]) -> dict[str, float]:
    """Median and spread (10th and 90th percentile, min, max) of repeated measurements."""
    return {
        "median": statistics.median(values),
        "p10": quantile(values, 0.1),
        "p90": quantile(values, 0.9),
        "min": min(values),
        "max": max(values),
        "n": len(values),
    }


def time_calls(fn: Callable[[], Any], n: int, warmup: int = 1) -> list[float]:
    """Wall-clock seconds of n calls of fn (after warmup calls)."""
    for _ in range(warmup):
        fn()
    out = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return out


def interleaved(fns: Sequence[Callable[[], Any]], n: int, warmup: int = 1) -> list[list[float]]:
    """Wall-clock seconds of n interleaved rounds (see `interleaved_clocks`), one list per function."""
    return interleaved_clocks(fns, n, warmup)[0]


def interleaved_clocks(
    fns: Sequence[Callable[[], Any]], n: int, warmup: int = 1
) -> tuple[list[list[float]], list[list[float]]]:
    """Time several functions round-robin so that load from other processes on this shared host hits
    all of them alike: a, b, c, then c, b, a (the order alternates each round, so a slow drift of the
    load does not favour whoever runs first). Returns (wall seconds, process CPU seconds), each one
    list of n values per function. CPU time (all threads of this process) leaves out the time the
    scheduler gave to other processes, so it is far steadier than wall time on a loaded machine."""
    for _ in range(warmup):
        for fn in fns:
            fn()
    wall: list[list[float]] = [[] for _ in fns]
    cpu: list[list[float]] = [[] for _ in fns]
    for i in range(n):
        order = list(range(len(fns)))
        if i % 2:
            order.reverse()
        for j in order:
            c0, t0 = time.process_time(), time.perf_counter()
            fns[j]()
            wall[j].append(time.perf_counter() - t0)
            cpu[j].append(time.process_time() - c0)
    return wall, cpu


def figure(
    name: str,
    stats: dict[str, float] | float,
    unit: str,
    *,
    goal: str | None = None,
    met: bool | None = None,
    reason: str = "",
    lower_is_better: bool = True,
) -> dict[str, Any]:
    """One reported number. `stats` is a `summary()` dict or a single value; `goal` is human text such as
    "<= 0.85"; `met` None means "no goal"; `reason` says why a goal was missed (or how it was measured)."""
    if not isinstance(stats, dict):
        stats = {"median": float(stats), "n": 1}
    return {
        "name": name,
        "unit": unit,
        **{k: float(v) if k != "n" else int(v) for k, v in stats.items()},
        "goal": goal,
        "met": met,
        "reason": reason,
        "lower_is_better": lower_is_better,
    }


def load_note(load_start: float, seconds: float) -> str:
    """How loaded this shared host was while a section ran (1-minute load average against the CPUs),
    said plainly: the reader needs it to judge wall-clock figures."""
    cpus = os.cpu_count() or 1
    end = os.getloadavg()[0]
    if max(load_start, end) <= cpus:
        state = "quiet (no more runnable tasks than CPUs)"
    else:
        state = "loaded by other jobs (wall-clock figures are noisy; ratios come from interleaved rounds)"
    return (f"The machine was {state}: load average (1 min) {load_start:.1f} at the start, {end:.1f} at the end "
            f"({cpus} CPUs). Section run time {seconds:.0f} s.")


YARDSTICK_ITERATIONS = 10_000_000


def python_yardstick(repeats: int = 3) -> float:
    """CPU seconds of the fastest of ``repeats`` runs of a fixed plain-Python loop (10 million additions): a
    machine-speed yardstick for single-threaded Python (what a Streamlit rerun mostly is), so that figures
    from different hosts can be compared. CPU time, best of several: robust to a busy host."""
    best = float("inf")
    for _ in range(repeats):
        start = time.process_time()
        total = 0
        for i in range(YARDSTICK_ITERATIONS):
            total += i
        best = min(best, time.process_time() - start)
    return best


def machine() -> dict[str, Any]:
    """CPU model, cores, Python / torch versions and thread count of this run."""
    info: dict[str, Any] = {
        "cpu": _cpu_model(),
        "logical_cpus": os.cpu_count(),
        "platform": platform.platform(),
        "python": platform.python_version(),
    }
    with contextlib.suppress(AttributeError, OSError):
        info["affinity_cpus"] = len(os.sched_getaffinity(0))
    try:
        import torch

        info["torch"] = torch.__version__
        info["torch_threads"] = torch.get_num_threads()
    except ImportError:
        pass
    try:
        import transformers

        info["transformers"] = transformers.__version__
    except ImportError:
        pass
    try:
        import psutil

        info["memory_total_bytes"] = psutil.virtual_memory().total
        info["load_average_1m"] = os.getloadavg()[0]
    except (ImportError, OSError):
        pass
    return info


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"
