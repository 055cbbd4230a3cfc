"""Speed of the counting core: one config's params + FLOPs, and a 10,000-config sweep.

Run: `python -m bench.bench_counting` (prints the dict) or through `python -m bench`.
"""

from __future__ import annotations

import json

from albert_core import PRESETS, count_flops, count_params
from albert_core.counting.sweeps import sweep
from bench.common import figure, summary, time_calls

SWEEP_GOAL_S = 0.1  # issue 2: 10,000 configs "well under" 0.1 s (architecture.md)
SCALAR_GOAL_US = 1000.0  # the app recounts on every widget change: a millisecond is invisible


def run() -> dict:
    cfg = PRESETS["albert-base"].replace(head="pretraining")

    def one() -> None:
        count_params(cfg)
        count_flops(cfg, 8, 128)

    scalar = [t * 1e6 for t in time_calls(one, 2000, warmup=50)]

    # 100 hidden sizes x 100 depths = 10,000 ALBERT configs (all valid), plus their 10,000 BERT twins.
    hidden = [12 * k for k in range(1, 101)]
    layers = list(range(1, 101))

    def grid(include_bert: bool):
        return lambda: sweep(cfg, "hidden_size", hidden, "num_layers", layers, batch=8,
                             include_bert=include_bert)

    rows = len(grid(True)())
    albert_only = time_calls(grid(False), 15, warmup=2)
    with_twins = time_calls(grid(True), 15, warmup=2)

    s1, s2, s3 = summary(scalar), summary(albert_only), summary(with_twins)
    return {
        "title": "Counting (params, FLOPs, sweeps)",
        "figures": [
            figure("count_params + count_flops, one config", s1, "us", goal=f"<= {SCALAR_GOAL_US:.0f}",
                   met=s1["median"] <= SCALAR_GOAL_US, reason="ALBERT-base with pre-training heads"),
            figure("sweep of 10,000 ALBERT configs", s2, "s", goal=f"< {SWEEP_GOAL_S}",
                   met=s2["median"] < SWEEP_GOAL_S, reason="hidden_size x num_layers, 100 x 100, all columns"),
            figure(f"sweep of 10,000 configs + BERT twins ({rows} rows)", s3, "s", goal=f"< {SWEEP_GOAL_S}",
                   met=s3["median"] < SWEEP_GOAL_S, reason="params, FLOPs and memory columns"),
        ],
        "notes": [
            "Sweeps evaluate the scalar counters' own formulas once per group of rows on numpy int64 "
            "columns (exact Python ints past 2^62).",
        ],
    }


if __name__ == "__main__":
    print(json.dumps(run(), indent=2))
