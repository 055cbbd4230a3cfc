"""The baselines every lab result is shown beside, scored on the very batches the runs are scored on.

A masked-language model has learned something only when it beats models that know no context:

- **frequency-only**: p(x) = how often piece x occurs in the train split (add-one smoothed over the
  non-special pieces). Its loss is what a model reaches by fitting the output bias alone; its accuracy
  is "always guess the most frequent piece".
- **neighbour**: the masked piece from its visible left and right neighbours, two bigram models of the
  train split combined as p(x | l, r) ~ p(x | l) p(r | x) (each interpolated with the frequency model,
  Dirichlet weight `NEIGHBOUR_PRIOR`); a neighbour that is itself masked, special or missing is left out.
  A model that beats it uses more than the adjacent pieces.

For the sentence tasks the held-out pairs are balanced (`albert_core.lab.examples`), so the majority
class is right half the time; a task counts as learned only at `LEARNED_MARGIN` above that rate with
answers that are not all one class (`order_verdict`). ln V (a uniform guess) is not a baseline: a
model passes it by learning frequencies alone.

Counts come from the train split's documents (each document one token stream) through the lab
tokenizer; nothing here looks at the validation text except the batches being scored.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from albert_core.text.tokenizers import SPECIAL_TOKENS

# Dirichlet weight of the frequency model inside each bigram (pseudo-counts). The product of two bigram
# models counts the neighbours' evidence twice; a large weight tempers it. 100 gave the strongest (lowest
# loss) neighbour model on the lab's held-out pairs of the weights tried (0.5: 5.97 nats, 5: 5.58,
# 20: 5.39, 100: 5.25, 300: 5.25; Unigram V 2,048): the baseline a model must beat is the best of its kind.
NEIGHBOUR_PRIOR = 100.0
LEARNED_MARGIN = 0.05  # a sentence task is learned at the majority rate + 5 points (and a non-constant answer)
MLM_LEARNED_NATS = 0.1  # MLM has learned context only this far below the frequency-only loss
N_SPECIAL = len(SPECIAL_TOKENS)


@dataclass(frozen=True)
class Baselines:
    """The reference levels of one set of validation batches (losses in nats per masked piece)."""

    frequency_loss: float
    frequency_acc: float  # always the most frequent piece
    neighbour_loss: float
    neighbour_acc: float
    masked: int  # masked pieces scored
    order_majority: float | None = None  # the majority-class rate of the balanced sentence pairs
    pairs: int = 0  # sentence pairs scored

    def to_dict(self) -> dict[str, float | int | None]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, float | int | None]) -> Baselines:
        return cls(**{k: data[k] for k in cls.__dataclass_fields__ if k in data})


@dataclass(frozen=True)
class Counts:
    """Unigram and bigram counts of a token stream set, pieces ``0 .. V-1``."""

    vocab_size: int
    unigram: np.ndarray  # (V,) float64
    pair_codes: np.ndarray  # sorted unique codes l * V + r of the observed bigrams (int64)
    pair_counts: np.ndarray  # their counts (float64)

    def row(self, left: int) -> np.ndarray:
        """c(left, x) for every x."""
        V = self.vocab_size
        lo, hi = np.searchsorted(self.pair_codes, [left * V, (left + 1) * V])
        out = np.zeros(V)
        out[self.pair_codes[lo:hi] - left * V] = self.pair_counts[lo:hi]
        return out

    @functools.cached_property
    def _by_right(self) -> tuple[np.ndarray, np.ndarray]:
        V = self.vocab_size
        left, right = np.divmod(self.pair_codes, V)
        codes = right * V + left
        order = np.argsort(codes, kind="stable")
        return codes[order], self.pair_counts[order]

    def column(self, right: int) -> np.ndarray:
        """c(x, right) for every x."""
        V = self.vocab_size
        codes, counts = self._by_right
        lo, hi = np.searchsorted(codes, [right * V, (right + 1) * V])
        out = np.zeros(V)
        out[codes[lo:hi] - right * V] = counts[lo:hi]
        return out


def count_streams(streams: Iterable[Iterable[int]], vocab_size: int) -> Counts:
    """Unigram and adjacent-pair counts over ``streams`` (each a sequence of piece ids)."""
    # pair codes l * V + r fit int32 for every lab vocabulary (V <= 46,340), half the memory of int64; they
    # are sorted in place and run-length counted, which peaks lower than np.unique's copies
    code_type = np.int32 if vocab_size * vocab_size < 2**31 else np.int64
    unigram = np.zeros(vocab_size, dtype=np.int64)
    codes: list[np.ndarray] = []
    for stream in streams:
        ids = np.fromiter(stream, dtype=code_type)
        if ids.size == 0:
            continue
        unigram += np.bincount(ids, minlength=vocab_size)
        if ids.size > 1:
            codes.append(ids[:-1] * vocab_size + ids[1:])
    if not codes:
        return Counts(vocab_size, unigram.astype(np.float64), np.zeros(0, dtype=np.int64), np.zeros(0))
    flat = np.concatenate(codes)
    del codes
    flat.sort()
    starts = np.flatnonzero(np.concatenate(([True], flat[1:] != flat[:-1])))
    pair_counts = np.diff(np.append(starts, flat.size)).astype(np.float64)
    return Counts(vocab_size, unigram.astype(np.float64), flat[starts].astype(np.int64), pair_counts)


@functools.lru_cache(maxsize=4)
def train_counts(kind: str, vocab_size: int) -> Counts:
    """The counts of the lab corpus's train split under the lab tokenizer ``kind`` / ``vocab_size``."""
    from albert_core.lab.examples import encoded_documents

    docs = encoded_documents(kind, vocab_size, "train")
    return count_streams(([t for sentence in doc for t in sentence] for doc in docs), vocab_size)


def frequency_probs(counts: Counts) -> np.ndarray:
    """p(x): add-one smoothed frequencies over the non-special pieces (specials get 0)."""
    c = counts.unigram.copy()
    c[:N_SPECIAL] = 0.0
    c[N_SPECIAL:] += 1.0
    return c / c.sum()


def _visible(token: int) -> bool:
    return token >= N_SPECIAL  # not [PAD], [UNK], [CLS], [SEP] or [MASK]


def neighbour_distribution(
    counts: Counts, left: int | None, right: int | None, p: np.ndarray | None = None
) -> np.ndarray:
    """p(x | l, r) of the neighbour model over every piece (specials 0); ``left`` / ``right`` None when that
    neighbour is not visible (masked, special or missing): then its factor is left out."""
    p = frequency_probs(counts) if p is None else p
    alpha = NEIGHBOUR_PRIOR
    dist = p.copy()
    if left is not None:
        dist = (counts.row(left) + alpha * p) / (counts.unigram[left] + alpha)  # p(x | l)
    if right is not None:
        dist = dist * (counts.column(right) + alpha * p[right]) / (counts.unigram + alpha)  # p(r | x), every x
    dist[:N_SPECIAL] = 0.0
    return dist / dist.sum()


def score(batches: Iterable[Mapping[str, Any]], counts: Counts, order_key: str | None = None) -> Baselines:
    """The baselines on ``batches`` (input_ids, mlm_labels and, with ``order_key``, the sentence labels)."""
    p = frequency_probs(counts)
    log_p = np.log(np.where(p > 0, p, 1.0))
    top = int(np.argmax(p))
    f_loss = n_loss = 0.0
    f_ok = n_ok = masked = pairs = ones = 0
    for batch in batches:
        ids = batch["input_ids"].numpy()
        labels = batch["mlm_labels"].numpy()
        for r, c in zip(*np.nonzero(labels != -100), strict=True):
            x = int(labels[r, c])
            masked += 1
            f_loss -= log_p[x]
            f_ok += x == top
            left = int(ids[r, c - 1]) if c > 0 and labels[r, c - 1] == -100 else -1
            right = int(ids[r, c + 1]) if c + 1 < ids.shape[1] and labels[r, c + 1] == -100 else -1
            dist = neighbour_distribution(counts, left if _visible(left) else None,
                                          right if _visible(right) else None, p)
            n_loss -= math.log(max(dist[x], 1e-300))
            n_ok += int(np.argmax(dist)) == x
        if order_key is not None and order_key in batch:
            labels_o = batch[order_key].numpy()
            pairs += labels_o.size
            ones += int(labels_o.sum())
    n = max(masked, 1)
    majority = max(ones, pairs - ones) / pairs if pairs else None
    return Baselines(float(f_loss / n), f_ok / n, float(n_loss / n), n_ok / n, masked, majority, pairs)


def mlm_verdict(loss: float, baselines: Baselines) -> str:
    """The MLM result in words, from the loss beside both baselines: context learned `MLM_LEARNED_NATS` below
    the frequency-only loss, then "beyond the neighbour model" when the loss is under the neighbour (bigram)
    model's too, else "short of the neighbour model"; "frequencies only" near the frequency-only loss; "not
    yet at the frequency level" above it."""
    if not math.isfinite(loss):
        return "not evaluated"
    gap = baselines.frequency_loss - loss
    if gap >= MLM_LEARNED_NATS:
        if loss < baselines.neighbour_loss:
            return "learned context, beyond the neighbour model"
        return "learned some context, short of the neighbour model"
    if gap >= -MLM_LEARNED_NATS:
        return "frequencies only"
    return "not yet at the frequency level"


def order_verdict(accuracy: float, share_of_ones: float, majority: float = 0.5) -> str:
    """"learned" only at ``majority`` + LEARNED_MARGIN with answers of both classes, else "not learned"."""
    if not (math.isfinite(accuracy) and math.isfinite(share_of_ones)):
        return "not evaluated"
    constant = share_of_ones <= 0.02 or share_of_ones >= 0.98
    return "learned" if accuracy >= majority + LEARNED_MARGIN and not constant else "not learned"

