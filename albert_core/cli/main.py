"""Command line: `albert-explorer` or `python -m albert_core` `presets | params | flops | memory | albertize |
export-hf` (and the commands of `COMMAND_MODULES`: train, time, audit, doctor, quality).

A model is a `--preset` or a transformers `--hf-config` file plus overrides, turned into a config by
`albert_core.configuration.coerce` (the same rule as the app's sidebar and URL). Output is a readable table by
default and JSON with `--json`. Bad input exits with code 2 and one line on stderr naming the problem
(never a traceback). When the overrides apply ALBERT's ideas (--embedding-size, --sharing, --groups, --inner-groups,
or a sharing scheme since ALBERT: --block-order, --unique-ends, --repeat, --lora-rank, --lora-targets) to a preset or
config.json, params, flops and memory also show the original beside its twin (`albertize` shows
only that comparison). This module imports neither torch nor transformers.

Adding a command from another module: list the module in `COMMAND_MODULES`; it defines
`add_commands(sub, model)`, where ``sub`` is the subparsers object and ``model`` the parent parser of
the model options, and gives each parser ``set_defaults(run=fn)`` with ``fn(args) -> (data, text)``
(`config_from_args(args)` builds the model; raise ValueError or OSError for bad input).
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from albert_core.cli.args import (
    ALBERT_AXES,
    INT_OPTIONS,
    Parser,
    base_from_args,
    config_from_args,
    fraction,
    model_options,
    scheme_changes,
    table,
    title,
    whole,
    with_changes,
    workload_from_args,
)
from albert_core.configuration.config import ModelConfig
from albert_core.configuration.hf_config import config_to_hf
from albert_core.configuration.presets import ALL_PRESETS, PRESET_SOURCES, config_name
from albert_core.configuration.workload import DTYPE_BYTES, OPTIMIZERS, PRECISIONS, Workload
from albert_core.format import fmt_bytes, fmt_count, fmt_flops, fmt_params, fmt_pct

# Modules that add commands (see the module docstring); a missing one is skipped.
COMMAND_MODULES = ("albert_core.cli.train_cmd", "albert_core.cli.finetune_cmd", "albert_core.cli.time_cmd",
                   "albert_core.cli.review_cmd", "albert_core.cli.quality_cmd",
                   "albert_core.cli.albertize_real_cmd")


def _params_report(cfg: ModelConfig) -> tuple[dict[str, Any], str]:
    from albert_core.counting.params import count_params

    bd = count_params(cfg)
    comps = [
        {"name": c.name, "label": c.label, "group": c.group, "params": int(c.params), "unshared": int(c.unshared)}
        for c in bd.components
    ]
    total = int(bd.total)
    unshared = sum(c["unshared"] for c in comps)
    rows = [
        (c["name"], c["label"], c["group"], fmt_count(c["params"]), fmt_pct(c["params"] / total),
         fmt_count(c["unshared"]))
        for c in comps
    ]
    rows.append(("total", "", "", fmt_count(total), fmt_pct(1.0), fmt_count(unshared)))
    text = table(
        ("component", "label", "group", "params", "share", "without sharing"),
        rows,
        (False, False, False, True, True, True),
    )
    summary = f"{fmt_params(total)} parameters"
    if unshared != total:
        summary += f" ({fmt_params(unshared)} without sharing: sharing saves {fmt_pct(1 - total / unshared)})"
    return {"total": total, "components": comps}, f"{title(cfg)}\n\n{text}\n\n{summary}"


def _flops_report(cfg: ModelConfig, args: argparse.Namespace) -> tuple[dict[str, Any], str]:
    from albert_core.counting.flops import count_flops

    work = workload_from_args(args, cfg)
    fb = count_flops(
        cfg,
        batch=work.batch,
        seq_len=work.seq_len,
        convention=args.convention,
        mlm_fraction=args.mlm_fraction,
        recompute=args.recompute,
    )
    comps = [
        {"name": c.name, "label": c.label, "group": c.group, "forward": int(c.forward)} for c in fb.components
    ]
    forward, training = int(fb.forward), int(fb.training)
    rows = [
        (c["name"], c["label"], fmt_count(c["forward"]), fmt_flops(c["forward"]),
         fmt_pct(c["forward"] / forward if forward else 0.0))
        for c in comps
    ]
    rows.append(("forward", "", fmt_count(forward), fmt_flops(forward), fmt_pct(1.0)))
    text = table(
        ("component", "label", "forward FLOPs", "", "share"), rows, (False, False, True, True, True)
    )
    summary = (
        f"batch {work.batch}, sequence {work.seq_len}, {args.convention} convention\n"
        f"forward  {fmt_flops(forward)} ({fmt_count(forward // 2)} MACs)\n"
        f"training {fmt_flops(training)} (forward + backward"
        f"{', with gradient checkpointing: the encoder layers run forward twice' if args.recompute else ''})"
    )
    data = {"forward": forward, "training": training, "macs": forward // 2, "components": comps}
    return data, f"{title(cfg)}\n\n{text}\n\n{summary}"


MEMORY_PARTS = ("weights", "gradients", "optimizer", "activations", "total")


def _memory_report(cfg: ModelConfig, args: argparse.Namespace) -> tuple[dict[str, Any], str]:
    from albert_core.counting.memory import estimate_memory

    work = workload_from_args(args, cfg)
    est = estimate_memory(
        cfg,
        batch=work.batch,
        seq_len=work.seq_len,
        dtype=work.dtype,
        optimizer=work.optimizer,
        training=not args.inference,
        precision=args.precision,
        checkpointing=args.checkpointing,
    )
    data = {part: int(getattr(est, part)) for part in MEMORY_PARTS}
    rows = [(part, fmt_count(n), fmt_bytes(n)) for part, n in data.items()]
    text = table(("part", "bytes", "size"), rows, (False, True, True))
    data["master_weights"] = est.master_weights  # part of optimizer
    mode = "inference" if args.inference else f"training with {work.optimizer}"
    if args.checkpointing:
        mode += ", gradient checkpointing"
    precision = f"{work.dtype} weights" if args.precision == "pure" else f"mixed {work.dtype}/fp32"
    head = f"{title(cfg)}\nbatch {work.batch}, sequence {work.seq_len}, {precision}, {mode}"
    notes = ["activations are an estimate; weights, gradients and optimizer states are exact"]
    if est.master_weights:
        notes.append(f"optimizer includes the fp32 master weights ({fmt_bytes(est.master_weights)})")
    return data, f"{head}\n\n{text}\n\n" + "\n".join(notes)


def _presets_report() -> tuple[dict[str, Any], str]:
    from albert_core.counting.params import count_params

    data: dict[str, Any] = {}
    rows = []
    for name, cfg in ALL_PRESETS.items():
        bd = count_params(cfg)
        total = int(bd.total)
        source = PRESET_SOURCES[name]
        data[name] = {**cfg.to_dict(), "params": total, "source": source.source,
                      "published": source.published_as}
        rows.append(
            (name, cfg.family, fmt_count(cfg.vocab_size), cfg.embedding_size, cfg.hidden_size, cfg.num_layers,
             cfg.num_heads, cfg.intermediate_size, cfg.sharing, fmt_count(total), fmt_params(total),
             fmt_pct(bd.group_totals()["embeddings"] / total), source.published_as)
        )
    text = table(
        ("preset", "family", "V", "E", "H", "L", "heads", "I", "sharing", "params", "", "embeddings", "published"),
        rows,
        (False, False, True, True, True, True, True, True, False, True, True, True, False),
    )
    return data, (f"{text}\n\nparams: the bare encoder (transformers' XModel: with BERT's pooler where the family "
                  "has one; ELECTRA's with its discriminator head); sources: --json")


def _albertized(args: argparse.Namespace) -> tuple[ModelConfig, ModelConfig] | None:
    """(original, twin) when the overrides apply ALBERT's ideas to the base and change it, else None."""
    given = {INT_OPTIONS.get(opt, opt) for opt in ("embedding_size", "sharing", "groups", "inner_groups")
             if getattr(args, opt, None) is not None} | set(scheme_changes(args))
    if not given & set(ALBERT_AXES):
        return None
    base, cfg = base_from_args(args), config_from_args(args)
    return None if base == cfg else (base, cfg)


def _comparison(original: ModelConfig, twin: ModelConfig, wl: Workload) -> tuple[dict[str, Any], str]:
    from albert_core.configuration.hf_config import hf_class_mismatch
    from albert_core.format import fmt_bytes as fb
    from albert_core.hardware.albertized import compare_albertized

    pair = compare_albertized(original, twin, wl)
    shown = {"params": fmt_params, "FLOPs": fmt_flops, "bytes": fb, "sequences": fmt_count,
             "seconds": lambda x: f"{x * 1e3:.1f} ms"}
    rows = [(r.measure, shown[r.unit](r.original), shown[r.unit](r.twin),
             fmt_pct(r.ratio - 1, signed=True) if r.original else "", r.kind) for r in pair.rows]
    text = table(("", config_name(original), "ALBERTized", "change", ""), rows, (False, True, True, True, False))
    export = hf_class_mismatch(twin)
    notes = [*pair.sentences(), f"Workload: batch {wl.batch}, sequence {wl.seq_len}, {wl.dtype} ({wl.precision}), "
             f"{wl.optimizer}{', gradient checkpointing' if wl.checkpointing else ''}."]
    if export:
        notes.append(f"Export: {export}")
    data = {"original": {"name": config_name(original), **original.to_dict()},
            "albertized": {"name": config_name(twin), **twin.to_dict()},
            "rows": [{"measure": r.measure, "unit": r.unit, "original": r.original, "albertized": r.twin,
                      "kind": r.kind} for r in pair.rows],
            "transformers_class": None if export else True, "export_problem": export}
    return data, f"{config_name(original)} beside its ALBERTized twin ({twin.label})\n\n{text}\n\n" + "\n".join(notes)


def _comparison_workload(args: argparse.Namespace, cfg: ModelConfig) -> Workload:
    """The command's workload where it has one, else 8 sequences of 128 tokens (or fewer if the model is shorter)."""
    if hasattr(args, "batch"):
        return Workload(batch=args.batch, seq_len=args.seq_len, dtype=getattr(args, "dtype", "fp32"),
                        optimizer=getattr(args, "optimizer", "adamw"), precision=getattr(args, "precision", "pure"),
                        checkpointing=bool(getattr(args, "checkpointing", False) or getattr(args, "recompute", False)))
    return Workload(seq_len=min(128, cfg.max_seq_len))


def _with_original(report: Any) -> Any:
    """A report command that also shows the original beside its twin when the overrides ALBERTize it."""
    def run(args: argparse.Namespace) -> tuple[dict[str, Any], str]:
        data, text = report(args)
        pair = _albertized(args)
        if pair is None:
            return data, text
        extra, more = _comparison(*pair, _comparison_workload(args, pair[0]))
        return {**data, "albertized_from": extra}, f"{text}\n\n{more}"
    return run


def _albertize_command(args: argparse.Namespace) -> tuple[dict[str, Any], str]:
    from albert_core.configuration.coerce import albertize

    base = base_from_args(args)
    # E = 128 and all layers shared, unless the options say otherwise (an option given is kept as given); the
    # sharing-scheme options then apply to the twin (the original may share nothing a LoRA could sit on)
    twin = albertize(config_from_args(args, scheme=False),
                     embedding_size=None if args.embedding_size is not None else 128,
                     sharing=None if args.sharing is not None else "all")
    if scheme := scheme_changes(args):
        twin = with_changes(scheme, twin)
    return _comparison(base, twin, _comparison_workload(args, base))


# ----------------------------------------------------------------------------- parser
def build_parser() -> Parser:
    model = model_options()

    def shape(p: argparse.ArgumentParser, batch: int) -> None:
        p.add_argument("--batch", type=whole, default=batch, metavar="N", help=f"(default {batch})")
        p.add_argument("--seq-len", type=whole, default=128, metavar="N", help="(default 128)")

    parser = Parser(
        prog=os.path.basename(sys.argv[0]) if sys.argv[0].endswith("albert-explorer") else "python -m albert_core",
        description="Exact parameter, FLOP and memory accounting of BERT-style encoders (BERT, ALBERT, RoBERTa, "
                    "XLM-R, ELECTRA, DeBERTa-v3, ModernBERT, EuroBERT, NomicBERT) and their ALBERTized twins.",
        epilog="Bad input exits with code 2 and one line naming the problem.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND", parser_class=Parser)

    p = sub.add_parser("presets", help="the named configurations and their sizes")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(run=lambda args: _presets_report())
    p = sub.add_parser("params", parents=[model], help="exact parameter count per component")
    p.set_defaults(run=_with_original(lambda args: _params_report(config_from_args(args))))

    p = sub.add_parser("flops", parents=[model], help="forward and training FLOPs per component")
    shape(p, 1)
    p.add_argument("--convention", choices=("matmul", "full"), default="matmul",
                   help="matmul: 2mnk per matmul (default); full: plus element-wise work")
    p.add_argument("--mlm-fraction", type=fraction, default=1.0, metavar="F",
                   help="share of tokens the MLM head runs on (default 1: all, as transformers)")
    p.add_argument("--recompute", "--checkpointing", dest="recompute", action="store_true",
                   help="gradient checkpointing: the backward recomputes every encoder layer's forward")
    p.set_defaults(run=_with_original(lambda args: _flops_report(config_from_args(args), args)))

    p = sub.add_parser("memory", parents=[model], help="bytes for weights, gradients, optimizer, activations")
    shape(p, 8)
    p.add_argument("--dtype", choices=tuple(DTYPE_BYTES), default="fp32")
    p.add_argument("--optimizer", choices=OPTIMIZERS, default="adamw")
    p.add_argument("--precision", choices=PRECISIONS, default="pure",
                   help="pure: everything in --dtype (default); mixed: --dtype fp16/bf16 model with fp32 "
                        "master weights and fp32 optimizer states")
    p.add_argument("--checkpointing", "--recompute", dest="checkpointing", action="store_true",
                   help="gradient checkpointing of every encoder layer (activations: the layers' inputs "
                        "plus one recomputed layer)")
    p.add_argument("--inference", action="store_true", help="no gradients, optimizer or saved activations")
    p.set_defaults(run=_with_original(lambda args: _memory_report(config_from_args(args), args)))

    p = sub.add_parser("albertize", parents=[model],
                       help="the model beside its ALBERTized twin (E = 128 and all layers shared unless "
                            "--embedding-size / --sharing / --groups / --inner-groups say otherwise)")
    shape(p, 8)
    p.add_argument("--dtype", choices=tuple(DTYPE_BYTES), default="fp32")
    p.add_argument("--optimizer", choices=OPTIMIZERS, default="adamw")
    p.add_argument("--precision", choices=PRECISIONS, default="pure")
    p.add_argument("--checkpointing", action="store_true", help="gradient checkpointing of every encoder layer")
    p.set_defaults(run=_albertize_command)

    p = sub.add_parser("export-hf", parents=[model], help="the transformers config.json of the model")
    p.add_argument("--output", "-o", metavar="PATH", help="write to this file instead of printing")
    p.set_defaults(run=_export_hf)
    for name in COMMAND_MODULES:
        if importlib.util.find_spec(name) is not None:
            importlib.import_module(name).add_commands(sub, model)
    return parser


def _export_hf(args: argparse.Namespace) -> tuple[dict[str, Any], str | None]:
    data = config_to_hf(config_from_args(args))
    text = json.dumps(data, indent=2)
    if args.output:
        Path(args.output).write_text(text + "\n", encoding="utf-8")
        print(f"wrote {args.output}", file=sys.stderr)
        return data, None
    return data, text


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)  # as typed (train --nproc relaunches it)
    if hasattr(args, "handler"):  # train, train-reference: albert_core.cli.train_cmd
        return args.handler(args, parser)
    try:
        data, text = args.run(args)
    except (ValueError, OSError) as exc:
        parser.error(f"{args.command}: {exc}")
    if text is None:  # the command wrote its own output
        return 0
    try:
        print(json.dumps(data, indent=2) if getattr(args, "json", False) else text)
        sys.stdout.flush()
    except BrokenPipeError:  # `... | head`: the reader left; say nothing more
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0


def console_main() -> None:
    """Entry point of the `albert-explorer` console script."""
    sys.exit(main())
