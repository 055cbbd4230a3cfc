"""What a probed lab run really holds, beside what it reserves in the memory budget (issue 40).

In a fresh process (one torch thread, two malloc arenas as deployed, the run in a thread as the worker
trains it): the resident set's peak (VmHWM, reset through /proc/self/clear_refs) while
the run trains, and again from the start of its downstream probe to its end, each as growth over the resident set
before the run; glibc's own figure of the bytes in use (mallinfo2) at the same points. Beside them the run's
reservation (`trainer.run_cost(spec)`: its model's estimate and its data) and its parts. Linux and glibc only.

    .venv/bin/python scripts/measure_probe_memory.py                          # the lab's base twin, the full probe
    .venv/bin/python scripts/measure_probe_memory.py --hidden 256 --layers 4 --epochs 1 --json out.json
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import platform
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

MiB = 2**20


class _MallInfo2(ctypes.Structure):
    _fields_ = [(n, ctypes.c_size_t) for n in ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks",
                                               "uordblks", "fordblks", "keepcost")]


_LIBC = ctypes.CDLL("libc.so.6")
_LIBC.mallinfo2.restype = _MallInfo2


def heap() -> int:
    info = _LIBC.mallinfo2()
    return info.uordblks + info.hblkhd


def status(field: str) -> int:
    with open("/proc/self/status") as f:
        line = next(x for x in f if x.startswith(field + ":"))
    return int(line.split()[1]) * 1024


def reset_peak() -> None:
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")


def cpu_name() -> str:
    with open("/proc/cpuinfo") as f:
        return next((x.split(":", 1)[1].strip() for x in f if x.startswith("model name")), platform.processor())


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--hidden", type=int, default=None, help="H of the run (default: the lab's base, 64)")
    p.add_argument("--layers", type=int, default=None, help="L of the run (default: the lab's base, 4)")
    p.add_argument("--vocab", type=int, default=512)
    p.add_argument("--steps", type=int, default=30, help="pretraining steps before the probe")
    p.add_argument("--epochs", type=int, default=None, help="fine-tuning epochs (default: the recipe's)")
    p.add_argument("--seeds", type=int, default=None, help="fine-tuning seeds (default: the recipe's)")
    p.add_argument("--json", type=Path, default=None)
    p.add_argument("--trim", action="store_true", help="malloc_trim(0) when the training ends (an experiment)")
    args = p.parse_args(argv)
    if "MALLOC_ARENA_MAX" not in os.environ:  # as the image and deploy/ serve the app; read by glibc at start
        os.execve(sys.executable, [sys.executable, *sys.argv], {**os.environ, "MALLOC_ARENA_MAX": "2"})

    import threading

    import torch

    torch.set_num_threads(1)
    from albert_core.lab import probe, trainer
    from albert_core.lab.spec import LAB_BASE, RUN_DEFAULTS, RunSpec

    cfg = LAB_BASE.replace(vocab_size=args.vocab)
    if args.hidden:
        cfg = cfg.replace(hidden_size=args.hidden, num_heads=max(1, args.hidden // 64) * 2,
                          intermediate_size=4 * args.hidden)
    if args.layers:
        cfg = cfg.replace(num_layers=args.layers)
    if args.epochs or args.seeds:
        probe.RECIPE = probe.Recipe(epochs=args.epochs or probe.RECIPE.epochs,
                                    seeds=tuple(range(args.seeds)) if args.seeds else probe.RECIPE.seeds)
    spec = RunSpec(cfg, steps=args.steps, probe=True, **RUN_DEFAULTS)
    cost = trainer.run_cost(spec)
    probe.sentences()  # the installed file is read once per process, like the module's other imports
    time.sleep(0.1)
    reset_peak()
    start_rss, start_heap = status("VmRSS"), heap()
    seen: dict[str, int] = {}

    def on_progress(pr) -> None:
        # the last training step's report comes after its evaluation: the probe starts next
        if pr.step == pr.steps and not pr.probe_total and "train_peak" not in seen:
            seen["train_peak"] = status("VmHWM") - start_rss
            seen["probe_start"] = status("VmRSS") - start_rss
            seen["probe_start_heap"] = heap() - start_heap
            if args.trim:
                _LIBC.malloc_trim(0)
                seen["probe_start_trimmed"] = status("VmRSS") - start_rss
            reset_peak()

    t0 = time.perf_counter()
    out = {}

    def run() -> None:  # in a thread of its own, as the lab's worker trains
        torch.set_num_threads(1)
        out["result"] = trainer.train(spec, on_progress=on_progress, limits=trainer.LabLimits(max_seconds=3600))

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    result = out["result"]
    probe_peak = status("VmHWM") - start_rss
    report = {
        "cpu": cpu_name(), "load_average": os.getloadavg(), "config": cfg.label, "params": cost.params,
        "pretraining_steps": spec.steps, "recipe": {"epochs": probe.RECIPE.epochs, "seeds": probe.RECIPE.seeds},
        "seconds": round(time.perf_counter() - t0, 1), "probe_finished": result.probe is not None,
        "reserved_MiB": cost.reserved_bytes / MiB, "memory_estimate_MiB": cost.memory_bytes / MiB,
        "data_MiB": cost.data_bytes / MiB, "probe_estimate_MiB": probe.probe_cost(cfg)[1] / MiB,
        "training_peak_growth_MiB": seen.get("train_peak", 0) / MiB,
        "probe_start_growth_MiB": seen.get("probe_start", 0) / MiB,
        "probe_peak_growth_MiB": probe_peak / MiB,
        "heap_in_use_at_probe_start_MiB": seen.get("probe_start_heap", 0) / MiB,
        "probe_start_after_trim_MiB": seen["probe_start_trimmed"] / MiB if "probe_start_trimmed" in seen else None,
        "malloc_arena_max": os.environ.get("MALLOC_ARENA_MAX", "glibc default"),
        "heap_in_use_after_MiB": (heap() - start_heap) / MiB,
    }
    report["probe_over_reservation_MiB"] = report["probe_peak_growth_MiB"] - report["reserved_MiB"]
    text = json.dumps(report, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
