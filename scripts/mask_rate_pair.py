"""The mask rate's effect on one reference pair: the Figure 2 pair (the lab's base ALBERT, all-shared, and its
BERT twin, both with the same tokenizer and masking, 9,000 steps, seeds 0 and 1) at 30 % masking (ModernBERT's and
Ettin's rate) beside the shipped 15 % runs, on the same held-out batches (always masked at 15 %) and the same
downstream probe.

    .venv/bin/python scripts/mask_rate_pair.py [--rate 0.3] [--workers 2] [--json out.json]

Trains the four runs into the run cache (one torch thread each; about 3 minutes a run on an idle core), probes
each (the from-scratch baseline of the same architecture is the shipped probe file's: it does not depend on the
mask rate) and prints, per variant and rate, the validation MLM loss, the sentence-task accuracy and the
downstream dev accuracy, each as its seed range, with the verdict of the lab's rule (ranges apart or not).
"""

from __future__ import annotations

import argparse
import json
import sys
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def _train(spec_dict: dict) -> str:
    import torch

    from albert_core.lab.runs import run_cached
    from albert_core.lab.spec import RunSpec

    torch.set_num_threads(1)
    return run_cached(RunSpec.from_dict(spec_dict), threads=1).spec.key


def _train_and_probe(spec_dict: dict, scratch: list[float] | None) -> dict:
    import torch

    from albert_core.lab import probe
    from albert_core.lab.checkpoint import load_model
    from albert_core.lab.runs import run_cached
    from albert_core.lab.spec import RunSpec
    from albert_core.text.tokenizers import lab_tokenizer

    torch.set_num_threads(1)
    spec = RunSpec.from_dict(spec_dict)
    result = run_cached(spec, threads=1)
    model = load_model(result.checkpoint)
    probed = probe.probe_model(model, spec.config, lab_tokenizer(spec.tokenizer_kind, spec.vocab_size),
                               std=spec.weight_std, scratch=scratch)
    return {"label": spec.label, "seed": spec.seed, "mask_rate": spec.mask_rate, "key": spec.key,
            "val_mlm_loss": result.final["val_mlm_loss"], "val_order_acc": result.final["val_order_acc"],
            "seconds": result.seconds, "probe": probed.to_dict()}


def _range(values: list[float], scale: float = 1.0, digits: int = 3) -> str:
    lo, hi = min(values) * scale, max(values) * scale
    return f"{lo:.{digits}f}-{hi:.{digits}f}"


def _apart(a: list[float], b: list[float]) -> str:
    return "apart" if max(a) < min(b) or max(b) < min(a) else "overlap"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rate", type=float, default=0.3)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--json", metavar="PATH")
    parser.add_argument("--train-only", action="store_true", help="train the runs into the cache and stop")
    args = parser.parse_args()

    from albert_core.lab.experiments import EXPERIMENTS, REFERENCE_STEPS
    from albert_core.lab.reference import REFERENCE_DIR, load_probe_file, load_runs
    from albert_core.lab.spec import mask_rate_text

    shipped = load_runs("figure2")
    probe_doc = load_probe_file(str(REFERENCE_DIR)).get("runs", {})
    scratch = {r.spec.label: probe_doc[r.spec.key]["probe"]["scratch"] for r in shipped if r.spec.key in probe_doc}
    specs = [s.replace(mask_rate=args.rate) for s in EXPERIMENTS["figure2"].specs(steps=REFERENCE_STEPS)]
    if args.train_only:
        with ProcessPoolExecutor(max_workers=args.workers, mp_context=get_context("spawn")) as pool:
            print(list(pool.map(_train, [s.to_dict() for s in specs])))
        return 0
    with ProcessPoolExecutor(max_workers=args.workers, mp_context=get_context("spawn")) as pool:
        rows = list(pool.map(_train_and_probe, [s.to_dict() for s in specs], [scratch.get(s.label) for s in specs]))
    for r in shipped:
        p = probe_doc.get(r.spec.key)
        rows.append({"label": r.spec.label, "seed": r.spec.seed, "mask_rate": r.spec.mask_rate, "key": r.spec.key,
                     "val_mlm_loss": r.final["val_mlm_loss"], "val_order_acc": r.final["val_order_acc"],
                     "seconds": r.seconds, "probe": None if p is None else p["probe"]})
    print(f"{'variant':<22}{'mask':>6}  {'val MLM loss':>13}  {'sentence task %':>15}  {'downstream %':>13}")
    groups: dict[tuple[str, float], list[dict]] = {}
    for row in rows:
        groups.setdefault((row["label"], row["mask_rate"]), []).append(row)
    for (label, rate), g in sorted(groups.items()):
        down = [sum(r["probe"]["pretrained"]) / len(r["probe"]["pretrained"]) for r in g if r["probe"]]
        print(f"{label:<22}{mask_rate_text(rate):>6}  {_range([r['val_mlm_loss'] for r in g]):>13}  "
              f"{_range([r['val_order_acc'] for r in g], 100, 1):>15}  "
              f"{_range(down, 100, 1) if down else '-':>13}")
    for label in sorted({k[0] for k in groups}):
        lo, hi = groups.get((label, 0.15), []), groups.get((label, args.rate), [])
        if lo and hi:
            print(f"{label}: val MLM loss 15 % vs {mask_rate_text(args.rate)}: "
                  f"{_apart([r['val_mlm_loss'] for r in lo], [r['val_mlm_loss'] for r in hi])}")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
