"""What ALBERT's ideas cost a trained encoder, measured: every post-hoc variant of MiniLM
(`albert_core.live.posthoc`) against the original on the same held-out sentences, beside the baselines.

Data: the downstream probe's Rotten Tomatoes sentences and their split (`albert_core.lab.probe`): every dev sentence
(1,694) is scored; the regressions are fitted on ``n_train`` train sentences drawn with each seed of
``train_seeds`` (a subsample, to keep the grid within about 20 CPU-minutes on one thread; said in the file).

- **Fidelity**: per dev sentence, the cosine between the variant's and the original's mean-pooled sentence
  embeddings (MiniLM's own pooling); its mean with a bootstrap interval. Baseline: the original's cosine between
  unrelated dev sentences (each with a seeded random other one): a variant at that level has lost the sentence.
- **Downstream accuracy**: frozen mean-pooled features, standardized on the train sentences, and a logistic
  regression (L2 strength chosen by 5-fold cross-validation on the train sentences, L-BFGS from zeros: no randomness
  but the train sample), scored on the dev sentences; per train seed and averaged. Beside it, on the same dev
  sentences: the original's own accuracy, the probe's bag-of-words regression fitted on the same train sentences
  (its code, `probe._vocabulary` / `_fit_logistic`), the shipped full-train bag-of-words figure, and the majority
  class.
- **Rule**: a paired bootstrap over the same dev sentences (``bootstrap`` resamples, seeded, the same resamples for
  every comparison), on each sentence's correctness averaged over the train seeds. A variant **costs quality**
  when the 95 % interval of its accuracy minus the original's lies below zero, **gains** when above, and is **not
  distinguishable** otherwise; the effect, the interval and the two-sided bootstrap p-value (twice the smaller
  share of resampled differences on either side of zero) are given.

`run_grid` returns the JSON document the page and the CLI show (`posthoc_reference.write_grid` writes it to
`GRID_FILE`: `make albertize-real`; `load_grid` reads it).
"""

from __future__ import annotations

import os
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from albert_core.counting.posthoc import Variant, grid_variants, posthoc_flops, posthoc_total
from albert_core.lab import probe

FLOPS_SEQ = 128  # FLOPs are stated per sequence of this many tokens
CLAIM_MARGIN = 0.01  # "costs little": at most one accuracy point lost (the paper's E = 128 lost 0.6 on its average)


@dataclass(frozen=True)
class GridSettings:
    n_train: int = 1500  # train sentences per seed for the regressions
    train_seeds: tuple[int, ...] = (0, 1)
    bootstrap: int = 2000
    bootstrap_seed: int = 0
    batch: int = 64
    l2_grid: tuple[float, ...] = (1e-4, 1e-3, 1e-2, 1e-1)
    folds: int = 5
    n_dev: int | None = None  # None: every dev sentence


# ----------------------------------------------------------------------------- data
@dataclass(frozen=True)
class Split:
    dev: tuple[int, ...]  # indices into the probe's dev sentences
    train: dict[int, tuple[int, ...]]  # seed -> indices into the probe's train sentences
    union: tuple[int, ...]  # every train index used by some seed, sorted


def make_split(s: GridSettings) -> Split:
    data = probe.sentences()
    n_dev = len(data.dev_texts)
    dev = tuple(range(n_dev)) if s.n_dev is None else tuple(sorted(random.Random(0).sample(range(n_dev), s.n_dev)))
    train = {seed: tuple(sorted(random.Random(seed).sample(range(len(data.train_texts)), s.n_train)))
             for seed in s.train_seeds}
    return Split(dev, train, tuple(sorted(set().union(*train.values()))))


class Stopped(Exception):
    """Raised inside `run_grid` when its ``should_stop`` said so (a visitor's job cancelled or unwatched)."""


@torch.no_grad()
def sentence_features(model: torch.nn.Module, rows: Sequence[list[int]], batch: int,
                      should_stop: Callable[[], bool] | None = None) -> torch.Tensor:
    """Mean-pooled last hidden states (N, H) of the tokenized sentences ``rows``, in their order; `Stopped` between
    two batches when ``should_stop()`` says so."""
    from albert_core.live.minilm import length_batches, mean_pool

    out = torch.empty(len(rows), model.config.hidden_size)
    for b in length_batches(rows, batch):
        if should_stop is not None and should_stop():
            raise Stopped
        h = model(**b.inputs()).last_hidden_state
        out[list(b.rows)] = mean_pool(h, b.attention_mask)
    return out


# ----------------------------------------------------------------------------- the regressions
def fit_dense_logistic(X: torch.Tensor, y: torch.Tensor, l2: float) -> tuple[torch.Tensor, torch.Tensor]:
    """Weights and bias of a binary logistic regression on dense features, fitted to convergence with L-BFGS from
    zeros (deterministic), the L2 penalty on the weights only (the probe's bag-of-words recipe)."""
    w = torch.zeros(X.shape[1], dtype=X.dtype, requires_grad=True)
    b = torch.zeros((), dtype=X.dtype, requires_grad=True)
    opt = torch.optim.LBFGS([w, b], lr=1.0, max_iter=500, tolerance_grad=1e-7, line_search_fn="strong_wolfe")
    target = y.to(X.dtype)

    def closure():
        opt.zero_grad()
        loss = F.binary_cross_entropy_with_logits(X @ w + b, target) + l2 * w.pow(2).sum()
        loss.backward()
        return loss

    with torch.enable_grad():
        opt.step(closure)
    return w.detach(), b.detach()


def dense_probe(X_train: torch.Tensor, y_train: torch.Tensor, X_dev: torch.Tensor, s: GridSettings
                ) -> tuple[np.ndarray, float]:
    """Dev predictions (0/1) of the logistic regression on standardized features (train mean and deviation), its L2
    strength chosen by ``s.folds``-fold cross-validation on the train rows; and that strength."""
    Xtr, Xdev = X_train.double(), X_dev.double()
    mu, sd = Xtr.mean(0), Xtr.std(0).clamp(min=1e-12)
    Xtr, Xdev = (Xtr - mu) / sd, (Xdev - mu) / sd
    n = len(Xtr)
    fold = torch.arange(n) % s.folds
    best = (-1.0, s.l2_grid[0])
    for l2 in s.l2_grid:
        right = 0
        for k in range(s.folds):
            w, b = fit_dense_logistic(Xtr[fold != k], y_train[fold != k], l2)
            right += int((((Xtr[fold == k] @ w + b) > 0).long() == y_train[fold == k]).sum())
        if right / n > best[0]:
            best = (right / n, l2)
    w, b = fit_dense_logistic(Xtr, y_train, best[1])
    return ((Xdev @ w + b) > 0).long().numpy(), best[1]


def bag_of_words_probe(train_texts: Sequence[str], train_labels: Sequence[int], dev_texts: Sequence[str]
                       ) -> np.ndarray:
    """Dev predictions of the probe's bag-of-words regression (its features, L2 grid and cross-validation) fitted on
    these train sentences."""
    n = len(train_texts)
    folds = [i % probe.BOW_FOLDS for i in range(n)]
    best = (-1.0, probe.BOW_L2_GRID[0])
    for l2 in probe.BOW_L2_GRID:
        right = 0
        for k in range(probe.BOW_FOLDS):
            fit = [i for i in range(n) if folds[i] != k]
            held = [i for i in range(n) if folds[i] == k]
            index = probe._vocabulary([train_texts[i] for i in fit])
            model = probe._fit_logistic(probe._bags([train_texts[i] for i in fit], index),
                                        torch.tensor([train_labels[i] for i in fit]), len(index), l2)
            pred = probe._predict(model, probe._bags([train_texts[i] for i in held], index))
            right += int((pred == torch.tensor([train_labels[i] for i in held])).sum())
        if right / n > best[0]:
            best = (right / n, l2)
    index = probe._vocabulary(train_texts)
    model = probe._fit_logistic(probe._bags(train_texts, index), torch.tensor(list(train_labels)), len(index),
                                best[1])
    return probe._predict(model, probe._bags(dev_texts, index)).numpy()


# ----------------------------------------------------------------------------- the paired bootstrap
def resamples(n: int, s: GridSettings) -> np.ndarray:
    """(bootstrap, n) indices of the dev sentences, the same for every comparison of a grid."""
    return np.random.default_rng(s.bootstrap_seed).integers(0, n, size=(s.bootstrap, n))


def interval(values: np.ndarray, boot: np.ndarray) -> dict[str, float]:
    """The mean of per-sentence ``values`` with its 95 % percentile bootstrap interval."""
    means = values[boot].mean(1)
    lo, hi = np.percentile(means, [2.5, 97.5])
    return {"mean": float(values.mean()), "low": float(lo), "high": float(hi)}


def paired(a: np.ndarray, b: np.ndarray, boot: np.ndarray, margin: float = 0.0) -> dict[str, float]:
    """The mean of a - b - margin over the same sentences, its 95 % interval and two-sided bootstrap p-value."""
    diff = a - b - margin
    means = diff[boot].mean(1)
    lo, hi = np.percentile(means, [2.5, 97.5])
    p = min(1.0, 2 * min(float((means <= 0).mean()), float((means >= 0).mean())))
    return {"effect": float(diff.mean()), "low": float(lo), "high": float(hi), "p": p}


def verdict(test: dict[str, float]) -> str:
    """'costs quality' (interval below zero), 'gains' (above) or 'not distinguishable'."""
    if test["high"] < 0:
        return "costs quality"
    if test["low"] > 0:
        return "gains"
    return "not distinguishable"


def claim_word(test: dict[str, float], agree_when_above: bool) -> str:
    """'agrees' when the interval lies on the side the claim predicts, 'disagrees' on the other, else 'not
    separated'."""
    if test["low"] > 0:
        return "agrees" if agree_when_above else "disagrees"
    if test["high"] < 0:
        return "disagrees" if agree_when_above else "agrees"
    return "not separated"


# ----------------------------------------------------------------------------- the grid
def environment() -> dict[str, Any]:
    from albert_core.lab.checkpoint import environment as run_environment

    return {**run_environment(), "cores": os.cpu_count()}


def run_grid(variants: Sequence[Variant] | None = None, s: GridSettings | None = None, *,
             log: Callable[[str], Any] = print, budget_bytes: int | None = None,
             should_stop: Callable[[], bool] | None = None,
             on_progress: Callable[[int, int], Any] | None = None) -> dict[str, Any]:
    """Measure every variant (default: `grid_variants()`, the original always first) and return the grid's JSON
    document. ``should_stop()`` is asked between batches of sentences (`Stopped` when it says so);
    ``on_progress(done, total)`` counts the variants' two feature passes (dev and train sentences)."""
    from albert_core.live.minilm import (
        DISTRIBUTION,
        LABEL,
        PARAMETERS,
        VERSION,
        WEIGHTS_SHA256,
        encode_sentences,
        load_minilm,
    )
    from albert_core.live.posthoc import PosthocWeights, build_variant

    s = s or GridSettings()
    variants = list(grid_variants() if variants is None else variants)
    if Variant() not in variants:
        variants.insert(0, Variant())
    t0, c0, load0 = time.perf_counter(), time.process_time(), os.getloadavg()
    data = probe.sentences()
    split = make_split(s)
    dev_rows = encode_sentences([data.dev_texts[i] for i in split.dev])
    train_rows = encode_sentences([data.train_texts[i] for i in split.union])
    where = {t: j for j, t in enumerate(split.union)}
    y_dev = np.array([data.dev_labels[i] for i in split.dev])
    y_train = {seed: torch.tensor([data.train_labels[i] for i in idx]) for seed, idx in split.train.items()}
    boot = resamples(len(split.dev), s)
    original = load_minilm(batch=s.batch, seq_len=128, budget_bytes=budget_bytes)
    cfg = original.config
    weights = PosthocWeights.of(original)
    del original

    # baselines on the same dev sentences
    train_labels = list(data.train_labels)
    majority_label = int(sum(train_labels) * 2 > len(train_labels))
    majority = (y_dev == majority_label).astype(float)
    bow = {seed: (bag_of_words_probe([data.train_texts[i] for i in idx], [train_labels[i] for i in idx],
                                     [data.dev_texts[i] for i in split.dev]) == y_dev).astype(float)
           for seed, idx in split.train.items()}
    bow_mean = np.mean([bow[seed] for seed in s.train_seeds], axis=0)
    log(f"baselines: majority {majority.mean():.4f}, bag-of-words {bow_mean.mean():.4f}")

    rows: dict[str, dict[str, Any]] = {}
    correct: dict[str, np.ndarray] = {}
    ref_dev: torch.Tensor | None = None
    loads: list[float] = []  # the 1-minute load average after each variant
    for n, v in enumerate(variants):
        c, w0 = time.process_time(), time.perf_counter()
        model = build_variant(weights, v, budget_bytes=budget_bytes)
        f_dev = sentence_features(model, dev_rows, s.batch, should_stop)
        if on_progress is not None:
            on_progress(2 * n + 1, 2 * len(variants))
        f_train = sentence_features(model, train_rows, s.batch, should_stop)
        if on_progress is not None:
            on_progress(2 * n + 2, 2 * len(variants))
        del model
        if v.is_original:
            ref_dev = f_dev
        cos = F.cosine_similarity(f_dev, ref_dev, dim=-1).double().numpy()
        per_seed, l2s, hits = [], [], []
        for seed, idx in split.train.items():
            pred, l2 = dense_probe(f_train[[where[i] for i in idx]], y_train[seed], f_dev, s)
            hit = (pred == y_dev).astype(float)
            hits.append(hit)
            per_seed.append(float(hit.mean()))
            l2s.append(l2)
        correct[v.key] = np.mean(hits, axis=0)
        flops = posthoc_flops(cfg, v, 1, FLOPS_SEQ)
        rows[v.key] = {
            "key": v.key, "label": v.label, "embedding_size": v.embedding_size, "shared": v.shared, "rank": v.rank,
            "parameters": posthoc_total(cfg, v), "params_kept": posthoc_total(cfg, v) / PARAMETERS,
            "flops_per_sequence": flops.total, "flops_extra_share": flops.extra_share,
            "fidelity": {**interval(cos, boot), "p05": float(np.percentile(cos, 5))},
            "accuracy": {**interval(correct[v.key], boot), "per_seed": per_seed, "l2": l2s},
            "cpu_seconds": time.process_time() - c,
        }
        loads.append(os.getloadavg()[0])
        log(f"[{n + 1}/{len(variants)}] {v.key}: fidelity {cos.mean():.4f}, accuracy {np.mean(per_seed):.4f} "
            f"({time.process_time() - c:.0f} CPU-s, {time.perf_counter() - w0:.0f} s)")
    assert ref_dev is not None
    orig = correct["original"]
    for key, row in rows.items():
        if key != "original":
            row["vs_original"] = {**paired(correct[key], orig, boot)}
            row["vs_original"]["verdict"] = verdict(row["vs_original"])
        row["vs_bag_of_words"] = {**paired(correct[key], bow_mean, boot)}
        row["vs_bag_of_words"]["verdict"] = verdict(row["vs_bag_of_words"])
        row["vs_majority"] = {**paired(correct[key], majority, boot)}
        row["vs_majority"]["verdict"] = verdict(row["vs_majority"])
    unrelated = _unrelated_cosine(ref_dev, boot)
    doc = {
        "what": "ALBERT's ideas applied post hoc to a trained BERT (all-MiniLM-L6-v2): each variant against the "
                "original on the probe's held-out movie-review sentences, beside the baselines",
        "model": {"label": LABEL, "package": f"{DISTRIBUTION}=={VERSION}", "sha256": WEIGHTS_SHA256,
                  "parameters": PARAMETERS},
        "data": {**probe.data_fingerprint(), "dev_scored": len(split.dev), "train_per_seed": s.n_train,
                 "train_seeds": list(s.train_seeds), "train_encoded": len(split.union),
                 "subsample": f"every dev sentence is scored; the regressions are fitted on {s.n_train:,} of the "
                              f"{len(data.train_texts):,} train sentences per seed (to keep the grid within about "
                              "20 CPU-minutes on one thread)"},
        "settings": {**asdict(s), "flops_seq_len": FLOPS_SEQ, "claim_margin": CLAIM_MARGIN},
        "protocol": {
            "fidelity": "cosine between the variant's and the original's mean-pooled sentence embeddings, per dev "
                        "sentence; mean with a 95 % bootstrap interval, and its 5th percentile",
            "accuracy": "frozen mean-pooled features, standardized on the train sentences; logistic regression, L2 "
                        "by 5-fold cross-validation on the train sentences, L-BFGS from zeros; dev accuracy per "
                        "train seed and averaged",
            "rule": "paired bootstrap over the same dev sentences (correctness averaged over the train seeds): "
                    "'costs quality' when the 95 % interval of (variant - original) lies below 0, 'gains' above, "
                    "else 'not distinguishable'; two-sided bootstrap p-value",
            "no_training": "post hoc: no weight is trained after the SVD and the averaging (no uptraining, no "
                           "distillation); the papers pretrain (ALBERT) or uptrain (Relaxed Recursive "
                           "Transformers) after tying",
        },
        "baselines": {
            "majority": interval(majority, boot) | {"label": majority_label},
            "bag_of_words": interval(bow_mean, boot) | {"per_seed": [float(bow[x].mean()) for x in s.train_seeds]},
            "bag_of_words_full_train": probe.bag_of_words().accuracy,
            "unrelated_cosine": unrelated,
        },
        "variants": [rows[v.key] for v in variants],
        "claims": claims(rows, correct, boot),
        "environment": environment(),
        "threads": torch.get_num_threads(),
        "load_average": {"start": list(load0), "end": list(os.getloadavg()),
                         "during": {"mean": float(np.mean(loads)), "min": min(loads), "max": max(loads)},
                         "note": "1-, 5- and 15-minute load averages of the machine (2 cores, shared with other "
                                 "work); the grid ran at nice 19 on one thread"},
        "seconds": {"wall": time.perf_counter() - t0, "cpu": time.process_time() - c0},
        "command": "nice -n 19 env OMP_NUM_THREADS=1 python -m albert_core albertize-real --grid",
    }
    return doc


def _unrelated_cosine(f: torch.Tensor, boot: np.ndarray) -> dict[str, float]:
    """The original's cosine between each dev sentence and a seeded random other one (no sentence with itself)."""
    n = len(f)
    shift = np.random.default_rng(0).integers(1, n, size=n)
    other = torch.from_numpy((np.arange(n) + shift) % n)
    return interval(F.cosine_similarity(f, f[other], dim=-1).double().numpy(), boot)


def claims(rows: dict[str, dict[str, Any]], correct: dict[str, np.ndarray], boot: np.ndarray) -> list[dict[str, Any]]:
    """The papers' claims beside what was measured, each with its test and 'agrees' / 'disagrees' / 'not
    separated' (`claim_word`)."""
    out = []
    orig = correct["original"]
    if "E128" in correct:
        test = paired(correct["E128"], orig, boot, margin=-CLAIM_MARGIN)  # E128 - original + 1 point
        out.append({"key": "factorization", "source": "ALBERT (ICLR 2020), Table 3",
                    "claim": "factorizing the embedding to E = 128 costs little (not-shared ALBERT-base: 82.3 -> "
                             "81.7 average, -0.6 points)",
                    "test": "E = 128 minus the original, plus one point: above zero means at most a point lost",
                    "variants": ["E128", "original"], **test, "word": claim_word(test, agree_when_above=True)})
    if "E128" in correct and "shared" in correct:
        test = paired(correct["shared"], correct["E128"], boot)
        out.append({"key": "sharing", "source": "ALBERT (ICLR 2020), Tables 3-4",
                    "claim": "sharing all layers costs more than factorizing (E = 128: all-shared 80.1 vs not-shared "
                             "81.6 average)",
                    "test": "all layers shared minus E = 128: below zero means sharing costs more",
                    "variants": ["shared", "E128"], **test, "word": claim_word(test, agree_when_above=False)})
    for key in sorted((k for k in correct if k.startswith("shared-r")), key=lambda k: int(k.split("-r")[1])):
        r = int(key.split("-r")[1])
        # recovered more than half of the loss: (acc_r - acc_shared) - (acc_orig - acc_shared) / 2 > 0
        half = 0.5 * (orig + correct["shared"])
        test = paired(correct[key], half, boot)
        lost = rows["original"]["accuracy"]["mean"] - rows["shared"]["accuracy"]["mean"]
        got = rows[key]["accuracy"]["mean"] - rows["shared"]["accuracy"]["mean"]
        out.append({"key": f"relaxed-r{r}", "source": "Relaxed Recursive Transformers (Google DeepMind, ICLR 2025)",
                    "claim": f"a per-layer LoRA (here rank {r}, initialised from the SVD of each layer's difference "
                             "from the shared one) recovers most of what tying loses",
                    "test": f"shared + LoRA r {r} minus the midpoint of shared and the original: above zero means "
                            "more than half of the loss recovered",
                    "variants": [key, "shared", "original"], "recovered_share": got / lost if lost else None,
                    **test, "word": claim_word(test, agree_when_above=True)})
    return out
