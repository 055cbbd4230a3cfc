"""Torch intra-op threads for live work: 1 against 2 on this host, quiet and with other processes busy.

Run: `python -m bench.bench_threads` (prints the dict) or `python -m bench threads`. One ALBERT-base
forward pass (batch 1, 32 and 128 tokens, the live page's sizes) is timed with 1 and with 2 threads in
interleaved rounds, while 0, 1 or 2 other processes keep a core busy each (a pure-Python loop: the
"another visitor's process" of a host serving several Streamlit processes, or a neighbour on a shared
VM). The figures decide `albert_core.settings.DEFAULT_TORCH_THREADS`.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time

from bench.common import figure, summary

ROUNDS = 12
BUSY = "import time\nend = time.time() + 600\nwhile time.time() < end:\n    pass\n"


def _forward_s(model, ids, threads: int) -> float:
    import torch

    torch.set_num_threads(threads)
    with torch.inference_mode():
        model(ids)  # the pool resizes on the first call
        t0 = time.perf_counter()
        model(ids)
        return time.perf_counter() - t0


def run() -> dict:
    import torch

    from albert_core import PRESETS
    from albert_core.live.model import build_model

    model = build_model(PRESETS["albert-base"], seq_len=128)
    figures, notes = [], []
    for busy in (0, 1, 2):
        hogs = [subprocess.Popen([sys.executable, "-c", BUSY]) for _ in range(busy)]
        try:
            time.sleep(0.5)
            for seq in (32, 128):
                ids = torch.zeros(1, seq, dtype=torch.long)
                one, two = [], []
                for _ in range(ROUNDS):  # interleaved: both see the same neighbours
                    one.append(_forward_s(model, ids, 1) * 1e3)
                    two.append(_forward_s(model, ids, 2) * 1e3)
                ratios = [b / a for a, b in zip(one, two, strict=True)]
                what = f"{busy} other busy process{'es' if busy != 1 else ''}, ALBERT-base seq {seq}"
                figures += [
                    figure(f"forward, 1 thread, {what}", summary(one), "ms"),
                    figure(f"forward, 2 threads, {what}", summary(two), "ms"),
                    figure(f"2 threads / 1 thread, {what}", summary(ratios), "x",
                           reason="per-round ratio of wall times; > 1: the second thread costs time"),
                ]
        finally:
            for h in hogs:
                h.kill()
                h.wait()
    torch.set_num_threads(1)
    notes.append("Wall time of one forward pass (after one untimed pass at that thread count), median of "
                 f"{ROUNDS} interleaved rounds. The busy processes are pure-Python loops, one core each.")
    return {"title": "Torch threads for live work", "figures": figures, "notes": notes}


if __name__ == "__main__":
    print(json.dumps(run(), indent=2))
