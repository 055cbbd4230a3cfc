"""The ALBERT paper's experiments in miniature: presets of runs plus their extra measurements.

Each `Experiment` builds its runs from a base config (default `BASE`: a 4-layer ALBERT, H 64,
E 32, 4 heads, I 256, V 512) with ``specs(base, seeds=..., steps=...)``, shows the paper's own figures
(`paper`, with their source; never presented as measured here) and computes what the training curves
alone do not show with ``evaluate(results)``:

- table3 (embedding size E, not-shared and all-shared): final validation MLM loss per variant.
- table4 (cross-layer sharing none / all / attention / ffn): the same.
- table5 (sentence task none / NSP / SOP): every trained model evaluated on both sentence tasks,
  a cross-accuracy matrix (row: trained on, column: evaluated on), plus validation MLM accuracy.
- figure2 (layer smoothness on trained weights): per-layer L2 distance and angle between each
  layer's input and output (`albert_core.live.analysis.layer_smoothness`), BERT twin vs ALBERT.
- depth (depth dial): the trained all-shared model unrolled to L/2, L and 2L layers (only shared
  weights allow it), validation MLM loss at each depth.

Every run of an experiment uses the same tokenizer (Unigram) and masking (n-gram up to 3), so only
the architecture or the task differs between its runs. Several seeds per variant give seed ranges;
`separation_step` finds where two variants' ranges come apart and stay apart.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pandas as pd

from albert_core.configuration.coerce import bert_twin
from albert_core.configuration.config import ModelConfig
from albert_core.lab.findings import MIN_SEEDS
from albert_core.lab.spec import (
    DEFAULT_STEPS,
    EXPERIMENT_NAMES,
    LAB_BASE,
    RUN_DEFAULTS,
    RunSpec,
)
from albert_core.paper import PAPER_SHARING_NAMES, SMOOTHNESS_FIGURE
from albert_core.paper import PAPER_TABLE3 as REF_TABLE3
from albert_core.paper import PAPER_TABLE4 as REF_TABLE4
from albert_core.paper import PAPER_TABLE5 as REF_TABLE5

if TYPE_CHECKING:
    from albert_core.lab.outcome import RunResult
    from albert_core.live.model import EncoderModel

SOURCE = "Lan et al., ALBERT: A Lite BERT for Self-supervised Learning of Language Representations, ICLR 2020"

BASE = LAB_BASE
STEPS = DEFAULT_STEPS
SEEDS = (0, 1)
SMOOTHNESS_ROWS = 16  # held-out pairs Figure 2 is measured on
REFERENCE_STEPS = DEFAULT_STEPS  # the shipped reference runs (`make reference`): the page's own default length
# Table 3 at a vocabulary the downstream probe can read (issue 45): at V 512 most sentiment words are split into
# pieces that 6,836 sentences cannot teach. At V 8,192 the table is V x E + E x H = 8,192 x 32 + 32 x 64 (264k) at
# E 32 against 524k unfactorized, most of the model: the experiment where factorization matters. It pretrains at
# the sequence length the probe fine-tunes at (128 pieces, batch 4: the same 512 pieces a step as the lab's 16 x 32;
# every probe sentence fits in 128 pieces of this tokenizer, 68 % are longer than the lab's 32). Four pretraining
# seeds a variant: with the lab's two, no MLM-loss comparison can reach 5 % (the smallest p of 2 + 2 runs is 0.33;
# of 4 + 4, 0.029).
LARGE_VOCAB = 8192
LARGE_VOCAB_BASE = LAB_BASE.replace(vocab_size=LARGE_VOCAB)
LARGE_VOCAB_RECIPE: Mapping[str, Any] = {"seq_len": 128, "batch_size": 4}


# ----------------------------------------------------------------------------- the paper's figures
# The paper's tables as printed (`albert_core.paper`), as frames; parameter counts in millions.
PAPER_TABLE3 = pd.DataFrame(
    [(PAPER_SHARING_NAMES[mode], e, round(v / 1e6)) for mode in ("none", "all") for e, v in REF_TABLE3[mode].items()],
    columns=["sharing", "E", "params_M"],
)
PAPER_TABLE4 = pd.DataFrame(
    [(e, PAPER_SHARING_NAMES[mode], round(v / 1e6)) for e, row in REF_TABLE4.items() for mode, v in row.items()],
    columns=["E", "sharing", "params_M"],
)
# Table 5: intrinsic (pretraining-task) accuracies in percent; row = trained with, columns = evaluated on.
PAPER_TABLE5 = pd.DataFrame.from_dict(
    {k: dict(v) for k, v in REF_TABLE5.items()}, orient="index"
).rename_axis("trained")


@dataclass(frozen=True)
class Paper:
    """The paper's figures for an experiment: ``source`` (paper, table), ``table`` as printed (or
    None), ``claim``: what the paper reports in words."""

    source: str
    claim: str
    table: pd.DataFrame | None = None


# ----------------------------------------------------------------------------- experiments
@dataclass(frozen=True)
class Experiment:
    name: str
    title: str
    question: str
    paper: Paper
    build: Callable[[ModelConfig], list[tuple[str, dict[str, Any]]]]  # base -> [(variant label, changes)]
    evaluate: Callable[[Sequence[RunResult]], dict[str, Any]]
    metric: str = "val_mlm_loss"
    base: ModelConfig | None = None  # the experiment's own base (default the lab's, `BASE`)
    recipe: Mapping[str, Any] | None = None  # run fields of the experiment's own over RUN_DEFAULTS (seq_len, ...)
    seeds: tuple[int, ...] = SEEDS  # the reference runs' seeds (`specs` without seeds)

    def specs(self, base: ModelConfig | None = None, seeds: Sequence[int] | None = None, steps: int = STEPS,
              **overrides: Any) -> list[RunSpec]:
        """Every run of the experiment: each variant once per seed (default the experiment's `seeds`; variants in
        order, seeds inside)."""
        base = (self.base or BASE) if base is None else base.replace(head="pretraining")
        seeds = self.seeds if seeds is None else seeds
        if not seeds:
            raise ValueError("seeds must hold at least one seed")
        out = []
        for label, changes in self.build(base):
            cfg_changes = changes.get("config", {})
            cfg = _variant(base, **cfg_changes)
            # warmup and evaluations: the recipe's (RunSpec)
            fields = {**RUN_DEFAULTS, "task": "sop", **(self.recipe or {}),
                      **{k: v for k, v in changes.items() if k != "config"}, **overrides}
            for seed in seeds:
                out.append(RunSpec(cfg, steps=steps, seed=int(seed), label=label, **fields))
        return out

    def variants(self, results: Sequence[RunResult]) -> dict[str, list[RunResult]]:
        """Results grouped by variant label, in the order they first appear."""
        groups: dict[str, list[RunResult]] = {}
        for r in results:
            groups.setdefault(r.spec.label, []).append(r)
        return groups


def _variant(base: ModelConfig, **changes: Any) -> ModelConfig:
    if changes.get("family") == "bert":
        return bert_twin(base).replace(**{k: v for k, v in changes.items() if k != "family"})
    if changes.get("sharing") == "none":
        changes.setdefault("num_hidden_groups", 1)
    return base.replace(**changes)


def _sharing_label(sharing: str) -> str:
    from albert_core.configuration.config import SHARING_LABELS

    return SHARING_LABELS[sharing]


def _table3(base: ModelConfig) -> list[tuple[str, dict[str, Any]]]:
    H = base.hidden_size
    sizes = sorted({max(4, H // 4), max(4, H // 2), H})
    return [
        (f"E={e} {_sharing_label(s)}", {"config": {"embedding_size": e, "sharing": s}})
        for s in ("none", "all") for e in sizes
    ]


def _table4(base: ModelConfig) -> list[tuple[str, dict[str, Any]]]:
    return [(_sharing_label(s), {"config": {"sharing": s}}) for s in ("all", "attention", "ffn", "none")]


def _table5(base: ModelConfig) -> list[tuple[str, dict[str, Any]]]:
    names = {"none": "MLM only", "nsp": "NSP", "sop": "SOP"}
    return [(names[t], {"task": t, "config": {"sharing": "all"}}) for t in ("none", "nsp", "sop")]


def _figure2(base: ModelConfig) -> list[tuple[str, dict[str, Any]]]:
    return [
        (f"BERT H={base.hidden_size}", {"config": {"family": "bert"}}),
        ("ALBERT all-shared", {"config": {"sharing": "all"}}),
    ]


def _depth(base: ModelConfig) -> list[tuple[str, dict[str, Any]]]:
    return [("ALBERT all-shared", {"config": {"sharing": "all", "num_hidden_groups": 1, "inner_group_num": 1}})]


# ----------------------------------------------------------------------------- measurements
def summary(results: Sequence[RunResult], column: str = "val_mlm_loss") -> pd.DataFrame:
    """Per variant: params, FLOPs per step, seeds, final ``column`` (mean, min, max over seeds)."""
    from albert_core.counting.flops import count_flops
    from albert_core.counting.params import count_params

    rows = []
    groups: dict[str, list[RunResult]] = {}
    for r in results:
        groups.setdefault(r.spec.label, []).append(r)
    for label, runs in groups.items():
        spec = runs[0].spec
        values = [float(_final_of(r, column)) for r in runs]
        rows.append({
            "variant": label,
            "params": count_params(spec.config).total,
            "flops_per_step": count_flops(spec.config, spec.batch_size, spec.seq_len).training,
            "seeds": len(runs),
            "steps": int(max(r.final.get("steps", 0) for r in runs)),
            "value": sum(values) / len(values),
            "lo": min(values),
            "hi": max(values),
        })
    return pd.DataFrame(rows, columns=["variant", "params", "flops_per_step", "seeds", "steps", "value", "lo", "hi"])


def _final_of(result: RunResult, column: str) -> float:
    if column in result.final:
        return result.final[column]
    evals = result.history.dropna(subset=[column])
    return float(evals[column].iloc[-1]) if len(evals) else math.nan


def separation_step(
    histories_a: Sequence[pd.DataFrame], histories_b: Sequence[pd.DataFrame], column: str = "val_mlm_loss",
    *, min_seeds: int = MIN_SEEDS,
) -> int | None:
    """The first logged step from which the seed ranges (min to max over the histories) of run A and
    run B on ``column`` no longer overlap, at that step and at every later step both logged; None if
    that has not happened (yet). Only steps after 0 where every history has a value count. With fewer than
    ``min_seeds`` histories on a side a range would be a single curve: ValueError."""
    for name, hs in (("histories_a", histories_a), ("histories_b", histories_b)):
        if len(hs) < min_seeds:
            raise ValueError(f"{name} must hold at least {min_seeds} seeds to have a seed range, got {len(hs)}")
    frames = []
    for side, hs in (("a", histories_a), ("b", histories_b)):
        for i, h in enumerate(hs):
            if column not in h.columns:
                raise ValueError(f"column {column!r} is not in the history")
            frames.append(h[["step", column]].dropna().set_index("step")[column].rename(f"{side}{i}"))
    table = pd.concat(frames, axis=1, join="inner").sort_index()
    table = table[table.index > 0]  # at step 0 every run is its initialisation
    if table.empty:
        return None
    a = table[[c for c in table.columns if c.startswith("a")]]
    b = table[[c for c in table.columns if c.startswith("b")]]
    apart = (a.max(axis=1) < b.min(axis=1)) | (b.max(axis=1) < a.min(axis=1))
    if not bool(apart.iloc[-1]):
        return None
    together = apart[~apart]
    after = apart.index if together.empty else apart.index[apart.index > together.index[-1]]
    return int(after[0])


def separations(
    results: Sequence[RunResult], baseline: str | None = None, column: str = "val_mlm_loss"
) -> pd.DataFrame:
    """Each variant against ``baseline`` (default: the first variant): separation step or None (why not:
    `findings.not_separated` of the two seed counts)."""
    groups: dict[str, list[pd.DataFrame]] = {}
    for r in results:
        groups.setdefault(r.spec.label, []).append(r.history)
    if not groups:
        return pd.DataFrame(columns=["a", "b", "step"])
    baseline = baseline or next(iter(groups))
    rows = []
    for label, hs in groups.items():
        if label == baseline:
            continue
        step = (None if min(len(hs), len(groups[baseline])) < MIN_SEEDS
                else separation_step(groups[baseline], hs, column))
        rows.append({"a": baseline, "b": label, "step": step})
    frame = pd.DataFrame(rows, columns=["a", "b", "step"])
    frame["step"] = pd.array(frame["step"].tolist(), dtype="Int64")  # <NA>: not separated (yet)
    return frame


def _model_of(result: RunResult, config: ModelConfig | None = None, batch: int | None = None) -> EncoderModel:
    from albert_core.lab.checkpoint import load_model

    if config is None and getattr(result, "model", None) is not None:
        return result.model
    if result.checkpoint is None:
        raise ValueError(f"run {result.spec.name!r} has no checkpoint to evaluate")
    return load_model(result.checkpoint, config, batch=batch or result.spec.batch_size, seq_len=result.spec.seq_len)


def _evaluate_losses(results: Sequence[RunResult]) -> dict[str, Any]:
    return {"summary": summary(results), "separations": separations(results)}


def cross_accuracy(results: Sequence[RunResult]) -> pd.DataFrame:
    """Table 5: mean order accuracy of each trained model (rows: trained task) on the validation
    batches of each sentence task (columns: nsp, sop), averaged over seeds."""
    from albert_core.lab.trainer import evaluate, validation_batches

    cells: dict[tuple[str, str], list[float]] = {}
    for r in results:
        model = _model_of(r)
        for task in ("nsp", "sop"):
            acc = evaluate(model, validation_batches(r.spec, task=task), task)["val_order_acc"]
            cells.setdefault((r.spec.task, task), []).append(acc)
    trained = [t for t in ("none", "nsp", "sop") if any(k[0] == t for k in cells)]
    matrix = pd.DataFrame(
        [[sum(cells[t, e]) / len(cells[t, e]) for e in ("nsp", "sop")] for t in trained],
        index=pd.Index(trained, name="trained"), columns=["nsp", "sop"],
    )
    return matrix


def _evaluate_table5(results: Sequence[RunResult]) -> dict[str, Any]:
    return {
        "cross_accuracy": cross_accuracy(results),
        "mlm_accuracy": summary(results, "val_mlm_acc"),
        **_evaluate_losses(results),
    }


def smoothness(result: RunResult) -> pd.DataFrame:
    """Figure 2 on the trained weights of ``result``: per-layer L2 distance / cosine / angle between
    each layer's input and output, over the first SMOOTHNESS_ROWS held-out pairs (padding excluded; the
    same pairs for every run of the tokenizer). Layer 1's input is the first encoder layer's input: the
    embeddings for BERT, their E -> H projection for ALBERT, so both sides compare H-wide states."""
    import torch

    from albert_core.lab.trainer import model_inputs, validation_batches
    from albert_core.live.analysis import layer_smoothness

    model = _model_of(result)
    rows = SMOOTHNESS_ROWS
    if model.guard is not None:  # within the input size the model's memory check covered
        rows = min(rows, model.guard.batch * model.guard.seq_len // result.spec.seq_len)
    batch = {k: v[:rows] for k, v in validation_batches(result.spec)[0].items()}
    device = next(model.parameters()).device
    with torch.no_grad():
        out = model(**model_inputs(batch, device), output_hidden_states=True)
    return layer_smoothness(out.hidden_states, batch["attention_mask"])


def _evaluate_figure2(results: Sequence[RunResult]) -> dict[str, Any]:
    frames: dict[str, list[pd.DataFrame]] = {}
    for r in results:
        frames.setdefault(r.spec.label, []).append(smoothness(r))
    mean = {label: pd.concat(fs).groupby("layer", as_index=False).mean() for label, fs in frames.items()}
    return {"smoothness": mean, **_evaluate_losses(results)}


def depth_dial(result: RunResult, depths: Sequence[int] | None = None) -> pd.DataFrame:
    """The trained all-shared weights of ``result`` run at other depths (default L/2, L, 2L):
    validation MLM loss and accuracy at each depth."""
    from albert_core.lab.trainer import evaluate, validation_batches

    cfg = result.spec.config
    if cfg.sharing != "all" or cfg.num_hidden_groups != 1:
        raise ValueError("the depth dial needs an all-shared model with one group (sharing 'all', G = 1)")
    L = cfg.num_layers
    depths = sorted({max(1, L // 2), L, 2 * L}) if depths is None else sorted(set(depths))
    batches = validation_batches(result.spec)
    rows = []
    for d in depths:
        model = _model_of(result, cfg.replace(num_layers=d)) if d != L else _model_of(result)
        m = evaluate(model, batches, "none")
        rows.append({"depth": d, "trained_depth": L,
                     "val_mlm_loss": m["val_mlm_loss"], "val_mlm_acc": m["val_mlm_acc"]})
    return pd.DataFrame(rows)


def _evaluate_depth(results: Sequence[RunResult]) -> dict[str, Any]:
    frames = [depth_dial(r) for r in results]
    table = pd.concat(frames).groupby("depth", as_index=False).agg(
        trained_depth=("trained_depth", "first"), val_mlm_loss=("val_mlm_loss", "mean"),
        lo=("val_mlm_loss", "min"), hi=("val_mlm_loss", "max"), val_mlm_acc=("val_mlm_acc", "mean"),
    )
    return {"depth": table, "summary": summary(results)}


EXPERIMENTS: Mapping[str, Experiment] = {
    "table3": Experiment(
        "table3", "Embedding size E (Table 3)",
        "Does factorizing the embedding (E < H) cost accuracy, with and without sharing?",
        Paper(f"{SOURCE}, Table 3 (ALBERT-base)",
              "Not-shared: a larger E is better, but not by much. All-shared: E = 128 was best. "
              f"Parameters fall from {REF_TABLE3['none'][768] / 1e6:.0f}M (E = 768) to "
              f"{REF_TABLE3['none'][128] / 1e6:.0f}M (E = 128) not-shared, {REF_TABLE3['all'][768] / 1e6:.0f}M to "
              f"{REF_TABLE3['all'][128] / 1e6:.0f}M all-shared.",
              PAPER_TABLE3),
        _table3, _evaluate_losses,
    ),
    "table3-v8192": Experiment(
        "table3-v8192", f"Embedding size E at a readable vocabulary (Table 3, V {LARGE_VOCAB:,})",
        f"At V {LARGE_VOCAB:,} the embedding table is most of the model (at the lab's V 512 it is too small for "
        "factorization to matter): what does factorizing it (E < H) cost, and can the downstream probe read what "
        "pretraining taught?",
        Paper(f"{SOURCE}, Table 3 (ALBERT-base, V 30,000)",
              "Not-shared: a larger E is better, but not by much. All-shared: E = 128 was best. "
              f"Parameters fall from {REF_TABLE3['none'][768] / 1e6:.0f}M (E = 768) to "
              f"{REF_TABLE3['none'][128] / 1e6:.0f}M (E = 128) not-shared, {REF_TABLE3['all'][768] / 1e6:.0f}M to "
              f"{REF_TABLE3['all'][128] / 1e6:.0f}M all-shared.",
              PAPER_TABLE3),
        _table3, _evaluate_losses, base=LARGE_VOCAB_BASE, recipe=LARGE_VOCAB_RECIPE, seeds=(0, 1, 2, 3),
    ),
    "table4": Experiment(
        "table4", "Cross-layer sharing (Table 4)",
        "What does sharing all, attention-only or FFN-only parameters across layers cost?",
        Paper(f"{SOURCE}, Table 4 (ALBERT-base)",
              "Sharing all parameters costs some accuracy, less at E = 128 than at E = 768; most of the drop "
              "comes from sharing the FFN, while sharing attention costs little or nothing.",
              PAPER_TABLE4),
        _table4, _evaluate_losses,
    ),
    "table5": Experiment(
        "table5", "NSP vs SOP (Table 5)",
        "Does next-sentence prediction teach sentence order? Does sentence-order prediction teach NSP?",
        Paper(f"{SOURCE}, Table 5 (intrinsic accuracy, %, ALBERT-base)",
              f"A model trained with NSP solves NSP ({REF_TABLE5['nsp']['NSP']}%) but not SOP "
              f"({REF_TABLE5['nsp']['SOP']}%, chance); one trained with SOP solves SOP ({REF_TABLE5['sop']['SOP']}%) "
              f"and most of NSP ({REF_TABLE5['sop']['NSP']}%). MLM accuracy barely changes.",
              PAPER_TABLE5),
        _table5, _evaluate_table5, metric="val_order_acc",
    ),
    "figure2": Experiment(
        "figure2", "Layer-to-layer smoothness (the paper's Figure 1)",
        "Do shared layers change the hidden state less from layer to layer than unshared ones?",
        Paper(f"{SOURCE}, {SMOOTHNESS_FIGURE} (BERT-large vs ALBERT-large)",
              "Transitions from layer to layer are much smoother for ALBERT than for BERT (smaller L2 distance, "
              "smaller angle); they oscillate rather than converge to 0 even after 24 layers."),
        _figure2, _evaluate_figure2,
    ),
    "depth": Experiment(
        "depth", "Depth dial (shared weights at other depths)",
        "An all-shared model has one layer's weights: run it at L/2, L and 2L layers. How much does the "
        "validation MLM loss change?",
        Paper("this app's own experiment (not in the paper)",
              "Only a shared model can be unrolled to another depth without new weights; the paper trains "
              "each depth separately."),
        _depth, _evaluate_depth,
    ),
}


assert tuple(EXPERIMENTS) == EXPERIMENT_NAMES


def twins(base: ModelConfig, factorized_e: int | None = None) -> dict[str, ModelConfig]:
    """The four twins of ``base``: BERT (E = H, not shared), factorized only (E < H, not shared),
    shared only (E = H, all-shared) and ALBERT (E < H, all-shared); E < H is ``factorized_e`` or
    base's E (H/4 if base's E is H)."""
    base = base.replace(head="pretraining")
    H = base.hidden_size
    e = factorized_e or (base.embedding_size if base.embedding_size < H else max(4, H // 4))
    albert = base if base.family == "albert" else base.replace(family="albert", sharing="all")
    return {
        "BERT": bert_twin(albert),
        "factorized only": albert.replace(embedding_size=e, sharing="none", num_hidden_groups=1),
        "shared only": albert.replace(embedding_size=H, sharing="all", num_hidden_groups=1),
        "ALBERT": albert.replace(embedding_size=e, sharing="all", num_hidden_groups=1),
    }
