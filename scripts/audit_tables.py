"""Print docs/audit.md's measured tables: every tool's ratio to the exact figure on the presets and on
albert-base's sharing modes and G/K variants (`python scripts/audit_tables.py > /tmp/tables.md`); with
``--families``, the ratio table of the encoders after BERT (one column per preset). From the repository root with
PYTHONPATH=. unless albert_core is installed."""

from __future__ import annotations

import sys

from albert_core import PRESETS
from albert_core.configuration.presets import ENCODER_PRESETS, config_name
from albert_core.format import fmt_ratio
from albert_core.review.audit import TOOLS, audit

BASE = PRESETS["albert-base"]
CONFIGS = [
    *((name, cfg) for name, cfg in PRESETS.items()),
    ("albert-base, pre-training heads", BASE.replace(head="pretraining")),
    ("bert-base, pre-training heads", PRESETS["bert-base"].replace(head="pretraining")),
    ("albert-base, sharing none", BASE.replace(sharing="none")),
    ("albert-base, shared attention", BASE.replace(sharing="attention")),
    ("albert-base, shared FFN", BASE.replace(sharing="ffn")),
    ("albert-base, G = 5 (uneven), K = 2", BASE.replace(num_hidden_groups=5, inner_group_num=2)),
    (
        "albert-base, shared attention, G = 3, K = 2",
        BASE.replace(sharing="attention", num_hidden_groups=3, inner_group_num=2),
    ),
]

FAMILY_CONFIGS = [
    ("modernbert-base", "masked-lm"),
    ("ettin-encoder-17m", "model"),
    ("eurobert-210m", "masked-lm"),
    ("nomic-bert-2048", "model"),
    ("roberta-base", "model"),
    ("electra-small-discriminator", "discriminator"),
    ("deberta-v3-xsmall", "model"),
]


def _ratio(ratio: float | None) -> str:
    return "-" if ratio is None else fmt_ratio(ratio) if ratio >= 0.01 else f"{ratio:.4f}x"


def families() -> None:
    results = [(f"{name} ({head})", audit(ENCODER_PRESETS[name].replace(head=head), 1, 128)) for name, head in
               FAMILY_CONFIGS]
    print("| tool | " + " | ".join(name for name, _ in results) + " |")
    print("| --- |" + " ---: |" * len(results))
    for tool in TOOLS:
        rows = [next(r for r in result.rows if r.tool.key == tool.key) for _, result in results]
        print(f"| {tool.label} | " + " | ".join(_ratio(r.ratio) for r in rows) + " |")
    rows = sum(r.unexplained for _, r in results)
    parts = sum(r.unexplained_components for _, r in results)
    print(f"\nunexplained rows: {rows}; unexplained component rows: {parts}")


def main() -> None:
    if "--families" in sys.argv[1:]:
        families()
        return
    results = [(name, audit(cfg, 1, 128)) for name, cfg in CONFIGS]
    for tool in TOOLS:
        print(f"\n### {tool.label}\n")
        print("| config | its figure | exact | ratio | causes (in exact units) |")
        print("| --- | ---: | ---: | ---: | --- |")
        for name, result in results:
            row = next(r for r in result.rows if r.tool.key == tool.key)
            figure = "-" if row.figure is None else f"{row.figure:,} {tool.unit}"
            causes = "; ".join(f"{c.what} {c.amount:+,}" for c in row.causes) or "none"
            size = "" if row.config == result.config else f" (run: {config_name(row.config)})"
            ratio = (
                "-"
                if row.ratio is None
                else fmt_ratio(row.ratio)
                if row.ratio >= 0.01
                else f"{row.ratio:.4f}x"
            )
            print(f"| {name}{size} | {figure} | {row.exact:,} | {ratio} | {causes} |")
        print(
            f"\nunexplained: {sum(1 for _, r in results for x in r.rows if x.tool.key == tool.key and x.unexplained)}"
        )


if __name__ == "__main__":
    main()
