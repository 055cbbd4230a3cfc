"""The probe's cheap baselines as measured: naive Bayes beside the bag of words, and both over random splits.

The bag-of-words regression's dev accuracy (`albert_core.lab.probe.bag_of_words`) is the figure of one split of
the 8,530 sentences, the one every model is scored on. How favourable that split is shows only beside the same
procedure on other splits of the same sentences; and the strongest cheap baseline is the one to beat, so a
second classic one stands beside it:

- **Multinomial naive Bayes** (`naive_bayes`) on the bag of words' kind of features: binary word unigrams and
  bigrams (a feature counts once per sentence), every one the train sentences hold (`NB_MIN_COUNT` 1: its
  smoothing copes with the rare ones; at the regression's cut of two sightings it scores about a point less),
  add-one (Laplace) smoothing, class priors from train, nothing tuned. numpy, a few lines.
- **Random splits** (`random_split`): the 8,530 sentences (train and dev of the shipped split, in that order)
  shuffled by a seeded generator (numpy's PCG64, seeds 0, 1, ...), the first 1,694 as dev (the shipped dev
  size), the rest train; both baselines fitted from scratch on each (the regression's L2 strength chosen by
  its 5-fold cross-validation on that split's train sentences, as on the shipped split).

`python -m albert_core finetune --baselines [--splits 20]` (a maintainer's command, about a minute of one CPU
core per split) computes them and writes albert_core/lab/reference/probe_baselines.json with the data's
fingerprint, the seeds, the CPU and the CPU-seconds; `albert_core.lab.probe.measured_baselines` reads it back
when it was computed on the sentences this install reads. Every place that shows the probe's bag-of-words figure
shows these beside it (`albert_core.lab.probe.baselines_words`).
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from albert_core.lab.probe import Sentences

SPLITS = 20
NB_ALPHA = 1.0  # add-one smoothing
NB_MIN_COUNT = 1  # every unigram and bigram of the train sentences


def _vocabulary(texts: Sequence[str], min_count: int) -> dict[str, int]:
    """The features seen in ``min_count`` sentences or more, numbered in sorted order."""
    from albert_core.lab.probe import _features

    counts: dict[str, int] = {}
    for text in texts:
        for f in set(_features(text)):
            counts[f] = counts.get(f, 0) + 1
    return {f: i for i, f in enumerate(sorted(f for f, c in counts.items() if c >= min_count))}


def _bags(texts: Sequence[str], index: dict[str, int]) -> tuple[np.ndarray, np.ndarray]:
    """(feature ids, sentence of each id): the indexed features each sentence holds, each once (the bag of
    words' binary features, kept sparse: 22,270 features x 6,836 sentences would be 600 MB dense)."""
    from albert_core.lab.probe import _features

    ids, rows = [], []
    for row, text in enumerate(texts):
        held = {index[f] for f in _features(text) if f in index}
        ids.extend(held)
        rows.extend([row] * len(held))
    return np.asarray(ids, dtype=np.int64), np.asarray(rows, dtype=np.int64)


def naive_bayes(data: Sentences, alpha: float = NB_ALPHA, min_count: int = NB_MIN_COUNT) -> float:
    """Dev accuracy of multinomial naive Bayes on the bag of words' features of ``data``'s train sentences:
    log p(c) + sum over the sentence's features f of log p(f | c), p(f | c) = (n(f, c) + alpha) / (n(c) + alpha F),
    n(f, c) the train sentences of class c holding f, n(c) their features in all, F the features."""
    index = _vocabulary(data.train_texts, min_count)
    n_features = len(index)
    ids, rows = _bags(data.train_texts, index)
    y = np.asarray(data.train_labels)
    log_prior = np.log(np.bincount(y, minlength=2) / len(y))
    counts = np.stack([np.bincount(ids[y[rows] == c], minlength=n_features) for c in (0, 1)]).astype(np.float64)
    log_like = np.log(counts + alpha) - np.log(counts.sum(axis=1, keepdims=True) + alpha * n_features)  # (2, F)
    dev_ids, dev_rows = _bags(data.dev_texts, index)
    n_dev = len(data.dev_texts)
    scores = np.stack([np.bincount(dev_rows, weights=log_like[c, dev_ids], minlength=n_dev) + log_prior[c]
                       for c in (0, 1)], axis=1)  # (dev sentences, 2)
    return float((scores.argmax(axis=1) == np.asarray(data.dev_labels)).mean())


def random_split(data: Sentences, seed: int) -> Sentences:
    """``data``'s sentences (train then dev) shuffled with ``seed``: the first len(dev) dev, the rest train."""
    from albert_core.lab.probe import Sentences

    texts = data.train_texts + data.dev_texts
    labels = data.train_labels + data.dev_labels
    order = np.random.default_rng(seed).permutation(len(texts))
    n_dev = len(data.dev_texts)
    dev, train = order[:n_dev], order[n_dev:]
    return Sentences(tuple(texts[i] for i in train), tuple(labels[i] for i in train),
                     tuple(texts[i] for i in dev), tuple(labels[i] for i in dev))


def build(splits: int = SPLITS, path: Path | None = None,
          on_split: Callable[[int, int, float, float], object] | None = None) -> Path:
    """Compute the figures (module docstring) on this machine, one torch thread, and write ``path`` (default
    `albert_core.lab.probe.MEASURED_FILE`, which `probe.measured_baselines` reads)."""
    import torch

    from albert_core.lab import probe
    from albert_core.lab.checkpoint import environment

    path = probe.MEASURED_FILE if path is None else path
    torch.set_num_threads(1)
    t0 = time.process_time()
    data = probe.sentences()
    shipped_bow = probe.fit_bag_of_words(data)
    shipped_nb = naive_bayes(data)
    rows = []
    for seed in range(splits):
        split = random_split(data, seed)
        bow, nb = probe.fit_bag_of_words(split), naive_bayes(split)
        rows.append({"seed": seed, "bag_of_words": bow.accuracy, "bag_of_words_l2": bow.l2,
                     "bag_of_words_features": bow.features, "naive_bayes": nb})
        if on_split is not None:
            on_split(seed + 1, splits, bow.accuracy, nb)
    doc = {
        "data": probe.data_fingerprint(),
        "environment": environment(),
        "threads": 1,
        "cpu_seconds": time.process_time() - t0,
        "naive_bayes": {"alpha": NB_ALPHA, "min_count": NB_MIN_COUNT},
        "shipped_split": {"bag_of_words": dataclasses.asdict(shipped_bow), "naive_bayes": shipped_nb},
        "random_splits": {"rule": "numpy default_rng(seed).permutation of train + dev; the first dev-size as dev",
                          "dev_sentences": len(data.dev_texts), "splits": rows},
    }
    path.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    probe.measured_baselines.cache_clear()
    return path
