"""`albert-explorer audit` and `albert-explorer doctor`: the design-review commands.

``audit``: what the usual counters say about the model, beside the exact figures, with every difference's
causes (`albert_core.review.audit`). ``doctor config.json``: ALBERT's traps in a transformers config
(`albert_core.review.doctor`). Registered by `albert_core.cli.main.build_parser` (`add_commands`); ``--json`` and the
one-line errors (exit code 2) are the other commands' own.
"""

from __future__ import annotations

import argparse
from typing import Any

from albert_core.format import fmt_count, fmt_ratio


def add_commands(sub: Any, model: argparse.ArgumentParser) -> None:
    from albert_core.cli.args import config_from_args, whole
    from albert_core.review.audit import AUDIT_LIMITS

    p = sub.add_parser(
        "audit", parents=[model], help="the usual counters beside the exact figures, differences explained"
    )
    p.add_argument(
        "--batch",
        type=whole,
        default=1,
        metavar="N",
        help=f"(default 1, at most {AUDIT_LIMITS['batch'][1]})",
    )
    p.add_argument("--seq-len", type=whole, default=128, metavar="N", help="(default 128)")
    p.set_defaults(run=lambda args: audit_report(config_from_args(args), args.batch, args.seq_len))

    p = sub.add_parser(
        "doctor", help="ALBERT's known traps in a transformers config.json, with their numbers"
    )
    p.add_argument("config", metavar="CONFIG", help="a transformers config.json (or its folder)")
    p.add_argument("--seq-len", type=whole, metavar="N", help="the sequence length it will be used at")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(run=lambda args: doctor_report(args.config, args.seq_len))


def _figure(n: int | None, unit: str) -> str:
    return "-" if n is None else f"{fmt_count(n)} {unit}"


def audit_report(cfg, batch: int, seq_len: int) -> tuple[dict[str, Any], str]:
    from albert_core.cli.args import table, title
    from albert_core.review.audit import audit

    result = audit(cfg, batch, seq_len)
    rows, notes = [], []
    for r in result.rows:
        ratio = "-" if r.ratio is None else fmt_ratio(r.ratio)
        unexplained = "-" if r.unexplained is None else fmt_count(r.unexplained)
        rows.append(
            (r.tool.label, r.status, _figure(r.figure, r.tool.unit), fmt_count(r.exact), ratio, unexplained)
        )
        if r.run_on.startswith("CPU"):
            notes.append(f"{r.tool.label}: run on the {r.run_on} (exact figure of that size)")
    text = table(
        ("tool", "status", "its figure", "exact", "ratio", "unexplained"),
        rows,
        (False, False, True, True, True, True),
    )
    causes = []
    for r in result.rows:
        if r.causes:
            causes.append(f"{r.tool.label}:")
            causes += [f"  {c.amount:+,}  {c.what}" for c in r.causes]
    parts = [
        (
            r.tool.label,
            c.label,
            c.module or "-",
            _figure(c.figure, r.tool.unit),
            fmt_count(c.exact),
            fmt_count(c.unexplained),
            "; ".join(f"{x.what} {x.amount:+,}" for x in c.causes) or "none",
        )
        for r in result.rows
        for c in r.components
    ]
    per_component = (
        "per component (tools that report per module; parameters held, forward FLOPs run):\n"
        + table(
            ("tool", "component", "module", "its figure", "exact", "unexplained", "causes"),
            parts,
            (False, False, False, True, True, True, False),
        )
    )
    head = (
        f"{title(cfg)}\nbatch {batch} x {seq_len} tokens; exact: parameters, forward matmul FLOPs "
        "(2 per multiply-add), training = 3 x forward"
    )
    tail = (
        f"\n\nunexplained differences: {result.unexplained}"
        f"\nunexplained per-component differences: {result.unexplained_components}"
    )
    sections = [head, text, "\n".join(notes), "causes (in exact units):\n" + "\n".join(causes), per_component]
    if result.scheme:
        mismatches = sum(not c.matches for c in result.scheme)
        tail += f"\nsharing-scheme figures that differ from the audit's own arithmetic: {mismatches}"
        sections.append(
            "sharing scheme since ALBERT: transformers has no model of it, so the counters above were not run; the "
            "audit's own arithmetic (the executed schedule enumerated layer by layer) beside the exact counts:\n"
            + table(("figure", "own arithmetic", "exact", ""),
                    [(c.what, fmt_count(c.own), fmt_count(c.exact), "match" if c.matches else "DIFFERS")
                     for c in result.scheme], (False, True, True, False)))
    return result.to_dict(), "\n\n".join(sections) + tail


def doctor_report(path: str, seq_len: int | None) -> tuple[dict[str, Any], str]:
    from albert_core.review.doctor import diagnose

    result = diagnose(path, seq_len)
    lines = [f"{path}: {result.config.label if result.config else 'no valid model'}"]
    for f in result.findings:
        lines += [
            "",
            f"[{f.severity}] {f.code}: {f.what}",
            f"  changes {f.changes}: {f.number}",
            f"  fix: {f.fix}",
            f"  effect: {f.effect}",
            f"  from: {f.source}",
        ]
    if not result.findings:
        lines.append("no trap applies")
    return result.to_dict(), "\n".join(lines)
