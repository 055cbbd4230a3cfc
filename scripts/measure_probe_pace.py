"""Measure the downstream probe's wall time against its estimated FLOPs on this machine (issue 42).

The Train page's plan estimates a run's time from its FLOPs at one pace (seconds per FLOP measured on finished runs,
or the shipped runs' pace); a probed run's fine-tuning on movie reviews ran about 2.5x slower per estimated FLOP than
its pretraining (short padded batches, tokenizing, scoring), so the plan promised 5.9 min for what took 15.7. This
trains one tiny twin with the probe, as the page's "Tiny twins" plan does (one torch thread, the lab's recipe), and
writes albert_core/lab/reference/probe_pace.json: the training's and the probe's seconds, their FLOPs (`run_cost`), and
the ratio of the two paces, which the plan applies to the probe's FLOPs.

    OMP_NUM_THREADS=1 nice -n 19 python scripts/measure_probe_pace.py [--steps 9000]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from albert_core.lab import trainer
from albert_core.lab.checkpoint import environment
from albert_core.lab.experiments import BASE, twins
from albert_core.lab.spec import DEFAULT_STEPS, RUN_DEFAULTS, RunSpec

OUT = Path(__file__).resolve().parents[1] / "albert_core" / "lab" / "reference" / "probe_pace.json"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=DEFAULT_STEPS)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    cfg = twins(BASE)["ALBERT"]
    spec = RunSpec(cfg, task="sop", steps=args.steps, seed=0, label="ALBERT, probed", probe=True, **RUN_DEFAULTS)
    marks: dict[str, float] = {}

    def progress(p) -> None:
        if getattr(p, "probe_total", 0) and "probe_start" not in marks:
            marks["probe_start"] = time.perf_counter()

    t0 = time.perf_counter()
    result = trainer.train(spec, on_progress=progress, threads=1)
    wall = time.perf_counter() - t0
    cost = trainer.run_cost(spec)
    probe_s = result.probe.seconds
    train_s = wall - probe_s
    train_pace, probe_pace = train_s / (cost.flops_per_step * spec.steps), probe_s / cost.probe_flops
    doc = {"about": __doc__.splitlines()[0], "config": cfg.label, "steps": spec.steps,
           "train_seconds": round(train_s, 1), "train_flops": cost.flops_per_step * spec.steps,
           "probe_seconds": round(probe_s, 1), "probe_flops_estimate": cost.probe_flops,
           "train_seconds_per_flop": train_pace, "probe_seconds_per_flop": probe_pace,
           "probe_pace_ratio": round(probe_pace / train_pace, 3), "environment": environment(),
           "measured": time.strftime("%Y-%m-%d")}
    args.out.write_text(json.dumps(doc, indent=2) + "\n")
    print(json.dumps(doc, indent=2))


if __name__ == "__main__":
    main()
