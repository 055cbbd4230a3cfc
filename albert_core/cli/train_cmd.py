"""`python -m albert_core train` and `train-reference`: the pretraining lab from the command line.

    python -m albert_core train [--preset NAME | --hf-config PATH] [overrides] --task sop --steps 300 \
        --seed 0 [--batch 16 --seq-len 64 --lr 1e-3 --warmup N --eval-every N --mask-rate 0.3] [--out DIR] [--json]
    python -m albert_core train-reference [--experiments table3 table5 ...] [--out DIR]

Without a preset the model is the lab's base (a 4-layer ALBERT, H 64, E 32, V 512). `train` checks
the run against the lab's limits first, shows a progress bar on a terminal (stderr) and prints the
evaluations and final metrics (with --json: one JSON object). Without --out the run goes through
the disk cache of finished runs (a repeated request is instant) and its folder is reported. Under
torchrun (`torchrun --nproc-per-node N -m albert_core train ...`) the run trains data-parallel
(albert_core.lab.parallel); `--nproc N` launches that for you on this machine. Bad
input exits with code 2 and one line. torch is imported only when a command runs.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from pathlib import Path
from typing import Any

from albert_core.cli.args import config_from_args, table, whole
from albert_core.lab.frames import to_plain
from albert_core.lab.outcome import Progress
from albert_core.lab.spec import (
    DEFAULT_MASK_RATE,
    DEFAULT_STEPS,
    EXPERIMENT_NAMES,
    LAB_BASE,
    MASK_RATE_RANGE,
    RUN_DEFAULTS,
    TASKS,
    TOKENIZER_KINDS,
    RunSpec,
)

MAX_WORKERS = 16  # train-reference processes (each one torch thread)

EVAL_FIELDS = ("step", "tokens", "elapsed_s", "train_mlm_loss", "train_mlm_acc", "val_mlm_loss", "val_mlm_acc",
               "val_order_acc", "tokens_per_s")


def _number(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number, got {text[:24]!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"must be a finite number, got {text[:24]!r}")
    return value


def _mask_rate(text: str) -> float:
    """A mask rate in MASK_RATE_RANGE (checked while parsing, so the error names --mask-rate)."""
    value = _number(text)
    lo, hi = MASK_RATE_RANGE
    if not lo <= value <= hi:
        raise argparse.ArgumentTypeError(f"must be a number in [{lo:g}, {hi:g}] (a share: 0.3 for 30 %), "
                                         f"got {text[:24]!r}")
    return value


def add_commands(sub: Any, model: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "train", parents=[model], help="pretrain a small model (MLM + SOP/NSP) on the lab corpus",
        description="Pretrain with MLM + SOP/NSP on the lab corpus. Without --preset or --hf-config the model is "
        f"the lab's base ({LAB_BASE.label}, V {LAB_BASE.vocab_size:,}), then the overrides.",
    )
    run = p.add_argument_group("run")
    run.add_argument("--task", choices=TASKS, default="sop", help="sentence task (default sop)")
    run.add_argument("--steps", type=whole, default=DEFAULT_STEPS, metavar="N", help=f"(default {DEFAULT_STEPS})")
    run.add_argument("--seed", type=whole, default=0, metavar="S", help="(default 0)")
    run.add_argument("--batch", type=whole, default=RUN_DEFAULTS["batch_size"], metavar="N",
                     help=f"sequences per step (default {RUN_DEFAULTS['batch_size']})")
    run.add_argument("--seq-len", type=whole, default=RUN_DEFAULTS["seq_len"], metavar="N",
                     help=f"(default {RUN_DEFAULTS['seq_len']})")
    run.add_argument("--lr", type=_number, default=RUN_DEFAULTS["lr"],
                     help=f"peak learning rate (default {RUN_DEFAULTS['lr']})")
    run.add_argument("--mask-rate", type=_mask_rate, default=DEFAULT_MASK_RATE, metavar="R",
                     help=f"share of the training pieces masked for MLM, {MASK_RATE_RANGE[0]:g}-{MASK_RATE_RANGE[1]:g} "
                     f"(default {DEFAULT_MASK_RATE:g}, BERT's and ALBERT's; NeoBERT 0.2, ModernBERT and Ettin 0.3); "
                     f"the held-out pieces are always masked at {DEFAULT_MASK_RATE:g}, so runs compare like with like")
    run.add_argument("--probe", action="store_true",
                     help="then fine-tune the trained encoder on movie-review sentences beside the same model from "
                     "scratch (the downstream probe; `finetune` for a run already trained)")
    run.add_argument("--warmup", type=whole, metavar="N", help="warmup steps (default 5%% of steps, as the page)")
    run.add_argument("--eval-every", type=whole, metavar="N",
                     help="steps between evaluations "
                          "(default: 15 evaluations from 1,500 steps on, as the page)")
    run.add_argument("--tokenizer", choices=TOKENIZER_KINDS,
                     help="default: the family's (ALBERT unigram, BERT wordpiece)")
    run.add_argument("--threads", type=whole, metavar="N", help="torch threads for the run (default 1)")
    run.add_argument("--out", metavar="DIR",
                     help="save the checkpoint here (a new or empty folder) instead of the cache")
    run.add_argument("--nproc", type=whole, default=1, metavar="N",
                     help="data-parallel processes on this machine: launches torchrun (loopback) with N processes, "
                     "each training batch/N sequences of every batch (default 1)")
    p.set_defaults(handler=run_train)

    r = sub.add_parser("train-reference", help="train the shipped reference runs of every experiment")
    r.add_argument("--experiments", nargs="+", choices=EXPERIMENT_NAMES, metavar="NAME",
                   help=f"some of {', '.join(EXPERIMENT_NAMES)} (default all)")
    r.add_argument("--out", metavar="DIR", help="where the JSON files go (default albert_core/lab/reference)")
    r.add_argument("--workers", type=whole, default=2, metavar="N",
                   help=f"processes training runs at once, one torch thread each (default 2, at most {MAX_WORKERS})")
    r.set_defaults(handler=run_reference)


def spec_from_args(args: argparse.Namespace) -> RunSpec:
    cfg = config_from_args(args, default=LAB_BASE)
    steps = args.steps
    return RunSpec(
        cfg, task=args.task, steps=steps, batch_size=args.batch, seq_len=args.seq_len, seed=args.seed, lr=args.lr,
        warmup=args.warmup, eval_every=args.eval_every,  # None: the recipe's, as on the page
        tokenizer=args.tokenizer, mask_rate=args.mask_rate, probe=args.probe,
    )


def _progress_bar(steps: int):
    """A tqdm bar on stderr when it is a terminal, else None."""
    if not sys.stderr.isatty():
        return None
    from tqdm import tqdm

    return tqdm(total=steps, file=sys.stderr, unit="step", dynamic_ncols=True, leave=False)


def report(result: Any, cost: Any) -> dict[str, Any]:
    """The run's metrics for --json: every evaluation, the final metrics, the folder."""
    evals = result.history.dropna(subset=["val_mlm_loss"])
    data = {
        "key": result.spec.key,
        "spec": result.spec.to_dict(),
        "params": cost.params,
        "training_flops_per_step": cost.flops_per_step,
        "estimated_memory_bytes": cost.memory_bytes,
        "evaluations": [{k: to_plain(row[k]) for k in EVAL_FIELDS} for row in evals.to_dict(orient="records")],
        "final": {k: to_plain(v) for k, v in result.final.items()},
        "seconds": result.seconds,
        "cancelled": result.cancelled,
        "message": result.message,
        "out": str(result.checkpoint) if result.checkpoint else None,
    }
    from albert_core.lab.baselines import mlm_verdict, order_verdict

    base = result.baselines
    if base is not None:  # the levels this run must beat, on the same held-out batches
        verdicts = {"mlm": mlm_verdict(result.final["val_mlm_loss"], base)}
        if result.spec.task != "none":
            verdicts["order"] = order_verdict(result.final["val_order_acc"],
                                              result.final.get("val_order_ones", math.nan),
                                              base.order_majority if base.order_majority is not None else 0.5)
        data["baselines"] = {k: to_plain(v) for k, v in base.to_dict().items()}
        data["below_frequency_only"] = to_plain(base.frequency_loss - result.final["val_mlm_loss"])
        data["verdicts"] = verdicts
    if result.probe is not None:
        data["probe"] = result.probe.to_dict()
    if result.processes > 1:  # data parallel: the gradient bytes DDP all-reduced per step (comm hook)
        data["processes"] = result.processes
        data["allreduce_bytes_per_step"] = result.allreduce_bytes_per_step
    return data


def _text(data: dict[str, Any]) -> str:
    def f(v: Any, digits: int = 4) -> str:
        return "-" if v is None else (f"{v:.{digits}g}" if isinstance(v, float) else str(v))

    rows = [(e["step"], f(e["train_mlm_loss"]), f(e["val_mlm_loss"]), f(e["val_mlm_acc"], 3),
             f(e["val_order_acc"], 3), f(e["tokens_per_s"], 4)) for e in data["evaluations"]]
    text = table(("step", "train MLM loss", "val MLM loss", "val MLM acc", "val order acc", "tokens/s"),
                 rows, (True, True, True, True, True, True))
    fin = data["final"]
    lines = [
        f"{data['spec']['label'] or 'run'} {data['key']}: {data['params']:,} parameters, "
        f"{data['training_flops_per_step']:,} training FLOPs per step",
        "", text, "",
        f"final: val MLM loss {f(fin['val_mlm_loss'])}, val MLM accuracy {f(fin['val_mlm_acc'], 3)}, "
        f"order accuracy {f(fin['val_order_acc'], 3)}, {fin['tokens']:,} tokens in {fin['seconds']:.1f} s "
        f"({f(fin['tokens_per_s'])} tokens/s)",
    ]
    if "baselines" in data:
        b = data["baselines"]
        lines.append(f"baselines on the same held-out pairs: frequency-only {f(b['frequency_loss'])} nats "
                     f"(accuracy {f(b['frequency_acc'], 3)}), neighbour {f(b['neighbour_loss'])} nats; this run is "
                     f"{f(data['below_frequency_only'], 3)} nats below the frequency-only model: "
                     + "; ".join(f"{k.upper()} {v}" for k, v in data["verdicts"].items()))
    if "probe" in data:
        from albert_core.cli.finetune_cmd import probe_text
        from albert_core.lab.probe import ProbeResult

        lines += ["", probe_text("downstream probe", ProbeResult.from_dict(data["probe"]), "measured now"), ""]
    if data["message"]:
        lines.append(f"stopped early: {data['message']}")
    if "processes" in data:
        lines.append(f"{data['processes']} data-parallel processes, {data['allreduce_bytes_per_step']:,} bytes "
                     "of gradients all-reduced per step")
    lines.append(f"saved in {data['out']}" if data["out"] else "not saved")
    return "\n".join(lines)


def _without_nproc(argv: list[str]) -> list[str]:
    out, skip = [], False
    for a in argv:
        if skip:
            skip = False
        elif a == "--nproc":
            skip = True
        elif not a.startswith("--nproc="):
            out.append(a)
    return out


def run_train(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from albert_core.lab import parallel

    if parallel.under_launcher():  # one of torchrun's processes: train in its process group
        try:
            parallel.init()
            return _train(args, parser, parallel)
        finally:
            parallel.finish()
    return _train(args, parser, parallel)


def _train(args: argparse.Namespace, parser: argparse.ArgumentParser, parallel: Any) -> int:
    try:
        spec = spec_from_args(args)
        from albert_core.lab import trainer
        from albert_core.lab.runs import run_cached

        cost = trainer.check_run(spec)
        nproc = parallel.check_nproc(args.nproc)
        world = int(os.environ.get("WORLD_SIZE", "1")) if parallel.under_launcher() else nproc
        if spec.probe and world > 1:
            raise ValueError("--probe runs in one process: drop --nproc (or probe the run afterwards: finetune --run)")
        if spec.batch_size % world:
            raise ValueError(f"--batch ({spec.batch_size}) must be a multiple of the number of processes ({world})")
        out = Path(args.out) if args.out else None
        if out is not None and out.exists() and (not out.is_dir() or any(out.iterdir())) and parallel.is_writer():
            raise ValueError(f"--out must be a new or empty folder: {out}")
        if nproc > 1 and not parallel.under_launcher():
            timeout = trainer.LabLimits.from_env().max_seconds + parallel.LAUNCH_MARGIN_S
            return parallel.launch(_without_nproc(args.argv), nproc, timeout)
        bar = _progress_bar(spec.steps) if parallel.is_writer() else None

        def on_progress(p: Progress) -> None:
            if bar is not None:
                bar.n = p.step
                if p.probe_total:
                    bar.set_postfix(probe=f"{100 * p.probe_done / p.probe_total:.0f} %", refresh=False)
                if p.row is not None and p.row["train_mlm_loss"] == p.row["train_mlm_loss"]:
                    bar.set_postfix(mlm=f"{p.row['train_mlm_loss']:.3f}", refresh=False)
                bar.refresh()

        try:
            if out is not None:
                result = trainer.train(spec, on_progress, out_dir=out, threads=args.threads)
            else:  # several processes always train (each would have to find the same cached run)
                result = run_cached(spec, reuse=world == 1, on_progress=on_progress, threads=args.threads)
        finally:
            if bar is not None:
                bar.close()
    except KeyboardInterrupt:
        print("train: interrupted", file=sys.stderr)
        return 130
    except (ValueError, OSError) as exc:
        parser.error(f"train: {exc}")
    if not parallel.is_writer():
        return 0  # rank 0 reports the run
    data = report(result, cost)
    print(json.dumps(data, indent=2) if args.json else _text(data))
    return 0


def run_reference(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from albert_core.lab.reference import REFERENCE_DIR, build_reference

    if not 1 <= args.workers <= MAX_WORKERS:
        parser.error(f"train-reference: --workers must be between 1 and {MAX_WORKERS}, got {args.workers}")

    def on_run(name: str, i: int, n: int, result: Any) -> None:
        final = getattr(result, "final", None)
        if final is None:  # a spec whose result is not in the cache
            print(f"{name} {i}/{n}: {result.name} seed {result.seed}", file=sys.stderr, flush=True)
            return
        base = result.baselines
        gap = f", {base.frequency_loss - final['val_mlm_loss']:+.3f} nat below frequency-only" if base else ""
        print(f"{name} {i}/{n}: {result.spec.name} seed {result.spec.seed}: val MLM loss "
              f"{final['val_mlm_loss']:.4f}{gap} ({result.seconds:.0f} s)", file=sys.stderr, flush=True)

    try:
        written = build_reference(args.experiments, Path(args.out) if args.out else REFERENCE_DIR, on_run=on_run,
                                  workers=args.workers, with_live=True)
    except KeyboardInterrupt:
        print("train-reference: interrupted", file=sys.stderr)
        return 130
    except (ValueError, OSError) as exc:
        parser.error(f"train-reference: {exc}")
    for name, path in written.items():
        print(f"{name}: {path}")
    return 0
