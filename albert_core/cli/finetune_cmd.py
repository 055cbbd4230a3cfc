"""`python -m albert_core finetune`: the lab's downstream probe from the command line.

    python -m albert_core finetune [--twin albert|bert] [--measure] [--json]
    python -m albert_core finetune --run DIR [--json]
    python -m albert_core finetune --experiment table4 [--json]
    python -m albert_core finetune --reference [--experiments table4 table5 ...] [--workers 2] [--seeds 5]
    python -m albert_core finetune --baselines [--splits 20]

A trained run's encoder fine-tuned on movie-review sentences beside the same model from scratch, the
bag-of-words regression and the majority class (`albert_core.lab.probe`). ``--twin`` shows the shipped probe
of a Live-model twin (the figures the Train page shows; ``--measure`` fine-tunes it again here), ``--run`` probes
a run folder (`train --out DIR`, or the folder `train` reports), ``--experiment`` lists the shipped probes of an
experiment's reference runs and its downstream findings, ``--reference`` probes every reference run and writes
albert_core/lab/reference/probe.json (a maintainer's command; it trains what the run cache lacks; with
``--experiments`` only their runs, the file's other probes kept; ``--seeds N`` fine-tunes with seeds 0 to N-1),
``--baselines``
measures naive Bayes and the bag of words over random splits of the sentences and writes
albert_core/lab/reference/probe_baselines.json (a maintainer's command, `albert_core.lab.probe_baselines`).
Every verdict is the lab's one rule (`albert_core.lab.separation`), with its p-value. `train --probe` probes a run
as part of it. Bad input exits with code 2 and one line.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from albert_core.cli.args import table, whole
from albert_core.lab.spec import EXPERIMENT_NAMES

TWINS = ("albert", "bert")


def add_commands(sub: Any, model: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "finetune", help="the downstream probe: a trained encoder fine-tuned on movie-review sentences",
        description="Fine-tune a trained lab encoder on Rotten Tomatoes sentence polarity, beside the same model "
        "from scratch, a bag-of-words regression and the majority class, on the same dev sentences.",
    )
    what = p.add_mutually_exclusive_group()
    what.add_argument("--twin", choices=TWINS, help="a shipped Live-model twin (default albert)")
    what.add_argument("--run", metavar="DIR", help="a run folder (train --out DIR, or the folder train reports)")
    what.add_argument("--experiment", choices=EXPERIMENT_NAMES, help="the shipped probes of an experiment's runs")
    what.add_argument("--reference", action="store_true",
                      help="probe every reference run and write albert_core/lab/reference/probe.json (slow)")
    what.add_argument("--baselines", action="store_true",
                      help="measure naive Bayes and the bag of words over random splits; write "
                      "albert_core/lab/reference/probe_baselines.json (about a CPU-minute a split)")
    p.add_argument("--splits", type=whole, default=20, metavar="N",
                   help="with --baselines: random splits (default 20)")
    p.add_argument("--measure", action="store_true", help="with --twin: fine-tune it again here")
    p.add_argument("--workers", type=whole, default=2, metavar="N", help="with --reference: processes (default 2)")
    p.add_argument("--seeds", type=whole, default=None, metavar="N",
                   help="with --reference: fine-tuning seeds 0 to N-1 per model (default the recipe's 2, at most 10)")
    p.add_argument("--experiments", nargs="+", choices=EXPERIMENT_NAMES, metavar="NAME",
                   help=f"with --reference: some of {', '.join(EXPERIMENT_NAMES)} (default all)")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(handler=run_finetune)


def _seeds(values: tuple[float, ...]) -> str:
    return ", ".join(f"{100 * v:.1f}" for v in values)


def baseline_rows(probe: Any) -> list[tuple[str, str, str]]:
    """The probe's baselines on its dev sentences, as measured (`albert_core.lab.probe_baselines`)."""
    from albert_core.lab.probe import measured_baselines

    rows = [("bag-of-words logistic regression", "-", f"{100 * probe.bag_of_words:.1f}")]
    m = measured_baselines()
    if m is not None and m.dev_sentences == probe.dev_sentences:
        rows += [(f"bag-of-words, {len(m.split_seeds)} random splits (other dev sentences)",
                  f"+- {100 * m.splits_sd:.1f}", f"{100 * m.splits_mean:.1f}"),
                 ("naive Bayes on its features", "-", f"{100 * m.naive_bayes:.1f}")]
    return [*rows, ("majority class", "-", f"{100 * probe.majority:.1f}")]


def probe_text(name: str, probe: Any, where: str) -> str:
    rows = [("pretrained (this run's encoder)", _seeds(probe.pretrained), f"{100 * probe.pretrained_mean:.1f}"),
            ("the same model from scratch", _seeds(probe.scratch), f"{100 * probe.scratch_mean:.1f}"),
            *baseline_rows(probe)]
    head = (f"{name}: dev accuracy (%) on {probe.dev_sentences:,} movie-review sentences, fine-tuning seeds "
            f"{', '.join(map(str, probe.seeds))} ({where})")
    return "\n".join([head, "", table(("model", "per seed", "mean"), rows, (False, True, True)), "",
                      probe.sentence().replace("**", "")])


def _twin(args: argparse.Namespace) -> tuple[dict[str, Any], str]:
    from albert_core.lab.reference import CHECKPOINTS_DIR, REFERENCE_DIR, live_twins, load_probe_file

    spec = live_twins()["BERT" if args.twin == "bert" else "ALBERT"]
    if args.measure:
        return _run(CHECKPOINTS_DIR / spec.key)
    row = load_probe_file(str(REFERENCE_DIR)).get("runs", {}).get(spec.key)
    if row is None:
        raise ValueError("this install has no shipped probe of the twin; run with --measure")
    from albert_core.lab.probe import ProbeResult

    probe = ProbeResult.from_dict(row["probe"])
    cpu = load_probe_file(str(REFERENCE_DIR)).get("environment", {}).get("cpu", "an unrecorded CPU")
    data = {"run": spec.name, "key": spec.key, "shipped": True, "cpu": cpu, "probe": probe.to_dict()}
    return data, probe_text(spec.name, probe, f"shipped, measured on {cpu}")


def _run(folder: Path) -> tuple[dict[str, Any], str]:
    import torch

    from albert_core.lab import probe as lab_probe
    from albert_core.lab.checkpoint import environment, load_model, load_run
    from albert_core.text.tokenizers import lab_tokenizer

    torch.set_num_threads(1)
    result = load_run(folder)
    spec = result.spec
    model = load_model(folder)
    bar = None
    if sys.stderr.isatty():
        from tqdm import tqdm

        bar = tqdm(file=sys.stderr, unit="step", leave=False, desc="fine-tuning")

    def on_progress(done: int, total: int) -> None:
        if bar is not None:
            bar.total, bar.n = total, done
            bar.refresh()

    try:
        probe = lab_probe.probe_model(model, spec.config, lab_tokenizer(spec.tokenizer_kind, spec.vocab_size),
                                      std=spec.weight_std, on_progress=on_progress)
    finally:
        if bar is not None:
            bar.close()
    cpu = environment()["cpu"]
    data = {"run": spec.name, "key": spec.key, "shipped": False, "cpu": cpu, "probe": probe.to_dict()}
    return data, probe_text(spec.name, probe, f"measured now on {cpu}, {probe.seconds:.0f} s, one torch thread")


def _experiment(name: str) -> tuple[dict[str, Any], str]:
    from albert_core.lab import findings
    from albert_core.lab.reference import load_evaluation, load_runs

    runs = load_runs(name)
    rows, out = [], []
    for r in runs:
        p = r.probe
        rows.append((r.spec.label, r.spec.seed, f"{r.final['val_mlm_loss']:.3f}",
                     "-" if p is None else f"{100 * p.pretrained_mean:.1f}",
                     "-" if p is None else f"{100 * p.scratch_mean:.1f}",
                     "-" if p is None else f"{p.verdict} ({p.test.why_not('models')})"))
        out.append({"label": r.spec.label, "seed": r.spec.seed, "key": r.spec.key,
                    "val_mlm_loss": r.final["val_mlm_loss"], "probe": None if p is None else p.to_dict()})
    found = findings.for_experiment(name, runs, load_evaluation(name))
    text = table(("run", "seed", "val MLM loss", "downstream %", "from scratch %", "pretraining (exact permutation "
                  "test)"), rows, (False, True, True, True, True, False))
    words = [f.sentence().replace("**", "") for f in found]
    probed = next((r.probe for r in runs if r.probe is not None), None)
    base = []
    if probed is not None:
        base = ["Baselines on the same dev sentences: " + "; ".join(f"{m} {v} %" for m, _s, v in baseline_rows(probed))
                + "."]
    return ({"experiment": name, "runs": out, "findings": words, "rule": RULE},
            "\n".join([text, "", *base, RULE, "", *words]))


RULE = ("Separated = an exact permutation test over the models (fine-tuned models downstream, pretraining runs on "
        "MLM loss), two-sided, p <= 0.05; the difference's 95 % interval is the test inverted.")


def _baselines(args: argparse.Namespace) -> tuple[dict[str, Any], str]:
    from albert_core.lab.probe import MeasuredBaselines
    from albert_core.lab.probe_baselines import build

    def on_split(i: int, n: int, bow: float, nb: float) -> None:
        print(f"split {i}/{n}: bag-of-words {100 * bow:.1f} %, naive Bayes {100 * nb:.1f} %", file=sys.stderr,
              flush=True)

    path = build(args.splits, on_split=on_split)
    m = MeasuredBaselines.from_dict(json.loads(path.read_text(encoding="utf-8")))
    text = (f"wrote {path}: bag-of-words {100 * m.bag_of_words:.1f} % on the shipped split, "
            f"{100 * m.splits_mean:.1f} % +- {100 * m.splits_sd:.1f} over {len(m.split_seeds)} random splits; naive "
            f"Bayes {100 * m.naive_bayes:.1f} % ({100 * m.nb_splits_mean:.1f} % over the splits); {m.cpu}, "
            f"{m.cpu_seconds:.0f} CPU-s")
    return {"written": str(path)}, text


def _reference(args: argparse.Namespace) -> tuple[dict[str, Any], str]:
    from albert_core.lab.probe_reference import build_probes

    def on_run(i: int, n: int, row: dict[str, Any]) -> None:
        print(f"{i}/{n} {row['label']} seed {row['seed']}: val MLM loss {row['val_mlm_loss_retrained']:.4f}, "
              f"pretrained {_seeds(tuple(row['pretrained']))} ({row['cpu_seconds']:.0f} CPU s)",
              file=sys.stderr, flush=True)

    seeds = None if args.seeds is None else range(args.seeds)
    path = build_probes(args.experiments, workers=args.workers, on_run=on_run, seeds=seeds)
    if args.experiments is None or "depth" in args.experiments:  # the depth dial at L/2 and 2L too
        from albert_core.lab.probe_reference import build_depth_probes

        build_depth_probes(workers=args.workers)
    return {"written": str(path)}, f"wrote {path}"


def run_finetune(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    if args.measure and args.twin is None and (args.run or args.experiment or args.reference or args.baselines):
        parser.error("finetune: --measure goes with --twin")
    if not 1 <= args.workers <= 8:
        parser.error(f"finetune: --workers must be between 1 and 8, got {args.workers}")
    if not 2 <= args.splits <= 200:
        parser.error(f"finetune: --splits must be between 2 and 200, got {args.splits}")
    if args.seeds is not None and not (args.reference and 1 <= args.seeds <= 10):
        parser.error(f"finetune: --seeds goes with --reference and must be between 1 and 10, got {args.seeds}")
    try:
        if args.run:
            folder = Path(args.run)
            if not (folder / "run.json").is_file():
                raise ValueError(f"--run must be a run folder with a run.json, got {args.run[:200]}")
            data, text = _run(folder)
        elif args.experiment:
            data, text = _experiment(args.experiment)
        elif args.reference:
            data, text = _reference(args)
        elif args.baselines:
            data, text = _baselines(args)
        else:
            args.twin = args.twin or "albert"
            data, text = _twin(args)
    except KeyboardInterrupt:
        print("finetune: interrupted", file=sys.stderr)
        return 130
    except (ValueError, OSError, RuntimeError) as exc:
        parser.error(f"finetune: {exc}")
    print(json.dumps(data, indent=2) if args.json else text)
    return 0
