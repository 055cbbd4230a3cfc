"""What every command of the command line shares: the argument parser that reports a problem in one line, the
number types, the model options (a preset or a transformers config.json, then overrides) and the config and
workload they build, and the text table. Imported by `albert_core.cli.main` and each command module."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any, NoReturn

from albert_core.configuration.coerce import coerce
from albert_core.configuration.config import (
    BLOCK_ORDERS,
    ENCODER_ACTIVATIONS,
    ENCODER_HEADS,
    FAMILIES,
    LORA_MATRICES,
    SHARING_MODES,
    ModelConfig,
)
from albert_core.configuration.hf_config import config_from_hf
from albert_core.configuration.presets import ALL_PRESETS, preset
from albert_core.configuration.workload import Workload, check_seq_len

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
# CLI option -> ModelConfig field, for the sharing schemes since ALBERT (docs/sharing.md).
SCHEME_OPTIONS = {
    "block_order": "block_order",
    "unique_ends": "unique_ends",
    "repeat": "repeat",
    "lora_rank": "lora_rank",
    "lora_targets": "lora_targets",
}


class Parser(argparse.ArgumentParser):
    """argparse that reports a problem as one line (no usage block) and exits with code 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {' '.join(message.split())}\n")


def whole(text: str) -> int:
    """A whole number as typed (ASCII digits 0-9, one optional sign, `_` or `,` separators: 30_000,
    30,000); other scripts' digits (e.g. '٣', which int() reads as 3) are refused, as in URLs."""
    cleaned = text.strip().replace("_", "").replace(",", "")
    digits = cleaned[1:] if cleaned.startswith(("+", "-")) else cleaned
    if not (digits.isascii() and digits.isdigit()):
        raise argparse.ArgumentTypeError(f"must be a whole number written with the digits 0-9, got {text[:24]!r}")
    if len(cleaned) > 20:  # far past every limit; also keeps int() away from huge strings
        raise argparse.ArgumentTypeError(f"is far too large: {text[:24]!r}...")
    return int(cleaned)


def lora_targets(text: str) -> str:
    """The matrices of a LoRA as typed: names joined by '-' or ',' ("q-v-in", "q,v,in"), any order; given back
    joined by '-' in `LORA_MATRICES` order. Anything else is passed on as typed (joined by '-') for the config's rule
    to refuse, naming the field."""
    names = [part.strip().lower() for part in text.replace(",", "-").split("-")]
    if all(name in LORA_MATRICES for name in names) and len(set(names)) == len(names):
        return "-".join(m for m in LORA_MATRICES if m in names)
    return "-".join(names)[:80]


def fraction(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number between 0 and 1, got {text[:24]!r}") from None
    if not 0 <= value <= 1:  # also rejects NaN
        raise argparse.ArgumentTypeError(f"must be a number between 0 and 1, got {text[:24]!r}")
    return value


# ----------------------------------------------------------------------------- model from arguments
def base_from_args(args: argparse.Namespace, default: ModelConfig | None = None) -> ModelConfig:
    """The config before the overrides: a transformers config, a preset, ``default``, else ALBERT-base."""
    if args.hf_config is not None:
        return config_from_hf(args.hf_config, head=args.head)
    if default is not None and args.preset is None:
        return default
    return preset(args.preset or "albert-base")


# The overrides that apply ALBERT's ideas (the two of the paper, then the sharing schemes since): with one of them,
# a report shows the original beside the twin.
ALBERT_AXES = ("embedding_size", "sharing", "num_hidden_groups", "inner_group_num", *SCHEME_OPTIONS.values())


def scheme_changes(args: argparse.Namespace) -> dict[str, Any]:
    """The sharing-scheme fields the options give (`SCHEME_OPTIONS`); a flag not given is not a change."""
    out = {field: getattr(args, opt) for opt, field in SCHEME_OPTIONS.items() if getattr(args, opt, None) is not None}
    if out.get("unique_ends") is False:
        del out["unique_ends"]  # --unique-ends is a switch: absent means "as the base has it"
    return out


def config_from_args(args: argparse.Namespace, default: ModelConfig | None = None, *,
                     scheme: bool = True) -> ModelConfig:
    """The base (`base_from_args`) with the overrides applied (without the sharing-scheme options when ``scheme`` is
    False: `albertize` applies them to the twin)."""
    base = base_from_args(args, default)
    changes: dict[str, Any] = {
        field: getattr(args, opt) for opt, field in INT_OPTIONS.items() if getattr(args, opt) is not None
    }
    for opt, field in (("family", "family"), ("sharing", "sharing"), ("head", "head"), ("act", "hidden_act")):
        if getattr(args, opt) is not None:
            changes[field] = getattr(args, opt)
    if args.untied:
        changes["tie_word_embeddings"] = False
    if scheme:
        changes |= scheme_changes(args)
    return with_changes(changes, base)


def with_changes(changes: dict[str, Any], base: ModelConfig) -> ModelConfig:
    """``base`` with ``changes`` by the coerce rule (strict); matrices given for a LoRA that the config does not
    have (rank 0: ModelConfig keeps all six) are refused rather than dropped."""
    cfg = coerce(changes, base, strict=True).config
    if "lora_targets" in changes and not cfg.lora_rank:
        raise ValueError(f"lora_targets {changes['lora_targets']!r} needs a LoRA: the config has lora_rank 0 "
                         "(give --lora-rank N)")
    return cfg


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


def title(cfg: ModelConfig) -> str:
    return f"{cfg.label}, head: {cfg.head_label}"


def model_options() -> Parser:
    """The parent parser of the model options (and --json) that every model command takes."""
    model = Parser(add_help=False)
    src = model.add_argument_group("model (a preset or a transformers config.json, then overrides)")
    pick = src.add_mutually_exclusive_group()
    pick.add_argument("--preset", metavar="NAME", help=f"one of {', '.join(ALL_PRESETS)} (default albert-base)")
    pick.add_argument("--hf-config", metavar="PATH", help="a transformers config.json (or its folder)")
    src.add_argument("--family", choices=FAMILIES)
    for opt, field in INT_OPTIONS.items():
        src.add_argument(f"--{opt.replace('_', '-')}", type=whole, metavar="N", help=field)
    src.add_argument("--sharing", choices=SHARING_MODES)
    src.add_argument("--head", choices=ENCODER_HEADS)
    src.add_argument("--act", choices=ENCODER_ACTIVATIONS, help="hidden activation")
    src.add_argument("--untied", action="store_true", help="untie the MLM decoder from the word embeddings")
    scheme = model.add_argument_group("sharing schemes since ALBERT (a family with ALBERT's ideas, docs/sharing.md)")
    scheme.add_argument("--block-order", choices=BLOCK_ORDERS,
                        help="which shared group layer i uses: contiguous groups (ALBERT, AABB) or i mod G (cycle, "
                             "ABAB)")
    scheme.add_argument("--unique-ends", action="store_true", default=None,
                        help="the first and last layers get blocks of their own; the G groups share the middle")
    scheme.add_argument("--repeat", type=whole, metavar="N",
                        help="each layer runs N times in a row (1-16; executed layers L x K x N, parameters unchanged)")
    scheme.add_argument("--lora-rank", type=whole, metavar="N",
                        help="a LoRA of rank N at every executed position of a shared block (0: none)")
    scheme.add_argument("--lora-targets", type=lora_targets, metavar="M",
                        help=f"the matrices that carry it: some of {', '.join(LORA_MATRICES)} joined by '-' or ',' "
                             "(default: every matrix of the shared blocks)")
    model.add_argument("--json", action="store_true", help="machine-readable output")
    return model
