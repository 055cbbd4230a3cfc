"""Real tokenizers for the pretraining lab, trained with `tokenizers` on the lab corpus's training split.

- ``"unigram"`` (ALBERT): a SentencePiece-style Unigram language model over whitespace-split words marked
  with "▁" (Metaspace), NFKC-normalised and lower-cased, as ALBERT's SentencePiece model.
- ``"wordpiece"`` (BERT): BERT's uncased WordPiece (BertNormalizer, BertPreTokenizer, "##" continuations).

Both have the special tokens [PAD]=0 [UNK]=1 [CLS]=2 [SEP]=3 [MASK]=4, exactly ``vocab_size`` pieces, and a
post-processor that encodes a pair as ``[CLS] A [SEP] B [SEP]`` with type ids 0 for A (with [CLS] and the
first [SEP]) and 1 for B. Training is deterministic: the trained pieces are put in a canonical order.

The sizes in `SHIPPED_VOCAB_SIZES` ship trained (``albert_core/text/data/tokenizers``, rebuilt with
``python -m albert_core.text.tokenizers --ship``): the `tokenizers` trainers iterate hash maps whose order
changes from process to process, which can break ties differently (WordPiece) or move Unigram scores in
the fourth decimal, so a shipped file is what makes a run reproducible on every machine. Any other size is
trained on first use and cached as JSON under $ALBERT_EXPLORER_CACHE_DIR/lab-tokenizers (default
~/.cache/albert-explorer/lab-tokenizers), keyed by kind, size, corpus and library version; at most
`MAX_CACHED_FILES` are kept (the least recently used are deleted), and a few live in memory.
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import json
import os
import sys
import tempfile
from pathlib import Path

import tokenizers
from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers

from albert_core import settings
from albert_core.checks import check_whole_number
from albert_core.configuration.config import FAMILIES, family_of
from albert_core.disk_cache import evict, last_use, touch
from albert_core.text import corpus as lab_corpus

__all__ = [
    "KINDS",
    "MAX_VOCAB_SIZE",
    "MIN_VOCAB_SIZE",
    "SHIPPED_VOCAB_SIZES",
    "SPECIAL_TOKENS",
    "cache_dir",
    "check_request",
    "is_shipped",
    "lab_tokenizer",
    "model_tokenizer",
    "tokenizer_fingerprint",
    "tokenizer_kind",
    "train_tokenizer",
]

SPECIAL_TOKENS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")  # ids 0..4
PAD_ID, UNK_ID, CLS_ID, SEP_ID, MASK_ID = range(5)
KINDS = ("unigram", "wordpiece")
MIN_VOCAB_SIZE = 256  # the corpus's characters must fit (a Unigram model keeps every character)
MAX_VOCAB_SIZE = 32_768  # bounds a training request (the corpus yields fewer pieces well before this)
MAX_CACHED_FILES = 12
_TOKENIZER_VERSION = 1  # bump when the recipe below changes (invalidates the disk cache)
_CACHE_SUBDIR = "lab-tokenizers"
SHIPPED_VOCAB_SIZES = (512, 1024, 2048, 4096, 8192)
SHIPPED_DIR = lab_corpus.DATA_DIR / "tokenizers"
_MANIFEST = SHIPPED_DIR / "manifest.json"


def tokenizer_kind(family: str) -> str:
    """The lab tokenizer of a model family (its record's, `Family.tokenizer`): ALBERT's SentencePiece unigram, BERT's
    WordPiece; the encoders after BERT take the nearer of the two (ELECTRA and NomicBERT use BERT's WordPiece, XLM-R
    and DeBERTa-v3 SentencePiece; RoBERTa, ModernBERT and EuroBERT a byte-level BPE the lab does not ship: unigram, a
    subword model of the same kind)."""
    return family_of(family).tokenizer


def check_request(kind: str, vocab_size: int) -> None:
    """Raise ValueError naming the field unless (kind, vocab_size) can be asked for: a kind, a size in
    range, and no more pieces than the lab corpus yields (from the shipped table, without training)."""
    _check_size(kind, vocab_size)
    most = corpus_max_vocab().get(kind)
    if most is not None and vocab_size > most:
        raise ValueError(
            f"vocab_size must be at most {most:,} for the lab's {kind} tokenizer: the lab corpus yields no more "
            f"pieces, got {vocab_size:,}"
        )


def corpus_max_vocab() -> dict[str, int]:
    """The most pieces the lab corpus yields per tokenizer kind (measured when the shipped tokenizers
    were trained, in their manifest); empty when the manifest is for another corpus or recipe."""
    try:
        manifest = json.loads(_MANIFEST.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if {k: manifest.get(k) for k in recipe()} != recipe():
        return {}
    return {k: int(v) for k, v in manifest.get("max_vocab", {}).items()}


def _check_size(kind: str, vocab_size: int) -> None:
    if kind not in KINDS:
        raise ValueError(f"tokenizer kind must be one of {', '.join(KINDS)}, got {kind!r:.40}")
    check_whole_number("vocab_size", vocab_size, MIN_VOCAB_SIZE, MAX_VOCAB_SIZE, why=" for a lab tokenizer")


def cache_dir() -> Path:
    return settings.cache_dir() / _CACHE_SUBDIR


@functools.lru_cache(maxsize=1)
def _corpus_digest() -> str:
    return lab_corpus.corpus_digest()


def _cache_file(kind: str, vocab_size: int) -> Path:
    key = f"{kind}|{vocab_size}|{_corpus_digest()}|tokenizers={tokenizers.__version__}|v{_TOKENIZER_VERSION}"
    return cache_dir() / f"{kind}-{vocab_size}-{hashlib.sha256(key.encode()).hexdigest()[:12]}.json"


# ----------------------------------------------------------------------------- training
def _blank(kind: str) -> Tokenizer:
    if kind == "unigram":
        tok = Tokenizer(models.Unigram())
        tok.normalizer = normalizers.Sequence([normalizers.NFKC(), normalizers.Lowercase()])
        tok.pre_tokenizer = pre_tokenizers.Sequence(
            [pre_tokenizers.WhitespaceSplit(), pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always")]
        )
        tok.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="always")
    else:
        tok = Tokenizer(models.WordPiece(unk_token="[UNK]", max_input_chars_per_word=100))
        tok.normalizer = normalizers.BertNormalizer(lowercase=True)
        tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
        tok.decoder = decoders.WordPiece(prefix="##")
    return tok


def _trainer(kind: str, vocab_size: int):
    if kind == "unigram":
        return trainers.UnigramTrainer(
            vocab_size=vocab_size, special_tokens=list(SPECIAL_TOKENS), unk_token="[UNK]", show_progress=False
        )
    return trainers.WordPieceTrainer(vocab_size=vocab_size, special_tokens=list(SPECIAL_TOKENS), show_progress=False)


def _train_once(kind: str, target: int, sentences: list[str]) -> Tokenizer:
    tok = _blank(kind)
    tok.train_from_iterator(sentences, _trainer(kind, target), length=len(sentences))
    return tok


def _canonical(tok: Tokenizer, kind: str) -> Tokenizer:
    """The trained model in an order that does not depend on hash-map iteration: the trainers give the
    same pieces in a varying id order (WordPiece) or with scores differing in the last bits (Unigram).
    WordPiece: specials, then every other piece in string order (the model is a set: greedy longest
    match). Unigram: specials, then pieces by score rounded to 1e-8, best first, ties by string."""
    spec = json.loads(tok.to_str())
    model = spec["model"]
    if kind == "wordpiece":
        rest = sorted(p for p in model["vocab"] if p not in SPECIAL_TOKENS)
        model["vocab"] = {p: i for i, p in enumerate([*SPECIAL_TOKENS, *rest])}
    else:
        scores = {p: s for p, s in model["vocab"]}
        rest = sorted(((round(s, 8), p) for p, s in scores.items() if p not in SPECIAL_TOKENS),
                      key=lambda t: (-t[0], t[1]))
        model["vocab"] = [[p, 0.0] for p in SPECIAL_TOKENS] + [[p, s] for s, p in rest]
        model["unk_id"] = UNK_ID
    return Tokenizer.from_str(json.dumps(spec))


def _trim(tok: Tokenizer, kind: str, vocab_size: int) -> Tokenizer:
    """Drop pieces beyond vocab_size: for WordPiece the last merges learned (the trainer's ids are the
    alphabet, then the merges in order), for Unigram the least probable pieces longer than one character
    (every character stays, so any text still tokenizes)."""
    spec = json.loads(tok.to_str())
    model = spec["model"]
    excess = tok.get_vocab_size() - vocab_size
    if kind == "wordpiece":
        kept = sorted(model["vocab"].items(), key=lambda kv: kv[1])[:vocab_size]
        model["vocab"] = dict(kept)
    else:
        pieces = model["vocab"]  # [[piece, log-prob], ...], specials first
        droppable = [
            i for i, (p, _) in enumerate(pieces) if p not in SPECIAL_TOKENS and len(p.removeprefix("▁")) > 1
        ]
        if len(droppable) < excess:
            raise ValueError(f"vocab_size {vocab_size} is below the characters of the corpus; use a larger one")
        drop = set(sorted(droppable, key=lambda i: pieces[i][1])[:excess])
        model["vocab"] = [p for i, p in enumerate(pieces) if i not in drop]
        model["unk_id"] = SPECIAL_TOKENS.index("[UNK]")
    return Tokenizer.from_str(json.dumps(spec))


def train_tokenizer(kind: str, vocab_size: int, sentences: list[str] | None = None) -> Tokenizer:
    """Train a tokenizer of exactly ``vocab_size`` pieces on ``sentences`` (default: the corpus's training
    split), without the disk cache. ValueError when the text cannot yield that many pieces."""
    _check_size(kind, vocab_size)
    if sentences is None:
        sentences = [s for doc in lab_corpus.load_corpus().train for s in doc]
    tok = _train_once(kind, vocab_size, sentences)
    got = tok.get_vocab_size()
    if got < vocab_size:  # the trainer stopped early: the text has no more pieces to offer
        tok = _train_once(kind, min(2 * vocab_size, MAX_VOCAB_SIZE), sentences)
        if tok.get_vocab_size() < vocab_size:
            raise ValueError(
                f"vocab_size {vocab_size} is more than this corpus yields for a {kind} tokenizer: "
                f"at most {tok.get_vocab_size()} pieces"
            )
    if tok.get_vocab_size() > vocab_size:
        tok = _trim(tok, kind, vocab_size)
    tok = _canonical(tok, kind)
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", CLS_ID), ("[SEP]", SEP_ID)],
    )
    ids = [tok.token_to_id(t) for t in SPECIAL_TOKENS]
    if ids != list(range(len(SPECIAL_TOKENS))) or tok.get_vocab_size() != vocab_size:  # a broken invariant
        raise RuntimeError(f"trained tokenizer has special ids {ids} and {tok.get_vocab_size()} pieces")
    return tok


# ----------------------------------------------------------------------------- cache
def _evict(folder: Path, keep: Path) -> None:
    files = [(last_use(f), f.stat().st_size, f) for f in folder.glob("*.json")]
    evict(files, max_entries=MAX_CACHED_FILES, keep=keep)


def _shipped_file(kind: str, vocab_size: int) -> Path:
    return SHIPPED_DIR / f"{kind}-{vocab_size}.json.gz"


def recipe() -> dict[str, object]:
    return {"corpus_sha256": _corpus_digest(), "recipe": _TOKENIZER_VERSION}


def _shipped_json(kind: str, vocab_size: int) -> str | None:
    """The shipped tokenizer's JSON when one was trained for this size, corpus and recipe, else None."""
    path = _shipped_file(kind, vocab_size)
    try:
        manifest = json.loads(_MANIFEST.read_text(encoding="utf-8"))
        if {k: manifest.get(k) for k in recipe()} != recipe():
            return None
        return gzip.decompress(path.read_bytes()).decode("utf-8")
    except (OSError, ValueError):
        return None


def is_shipped(kind: str, vocab_size: int) -> bool:
    """True when this (kind, size) ships trained for the current corpus (the same on every machine)."""
    return _shipped_json(kind, vocab_size) is not None


def write_shipped(sizes: tuple[int, ...] = SHIPPED_VOCAB_SIZES) -> list[Path]:
    """Train and write the shipped tokenizers (both kinds, ``sizes``) and their manifest."""
    SHIPPED_DIR.mkdir(parents=True, exist_ok=True)
    written = []
    for kind in KINDS:
        for size in sizes:
            path = _shipped_file(kind, size)
            path.write_bytes(gzip.compress(train_tokenizer(kind, size).to_str().encode("utf-8"), 9, mtime=0))
            written.append(path)
    sentences = [s for doc in lab_corpus.load_corpus().train for s in doc]
    # what the corpus yields, rounded down with a margin of 100-200 pieces: the WordPiece trainer's count
    # varies by a few pieces from process to process (12,231-12,233 in six), and a size the table allows
    # must train everywhere
    yields = {kind: _train_once(kind, MAX_VOCAB_SIZE, sentences).get_vocab_size() for kind in KINDS}
    most = {kind: n - n % 100 - 100 for kind, n in yields.items()}
    manifest = {**recipe(), "tokenizers": tokenizers.__version__, "kinds": list(KINDS), "sizes": list(sizes),
                "max_vocab": most}
    _MANIFEST.write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    return written


@functools.lru_cache(maxsize=8)
def _tokenizer_json(kind: str, vocab_size: int) -> str:
    shipped = _shipped_json(kind, vocab_size)
    if shipped is not None:
        return shipped
    path = _cache_file(kind, vocab_size)
    try:
        text = path.read_text(encoding="utf-8")
        Tokenizer.from_str(text)  # a damaged file is retrained
        touch(path)
        return text
    except Exception:  # missing, unreadable or damaged (tokenizers raises a bare Exception on bad JSON)
        pass
    text = train_tokenizer(kind, vocab_size).to_str()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile("w", dir=path.parent, suffix=".tmp", delete=False, encoding="utf-8") as fh:
            fh.write(text)
        os.replace(fh.name, path)
        _evict(path.parent, path)
    except OSError:  # a read-only or full disk: the tokenizer still works, it is only not cached
        pass
    return text


@functools.lru_cache(maxsize=32)
def tokenizer_fingerprint(kind: str, vocab_size: int) -> dict[str, object]:
    """What names the lab tokenizer ``kind`` of ``vocab_size`` pieces without training one (what a cache of
    results computed with it keys on): a shipped size by a hash of its content; another size (trained by
    the run itself, in the worker) by its recipe, corpus and `tokenizers` version, which is what its disk
    cache is keyed by."""
    kind = family_of(kind).tokenizer if kind in FAMILIES else kind
    check_request(kind, vocab_size)
    if not is_shipped(kind, vocab_size):
        return {"kind": kind, "vocab_size": vocab_size, **recipe(), "tokenizers": tokenizers.__version__}
    text = lab_tokenizer(kind, vocab_size).to_str()
    return {"kind": kind, "vocab_size": vocab_size, "sha256": hashlib.sha256(text.encode()).hexdigest()[:16]}


def model_tokenizer(family: str, vocab_size: int) -> Tokenizer:
    """A lab tokenizer any model of ``family`` with ``vocab_size`` embedding rows can read (for the Live
    model page): the family's kind at ``vocab_size`` itself when that size ships trained, else the largest
    shipped size below it, so every id is < vocab_size whatever V is (no training at request time)."""
    kind = tokenizer_kind(family)
    check_whole_number("vocab_size", vocab_size, SHIPPED_VOCAB_SIZES[0], why=" to use a lab tokenizer")
    return lab_tokenizer(kind, max(v for v in SHIPPED_VOCAB_SIZES if v <= vocab_size))


def lab_tokenizer(kind: str, vocab_size: int) -> Tokenizer:
    """The lab tokenizer ``kind`` ("unigram" for ALBERT, "wordpiece" for BERT; a family name is accepted)
    with exactly ``vocab_size`` pieces: trained once on the corpus's training split, then read from the
    disk cache. Each call returns a new `tokenizers.Tokenizer` (free to set padding/truncation on)."""
    kind = family_of(kind).tokenizer if kind in FAMILIES else kind
    check_request(kind, vocab_size)
    return Tokenizer.from_str(_tokenizer_json(kind, vocab_size))


if __name__ == "__main__":  # python -m albert_core.text.tokenizers --ship
    if "--ship" in sys.argv[1:]:
        for p in write_shipped():
            print(f"wrote {p}")
