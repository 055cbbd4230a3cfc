"""Why sentence order stays near 62 %: the shipped ALBERT twin against what surface cues alone reach.

    .venv/bin/python scripts/sop_diagnosis.py [--train-pairs 20000]

1. The twin's sentence-order accuracy on the balanced held-out pairs, per label (in order / swapped), and on
   training-split pairs built the same way (masked as in training): how much of the gap is fitting, how much
   generalising.
2. A surface-cue baseline: a logistic regression on bags of (segment, piece) features, each segment's first and
   last two pieces and the segments' lengths, trained on training-split SOP pairs (the same pipeline, seed 0),
   its L2 strength chosen by 3-fold cross-validation on those pairs, scored on the same held-out pairs. A model
   that does no better than this has learned cues, not order.
Deterministic (the lab's seeded pipeline; L-BFGS from zeros); one torch thread.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

L2_GRID = (1e-5, 1e-4, 1e-3, 1e-2)


def features(inst) -> list[str]:
    f = [f"A{t}" for t in inst.a] + [f"B{t}" for t in inst.b]
    f += [f"A^{t}" for t in inst.a[:2]] + [f"B^{t}" for t in inst.b[:2]]
    f += [f"A${t}" for t in inst.a[-2:]] + [f"B${t}" for t in inst.b[-2:]]
    return f + [f"lenA{min(len(inst.a) // 4, 8)}", f"lenB{min(len(inst.b) // 4, 8)}"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--train-pairs", type=int, default=20_000)
    args = parser.parse_args()
    import torch

    from albert_core.lab import probe, trainer
    from albert_core.lab.checkpoint import load_model, load_run
    from albert_core.lab.reference import CHECKPOINTS_DIR, live_twins

    torch.set_num_threads(1)
    spec = live_twins()["ALBERT"]
    folder = CHECKPOINTS_DIR / spec.key
    model = load_model(folder, batch=64, seq_len=spec.seq_len)
    cpu = load_run(folder)

    def accuracy(batches) -> tuple[float, list[float], int]:
        ok, n = [0, 0], [0, 0]
        with torch.no_grad():
            for b in batches:
                pred = model(**trainer.model_inputs(b, torch.device("cpu"), masked=True)).order_logits.argmax(-1)
                for y, p in zip(b["order_labels"].tolist(), pred.tolist(), strict=True):
                    n[y] += 1
                    ok[y] += int(y == p)
        return sum(ok) / sum(n), [o / k for o, k in zip(ok, n, strict=True)], sum(n)

    held = accuracy(trainer.validation_batches(spec, "sop"))
    train_data = trainer.make_data(spec, "train")
    seen = accuracy([train_data.batch(s, 64) for s in range(32)])
    print(f"{spec.name} ({cpu.final['steps']:,} steps)")
    for name, (acc, per, n) in (("held-out pairs", held), ("training-split pairs", seen)):
        print(f"  {name}: {100 * acc:.1f} % of {n:,} (in order {100 * per[0]:.1f} %, swapped {100 * per[1]:.1f} %)")

    train_inst = [train_data.instance(i) for i in range(args.train_pairs)]
    val_inst = trainer.make_data(spec, "validation", seed=trainer.VALIDATION_SEED).instances(0)
    counts: dict[str, int] = {}
    for inst in train_inst:
        for f in set(features(inst)):
            counts[f] = counts.get(f, 0) + 1
    index = {f: i for i, f in enumerate(sorted(f for f, c in counts.items() if c >= 3))}

    def bags(insts):
        ids, offsets = [], []
        for inst in insts:
            offsets.append(len(ids))
            ids.extend(sorted({index[f] for f in features(inst) if f in index}))
        return torch.tensor(ids, dtype=torch.long), torch.tensor(offsets, dtype=torch.long)

    labels = torch.tensor([i.label for i in train_inst])
    folds = torch.arange(len(train_inst)) % 3
    best = (-1.0, L2_GRID[0])
    for l2 in L2_GRID:
        right = 0
        for k in range(3):
            fit = [i for i in range(len(train_inst)) if folds[i] != k]
            test = [i for i in range(len(train_inst)) if folds[i] == k]
            m = probe._fit_logistic(bags([train_inst[i] for i in fit]), labels[fit], len(index), l2)
            right += int((probe._predict(m, bags([train_inst[i] for i in test])) == labels[test]).sum())
        print(f"  surface cues, L2 {l2:g}: {100 * right / len(train_inst):.1f} % in cross-validation")
        best = max(best, (right / len(train_inst), l2))
    m = probe._fit_logistic(bags(train_inst), labels, len(index), best[1])
    pred = probe._predict(m, bags(val_inst))
    y = torch.tensor([i.label for i in val_inst])
    per = [float((pred[y == c] == c).float().mean()) for c in (0, 1)]
    print(f"  surface-cue regression (L2 {best[1]:g}, {len(index):,} features, {len(train_inst):,} training pairs): "
          f"{100 * float((pred == y).float().mean()):.1f} % of the {len(val_inst):,} held-out pairs "
          f"(in order {100 * per[0]:.1f} %, swapped {100 * per[1]:.1f} %)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
