"""Pure helpers of the Train page (no streamlit): the twins of a config, the tiny default, the run
specs a visitor asks for, the run ids in the URL and the runs table.

Twins of a config (the paper's comparison, one click): BERT (E = H, no sharing), factorized only
(ALBERT embeddings V x E + E -> H, every layer its own weights), shared only (E = H, layers shared)
and ALBERT (factorized and shared). Every twin is trained with the same tokenizer and masking, so
only the architecture differs between their curves. A mask rate other than 15 % is named in the runs'
labels ("ALBERT, mask 30 %"), and so is the downstream probe ("ALBERT, probed": then fine-tuned on movie-review
sentences, `albert_core.lab.probe`), so the table, the progress lines and the curves tell such runs apart.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from albert_core import ModelConfig
from albert_core.configuration.config import SHARING_LABELS
from albert_core.format import fmt_flops, fmt_nat_gap
from albert_core.lab import experiments, findings
from albert_core.lab import spec as spec_defaults
from albert_core.lab.baselines import Baselines, mlm_verdict, order_verdict
from albert_core.lab.spec import DEFAULT_MASK_RATE, RunSpec, mask_rate_text
from ui.train.figures import Separation

TWIN_HELP = {
    "BERT": "E = H, every layer its own weights",
    "factorized only": "V x E + E -> H embeddings, layers not shared",
    "shared only": "E = H, one set of layer weights",
    "ALBERT": "factorized and shared",
}
TWINS = tuple(experiments.twins(experiments.BASE))
DEFAULT_TWINS = ("BERT", "ALBERT")  # with two seeds each: the smallest plan that can show a separation
TINY = experiments.BASE  # the lab's tiny twin: trains in seconds to minutes on a shared 2-core host
# The run settings of the experiments (batch, sequence, schedule, one tokenizer and masking for all).
RUN_DEFAULTS = experiments.RUN_DEFAULTS
# The mask rates the page offers (share of the training pieces masked -> whose recipe it is).
MASK_RATES = {DEFAULT_MASK_RATE: "BERT, ALBERT", 0.2: "NeoBERT", 0.3: "ModernBERT, Ettin"}
RUN_ID = re.compile(r"[0-9a-f]{6,40}")
MAX_URL_RUNS = 16


def factorized_size(cfg: ModelConfig) -> int:
    """The E of the factorized twins of ``cfg`` (its own E when E < H, else H / 4)."""
    return experiments.twins(cfg)["ALBERT"].embedding_size


def twin_specs(cfg: ModelConfig, names: Iterable[str], *, task: str, steps: int, seeds: Sequence[int],
               batch_size: int, seq_len: int, mask_rate: float = DEFAULT_MASK_RATE, probe: bool = False
               ) -> list[RunSpec]:
    """One RunSpec per chosen twin (`albert_core.lab.experiments.twins`) and seed, labelled by the
    twin's name; every twin with the same tokenizer and masking, so only the architecture differs.
    ``probe``: each then fine-tuned on movie-review sentences (`RunSpec.probe`)."""
    all_twins = experiments.twins(cfg)
    unknown = [n for n in names if n not in all_twins]
    if unknown:
        raise ValueError(f"twins must be among {', '.join(all_twins)}; got {', '.join(unknown)}")
    return [_spec(all_twins[name], name, task, steps, seed, batch_size, seq_len, mask_rate, probe)
            for name in names for seed in seeds]


def _spec(cfg: ModelConfig, label: str, task: str, steps: int, seed: int, batch_size: int, seq_len: int,
          mask_rate: float = DEFAULT_MASK_RATE, probe: bool = False) -> RunSpec:
    fields = {**RUN_DEFAULTS, "batch_size": batch_size, "seq_len": seq_len}  # warmup, evaluations: the recipe's
    if mask_rate != DEFAULT_MASK_RATE:
        label = f"{label}, mask {mask_rate_text(mask_rate)}"
    if probe:
        label = f"{label}, probed"
    return RunSpec(cfg, task=task, steps=steps, seed=seed, label=label, mask_rate=mask_rate, probe=probe, **fields)


def custom_specs(cfg: ModelConfig, *, sharing: str, groups: int, inner: int, embedding_sizes: Sequence[int],
                 task: str, steps: int, seeds: Sequence[int], batch_size: int, seq_len: int,
                 mask_rate: float = DEFAULT_MASK_RATE, probe: bool = False) -> list[RunSpec]:
    """ALBERT runs of ``cfg`` in one sharing mode, one per embedding size and seed."""
    if not embedding_sizes:
        raise ValueError("E values must hold at least one value")
    albert = cfg if cfg.family == "albert" else cfg.replace(family="albert", sharing="all")
    specs = []
    for e in embedding_sizes:
        c = albert.replace(embedding_size=int(e), sharing=sharing,
                           num_hidden_groups=groups if sharing != "none" else 1, inner_group_num=inner)
        label = (f"E={e} {SHARING_LABELS[sharing]}" + (f" G={groups}" if sharing != "none" and groups > 1 else "")
                 + (f" K={inner}" if inner > 1 else ""))
        specs += [_spec(c, label, task, steps, s, batch_size, seq_len, mask_rate, probe) for s in seeds]
    return specs


default_eval_every = spec_defaults.default_eval_every
default_warmup = spec_defaults.default_warmup


def parse_ints(text: str, field: str, limit: int = 5, lo: int = 0, hi: int = 10**9) -> list[int]:
    """'0, 1, 2' -> [0, 1, 2] (distinct, in order); ValueError naming ``field`` and the rule otherwise."""
    parts = [p for p in re.split(r"[\s,]+", text.strip()) if p]
    if not parts or not all(p.isascii() and p.isdigit() and len(p) <= 9 for p in parts):
        raise ValueError(f"{field} must be whole numbers separated by commas, e.g. 0, 1, 2")
    values = list(dict.fromkeys(int(p) for p in parts))
    if len(values) > limit:
        raise ValueError(f"{field}: at most {limit} different values, got {len(values)}")
    if bad := [v for v in values if not lo <= v <= hi]:
        raise ValueError(f"{field} must be between {lo:,} and {hi:,}, got {bad[0]:,}")
    return values


def parse_seeds(text: str) -> list[int]:
    return parse_ints(text, "seeds", limit=5, hi=2**31 - 1)


# ----------------------------------------------------------------------------- URL
def parse_run_ids(raw: str | None) -> tuple[list[str], list[str]]:
    """Run ids from the URL value ``run`` (comma separated): the valid ones and plain-text problems."""
    if not raw:
        return [], []
    ids, problems = [], []
    for part in raw.split(",")[:MAX_URL_RUNS]:
        part = part.strip()
        if RUN_ID.fullmatch(part):
            ids.append(part)
        elif part:
            problems.append(f"URL value run={part[:24]!r} is not a run id")
    return list(dict.fromkeys(ids)), problems


def format_run_ids(ids: Iterable[str]) -> str:
    return ",".join(list(dict.fromkeys(ids))[-MAX_URL_RUNS:])


# ----------------------------------------------------------------------------- runs table
@dataclass(frozen=True)
class RunRow:
    """One run as the table shows it (from a worker status or a shipped reference result)."""

    run_id: str
    label: str
    spec: RunSpec
    state: str
    history: pd.DataFrame
    final: Mapping[str, float]
    params: int
    flops_per_step: int
    baselines: Baselines | None = None  # of the held-out batches it is scored on (None: not known yet)
    probe: Any = None  # its downstream probe's ProbeResult (albert_core.lab.probe), None when not probed


def measured_step_ms(history: pd.DataFrame) -> float:
    """Median wall time of one training step from the history's logged rows (ms), NaN before two rows."""
    h = history[history["step"] > 0][["step", "elapsed_s"]].dropna()
    if len(h) < 2:
        return math.nan
    per_step = h["elapsed_s"].diff() / h["step"].diff()
    return float(per_step.iloc[1:].median() * 1e3)


METRIC_COLUMNS = ("train_mlm_loss", "val_mlm_loss", "val_mlm_acc", "val_order_acc", "val_order_ones")


def latest(history: pd.DataFrame) -> dict[str, float]:
    """A running run's latest values: the last logged value of each metric, tokens, steps, seconds."""
    if not len(history):
        return {}
    out = {c: float(history[c].dropna().iloc[-1]) if c in history and history[c].notna().any() else math.nan
           for c in METRIC_COLUMNS}
    last = history.iloc[-1]
    return {**out, "steps": int(last["step"]), "tokens": int(last["tokens"]), "seconds": float(last["elapsed_s"])}


def runs_frame(rows: Sequence[RunRow]) -> pd.DataFrame:
    """The runs table: config, params, FLOPs/step, measured step time, steps, tokens, final losses
    and accuracies, seconds, seed, state (one row per run; an unfinished run shows its latest values)."""
    out = []
    for r in rows:
        f, spec = dict(r.final or latest(r.history)), r.spec
        out.append({
            "run": r.label,
            "config": spec.config.label,
            "task": spec.task,
            "seed": spec.seed,
            "params": r.params,
            "train_flops_per_step": r.flops_per_step,
            "flops_per_step": fmt_flops(r.flops_per_step),
            "step_ms": measured_step_ms(r.history),
            "steps": int(f.get("steps", 0)),
            "tokens": int(f.get("tokens", 0)),
            **{c: f.get(c, math.nan) for c in METRIC_COLUMNS},
            **best_columns(r.history),
            **probe_columns(r.probe),
            **baseline_columns(r, f),
            "seconds": f.get("seconds", math.nan),
            "state": r.state,
            "run_id": r.run_id,
        })
    return pd.DataFrame(out, columns=RUNS_COLUMNS)


# the results first (what a reader compares), then the baselines, then what the run cost, then what it was
RUNS_COLUMNS = ["run", "seed", "state", "val_mlm_loss", "best_val_mlm_loss", "vs_frequency", "below_frequency",
                "mlm_verdict", "val_mlm_acc", "val_order_acc", "best_val_order_acc", "order_verdict",
                "probe_pct", "probe_scratch_pct",  # the downstream probe's (blank when not probed)
                "frequency_loss", "neighbour_loss", "frequency_acc", "val_order_ones", "train_mlm_loss",
                "params", "train_flops_per_step", "flops_per_step", "step_ms", "steps", "tokens", "seconds",
                "config", "task", "run_id"]
KEY_COLUMNS = ("run", "seed", "state", "val_mlm_loss", "vs_frequency", "mlm_verdict")  # always shown
# columns of words for people beside the number they are made from: the page shows the words, the CSV the number
WORD_COLUMNS = {"vs_frequency": "below_frequency", "flops_per_step": "train_flops_per_step"}
# the CSV's names of the numeric columns that have a unit (losses in nats per masked piece)
CSV_NAMES = {"val_mlm_loss": "val_mlm_loss_nats", "best_val_mlm_loss": "best_val_mlm_loss_nats",
             "below_frequency": "below_frequency_nats", "frequency_loss": "frequency_loss_nats",
             "neighbour_loss": "neighbour_loss_nats", "train_mlm_loss": "train_mlm_loss_nats",
             "train_flops_per_step": "training_flop_per_step",
             "probe_pct": "downstream_dev_accuracy_percent", "probe_scratch_pct": "from_scratch_dev_accuracy_percent"}
PROBE_COLUMNS = ("probe_pct", "probe_scratch_pct")


def runs_csv(df: pd.DataFrame) -> str:
    """The runs table as CSV: numbers only in the numeric columns (the words made from them are left out), each
    unit in its column's name (nats, FLOP, ms, seconds)."""
    return df.drop(columns=[c for c in WORD_COLUMNS if c in df]).rename(columns=CSV_NAMES).to_csv(index=False)


def best_columns(history: pd.DataFrame) -> dict[str, float]:
    """The best evaluation so far: the lowest validation MLM loss and the highest sentence-task accuracy."""
    def best(column: str, how: Callable[[list[float]], float]) -> float:
        values = history[column].dropna().tolist() if column in history else []
        return float(how(values)) if values else math.nan

    return {"best_val_mlm_loss": best("val_mlm_loss", min), "best_val_order_acc": best("val_order_acc", max)}


def probe_columns(probe: Any) -> dict[str, float]:
    """A probed run's downstream accuracies in percent (the means over its fine-tuning seeds): its encoder's and
    the same model's from scratch; NaN when not probed."""
    if probe is None:
        return {"probe_pct": math.nan, "probe_scratch_pct": math.nan}
    return {"probe_pct": 100 * probe.pretrained_mean, "probe_scratch_pct": 100 * probe.scratch_mean}


def probe_frame(probe: Any) -> pd.DataFrame:
    """A run's downstream probe as a table, in percent: its encoder and the same model from scratch (one column
    per fine-tuning seed and their mean), the bag-of-words regression and the majority class (no seed: one
    value, in the mean's column)."""
    seeds = [f"seed {s}" for s in probe.seeds]
    rows = [{"model": "pretrained (this run)", **dict(zip(seeds, probe.pretrained, strict=False)),
             "mean": probe.pretrained_mean},
            {"model": "same model from scratch", **dict(zip(seeds, probe.scratch, strict=False)),
             "mean": probe.scratch_mean},
            {"model": "bag-of-words", "mean": probe.bag_of_words},
            {"model": "majority class", "mean": probe.majority}]
    df = pd.DataFrame(rows, columns=["model", *seeds, "mean"])
    df[[*seeds, "mean"]] = df[[*seeds, "mean"]].astype(float) * 100
    return df


def variant_probes(results: Sequence[Any]) -> pd.DataFrame | None:
    """One row per variant (label) of an experiment's runs: its runs, the mean validation MLM loss, and, over its
    probed runs, the mean downstream accuracy (percent) of its encoders and of the same model from scratch.
    None when no run was probed."""
    if not any(r.probe is not None for r in results):
        return None
    rows = []
    for label in dict.fromkeys(r.spec.label for r in results):
        runs = [r for r in results if r.spec.label == label]
        probed = [r.probe for r in runs if r.probe is not None]
        losses = [r.final["val_mlm_loss"] for r in runs if r.final.get("val_mlm_loss") is not None]
        rows.append({"variant": label, "runs": len(runs), "probed": len(probed),
                     "val_mlm_loss": sum(losses) / len(losses) if losses else math.nan,
                     "probe_pct": 100 * sum(p.pretrained_mean for p in probed) / len(probed) if probed else math.nan,
                     "probe_scratch_pct": (100 * sum(p.scratch_mean for p in probed) / len(probed) if probed
                                           else math.nan)})
    return pd.DataFrame(rows)


def probe_note(probe: Any) -> str:
    """What the downstream numbers are, in one line: the data, the fine-tuning seeds and the baselines."""
    from albert_core.lab.probe import DATA_NAME

    return (f"Downstream: dev accuracy on {probe.dev_sentences:,} held-out sentences of {DATA_NAME} after "
            f"fine-tuning each encoder, and the same model from scratch, with {len(probe.seeds)} seeds (the mean "
            f"over them and over the variant's probed runs). On the same sentences a bag-of-words regression "
            f"scores {100 * probe.bag_of_words:.1f} % and the majority class {100 * probe.majority:.1f} %.")


def differing_columns(df: pd.DataFrame) -> list[str]:
    """The columns worth showing in a hyperparameter view: the key columns and every column whose value
    is not the same in every row (empty cells count as one value)."""
    return [c for c in df.columns if c in KEY_COLUMNS or df[c].astype(str).nunique(dropna=False) > 1]


def baseline_columns(r: RunRow, f: Mapping[str, float]) -> dict[str, object]:
    """The run's baselines beside its results: frequency-only and neighbour MLM loss, how far below the
    frequency-only loss it is (nats; positive = better), the verdicts in words."""
    b = r.baselines
    loss = f.get("val_mlm_loss", math.nan)
    order = f.get("val_order_acc", math.nan)
    if b is None:
        return {"frequency_loss": math.nan, "below_frequency": math.nan, "vs_frequency": "", "neighbour_loss": math.nan,
                "mlm_verdict": "", "frequency_acc": math.nan, "order_verdict": ""}
    majority = b.order_majority if b.order_majority is not None else 0.5
    return {
        "frequency_loss": b.frequency_loss,
        "below_frequency": b.frequency_loss - loss if math.isfinite(loss) else math.nan,
        "vs_frequency": fmt_nat_gap([b.frequency_loss - loss]) if math.isfinite(loss) else "",
        "neighbour_loss": b.neighbour_loss,
        "mlm_verdict": mlm_verdict(loss, b) if math.isfinite(loss) else "",
        "frequency_acc": b.frequency_acc,
        "order_verdict": (order_verdict(order, f.get("val_order_ones", math.nan), majority)
                          if r.spec.task != "none" and math.isfinite(order) else ""),
    }


def rows_by_label(rows: Sequence[RunRow]) -> dict[str, list[RunRow]]:
    """Runs grouped by label (the seeds of one variant together), in first-seen order."""
    out: dict[str, list[RunRow]] = {}
    for r in rows:
        out.setdefault(r.label, []).append(r)
    return out


def groups_of(rows: Sequence[RunRow]) -> dict[str, list[pd.DataFrame]]:
    """Histories grouped by run label: what `figures_train.curves_figure` draws."""
    return {label: [r.history for r in group] for label, group in rows_by_label(rows).items()}


def separation(a: Sequence[pd.DataFrame], b: Sequence[pd.DataFrame], column: str, name_a: str,
               name_b: str) -> Separation:
    """`albert_core.lab.experiments.separation_step` of two runs, with the reason when there is none."""
    if min(len(a), len(b)) < findings.MIN_SEEDS:
        return Separation(name_a, name_b, None, findings.not_separated(len(a), len(b)))
    step = experiments.separation_step(a, b, column)
    return Separation(name_a, name_b, step, "" if step is not None else findings.not_separated(len(a), len(b)))


def learning_summary(rows: Sequence[RunRow]) -> list[str]:
    """One plain line per run label: how far its held-out MLM loss is below the frequency-only model (seed
    range), whether that is context or frequencies only, and whether its sentence task was learned."""
    lines = []
    for label, group in rows_by_label(rows).items():
        cols = [baseline_columns(r, dict(r.final or latest(r.history))) for r in group]
        gaps = [c["below_frequency"] for c in cols if isinstance(c["below_frequency"], float)
                and math.isfinite(c["below_frequency"])]
        if not gaps:
            continue
        verdicts = sorted({c["mlm_verdict"] for c in cols if c["mlm_verdict"]})
        line = f"{label}: {fmt_nat_gap(gaps, 'the frequency-only model')} ({', '.join(verdicts)})"
        order = sorted({c["order_verdict"] for c in cols if c["order_verdict"]})
        if order:
            task = group[0].spec.task.upper()
            line += f"; {task} {' / '.join(order)}"
        lines.append(line)
    return lines
