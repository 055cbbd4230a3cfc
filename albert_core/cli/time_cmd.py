"""`python -m albert_core time`: estimated seconds per training step and per inference batch.

Registered by `albert_core.cli.main.build_parser` (`add_commands`) and run by its `main` (`time_report`),
so the model options, `--json` and the one-line errors (exit code 2) are the other commands' own.
"""

from __future__ import annotations

import argparse
from typing import Any

from albert_core.configuration.config import ModelConfig
from albert_core.configuration.workload import DTYPE_BYTES, OPTIMIZERS
from albert_core.format import fmt_bytes, fmt_flops, fmt_pct
from albert_core.hardware.profiles import HARDWARE_NAMES


def add_commands(sub: Any, model: argparse.ArgumentParser) -> None:
    """The `time` subcommand on the `model` parent parser (preset / config / overrides / --json)."""
    from albert_core.cli.args import config_from_args, fraction, whole

    p = sub.add_parser("time", parents=[model], help="estimated step time on a hardware profile")
    p.add_argument("--hardware", choices=HARDWARE_NAMES, default="a100",
                   help="profile (datasheet figures, or this-machine: probed once and cached)")
    p.add_argument("--chips", type=whole, default=1, metavar="N", help="data-parallel chips (default 1)")
    p.add_argument("--batch", type=whole, default=8, metavar="N", help="global batch (default 8)")
    p.add_argument("--seq-len", type=whole, default=128, metavar="N", help="(default 128)")
    p.add_argument("--dtype", choices=tuple(d for d in DTYPE_BYTES if d != "int8"), default="fp32",
                   help="weights, activations and gradients (default fp32; pick bf16 for tensor-core peaks)")
    p.add_argument("--optimizer", choices=OPTIMIZERS, default="adamw")
    p.add_argument("--mlm-fraction", type=fraction, default=1.0, metavar="F",
                   help="share of positions the MLM head runs on (default 1: all, as transformers)")
    p.add_argument("--efficiency", type=fraction, metavar="F", help="achievable share of the peak FLOP/s")
    p.add_argument("--comm-efficiency", type=fraction, default=1.0, metavar="F",
                   help="achieved share of the link bandwidth in the all-reduce (default 1)")
    p.add_argument("--no-overlap", action="store_true", help="all-reduce after the backward, not during it")
    p.set_defaults(run=lambda args: time_report(config_from_args(args), args))


def time_report(cfg: ModelConfig, args: argparse.Namespace) -> tuple[dict[str, Any], str]:
    from albert_core.cli.args import table, title, workload_from_args
    from albert_core.format import fmt_duration
    from albert_core.hardware.time_model import estimate_time

    work = workload_from_args(args, cfg)
    if args.hardware == "this-machine":  # probe and time with the threads the app and the lab use, named in the profile
        import torch

        from albert_core.settings import torch_threads

        torch.set_num_threads(torch_threads())
    est = estimate_time(cfg, work, args.hardware, args.chips, overlap=not args.no_overlap,
                        efficiency=args.efficiency, comm_efficiency=args.comm_efficiency,
                        mlm_fraction=args.mlm_fraction)

    def rows(parts, total):
        out = [(p.label, fmt_duration(p.seconds), fmt_pct(p.seconds / total if total else 0.0), p.bound,
                fmt_flops(p.flops), fmt_bytes(p.bytes)) for p in parts]
        return [*out, ("total", fmt_duration(total), fmt_pct(1.0), "", "", "")]

    head = ("part", "seconds", "share", "bound", "FLOPs per chip", "bytes per chip")
    right = (False, True, True, False, True, True)
    fits = est.fits
    memory = "" if fits is None else (
        f"\ntraining memory per chip {fmt_bytes(est.memory_per_chip)} "
        f"({'fits' if fits else 'does NOT fit'} in {fmt_bytes(est.hardware.memory_bytes)})"
    )
    comm = est.part("allreduce")
    if est.chips > 1:
        memory += (f"\ngradient all-reduce: {fmt_bytes(comm.bytes)} sent per chip, {fmt_duration(comm.memory_s)} on "
                   f"the link, {fmt_duration(comm.seconds)} of it not hidden behind the backward pass")
    text = (
        f"{title(cfg)}\nESTIMATE on {est.hardware.label} x {est.chips}, batch {work.batch} x {work.seq_len}, "
        f"{work.dtype}, optimizer {work.optimizer}\n\n"
        f"training step: {fmt_duration(est.training_s)}\n{table(head, rows(est.training, est.training_s), right)}"
        f"\n\ninference batch (same per-chip share): {fmt_duration(est.inference_s)}\n"
        f"{table(head, rows(est.inference, est.inference_s), right)}{memory}\n\nassumptions:\n"
        + "\n".join(f"- {a}" for a in est.assumptions)
    )
    return est.to_dict(), text
