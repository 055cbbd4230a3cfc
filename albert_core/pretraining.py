"""The ALBERT paper's pre-training inputs, deterministic by seed (no torch): sentence-order pairs (SOP),
BERT's next-sentence pairs (NSP) and n-gram masking for the masked-LM objective."""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import dataclass

from albert_core.config import check_whole_number
from albert_core.tokenizer import SPECIAL_TOKENS

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def _documents(text: str) -> list[list[str]]:
    """Documents (paragraphs split by blank lines) as lists of sentences."""
    if not isinstance(text, str):
        raise ValueError("text must be a string")
    docs = []
    for para in re.split(r"\n\s*\n", text):
        sentences = [s.strip() for s in _SENTENCE_END.split(" ".join(para.split())) if s.strip()]
        if sentences:
            docs.append(sentences)
    return docs


@dataclass(frozen=True)
class Pair:
    """Two segments and the label a pre-training classifier learns (0 = positive, as transformers'
    sentence_order_label / next_sentence_label)."""

    a: str
    b: str
    label: int
    kind: str  # "in order" / "swapped" (SOP), "is next" / "random next" (NSP)


def make_sop_pairs(text: str) -> list[Pair]:
    """ALBERT's sentence-order prediction: for every two consecutive sentences of a document, the
    positive (A, B in their order, label 0) and the negative (the same two swapped, label 1)."""
    pairs = []
    for doc in _documents(text):
        for a, b in zip(doc, doc[1:], strict=False):
            pairs += [Pair(a, b, 0, "in order"), Pair(b, a, 1, "swapped")]
    return pairs


def make_nsp_pairs(text: str, seed: int = 0) -> list[Pair]:
    """BERT's next-sentence prediction: for every two consecutive sentences, the positive (label 0)
    and a negative whose B is a random sentence (label 1) from another document (paragraph) when
    the text has several, else from a random non-adjacent place. Deterministic for a given seed."""
    check_whole_number("seed", seed, lo=0)
    docs = _documents(text)
    rng = random.Random(seed)
    flat = [(d, j, s) for d, doc in enumerate(docs) for j, s in enumerate(doc)]
    pairs = []
    for d, doc in enumerate(docs):
        for j, (a, b) in enumerate(zip(doc, doc[1:], strict=False)):
            if len(docs) > 1:
                pool = [s for dd, _, s in flat if dd != d]
            else:  # one document: anything but A and its true next sentence
                pool = [s for _, jj, s in flat if jj not in (j, j + 1)]
            pairs.append(Pair(a, b, 0, "is next"))
            if pool:
                pairs.append(Pair(a, rng.choice(pool), 1, "random next"))
    return pairs


def ngram_length_probs(max_n: int = 3) -> list[float]:
    """p(n) for n = 1..max_n, proportional to 1/n (ALBERT: 6/11, 3/11, 2/11 for max_n = 3)."""
    check_whole_number("max_n", max_n)
    w = [1 / n for n in range(1, max_n + 1)]
    return [x / sum(w) for x in w]


@dataclass(frozen=True)
class MaskResult:
    tokens: list[str]  # the input with every selected position replaced by [MASK]
    positions: list[int]  # masked positions, ascending
    labels: list[str]  # the original tokens at those positions
    spans: list[tuple[int, int]]  # (first position, number of whole words) per n-gram, in choice order


def ngram_spans(
    words: Sequence[Sequence[int]], budget: int, rng: random.Random, max_n: int = 3
) -> list[tuple[list[int], int]]:
    """ALBERT's n-gram span choice (create_pretraining_data.py) over ``words`` (the positions of each
    whole word, in order): (positions, n) per chosen span of n consecutive words, in choice order, with
    p(n) proportional to 1/n, until ``budget`` positions are chosen. Candidate start words are visited in
    a random order; n is drawn among the n-grams that fit before the end; a span that would overshoot the
    budget is shortened (then skipped), one that overlaps a chosen span is skipped."""
    probs = ngram_length_probs(max_n)
    order = list(range(len(words)))
    rng.shuffle(order)
    chosen: set[int] = set()
    spans: list[tuple[list[int], int]] = []
    for start in order:
        if len(chosen) >= budget:
            break
        if chosen.intersection(words[start]):
            continue
        k = min(max_n, len(words) - start)  # n-grams that fit before the end, p renormalised
        n = rng.choices(range(1, k + 1), weights=probs[:k])[0]
        span = [p for w in words[start : start + n] for p in w]
        while n > 1 and len(chosen) + len(span) > budget:  # try shorter n-grams, as ALBERT does
            n -= 1
            span = [p for w in words[start : start + n] for p in w]
        if len(chosen) + len(span) > budget or chosen.intersection(span):
            continue
        chosen.update(span)
        spans.append((span, n))
    return spans


def ngram_mask(tokens: Sequence[str], seed: int = 0, max_n: int = 3, rate: float = 0.15) -> MaskResult:
    """ALBERT's n-gram masking: spans of n whole words with p(n) proportional to 1/n, n <= max_n, until
    round(rate * maskable tokens) positions (at least 1) are selected (ALBERT's create_pretraining_data.py).

    Words are WordPiece groups (a "##" piece belongs to the word before it); special tokens ([CLS],
    [SEP], ...) are never masked; spans are chosen by `ngram_spans` with a seeded generator. Every
    selected position shows [MASK] (BERT's 80/10/10 replacement is left out, so the spans are visible).
    """
    check_whole_number("seed", seed, lo=0)
    ngram_length_probs(max_n)  # validates max_n
    if isinstance(rate, bool) or not isinstance(rate, (int, float)) or not 0 < rate <= 1:
        raise ValueError(f"rate must be a number in (0, 1], got {rate!r:.40}")
    tokens = list(tokens)
    words: list[list[int]] = []  # positions of each maskable word
    for i, tok in enumerate(tokens):
        if tok in SPECIAL_TOKENS:
            continue
        if tok.startswith("##") and words and words[-1][-1] == i - 1:
            words[-1].append(i)
        else:
            words.append([i])
    maskable = sum(len(w) for w in words)
    if not maskable:
        return MaskResult(tokens, [], [], [])
    spans_chosen = ngram_spans(words, max(1, round(maskable * rate)), random.Random(seed), max_n)
    chosen = {p for span, _ in spans_chosen for p in span}
    spans = [(span[0], n) for span, n in spans_chosen]
    positions = sorted(chosen)
    masked = ["[MASK]" if i in chosen else t for i, t in enumerate(tokens)]
    return MaskResult(masked, positions, [tokens[i] for i in positions], spans)
