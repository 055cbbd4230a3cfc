"""Pre-training examples built as BERT's and ALBERT's ``create_pretraining_data.py`` build them.

Instances (one pass over the documents per epoch, in a seeded order): for each document a target length
(``seq_len - 3``, or with probability ``short_seq_prob`` a random length from 2), consecutive sentences
are gathered (`albert_core.text.pretraining_inputs.segment_pairs`, which the Paper page shows on a
visitor's text) into a chunk until it reaches the target, and the chunk is cut at a random sentence
boundary into segment A and segment B. Sentence task:

- ``"sop"`` (ALBERT): with probability 1/2 the two segments are swapped (label 1), else kept (label 0).
  A chunk of a single sentence has no boundary to cut and is left out (ALBERT's code would take B from
  another document there, an NSP negative; the paper's SOP negatives are swaps only).
- ``"nsp"`` (BERT): with probability 1/2 (always for a single-sentence chunk) B is replaced by consecutive
  sentences from a random point of another document (label 1), and the chunk's unused sentences are put
  back; else B follows A (label 0).
- ``"none"``: A and B in order, label 0 (unused).

The pair is trimmed to ``seq_len - 3`` tokens (from the longer segment, at a random end) and laid out as
``[CLS] A [SEP] B [SEP] [PAD]...``. Masking as ALBERT: ``mlm_prob`` of the non-special tokens (rounded,
at least one) in n-gram spans of whole words, n <= ``max_ngram`` with p(n) proportional to 1/n
(`albert_core.text.pretraining_inputs.ngram_spans`); each chosen token becomes [MASK] with probability 0.8, a random
non-special token 0.1, itself 0.1 (training); on the validation split every chosen token is [MASK], so a
held-out score measures what a model infers from context, not the copy of a piece left visible.
Words: a WordPiece "##" piece continues the word before it; a Unigram piece continues it unless it
starts with "▁" or is punctuation (ALBERT's ``_is_start_piece``).
``whole_word=False`` masks single tokens (original BERT, with ``max_ngram=1``).

Every draw comes from generators seeded by (seed, epoch) and (seed, example index), so ``batch(step, B)``
is a pure function of (seed, step, B); the training stream passes over the instances epoch after epoch
(new instances and new masks each epoch, as BERT's dupe_factor does).
"""

from __future__ import annotations

import bisect
import functools
import math
import random
import string
from collections.abc import Sequence

import numpy as np
import torch

from albert_core.checks import check_number, check_whole_number
from albert_core.lab.spec import DEFAULT_MASK_RATE, TASKS  # the one list of sentence tasks
from albert_core.text import corpus as lab_corpus
from albert_core.text import tokenizers as lab_tokenizers
from albert_core.text.pretraining_inputs import Instance, ngram_spans, segment_pairs
from albert_core.text.tokenizers import CLS_ID, MASK_ID, PAD_ID, SEP_ID, SPECIAL_TOKENS

__all__ = ["TASKS", "PretrainingData", "encoded_documents"]

SPLITS = ("train", "validation")
MIN_SEQ_LEN = 8
MAX_NGRAM = 3
_PUNCTUATION = set(string.punctuation)
_MAX_EPOCH_CACHE = 2


@functools.lru_cache(maxsize=4)
def encoded_documents(kind: str, vocab_size: int, split: str) -> tuple[tuple[tuple[int, ...], ...], ...]:
    """The documents of a corpus split, tokenized once: per document, per sentence, the token ids."""
    if split not in SPLITS:
        raise ValueError(f"split must be one of {', '.join(SPLITS)}, got {split!r:.40}")
    docs = getattr(lab_corpus.load_corpus(), split)
    return _encode(lab_tokenizers.lab_tokenizer(kind, vocab_size), docs)


_ENCODE_CHUNK = 2_000  # sentences per encode_batch call: its Encoding objects are large while they live


def _encode(tok, docs: Sequence[Sequence[str]]) -> tuple[tuple[tuple[int, ...], ...], ...]:
    """Token ids per sentence, per document. Encoded in chunks (the batch's Encoding objects, with their
    strings and offsets, are what peaks), and every id is one shared int object per vocabulary entry (a
    fresh int per token costs 28 bytes more than the tuple's 8-byte pointer)."""
    flat = [s for doc in docs for s in doc]
    shared = list(range(tok.get_vocab_size()))
    ids: list[tuple[int, ...]] = []
    for i in range(0, len(flat), _ENCODE_CHUNK):
        batch = tok.encode_batch(flat[i : i + _ENCODE_CHUNK], add_special_tokens=False)
        ids.extend(tuple(shared[t] for t in e.ids) for e in batch)
    out, k = [], 0
    for doc in docs:
        sentences = tuple(x for x in ids[k : k + len(doc)] if x)
        k += len(doc)
        out.append(sentences)
    return tuple(out)


@functools.lru_cache(maxsize=4)
def _word_starts(kind: str, vocab_size: int) -> np.ndarray:
    """starts[id] is True when the piece begins a word (see the module docstring)."""
    tok = lab_tokenizers.lab_tokenizer(kind, vocab_size)
    starts = np.ones(vocab_size, dtype=bool)
    for piece, i in tok.get_vocab().items():
        if kind == "wordpiece":
            starts[i] = not piece.startswith("##")
        else:
            starts[i] = piece.startswith("▁") or piece in _PUNCTUATION or piece in SPECIAL_TOKENS
    return starts


def _check(name: str, value, lo, hi=None, kind=int) -> None:
    if kind is int:
        check_whole_number(name, value, lo, hi)
    else:
        check_number(name, value, lo, math.inf if hi is None else hi)


class PretrainingData:
    """MLM + sentence-task examples from the lab corpus (or ``documents``), as tensors.

    ``tokenizer_kind`` "unigram" (ALBERT) or "wordpiece" (BERT) with ``vocab_size`` pieces; ``task``
    "none" | "nsp" | "sop"; ``split`` "train" | "validation". ``documents`` (sentences per document)
    replaces the corpus split, e.g. for tests. See the module docstring for how examples are built.
    """

    def __init__(
        self,
        tokenizer_kind: str,
        vocab_size: int,
        seq_len: int,
        task: str,
        split: str = "train",
        seed: int = 0,
        max_ngram: int = 3,
        short_seq_prob: float = 0.1,
        mlm_prob: float = DEFAULT_MASK_RATE,
        whole_word: bool = True,
        documents: Sequence[Sequence[str]] | None = None,
    ) -> None:
        lab_tokenizers.check_request(tokenizer_kind, vocab_size)
        _check("seq_len", seq_len, MIN_SEQ_LEN)
        if task not in TASKS:
            raise ValueError(f"task must be one of {', '.join(TASKS)}, got {task!r:.40}")
        if split not in SPLITS:
            raise ValueError(f"split must be one of {', '.join(SPLITS)}, got {split!r:.40}")
        _check("seed", seed, 0)
        _check("max_ngram", max_ngram, 1, MAX_NGRAM)
        _check("short_seq_prob", short_seq_prob, 0.0, 1.0, kind=(int, float))
        _check("mlm_prob", mlm_prob, 0.01, 0.99, kind=(int, float))
        self.tokenizer_kind, self.vocab_size, self.seq_len, self.task = tokenizer_kind, vocab_size, seq_len, task
        self.split, self.seed, self.max_ngram = split, seed, max_ngram
        self.short_seq_prob, self.mlm_prob, self.whole_word = float(short_seq_prob), float(mlm_prob), whole_word
        self.tokenizer = lab_tokenizers.lab_tokenizer(tokenizer_kind, vocab_size)
        if documents is None:
            self.documents = encoded_documents(tokenizer_kind, vocab_size, split)
        else:
            if isinstance(documents, str) or not all(
                not isinstance(doc, str) and all(isinstance(x, str) for x in doc) for doc in documents
            ):
                raise ValueError("documents must be a list of documents, each a sequence of sentence strings")
            self.documents = _encode(self.tokenizer, [tuple(doc) for doc in documents])
        self._starts = _word_starts(tokenizer_kind, vocab_size)
        self._epochs: dict[int, list[Instance]] = {}
        self._epoch_starts = [0]  # example index where each built epoch starts (the last: where the next does)
        self._eval: dict[int, tuple[dict[str, torch.Tensor], ...]] = {}
        # held-out pairs show every chosen piece as [MASK]: a model is scored on what it infers from context,
        # not on copying the 10 % of pieces training leaves as they are (worth 0.4 nat on its own)
        self.mask_token_prob = 1.0 if split == "validation" else 0.8
        if not self.instances(0):
            raise ValueError(f"the {split} documents give no {task} example of seq_len {seq_len}")

    # ------------------------------------------------------------------ instances
    def instances(self, epoch: int) -> list[Instance]:
        """The segment pairs of one pass over the documents (cached for the last few epochs)."""
        if epoch not in self._epochs:
            rng = random.Random(f"albert-lab|{self.seed}|{self.task}|{self.seq_len}|epoch|{epoch}")
            if len(self._epochs) >= _MAX_EPOCH_CACHE:
                self._epochs.pop(min(self._epochs))
            self._epochs[epoch] = segment_pairs(self.documents, self.task, self.seq_len, self.short_seq_prob, rng,
                                             balanced=self.split == "validation")
        return self._epochs[epoch]

    @property
    def num_examples(self) -> int:
        """Examples in one pass over the documents (epoch 0)."""
        return len(self.instances(0))

    def instance(self, index: int) -> Instance:
        """Example ``index`` of the stream: the epochs' instances one after the other (an epoch's count
        varies a little with its random segment lengths)."""
        starts = self._epoch_starts
        while starts[-1] <= index:
            starts.append(starts[-1] + len(self.instances(len(starts) - 1)))
        epoch = bisect.bisect_right(starts, index) - 1
        return self.instances(epoch)[index - starts[epoch]]

    # ------------------------------------------------------------------ masking and tensors
    def _words(self, ids: np.ndarray) -> list[list[int]]:
        words: list[list[int]] = []
        for i, t in enumerate(ids.tolist()):
            if t in (CLS_ID, SEP_ID, PAD_ID):
                continue
            if self.whole_word and not self._starts[t] and words and words[-1][-1] == i - 1:
                words[-1].append(i)
            else:
                words.append([i])
        return words

    def encode(self, inst: Instance, index: int) -> dict[str, np.ndarray]:
        """One example as arrays: layout, types, padding, then masking with the generator of ``index``."""
        T = self.seq_len
        ids = np.full(T, PAD_ID, dtype=np.int64)
        seq = [CLS_ID, *inst.a, SEP_ID, *inst.b, SEP_ID]
        ids[: len(seq)] = seq
        types = np.zeros(T, dtype=np.int64)
        types[len(inst.a) + 2 : len(seq)] = 1
        mask = np.zeros(T, dtype=np.int64)
        mask[: len(seq)] = 1
        labels = np.full(T, -100, dtype=np.int64)
        rng = random.Random(f"albert-lab|{self.seed}|{self.task}|{self.seq_len}|mask|{index}")
        words = self._words(ids)
        budget = max(1, round(sum(len(w) for w in words) * self.mlm_prob))
        for span, _ in ngram_spans(words, budget, rng, self.max_ngram):
            for p in span:
                labels[p] = ids[p]
                if rng.random() < self.mask_token_prob:
                    ids[p] = MASK_ID
                elif rng.random() < 0.5:
                    pass  # kept
                else:
                    ids[p] = rng.randrange(len(SPECIAL_TOKENS), self.vocab_size)
        return {"input_ids": ids, "attention_mask": mask, "token_type_ids": types, "mlm_labels": labels,
                "order_labels": np.int64(inst.label)}  # fmt: skip

    def _collate(self, indices: Sequence[int]) -> dict[str, torch.Tensor]:
        rows = [self.encode(self.instance(i), i) for i in indices]
        return {k: torch.from_numpy(np.stack([r[k] for r in rows])) for k in rows[0]}

    def batch(self, step: int, batch_size: int) -> dict[str, torch.Tensor]:
        """Examples step * batch_size ... + batch_size - 1 of the stream (a pure function of seed, step)."""
        _check("step", step, 0)
        _check("batch_size", batch_size, 1, 4096)
        return self._collate(range(step * batch_size, (step + 1) * batch_size))

    def eval_batches(self, batch_size: int, max_batches: int | None = None) -> list[dict[str, torch.Tensor]]:
        """Every example of one pass (epoch 0) in batches of ``batch_size`` (the last may be smaller), the
        same every call; at most ``max_batches`` of them."""
        _check("batch_size", batch_size, 1, 4096)
        if batch_size not in self._eval:
            n = self.num_examples
            self._eval = {batch_size: tuple(
                self._collate(range(s, min(s + batch_size, n))) for s in range(0, n, batch_size)
            )}  # fmt: skip
        batches = list(self._eval[batch_size])
        return batches if max_batches is None else batches[:max_batches]
