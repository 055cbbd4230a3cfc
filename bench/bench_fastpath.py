"""The live model's oneDNN fast path against the eager fallback on this machine, and what the one-time
probe (`albert_core.live.fastpath`) chooses here.

Run: `python -m bench.bench_fastpath` (prints the dict) or through `python -m bench`. One thread,
inference, BERT-base and ALBERT-base at batch 1 x 128 tokens, interleaved rounds, medians of the
per-round ratio oneDNN / eager (below 1: oneDNN faster).
"""

from __future__ import annotations

import json
import statistics

import torch

from albert_core import PRESETS
from albert_core.live import fastpath
from albert_core.live.model import build_model
from bench.common import figure, interleaved_clocks, summary

ROUNDS = 15
SEQ = 128


def _forward(model, ids, mode: str):
    def run():
        with fastpath.forced(mode), torch.no_grad():
            model(ids)

    return run


def run() -> dict:
    torch.set_num_threads(1)
    figures, notes = [], []
    for name in ("bert-base", "albert-base"):
        cfg = PRESETS[name]
        model = build_model(cfg, seq_len=SEQ)
        ids = torch.randint(0, cfg.vocab_size, (1, SEQ), generator=torch.Generator().manual_seed(0))
        _, cpu = interleaved_clocks([_forward(model, ids, "1"), _forward(model, ids, "0")], ROUNDS, warmup=2)
        ratios = [a / b for a, b in zip(cpu[0], cpu[1], strict=True)]
        figures.append(figure(f"{name} forward, oneDNN / eager time (1 thread, 1 x {SEQ})", summary(ratios), "x",
                              reason=f"median of {ROUNDS} interleaved per-round CPU-time ratios"))
        figures.append(figure(f"{name} forward, eager (1 thread, 1 x {SEQ})", summary(cpu[1]), "s",
                              reason="process CPU time"))
        fastpath.reset()
        with torch.no_grad():
            model(ids)  # the probe decides for this model's shape classes
        chosen = fastpath.decisions()
        notes.append(f"{name}: the probe chose oneDNN for {sum(chosen.values())} of {len(chosen)} shape classes "
                     f"({', '.join(f'{k[0]} {k[1]}->{k[2]}' for k, v in chosen.items() if v) or 'none'}).")
        _, cpu = interleaved_clocks([_forward(model, ids, None), _forward(model, ids, "0")], ROUNDS)
        ratios = [a / b for a, b in zip(cpu[0], cpu[1], strict=True)]
        figures.append(figure(f"{name} forward, probed choice / eager time", summary(ratios), "x",
                              reason=f"median of {ROUNDS} interleaved per-round CPU-time ratios"))
    notes.append(f"Median oneDNN/eager ratio over both models: "
                 f"{statistics.median(f['median'] for f in figures if 'oneDNN / eager' in f['name']):.3f}.")
    return {"title": "oneDNN fast path", "figures": figures, "notes": notes}


if __name__ == "__main__":
    print(json.dumps(run(), indent=2))
