"""`python -m albert_core quality`: the published record (every figure with its provenance, the published training
compute), optionally of one metric or protocol; with --preset, that preset's figures with its exact cost beside them.

Registered by `albert_core.cli.main.build_parser` (`add_commands`); its `main` prints the text or, with --json, the
data, and turns a ValueError into the one-line error (exit code 2).
"""

from __future__ import annotations

import argparse
from typing import Any

from albert_core.configuration.presets import ALL_PRESETS, preset
from albert_core.format import fmt_flops, fmt_params
from albert_core.quality import METRICS, PROTOCOLS, check_metric, check_protocol, fmt_value


def add_commands(sub: Any, model: argparse.ArgumentParser) -> None:
    """The `quality` subcommand (its own options: a published record is not a model's overrides)."""
    p = sub.add_parser("quality", help="published quality figures with their sources (and a preset's exact cost)")
    p.add_argument("--preset", metavar="NAME", help=f"only this preset's figures, with its cost; one of "
                   f"{', '.join(ALL_PRESETS)}")
    p.add_argument("--metric", metavar="M", help=f"only this metric: {', '.join(METRICS)}")
    p.add_argument("--protocol", metavar="P", help=f"only this protocol (source table): {', '.join(PROTOCOLS)}")
    p.add_argument("--json", action="store_true", help="machine-readable output: every field of every figure")
    p.set_defaults(run=quality_report)


def quality_report(args: argparse.Namespace) -> tuple[dict[str, Any], str]:
    from albert_core.cli.args import table
    from albert_core.quality_cost import COST_SEQ_LEN, cost_of, record

    metric = check_metric(args.metric) if args.metric else None
    protocol = check_protocol(args.protocol) if args.protocol else None
    names = None
    if args.preset is not None:
        cfg = preset(args.preset)  # ValueError naming the choices
        names = [n for n, c in ALL_PRESETS.items() if c == cfg]  # one architecture, several names (Ettin-150m)
    data = record(metric, names)
    if protocol is not None:
        data["figures"] = [f for f in data["figures"] if f["protocol"] == protocol]
    figs = data["figures"]
    lines = []
    if args.preset is not None:
        c = cost_of(cfg)
        flops = "no FLOPs at 512 tokens" if c.flops_per_token is None else \
            f"{fmt_flops(c.flops_per_token)} forward per token at {COST_SEQ_LEN}"
        data["cost"] = {"preset": args.preset, "same_architecture": names, "params": c.params,
                        "forward_flops_per_token": c.flops_per_token, "seq_len": COST_SEQ_LEN}
        lines.append(f"{args.preset}: {fmt_params(c.params)} parameters, {flops} (exact counts, this project's)")
        if not figs:
            lines.append("No published figure of this architecture in the record; none is estimated.")
    rows = [(f["model"], f["metric"], fmt_value(f["value"]) + (" (computed)" if f["computed"] else ""), f["split"],
             f["protocol"], f["fine_tuned_by"], f["source"]) for f in figs]
    if rows:
        lines.append(table(("model", "metric", "value", "split", "protocol", "fine-tuned by", "source"), rows,
                           (False, False, True, False, False, False, False)))
        lines.append(f"{len(figs)} figures, {len({f['preset'] for f in figs if f['preset']})} presets. Published "
                     "figures, not measured here; compare only within one protocol (docs/quality.md). --json: "
                     "every field (aggregation, training length, notes).")
    if data["training_compute"] and protocol is None and metric is None:
        lines.append("Published training compute:\n" + table(
            ("model", "hours", "devices", "device", "source"),
            [(c["model"], f"{'~' if c['approximate'] else ''}{c['wall_hours']:g}", c["devices"] or "not printed",
              c["device"], c["source"]) for c in data["training_compute"]],
            (False, True, True, False, False)))
    return data, "\n\n".join(lines)
