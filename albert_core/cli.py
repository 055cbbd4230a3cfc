"""Command line: `albert-explorer` or `python -m albert_core` `presets | params | flops | memory | export-hf` (and the
commands of `COMMAND_MODULES`: train, time, audit, doctor).

A model is a `--preset` or a transformers `--hf-config` file plus overrides, turned into a config by
`albert_core.coerce` (the same rule as the app's sidebar and URL). Output is a readable table by
default and JSON with `--json`. Bad input exits with code 2 and one line on stderr naming the problem
(never a traceback). This module imports neither torch nor transformers.

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
from typing import Any, NoReturn

from albert_core.coerce import coerce
from albert_core.config import ACTIVATIONS, FAMILIES, HEAD_LABELS, HEADS, SHARING_MODES, ModelConfig
from albert_core.format import fmt_bytes, fmt_count, fmt_flops, fmt_params, fmt_pct
from albert_core.memory import PRECISIONS
from albert_core.presets import PRESETS
from albert_core.workload import DTYPE_BYTES, OPTIMIZERS, Workload, check_seq_len

# Modules that add commands (see the module docstring); a missing one is skipped.
COMMAND_MODULES = ("albert_core.cli_train", "albert_core.cli_time", "albert_core.cli_review")

# CLI option -> ModelConfig field, for the numeric overrides.
INT_OPTIONS = {
    "vocab_size": "vocab_size",
    "embedding_size": "embedding_size",
    "hidden_size": "hidden_size",
    "num_layers": "num_layers",
    "num_heads": "num_heads",
    "intermediate_size": "intermediate_size",
    "max_position": "max_position_embeddings",
    "type_vocab": "type_vocab_size",
    "groups": "num_hidden_groups",
    "inner_groups": "inner_group_num",
}


class _Parser(argparse.ArgumentParser):
    """argparse that reports a problem as one line (no usage block) and exits with code 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {' '.join(message.split())}\n")


def _whole(text: str) -> int:
    """A whole number as typed (ASCII digits 0-9, one optional sign, `_` or `,` separators: 30_000,
    30,000); other scripts' digits (e.g. '٣', which int() reads as 3) are refused, as in URLs."""
    cleaned = text.strip().replace("_", "").replace(",", "")
    digits = cleaned[1:] if cleaned.startswith(("+", "-")) else cleaned
    if not (digits.isascii() and digits.isdigit()):
        raise argparse.ArgumentTypeError(f"must be a whole number written with the digits 0-9, got {text[:24]!r}")
    if len(cleaned) > 20:  # far past every limit; also keeps int() away from huge strings
        raise argparse.ArgumentTypeError(f"is far too large: {text[:24]!r}...")
    return int(cleaned)


def _fraction(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number between 0 and 1, got {text[:24]!r}") from None
    if not 0 <= value <= 1:  # also rejects NaN
        raise argparse.ArgumentTypeError(f"must be a number between 0 and 1, got {text[:24]!r}")
    return value


# ----------------------------------------------------------------------------- model from arguments
def config_from_args(args: argparse.Namespace, default: ModelConfig | None = None) -> ModelConfig:
    """The base (preset, transformers config or ``default``, else ALBERT-base) with the overrides applied."""
    if args.hf_config is not None:
        base = ModelConfig.from_hf(args.hf_config, head=args.head)
    elif default is not None and args.preset is None:
        base = default
    else:
        base = ModelConfig.preset(args.preset or "albert-base")
    changes: dict[str, Any] = {
        field: getattr(args, opt) for opt, field in INT_OPTIONS.items() if getattr(args, opt) is not None
    }
    for opt, field in (("family", "family"), ("sharing", "sharing"), ("head", "head"), ("act", "hidden_act")):
        if getattr(args, opt) is not None:
            changes[field] = getattr(args, opt)
    if args.untied:
        changes["tie_word_embeddings"] = False
    return coerce(changes, base, strict=True).config


def workload_from_args(args: argparse.Namespace, cfg: ModelConfig) -> Workload:
    work = Workload(
        batch=args.batch,
        seq_len=args.seq_len,
        dtype=getattr(args, "dtype", "fp32"),
        optimizer=getattr(args, "optimizer", "adamw"),
    )
    check_seq_len(cfg, work.seq_len)
    return work


# ----------------------------------------------------------------------------- tables
def table(headers: Sequence[str], rows: Sequence[Sequence[Any]], right: Sequence[bool]) -> str:
    """A fixed-width text table; `right[i]` right-aligns column i (numbers)."""
    cells = [[str(c) for c in headers], *[[str(c) for c in row] for row in rows]]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]

    def line(row: list[str]) -> str:
        parts = [c.rjust(w) if r else c.ljust(w) for c, w, r in zip(row, widths, right, strict=True)]
        return "  ".join(parts).rstrip()

    rule = "  ".join("-" * w for w in widths)
    return "\n".join([line(cells[0]), rule, *map(line, cells[1:])])


def _title(cfg: ModelConfig) -> str:
    return f"{cfg.label}, head: {HEAD_LABELS[cfg.head]}"


def _params_report(cfg: ModelConfig) -> tuple[dict[str, Any], str]:
    from albert_core.params import count_params

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
    return {"total": total, "components": comps}, f"{_title(cfg)}\n\n{text}\n\n{summary}"


def _flops_report(cfg: ModelConfig, args: argparse.Namespace) -> tuple[dict[str, Any], str]:
    from albert_core.flops import count_flops

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
    return data, f"{_title(cfg)}\n\n{text}\n\n{summary}"


MEMORY_PARTS = ("weights", "gradients", "optimizer", "activations", "total")


def _memory_report(cfg: ModelConfig, args: argparse.Namespace) -> tuple[dict[str, Any], str]:
    from albert_core.memory import estimate_memory

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
    head = f"{_title(cfg)}\nbatch {work.batch}, sequence {work.seq_len}, {precision}, {mode}"
    notes = ["activations are an estimate; weights, gradients and optimizer states are exact"]
    if est.master_weights:
        notes.append(f"optimizer includes the fp32 master weights ({fmt_bytes(est.master_weights)})")
    return data, f"{head}\n\n{text}\n\n" + "\n".join(notes)


def _presets_report() -> tuple[dict[str, Any], str]:
    from albert_core.params import count_params

    data: dict[str, Any] = {}
    rows = []
    for name, cfg in PRESETS.items():
        total = int(count_params(cfg).total)
        data[name] = {**cfg.to_dict(), "params": total}
        rows.append(
            (name, cfg.family, fmt_count(cfg.vocab_size), cfg.embedding_size, cfg.hidden_size, cfg.num_layers,
             cfg.num_heads, cfg.intermediate_size, cfg.sharing, fmt_count(total), fmt_params(total))
        )
    text = table(
        ("preset", "family", "V", "E", "H", "L", "heads", "I", "sharing", "params", ""),
        rows,
        (False, False, True, True, True, True, True, True, False, True, True),
    )
    return data, f"{text}\n\nparams: encoder + pooler (transformers' XModel)"


# ----------------------------------------------------------------------------- parser
def build_parser() -> _Parser:
    model = _Parser(add_help=False)
    src = model.add_argument_group("model (a preset or a transformers config.json, then overrides)")
    pick = src.add_mutually_exclusive_group()
    pick.add_argument("--preset", metavar="NAME", help=f"one of {', '.join(PRESETS)} (default albert-base)")
    pick.add_argument("--hf-config", metavar="PATH", help="a transformers config.json (or its folder)")
    src.add_argument("--family", choices=FAMILIES)
    for opt, field in INT_OPTIONS.items():
        src.add_argument(f"--{opt.replace('_', '-')}", type=_whole, metavar="N", help=field)
    src.add_argument("--sharing", choices=SHARING_MODES)
    src.add_argument("--head", choices=HEADS)
    src.add_argument("--act", choices=ACTIVATIONS, help="hidden activation")
    src.add_argument("--untied", action="store_true", help="untie the MLM decoder from the word embeddings")
    model.add_argument("--json", action="store_true", help="machine-readable output")

    def shape(p: argparse.ArgumentParser, batch: int) -> None:
        p.add_argument("--batch", type=_whole, default=batch, metavar="N", help=f"(default {batch})")
        p.add_argument("--seq-len", type=_whole, default=128, metavar="N", help="(default 128)")

    parser = _Parser(
        prog=os.path.basename(sys.argv[0]) if sys.argv[0].endswith("albert-explorer") else "python -m albert_core",
        description="Exact parameter, FLOP and memory accounting of BERT and ALBERT encoders.",
        epilog="Bad input exits with code 2 and one line naming the problem.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND", parser_class=_Parser)

    p = sub.add_parser("presets", help="the named configurations and their sizes")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(run=lambda args: _presets_report())
    p = sub.add_parser("params", parents=[model], help="exact parameter count per component")
    p.set_defaults(run=lambda args: _params_report(config_from_args(args)))

    p = sub.add_parser("flops", parents=[model], help="forward and training FLOPs per component")
    shape(p, 1)
    p.add_argument("--convention", choices=("matmul", "full"), default="matmul",
                   help="matmul: 2mnk per matmul (default); full: plus element-wise work")
    p.add_argument("--mlm-fraction", type=_fraction, default=1.0, metavar="F",
                   help="share of tokens the MLM head runs on (default 1: all, as transformers)")
    p.add_argument("--recompute", "--checkpointing", dest="recompute", action="store_true",
                   help="gradient checkpointing: the backward recomputes every encoder layer's forward")
    p.set_defaults(run=lambda args: _flops_report(config_from_args(args), args))

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
    p.set_defaults(run=lambda args: _memory_report(config_from_args(args), args))

    p = sub.add_parser("export-hf", parents=[model], help="the transformers config.json of the model")
    p.add_argument("--output", "-o", metavar="PATH", help="write to this file instead of printing")
    p.set_defaults(run=_export_hf)
    for name in COMMAND_MODULES:
        if importlib.util.find_spec(name) is not None:
            importlib.import_module(name).add_commands(sub, model)
    return parser


def _export_hf(args: argparse.Namespace) -> tuple[dict[str, Any], str | None]:
    data = config_from_args(args).to_hf()
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
    if hasattr(args, "handler"):  # train, train-reference: albert_core.cli_train
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
