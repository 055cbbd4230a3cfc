"""Speed and size of the pretraining lab's data: tokenizer training per size, corpus size in tokens, and
the example pipeline (building a PretrainingData, one training batch).

Run: `python -m bench.bench_lab_data` (prints the dict) or through `python -m bench`.
"""

from __future__ import annotations

import json

import torch

from albert_core.lab import examples
from albert_core.text import corpus as lab_corpus
from albert_core.text import tokenizers
from bench.common import figure, summary, time_calls

SIZES = (2000, 4000, 8000)
BATCH, SEQ = 16, 64


def run() -> dict:
    torch.set_num_threads(1)
    corpus = lab_corpus.load_corpus()
    train = [s for doc in corpus.train for s in doc]
    val = [s for doc in corpus.validation for s in doc]
    stats = lab_corpus.corpus_stats(corpus)
    figures, tokens = [], {}
    for kind in tokenizers.KINDS:
        for size in SIZES:
            times = time_calls(lambda k=kind, v=size: tokenizers.train_tokenizer(k, v, train), 3, warmup=0)
            tok = tokenizers.train_tokenizer(kind, size, train)
            n_train = sum(len(e.ids) for e in tok.encode_batch(train, add_special_tokens=False))
            n_val = sum(len(e.ids) for e in tok.encode_batch(val, add_special_tokens=False))
            tokens[f"{kind}-{size}"] = {"train_tokens": n_train, "validation_tokens": n_val,
                                        "tokens_per_word": round(n_train / stats["train_words"], 3)}
            figures.append(figure(f"train the {kind} tokenizer, V = {size:,}", summary(times), "s",
                                  reason=f"train split, {len(train):,} sentences"))

    def build() -> None:
        examples.encoded_documents.cache_clear()
        examples.PretrainingData("unigram", 2048, SEQ, "sop")

    figures.append(figure("PretrainingData('unigram', 2048, 64, 'sop'), cold", summary(time_calls(build, 5)), "s",
                          reason="tokenize the train split once + epoch-0 instances (shipped tokenizer)"))
    data = examples.PretrainingData("unigram", 2048, SEQ, "sop")
    steps = iter(range(10**9))
    figures.append(figure(f"one training batch ({BATCH} x {SEQ}, n-gram masking)",
                          summary(time_calls(lambda: data.batch(next(steps), BATCH), 50, warmup=2)), "s"))
    return {
        "title": "Lab data (corpus, tokenizers, examples)",
        "figures": figures,
        "corpus": stats,
        "tokens": tokens,
        "notes": ["Tokenizer training uses the `tokenizers` library's own threads (both cores); everything "
                  "else one thread. The CPU is shared with other jobs: read the spread."],
    }


if __name__ == "__main__":
    print(json.dumps(run(), indent=2))
