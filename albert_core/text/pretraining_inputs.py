"""The ALBERT paper's pre-training inputs, deterministic by seed (no torch): the segment pairs of the
sentence tasks (SOP, and BERT's NSP) and n-gram masking for the masked-LM objective. One home for each
algorithm: the lab trains with `segment_pairs` and `ngram_spans`, and the Paper page shows them on a
visitor's text (`make_pairs`, `ngram_mask`)."""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import dataclass

from albert_core.checks import check_number, check_whole_number
from albert_core.text.corpus import split_sentences
from albert_core.text.encoding import SPECIAL_TOKENS


def _documents(text: str) -> list[list[str]]:
    """Documents (paragraphs split by blank lines) as lists of sentences, split as the lab's corpus is
    (`albert_core.text.corpus.split_sentences`)."""
    if not isinstance(text, str):
        raise ValueError("text must be a string")
    docs = []
    for para in re.split(r"\n\s*\n", text):
        sentences = split_sentences(para)
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


PAIR_KINDS = {"sop": ("in order", "swapped"), "nsp": ("is next", "random next")}


@dataclass(frozen=True)
class Instance:
    """One segment pair before masking, with where its segments came from."""

    a: tuple  # segment A's tokens (token ids in the lab, words on the Paper page; no specials)
    b: tuple
    label: int  # 0 = in order / B follows A; 1 = swapped (SOP) / random B (NSP)
    doc_a: int  # document index of segment A (and of B unless label 1 under NSP)
    doc_b: int



def truncate_pair(a: list[int], b: list[int], max_tokens: int, rng: random.Random) -> None:
    """BERT's truncate_seq_pair: drop tokens from the longer segment, at its front or back at random."""
    while len(a) + len(b) > max_tokens:
        longer = a if len(a) > len(b) else b
        if rng.random() < 0.5:
            del longer[0]
        else:
            longer.pop()


def segment_pairs(
    docs: Sequence[Sequence[Sequence[int]]], task: str, seq_len: int, short_seq_prob: float, rng: random.Random,
    balanced: bool = False,
) -> list[Instance]:
    """BERT's and ALBERT's ``create_pretraining_data.py`` segment pairs, one pass over ``docs`` (documents as
    lists of sentences, each a sequence of tokens): per document a target of ``seq_len - 3`` tokens (with
    probability ``short_seq_prob`` a random one from 2); consecutive sentences are gathered until the target
    and the chunk is cut at a random sentence boundary into A and B. ``task`` "sop": A and B swapped with
    probability 1/2 (label 1), a single-sentence chunk left out; "nsp": with probability 1/2 (always for a
    single sentence) B is taken from a random point of another document (label 1) and the unused sentences go
    back; "none": A and B in order. The pair is trimmed to ``seq_len - 3`` tokens (`truncate_pair`) and the
    pass shuffled. The lab trains on exactly these (`albert_core.lab.examples`). ``balanced`` (held-out
    pairs): the label alternates 0, 1, 0, ... instead of a coin flip, and single-sentence chunks (which
    could only be NSP negatives) are left out, so exactly
    half the pairs (+-1) are positives and a constant answer scores 50 %."""
    max_tokens = seq_len - 3
    out: list[Instance] = []
    turn = 0

    def flip() -> bool:
        nonlocal turn
        if not balanced:
            return rng.random() < 0.5
        turn += 1
        return turn % 2 == 0
    for d, document in enumerate(docs):
        target = max_tokens
        if rng.random() < short_seq_prob:
            target = rng.randint(2, max_tokens)
        chunk: list[Sequence[int]] = []
        length, i = 0, 0
        while i < len(document):
            chunk.append(document[i])
            length += len(document[i])
            if i == len(document) - 1 or length >= target:
                if balanced and len(chunk) < 2:
                    chunk, length = [], 0
                    i += 1
                    continue
                a_end = rng.randint(1, len(chunk) - 1) if len(chunk) >= 2 else 1
                a = [t for seg in chunk[:a_end] for t in seg]
                b: list[int] = []
                label, doc_b = 0, d
                if task == "nsp" and len(docs) > 1 and (len(chunk) == 1 or flip()):
                    label = 1
                    target_b = max(1, target - len(a))
                    doc_b = rng.randrange(len(docs) - 1)
                    doc_b += doc_b >= d  # any document but this one
                    other = docs[doc_b]
                    for seg in other[rng.randrange(len(other)) :]:
                        b.extend(seg)
                        if len(b) >= target_b:
                            break
                    i -= len(chunk) - a_end  # the unused sentences go back into the document
                elif len(chunk) >= 2:
                    b = [t for seg in chunk[a_end:] for t in seg]
                    if task == "sop" and flip():
                        a, b, label = b, a, 1
                if a and b:
                    truncate_pair(a, b, max_tokens, rng)
                    out.append(Instance(tuple(a), tuple(b), label, d, doc_b))
                chunk, length = [], 0
            i += 1
    rng.shuffle(out)
    return out


def make_pairs(text: str, task: str, seed: int = 0, max_words: int = 12, passes: int = 3) -> list[Pair]:
    """The lab's segment pairs (`segment_pairs`) on ``text``: documents separated by blank lines, sentences
    split as the lab's corpus is (after . ! or ? before a capital or digit, not after e.g. or i.e.), a
    segment pair at most ``max_words`` words (the lab counts tokenizer pieces), ``passes`` passes over the
    text as BERT's ``dupe_factor`` (each with its own seeded draws); the same pair once."""
    if task not in PAIR_KINDS:
        raise ValueError(f"task must be one of {', '.join(PAIR_KINDS)}, got {task!r:.20}")
    check_whole_number("seed", seed, lo=0)
    check_whole_number("max_words", max_words, lo=2, hi=512)
    check_whole_number("passes", passes, lo=1, hi=10)
    docs = [[tuple(sentence.split()) for sentence in doc] for doc in _documents(text)]
    pairs: dict[Pair, None] = {}
    for p in range(passes):
        rng = random.Random(f"paper|{seed}|{task}|pass|{p}")
        for inst in segment_pairs(docs, task, max_words + 3, 0.1, rng):
            pairs[Pair(" ".join(inst.a), " ".join(inst.b), inst.label, PAIR_KINDS[task][inst.label])] = None
    return list(pairs)


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
    check_number("rate", rate, 0, 1, lo_open=True)
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
